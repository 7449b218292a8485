# SPDX-License-Identifier: BSD-3-Clause
# bench/scale/bench.mk - `make bench-scale`: what a job of 16, 64 and 128
# ranks costs under ob1 and pml/bfo, in one run of interleaved rounds, and
# the engine's memory per rank at 1,024 ranks (bfo sim; bench/scale/README.md).  Included from the top-level Makefile, which
# gives it BUILD, INC, BACK_INC, NET_LIBS and the pml rule.
#
#   make bench-scale
#   BENCH_SCALE_SIZES="16 64" BENCH_SCALE_HOSTS= BENCH_SCALE_ROUNDS=3 make bench-scale
#
# A benchmark: not part of make check nor of CI.  It makes network
# namespaces as root (each one-host job in its own; tests/hosts' hosts):
# on a shared machine, flock /work/.netlock make bench-scale.

MPICC        ?= mpicc
SCALE_OUT    := build/bench-scale
SCALE_BIN    := $(SCALE_OUT)/scale
SCALE_MEM    := $(SCALE_OUT)/engine_mem

.PHONY: bench-scale
bench-scale: $(SCALE_BIN) $(SCALE_MEM) $(BUILD)/bfo pml
	BFO_PML_DIR=$(CURDIR)/$(BUILD)/pml OUT=$(CURDIR)/$(SCALE_OUT) SCALE_BIN=$(CURDIR)/$(SCALE_BIN) \
	  ENGINE_MEM_BIN=$(CURDIR)/$(SCALE_MEM) BFO_BIN=$(CURDIR)/$(BUILD)/bfo bash bench/scale/run.sh

$(SCALE_BIN): bench/scale/scale.c
	@mkdir -p $(@D)
	$(MPICC) -O2 -g -Wall -Wextra -Werror -o $@ $<

# linked with bfo_net for the rails' tuning (bfo_net_rail_tuning), as pml/bfo
$(SCALE_MEM): bench/scale/engine_mem.c $(BUILD)/libbfo_net.a
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -Wall -Wextra -Werror $(CFLAGS) $(INC) $(BACK_INC) $< $(BUILD)/libbfo_net.a -o $@ $(NET_LIBS)
