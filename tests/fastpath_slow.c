// SPDX-License-Identifier: BSD-3-Clause
/* fastpath_slow.c - tests/fastpath_run.h's scenarios with the engine's fast
 * paths compiled out (BFO_NO_FAST_PATH): every transition is the generated
 * machine's step.  Linked into test_fastpath, which runs the same scenarios
 * with the fast paths and compares the records. */
#define BFO_NO_FAST_PATH
#define FP_RUN fp_run_slow
#include "fastpath_run.h"

int fp_run_slow_extern(int scenario, fp_log *log);
int fp_run_slow_extern(int scenario, fp_log *log)
{
    return fp_run_slow(scenario, log);
}
