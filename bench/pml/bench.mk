# SPDX-License-Identifier: BSD-3-Clause
# bench/pml/bench.mk - `make bench-pml`: pml/bfo against Open MPI's own PMLs
# (ob1, ucx) in one run of interleaved rounds; bench/pml/README.md.
#
# Included from the top-level Makefile (include it after the first target,
# so that it does not become the default goal), or on its own from the
# repository root:
#
#   make -f bench/pml/bench.mk bench-pml
#   make -f bench/pml/bench.mk bench-pml ROUNDS=5 CONFIGS=ob1-tcp,ucx-tcp
#   make -f bench/pml/bench.mk bench-pml-selftest
#
# ROUNDS, SIZES, CONFIGS, BFO_PML_DIR, OUT, NETPIPE, NP_ARGS, PML_BENCH_ARGS,
# PML_BENCH_STANDIN are passed to bench/pml/run.sh (from the environment or
# the make command line); the header of run.sh describes them.

MPICC        ?= mpicc
PMLB_OUT     := $(if $(OUT),$(OUT),build/bench-pml)
# pml/bfo: BFO_PML_DIR if given; included from the top-level Makefile, the
# directory `make pml` builds into ($(PML_SO)'s, build/<cc>/pml); else
# run.sh's default, build/gcc/pml.  Not a prerequisite: a component that does
# not build or load is reported as skipped/failed, and ob1 and ucx still run.
PMLB_BFO_DIR := $(if $(BFO_PML_DIR),$(BFO_PML_DIR),$(if $(PML_SO),$(patsubst %/,%,$(dir $(PML_SO)))))
PMLB_BIN     := $(PMLB_OUT)/pml_bench
PMLB_VARS    := ROUNDS SIZES CONFIGS NETPIPE NP_ARGS PML_BENCH_ARGS PML_BENCH_STANDIN RUN_TIMEOUT \
                MPIRUN_ARGS BFO_MCA_ARGS
PMLB_ENV     := $(foreach v,$(PMLB_VARS),$(if $(filter command line environment%,$(origin $(v))),$(v)='$($(v))'))

.PHONY: bench-pml bench-pml-selftest

bench-pml: $(PMLB_BIN)
	$(strip $(PMLB_ENV) $(if $(PMLB_BFO_DIR),BFO_PML_DIR='$(PMLB_BFO_DIR)') \
	  OUT='$(PMLB_OUT)' PML_BENCH_BIN='$(PMLB_BIN)') bash bench/pml/run.sh

bench-pml-selftest:
	OUT='$(PMLB_OUT)-selftest' bash bench/pml/selftest.sh

$(PMLB_BIN): bench/pml/pml_bench.c
	@mkdir -p $(@D)
	$(MPICC) -O2 -g -Wall -Wextra -o $@ $<
