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
PMLT_PROGS := pt2pt dtype comm coll thread stress spawn errors examples remap
PMLT_BINS  := $(addprefix $(PMLT_BUILD)/,$(PMLT_PROGS))

.PHONY: pml-tests check-pml-features check-pml-ob1 clean-pml-tests

pml-tests: $(PMLT_BINS)

$(PMLT_BUILD)/%: $(PMLT_DIR)/%.c $(PMLT_DIR)/common.h
	@mkdir -p $(@D)
	$(PMLT_MPICC) $(PMLT_CFLAGS) -o $@ $< -pthread

# BFO_PML_DIR, when make has it (the top-level Makefile's $(BUILD)/pml),
# goes to run.sh, whose own default is build/gcc/pml
check-pml-features: pml-tests
	PMLT_NO_BUILD=1 PMLT_BUILD=$(PMLT_BUILD) $(if $(PML),PML=$(PML)) \
	  $(if $(BFO_PML_DIR),BFO_PML_DIR=$(BFO_PML_DIR)) bash $(PMLT_DIR)/run.sh

# the same against Open MPI's ob1 (what the suite is known to pass on)
check-pml-ob1: pml-tests
	PMLT_NO_BUILD=1 PMLT_BUILD=$(PMLT_BUILD) PML=ob1 bash $(PMLT_DIR)/run.sh

clean-pml-tests:
	rm -rf $(PMLT_BUILD)

.DEFAULT_GOAL := $(PMLT_SAVED_GOAL)
