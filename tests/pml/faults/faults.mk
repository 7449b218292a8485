# SPDX-License-Identifier: BSD-3-Clause
# tests/pml/faults/faults.mk - the fault tests of make check-pml
# (tests/pml/faults/README.md).  Included by the top-level Makefile, or on
# its own from the top of the tree:
#   make -f tests/pml/faults/faults.mk check-pml-faults
#   make check-pml-faults                   the stream, then run.sh (root)
#   make faults-stream                      $(BUILD)/pml/faults/stream only
# The bfo runs use $(BUILD)/pml/mca_pml_bfo.so (make pml; BFO_PML_DIR
# overrides) and are skipped while it is missing or does not load; f2 runs
# Open MPI's ob1 on its own.  Variables for run.sh (README.md): PML_EXTRA,
# DURATION, HANG_S, RUN_TIMEOUT, FAULTS_OB1_ALL=1, FAULTS_ONLY, KEEP=1.
BUILD         ?= build/gcc
MPICC         ?= mpicc
FAULTS_STREAM := $(BUILD)/pml/faults/stream
BFO_PML_DIR   ?= $(CURDIR)/$(BUILD)/pml

.PHONY: check-pml-faults faults-stream
faults-stream: $(FAULTS_STREAM)
$(FAULTS_STREAM): tests/pml/faults/stream.c
	@command -v $(MPICC) >/dev/null || { echo "faults-stream: $(MPICC) not found (apt-get install libopenmpi-dev)"; exit 1; }
	@mkdir -p $(dir $@)
	$(MPICC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -o $@ $<

check-pml-faults: $(FAULTS_STREAM)
	FAULTS_STREAM=$(CURDIR)/$(FAULTS_STREAM) BFO_PML_DIR=$(BFO_PML_DIR) bash tests/pml/faults/run.sh
