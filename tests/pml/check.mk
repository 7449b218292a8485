# SPDX-License-Identifier: BSD-3-Clause
# tests/pml/check.mk - the MPI point-to-point test suite's rules. Included
# from the top-level Makefile, or alone from the repository's root:
#
#   make -f tests/pml/check.mk check-pml-features          # PML=bfo (default)
#   make -f tests/pml/check.mk check-pml-features PML=ob1  # Open MPI's own PML
#   make -f tests/pml/check.mk pml-tests                   # build only
#
# check-pml-features runs tests/pml/run.sh (its knobs: tests/pml/lib.sh;
# SHORT=1 makes the 60 s compute test 10 s). Programs and logs go to
# build/pml-tests/. Needs mpicc (libopenmpi-dev), mpirun (openmpi-bin),
# python3-mpi4py and netpipe-openmpi (those two are skipped, said so, when
# missing).

PMLT_SAVED_GOAL := $(.DEFAULT_GOAL)
PMLT_DIR   := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
PMLT_BUILD ?= build/pml-tests
PMLT_MPICC ?= $(or $(MPICC),mpicc)
PMLT_CFLAGS := -O2 -Wall -Werror
PMLT_PROGS := pt2pt dtype comm coll thread stress spawn errors examples hooks remap
PMLT_BINS  := $(addprefix $(PMLT_BUILD)/,$(PMLT_PROGS))

.PHONY: pml-tests check-pml-features check-pml-ob1 clean-pml-tests

pml-tests: $(PMLT_BINS)

$(PMLT_BUILD)/%: $(PMLT_DIR)/%.c $(PMLT_DIR)/common.h
	@mkdir -p $(@D)
	$(PMLT_MPICC) $(PMLT_CFLAGS) -o $@ $< -pthread

# hooks.c: its pml_bfo_test_hook is found by the test build's dlsym
$(PMLT_BUILD)/hooks: $(PMLT_DIR)/hooks.c $(PMLT_DIR)/common.h $(PMLT_DIR)/../../mpi/ompi/pml_bfo_test.h
	@mkdir -p $(@D)
	$(PMLT_MPICC) $(PMLT_CFLAGS) -rdynamic -o $@ $< -pthread

# BFO_PML_DIR and BFO_PML_TEST_DIR, when make has them (the top-level
# Makefile's $(BUILD)/pml and $(BUILD)/pml-test), go to run.sh, whose own
# defaults are build/gcc/pml and build/gcc/pml-test
check-pml-features: pml-tests
	PMLT_NO_BUILD=1 PMLT_BUILD=$(PMLT_BUILD) $(if $(PML),PML=$(PML)) \
	  $(if $(BFO_PML_DIR),BFO_PML_DIR=$(BFO_PML_DIR)) \
	  $(if $(BFO_PML_TEST_DIR),BFO_PML_TEST_DIR=$(BFO_PML_TEST_DIR)) bash $(PMLT_DIR)/run.sh

# the same against Open MPI's ob1 (what the suite is known to pass on)
check-pml-ob1: pml-tests
	PMLT_NO_BUILD=1 PMLT_BUILD=$(PMLT_BUILD) PML=ob1 bash $(PMLT_DIR)/run.sh

clean-pml-tests:
	rm -rf $(PMLT_BUILD)

.DEFAULT_GOAL := $(PMLT_SAVED_GOAL)
