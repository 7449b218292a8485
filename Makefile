# SPDX-License-Identifier: BSD-3-Clause
# bfo - GNU Make.
#
#   make             build the tests (needs a C compiler and cmocka; not Ragel)
#   make demo        the main job: bfo demo, a verified stream over 2 rails through
#                    a connection reset and a silently dropping rail (root)
#   make dance       examples/dance.c: a traced failover and restart dance
#   make check-sim   the engine under the fault-injecting simulator (bfo sim)
#   make check-tcp   the TCP backend: real processes on loopback rails, faults from outside
#                    (TCP_SKIP=REGEX leaves out the tests whose path matches)
#   make check-netns gray failures: two network namespaces joined by two veth rails,
#                    a rail slowed (tc tbf), lossy and blackholed (nftables), its link
#                    down and up, the peer stopped (root; skipped otherwise)
#   make bench-engine instructions per eager pair and per 1 MiB rendezvous (callgrind);
#                    the eager pair through Open MPI's ob1 beside it (with mpicc)
#   make bench-netns throughput over two namespaces' veth rails: clean, shaped, one rail
#                    slow; a plot of a degrade and recover (root)
#   make bench-relay a relay against the direct rails: 8 B latency and 1 MiB
#                    throughput, three namespaces, cut and joined in turn (root)
#   make bench-tcp   bfo over TCP loopback rails: 8 B latency and 1 MiB bandwidth against
#                    raw TCP, two rails against one (ratios of interleaved rounds)
#   make bench       all four
#   make check       run every test and examples/mini_mpi's loopback program,
#                    check the headers' layering (check-layers), compile every
#                    header alone (C11, C++17) and the single header alone
#                    (check-amalgamate), and that every source file says its
#                    license first (check-spdx); builds with CHECK_JOBS jobs
#                    (default: every core) unless given -jN
#   make check-layers  the headers include downward only: include/fsm/'s base
#                    (bfo_core.h, bfo_le.h) <- gen/ <- the rest of include/fsm/;
#                    the engine's parts in their levels, under bfo_engine.h
#   make check-spdx  every tracked source file's first line (the second after
#                    #!) is its SPDX-License-Identifier: BSD-3-Clause (LICENSE)
#   make amalgamate  build/dist/bfo_single.h: include/fsm/ and gen/ in one header
#   make check-amalgamate  the single header compiles alone and is those headers
#   make libs        the backends as static archives (libbfo_tcp.a, libbfo_net.a)
#   make install     PREFIX=/usr/local (and DESTDIR): headers in include/bfo/,
#                    bin/bfo, the archives, lib/pkgconfig/bfo.pc,
#                    share/doc/bfo/LICENSE
#   make uninstall   the same PREFIX and DESTDIR: removes exactly that
#   make check-install  install into a scratch prefix, build and run
#                    examples/mini_mpi through pkg-config and against the
#                    single header alone, uninstall, nothing left
#   make gen         regenerate gen/ from spec/ (needs Ragel 6 and python3)
#   make check-gen   regenerate into a temporary directory; fail on any difference
#   make check-meta  prove check-gen, the coverage test, the gen/ stamp,
#                    check-layers, test_abi, check-amalgamate, the docs checks,
#                    check-spdx and the engine's switches over fragment types
#                    and actions catch what they are for
#   make diagrams    render gen/*.dot to docs/diagrams/*.svg (needs Graphviz)
#   make docs-seq    redraw the sequence diagrams, tables and code snippets in
#                    docs/*.md and README.md from bfo sim traces, spec/, gen/
#                    and tests/test_porting.c (python3)
#   make check-docs  fail when those are stale, or docs/api.md misses a public
#                    function (part of make check)
#   make check-valgrind  memcheck on the unit tests and a few bfo sim runs (~1 min)
#   make check-tsan  ThreadSanitizer: 4 threads sending and receiving on one
#                    engine through bfo_net (thread_safe), two ranks over
#                    loopback rails, with and without the progress thread (~1 min)
#   make check SAN=1 the tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make fuzz        the libFuzzer targets of tests/fuzz/ (clang, into build/fuzz)
#   make check-fuzz  each of them for FUZZ_SECONDS (default 60) over its corpus
#   make fuzz-corpus regenerate the seeds of tests/fuzz/corpus/ (committed)
#   make pml         mpi/ompi/: pml/bfo, the Open MPI 4.1 PML component (libopenmpi-dev)
#   make install-pml into ~/.openmpi/components (PML_PREFIX: elsewhere); uninstall-pml
#   make check-pml   MPI programs over pml/bfo: 2 and 4 ranks, mpi4py, NetPIPE,
#                    rails reset (ss -K) and dropped (nftables), a rank killed (root)
#   make check-hosts 16 ranks on 4 hosts (namespaces with their own hostnames) under
#                    mpirun: pml/bfo with its rails given once (CIDRs, names), ob1
#                    beside it, a rail cut on one host; known gaps said (root; ~2.5 min)
#   make bench-pml   pml/bfo next to ob1 and ucx in one run: ratios, a PNG plot
#   make bench-scale 16, 64, 128 ranks under ob1 and pml/bfo: MPI_Init, alltoall,
#                    ring, PSS, fds, sockets, idle packets (root for namespaces);
#                    bfo sim at 1,024 ranks: the engine's memory per rank
#   make clean
#
# Variables: CC, CXX, CFLAGS, PYTHON, RAGEL, DOT, SAN, PMIX, VERBS, FUZZ_CC,
# FUZZ_SECONDS; BFO_MAX_RAILS, BFO_MAX_ACTIONS (the layout options, below);
# for install PREFIX, DESTDIR, BINDIR, INCLUDEDIR, LIBDIR, PKGCONFIGDIR, DOCDIR.

SHELL   := /bin/bash
CC      ?= cc
CXX     ?= c++
PYTHON  ?= python3
RAGEL   ?= ragel
DOT     ?= dot
SAN     ?= 0
# -O1 under the sanitizers (SAN=1): what ASan's authors advise, and 40% less
# compile time than -O2 for the same checks
CFLAGS  ?= $(if $(filter 1,$(SAN)),-O1,-O2) -g

WARN    := -Wall -Wextra -Werror -pedantic
BUILD   := build/$(notdir $(CC))

# The compile-time options that change the layout of public structs
# (include/fsm/bfo.h, COMPILE-TIME OPTIONS): `make BFO_MAX_RAILS=16` compiles
# everything with -DBFO_MAX_RAILS=16, into a build directory of its own
# (build/gcc-rails16: nothing built with another layout is reused), and
# `make install` writes the values into bfo.pc's Cflags.  Unset, the
# headers' defaults.
LAYOUT_OPTS := BFO_MAX_RAILS BFO_MAX_ACTIONS
BFO_MAX_RAILS   ?=
BFO_MAX_ACTIONS ?=
$(foreach o,$(LAYOUT_OPTS),$(if $($(o)),$(if $(shell echo '$($(o))' | grep -xE '[1-9][0-9]{0,3}'),,\
  $(error $(o)=$($(o)): a number from 1 to 9999))))
LAYOUT_DEFS := $(foreach o,$(LAYOUT_OPTS),$(if $($(o)),-D$(o)=$($(o))))
LAYOUT_ARGS := $(foreach o,$(LAYOUT_OPTS),$(if $($(o)),$(o)=$($(o))))
LAYOUT_SUFFIX := $(if $(BFO_MAX_RAILS),-rails$(BFO_MAX_RAILS))$(if $(BFO_MAX_ACTIONS),-actions$(BFO_MAX_ACTIONS))
BUILD   := $(BUILD)$(LAYOUT_SUFFIX)
INC_DIRS := -Iinclude/fsm -Igen
INC     := $(INC_DIRS) $(LAYOUT_DEFS)
ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
BUILD    := $(BUILD)-san
endif

# the engine's tests, one program per part of the engine that has tests
# (tests/test_engine_<part>.c tests include/fsm/bfo_engine_<part>.h; what
# they share is in tests/engine_test.h)
ENGINE_TEST_PARTS := pools rate detect post match request send recv machines frame relay revoke api init
ENGINE_TESTS := $(ENGINE_TEST_PARTS:%=test_engine_%)
TESTS    := test_transitions test_link test_scenarios test_wire $(ENGINE_TESTS) test_fastpath test_noalloc test_verbs_map test_reg_cache test_sim \
            test_verbs_scenarios test_verbs_ud test_verbs_trust test_porting test_abi test_net_abi test_shm test_net test_settings test_railsel test_limits test_tcp_ports test_tcp_conn test_tcp_trust test_tcp_late_hellos test_tcp_res test_shm_res test_shm_trust test_shm_hostile test_shm_late_hellos test_shm_backlog test_idle_peer test_boot test_auth test_group \
            fuzz_replay_wire fuzz_replay_engine fuzz_replay_tcp_frames
FUZZ_TARGETS := wire engine tcp_frames
# docs with generated blocks (tools/bfo_seq.py: sequence diagrams, snippets)
DOCS_GEN := docs/protocol.md docs/porting.md README.md
HEADERS  := $(wildcard include/fsm/*.h) $(wildcard gen/*.h)
MACHINES := send recv rail conn peer agree
TCP_SRC  := backends/tcp/bfo_tcp.c
TCP_HDR  := backends/tcp/bfo_tcp.h backends/bfo_sink.h backends/bfo_transport.h backends/bfo_setting.h backends/bfo_list.h backends/bfo_link.h backends/bfo_tp.h backends/bfo_tp_os.h $(HEADERS)
AUTH_SRC := backends/auth/bfo_auth.c
AUTH_HDR := backends/auth/bfo_auth.h
BOOT_SRC := backends/boot/bfo_boot.c backends/boot/bfo_boot_pmix.c $(AUTH_SRC)
BOOT_HDR := backends/boot/bfo_boot.h backends/boot/bfo_boot_pmix.h $(AUTH_HDR)
# where the backends' headers are: each transport's directory, the wire-up's, bfo_net's
BACK_INC := -Ibackends -Ibackends/tcp -Ibackends/verbs -Ibackends/shm -Ibackends/boot -Ibackends/auth -Ibackends/net

# PMIx (Debian: libpmix-dev): bfo_boot wires up under mpirun when
# <pmix.h> is found (pkg-config pmix, else Debian's pmix2 directory).
# PMIX=0 builds without it; PMIX=1 fails when it is missing.
PMIX     ?= auto
ifneq ($(PMIX),0)
ifneq ($(shell pkg-config --exists pmix 2>/dev/null && echo yes),)
PMIX_CFLAGS := $(filter-out -I/usr/include,$(shell pkg-config --cflags-only-I pmix))
PMIX_LIBS   := $(shell pkg-config --libs pmix)
else
PMIX_DIR    := /usr/lib/$(shell $(CC) -print-multiarch 2>/dev/null)/pmix2
PMIX_CFLAGS := -I$(PMIX_DIR)/include
PMIX_LIBS   := -L$(PMIX_DIR)/lib -Wl,-rpath,$(PMIX_DIR)/lib -lpmix
endif
PMIX_CFLAGS := $(patsubst -I%,-isystem %,$(PMIX_CFLAGS))
ifeq ($(shell printf '\043include <pmix.h>\n' | $(CC) $(PMIX_CFLAGS) -E -x c - >/dev/null 2>&1 && echo yes),yes)
PMIX_CFLAGS += -DBFO_HAVE_PMIX
else
PMIX_CFLAGS :=
PMIX_LIBS   :=
ifeq ($(PMIX),1)
$(error PMIX=1 but <pmix.h> was not found (apt-get install libpmix-dev))
endif
endif
endif

# libsodium (Debian: libsodium-dev, 1.0.18): bfo_auth's keys, MACs and
# guarded memory (backends/auth; docs/failure-model.md, "Threat model").
# Required: the bootstrap authenticates with it.  Only the backends link
# it; include/fsm/ stays free of any dependency.
SODIUM_CFLAGS := $(shell pkg-config --cflags libsodium 2>/dev/null)
SODIUM_LIBS   := $(shell pkg-config --libs libsodium 2>/dev/null)
ifeq ($(SODIUM_LIBS),)
ifeq ($(shell printf '\043include <sodium.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo yes),yes)
SODIUM_LIBS   := -lsodium
else
$(error libsodium not found (apt-get install libsodium-dev): bfo_auth needs it)
endif
endif

# libibverbs (Debian: libibverbs-dev): the verbs backend (backends/verbs) is
# built when <infiniband/verbs.h> is found; otherwise make says so and
# builds everything else (a verbs rail is then refused at run time).
# VERBS=0 builds without it; VERBS=1 fails when it is missing.
VERBS    ?= auto
ifneq ($(VERBS),0)
ifeq ($(shell printf '\043include <infiniband/verbs.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo yes),yes)
VERBS_CFLAGS := -DBFO_HAVE_VERBS -Ibackends/verbs
VERBS_LIBS   := -libverbs -pthread
VERBS_SRC    := backends/verbs/bfo_verbs.c
else
ifeq ($(VERBS),1)
$(error VERBS=1 but <infiniband/verbs.h> was not found (apt-get install libibverbs-dev))
endif
$(info make: <infiniband/verbs.h> not found: building without the verbs backend (apt-get install libibverbs-dev))
endif
endif
SHM_SRC  := backends/shm/bfo_shm.c
SHM_HDR  := backends/shm/bfo_shm.h backends/bfo_transport.h backends/bfo_sink.h backends/bfo_setting.h backends/bfo_list.h backends/bfo_link.h backends/bfo_tp.h backends/bfo_tp_os.h $(HEADERS)
NET_SRC  := backends/net/bfo_net.c backends/net/bfo_railsel.c backends/net/bfo_limits.c backends/bfo_setting.c $(BOOT_SRC) $(TCP_SRC) $(SHM_SRC) $(VERBS_SRC)
# ... compiled once per build for the programs that link them (bfo,
# test_net, test_boot, tcp_badpeer, master_worker), with this build's flags,
# sanitizers included; libbfo_net.a has its own -fPIC objects ($(BUILD)/obj)
NET_OBJS := $(patsubst %.c,$(BUILD)/nobj/%.o,$(notdir $(NET_SRC)))
VERBS_HDR := backends/bfo_setting.h backends/verbs/bfo_verbs.h backends/verbs/bfo_verbs_map.h backends/verbs/bfo_verbs_cache.h backends/verbs/bfo_verbs_glue.h backends/verbs/bfo_verbs_ud.h backends/bfo_link.h backends/bfo_tp.h backends/bfo_tp_os.h \
             backends/bfo_sink.h backends/bfo_transport.h
NET_HDR  := backends/net/bfo_net.h backends/net/bfo_railsel.h backends/net/bfo_limits.h $(VERBS_HDR) $(BOOT_HDR) $(TCP_HDR) $(SHM_HDR)

.PHONY: all bench bench-engine bench-tcp bench-tcp-auth bench-shm-conn bench-netns bench-relay dance demo check check-netns check-headers check-layers check-spdx check-docs check-valgrind docs-seq check-sim check-tcp check-verbs vm-setup gen check-gen check-meta diagrams clean
.PHONY: amalgamate check-amalgamate libs install uninstall check-install
.PHONY: fuzz check-fuzz fuzz-corpus check-tsan

all: $(TESTS:%=$(BUILD)/%) $(BUILD)/dance $(BUILD)/bfo $(BUILD)/bench_engine libs $(BUILD)/mini_mpi_loopback

$(BUILD):
	mkdir -p $@

# Every test program, one rule: its main file (tests/NAME.c unless
# MAIN_NAME says otherwise), the sources and objects EXTRA_NAME adds, the
# flags DEFS_NAME adds, linked with LIBS_NAME (default: cmocka).  A test
# that needs nothing else needs no line here; the others say only what
# they add.
TEST_PROGS := $(TESTS) tcp_badpeer tcp_race gen_corpus
TEST_HDR   := $(wildcard tests/*.h tests/fuzz/*.h sim/*.h) $(HEADERS) $(NET_HDR)
NET_LIBS   := $(PMIX_LIBS) $(VERBS_LIBS) $(SODIUM_LIBS) -pthread
# bfo_net over fake transports in its table, every rank in one process
# (test_net); the wire-up's environment and arguments, and a real
# BFO_BOOTSTRAP exchange between forked ranks (test_boot)
EXTRA_test_net  := $(NET_OBJS)
LIBS_test_net   := -lcmocka $(NET_LIBS)
# the settings' parser and the transports' tables of them (bfo_setting.h)
EXTRA_test_settings := $(NET_OBJS)
LIBS_test_settings  := -lcmocka $(NET_LIBS)
# one rail value for the whole job (bfo_railsel.h): made-up hosts
EXTRA_test_railsel := $(NET_OBJS)
LIBS_test_railsel  := -lcmocka $(NET_LIBS)
# the limits checked at init (bfo_limits.h) over a fake getrlimit/setrlimit,
# with the transports' rows
EXTRA_test_limits := $(NET_OBJS)
LIBS_test_limits  := -lcmocka $(NET_LIBS)
# the TCP transport's port ranges: ranks of one host on loopback rails, in
# one process
EXTRA_test_tcp_ports := $(TCP_SRC) $(AUTH_SRC) backends/bfo_setting.c
LIBS_test_tcp_ports  := -lcmocka $(SODIUM_LIBS) -pthread
# what the TCP transport holds follows the connections and their work
EXTRA_test_tcp_res := $(TCP_SRC) $(AUTH_SRC) backends/bfo_setting.c
LIBS_test_tcp_res  := -lcmocka $(SODIUM_LIBS) -pthread
# the TCP transport's connections (spec/conn.rl over real sockets): either
# side dials, both at once, a computing peer, a dead host; loopback, one process
EXTRA_test_tcp_conn := $(TCP_SRC) $(AUTH_SRC) backends/bfo_setting.c
LIBS_test_tcp_conn  := -lcmocka $(SODIUM_LIBS) -pthread
# who may take a TCP rail: forged, replayed and impostor hellos (raw
# sockets) against authenticated ranks; loopback, one process
EXTRA_test_tcp_trust := $(TCP_SRC) $(AUTH_SRC) backends/bfo_setting.c
LIBS_test_tcp_trust  := -lcmocka $(SODIUM_LIBS) -pthread
# a starved acceptor reads the hellos and CONFIRMs waiting past their deadline;
# 70 ranks on loopback, one process
EXTRA_test_tcp_late_hellos := $(TCP_SRC) $(AUTH_SRC) backends/bfo_setting.c
LIBS_test_tcp_late_hellos  := -lcmocka $(SODIUM_LIBS) -pthread
# what a peer never talked to costs: bfo_net on shm and TCP, the heap read
EXTRA_test_idle_peer := $(NET_OBJS)
LIBS_test_idle_peer  := -lcmocka $(NET_LIBS)
EXTRA_test_boot := $(NET_OBJS)
LIBS_test_boot  := -lcmocka $(NET_LIBS)
# keys, MACs, replay windows, the handshake (bfo_auth.h)
EXTRA_test_auth := $(AUTH_SRC)
LIBS_test_auth  := -lcmocka $(SODIUM_LIBS)
# the engine's fast paths against the generated machines: the same
# scenarios compiled again with BFO_NO_FAST_PATH (tests/fastpath_run.h)
EXTRA_test_fastpath := tests/fastpath_slow.c
# the registration cache: the simulator's model and the verbs cache's rules
# (a hook thread against the owner)
LIBS_test_reg_cache := -lcmocka -pthread
# the shared-memory transport through its row, in one process and with a
# forked peer
EXTRA_test_shm  := $(SHM_SRC) $(AUTH_SRC)
LIBS_test_shm   := -lcmocka $(SODIUM_LIBS)
# its rings made on first use and bounded per host
EXTRA_test_shm_res := $(SHM_SRC) $(AUTH_SRC) backends/bfo_setting.c
LIBS_test_shm_res  := -lcmocka $(SODIUM_LIBS)
# hellos waiting unread past their deadline at a starved acceptor (more
# dialers than one epoll_wait returns): read, not dropped; 70 ranks
EXTRA_test_shm_late_hellos := $(SHM_SRC) $(AUTH_SRC)
LIBS_test_shm_late_hellos  := -lcmocka $(SODIUM_LIBS)
EXTRA_test_shm_backlog := $(SHM_SRC) $(AUTH_SRC)
LIBS_test_shm_backlog  := -lcmocka $(SODIUM_LIBS)
# who may take a shm rail: forged, replayed and impostor hellos (a raw unix
# socket on a rank's listener) against authenticated ranks; one process
EXTRA_test_shm_trust := $(SHM_SRC) $(AUTH_SRC)
LIBS_test_shm_trust  := -lcmocka $(SODIUM_LIBS)
# what a peer hands over, not taken at its word (issue 38): doorbells that
# are not eventfds, short segments, rewritten record headers, other uids
EXTRA_test_shm_hostile := $(SHM_SRC) $(AUTH_SRC)
LIBS_test_shm_hostile  := -lcmocka $(SODIUM_LIBS)
# the verbs exchange's authentication (bfo_verbs_auth.h), no device
EXTRA_test_verbs_trust := $(AUTH_SRC)
LIBS_test_verbs_trust  := -lcmocka $(SODIUM_LIBS)
# the libFuzzer targets' corpora replayed without libFuzzer
$(foreach t,$(FUZZ_TARGETS),$(eval MAIN_fuzz_replay_$(t) := tests/fuzz/fuzz_$(t).c) \
  $(eval EXTRA_fuzz_replay_$(t) := tests/fuzz/replay.c) $(eval DEFS_fuzz_replay_$(t) := -DFUZZ_TARGET='"$(t)"'))
EXTRA_fuzz_replay_tcp_frames += $(TCP_SRC) $(AUTH_SRC)
LIBS_fuzz_replay_tcp_frames := -lcmocka $(SODIUM_LIBS)
# the fuzzers' seeds (make fuzz-corpus)
MAIN_gen_corpus := tests/fuzz/gen_corpus.c
LIBS_gen_corpus :=
# the TCP backend's misbehaving peer (t5), and both ends of a rail
# reconnecting at once in one process (t9)
MAIN_tcp_badpeer  := tests/tcp/badpeer.c
EXTRA_tcp_badpeer := $(NET_OBJS)
LIBS_tcp_badpeer  := $(NET_LIBS)
MAIN_tcp_race     := tests/tcp/reconnect_race.c
EXTRA_tcp_race    := $(TCP_SRC) $(AUTH_SRC)
LIBS_tcp_race     := $(SODIUM_LIBS) -pthread
# the layout checks: objects compiled with other layout options (below)
EXTRA_test_abi     = $(ABI_CALLERS:%=$(BUILD)/abi/caller_%.o)
EXTRA_test_net_abi = $(BUILD)/abi/net_same.o $(BUILD)/abi/net_other.o $(BUILD)/libbfo_net.a
LIBS_test_net_abi  := -lcmocka $(NET_LIBS)

.SECONDEXPANSION:
$(TEST_PROGS:%=$(BUILD)/%): $(BUILD)/%: $$(or $$(MAIN_$$*),tests/$$*.c) $$(EXTRA_$$*) $(TEST_HDR) | $(BUILD)
	$(CC) -std=c11 $(WARN) $(CFLAGS) $(SANFLAGS) $(INC) $(PMIX_CFLAGS) $(VERBS_CFLAGS) -Itests -Itests/fuzz -Isim \
	  $(BACK_INC) $(DEFS_$*) $(filter %.c %.o %.a,$^) -o $@ $(if $(filter undefined,$(origin LIBS_$*)),-lcmocka,$(LIBS_$*))

# The layout check (tests/test_abi.c): test_abi.c plays a library built
# with this build's layout; tests/abi_caller.c is compiled again for each
# caller, "same" with that layout, the others with one layout option
# changed (BFO_MAX_RAILS 16, or 32 in a build that has 16; 2, or 4;
# BFO_MAX_ACTIONS 8, or 16), and hands its engine and its BFO_ABI_HERE to
# the library's bfo_engine_init_abi, which must refuse all but "same", by
# name and touching nothing.
ABI_CALLERS       := same rails16 rails2 actions8
ABI_DEFS_same     := $(LAYOUT_DEFS)
ABI_DEFS_rails16  := -DBFO_MAX_RAILS=$(if $(filter 16,$(BFO_MAX_RAILS)),32,16) \
                     $(filter -DBFO_MAX_ACTIONS=%,$(LAYOUT_DEFS))
ABI_DEFS_rails2   := -DBFO_MAX_RAILS=$(if $(filter 2,$(BFO_MAX_RAILS)),4,2) \
                     $(filter -DBFO_MAX_ACTIONS=%,$(LAYOUT_DEFS))
ABI_DEFS_actions8 := -DBFO_MAX_ACTIONS=$(if $(filter 8,$(BFO_MAX_ACTIONS)),16,8) \
                     $(filter -DBFO_MAX_RAILS=%,$(LAYOUT_DEFS))
$(BUILD)/abi:
	mkdir -p $@
$(BUILD)/abi/caller_%.o: tests/abi_caller.c tests/abi_caller.h $(HEADERS) | $(BUILD)/abi
	$(CC) -std=c11 $(WARN) $(CFLAGS) $(SANFLAGS) $(INC_DIRS) $(ABI_DEFS_$*) -Itests -DABI_CALLER=$* -c $< -o $@

# The same for bfo_net_init (tests/test_net_abi.c): a program's call
# (tests/net_abi_caller.c) compiled with this build's layout and with
# another BFO_MAX_RAILS, linked with libbfo_net.a as built.
$(BUILD)/abi/net_%.o: tests/net_abi_caller.c $(NET_HDR) | $(BUILD)/abi
	$(CC) -std=c11 $(WARN) $(CFLAGS) $(SANFLAGS) $(INC_DIRS) $(ABI_DEFS_$(if $(filter same,$*),same,rails16)) \
	  $(BACK_INC) -DNET_ABI_FN=net_abi_$* -c $< -o $@

# bfo: sim (the simulator), run and stream (the TCP backend)
# (each source its own object, so that make -j compiles them side by side)
BFO_TOOLS := tools/bfo.c tools/bfo_tcp_cmds.c tools/bfo_demo.c tools/bfo_bench.c tools/bfo_agree.c tools/bfo_relaybench.c \
             tools/bfo_rawstream.c
BFO_TOBJS := $(patsubst tools/%.c,$(BUILD)/tobj/%.o,$(BFO_TOOLS))
$(BUILD)/nobj $(BUILD)/tobj:
	mkdir -p $@
$(foreach f,$(NET_SRC),$(eval $(BUILD)/nobj/$(notdir $(f:.c=.o)): $(f)))
$(NET_OBJS): $(NET_HDR) | $(BUILD)/nobj
	$(CC) -std=c11 $(WARN) $(CFLAGS) $(SANFLAGS) $(INC) $(PMIX_CFLAGS) $(VERBS_CFLAGS) $(SODIUM_CFLAGS) $(BACK_INC) -c $(filter %.c,$^) -o $@
$(BFO_TOBJS): $(BUILD)/tobj/%.o: tools/%.c $(NET_HDR) $(wildcard sim/*.h) | $(BUILD)/tobj
	$(CC) -std=c11 $(WARN) $(CFLAGS) $(SANFLAGS) $(INC) $(PMIX_CFLAGS) $(VERBS_CFLAGS) -Isim $(BACK_INC) -c $< -o $@
$(BUILD)/bfo: $(BFO_TOBJS) $(NET_OBJS) | $(BUILD)
	$(CC) $(CFLAGS) $(SANFLAGS) $^ -o $@ $(PMIX_LIBS) $(VERBS_LIBS) $(SODIUM_LIBS)

# examples/master_worker.c: a resilient master-worker over bfo_net and
# groups (revoke, agree, shrink); tests/tcp/t20 runs it under real kills
$(BUILD)/master_worker: examples/master_worker.c $(NET_OBJS) $(NET_HDR) | $(BUILD)
	$(CC) -std=c11 $(WARN) $(CFLAGS) $(SANFLAGS) $(INC) $(PMIX_CFLAGS) $(VERBS_CFLAGS) $(BACK_INC) examples/master_worker.c $(NET_OBJS) -o $@ $(PMIX_LIBS) $(VERBS_LIBS) $(SODIUM_LIBS) -pthread

# The backends as one static archive for programs built against an
# installed bfo (make install, bfo.pc): libbfo_net.a (bfo_net.h: bfo_net,
# bfo_boot and every transport built).  -fPIC: an MPI layer may link it
# into a shared object.
ARCHIVES := $(BUILD)/libbfo_net.a
LIB_CFLAGS = -std=c11 $(WARN) $(CFLAGS) -fPIC $(INC) $(PMIX_CFLAGS) $(VERBS_CFLAGS) $(SODIUM_CFLAGS) $(BACK_INC)
libs: $(ARCHIVES)

$(BUILD)/obj:
	mkdir -p $@
$(BUILD)/obj/%.o: $(filter %.c,$(NET_SRC)) $(NET_HDR) | $(BUILD)/obj
	$(CC) $(LIB_CFLAGS) -c $(filter %/$*.c,$(NET_SRC)) -o $@
$(BUILD)/libbfo_net.a: $(patsubst %.c,$(BUILD)/obj/%.o,$(notdir $(NET_SRC)))
	rm -f $@ && $(AR) rcs $@ $^

# The engine under the simulator: every single fault over the standard set
# (eager, copy, PUT, GET, mixed rails; 1-3 rails; a fragment lost, failed or
# delayed, a rail down, a rail silent every way or one way, at every
# operation), every pair over small scenarios (each protocol), three ranks,
# 100,000 random schedules; MPI's cases (synchronous sends, receives posted
# late, messages to itself, context ids of 32 bits whose ranks are not the
# engine's, probes, matched probes with a rendezvous held 30 ms before its
# receive, receives cancelled as their message arrives, sends cancelled
# before a rail is up) under every pair of faults; sequences past the 16-
# and 32-bit wraps under every single fault; then the same with messages
# described (--data: iovec lists and pack/unpack, read in place by the
# transport on some rails and staged by the engine on others): every single
# fault, every pair over a rendezvous, 20,000 random schedules; and credits
# (--budget: windows of 1 to 4 KiB, so that sends of eager size go by
# rendezvous and CREDITs are lost, failed and delayed like any frame):
# every pair of faults over two ranks, every single one over three, 3,000
# random schedules; a frame that finds the receiver's budget spent (a peer
# past its window) fails the run.  And process deaths (--kill, --explore
# kill: docs/failure-model.md): every rank of three killed at every step of
# the standard set, and 30,000 random schedules of rail faults with a rank
# killed at a random step and reported dead 0 to 20 ms later: what the
# killed rank sent or was sent is delivered or ends BFO_ERR_PROC_FAILED,
# nothing hangs, the survivors' messages all arrive.  And relay (--relay,
# --explore cut: docs/engine-design.md, "Relay"): every pair of three and
# of four ranks cut apart (every rail silent both ways) at every step,
# healed 40 operations later every other step: every message arrives, none
# ends with an error; with kills and random rail faults too.  And more
# ranks than 8 (--exchange: 64 ranks each sending to 6 peers, the engines'
# pools growing; 32 ranks sending rendezvous messages to 5 each, a rail
# failing under them): every message arrives.  CHECK_JOBS runs at once
# (tests/run_lines.sh).
define SIM_RUNS
--explore single
--explore single --ranks 3 --rails 3 --msg '0>1:1K' --msg '1>2:100K' --msg '2>0:5K:any'
--explore double --rails 2 --msg '0>1:64' --msg '1>0:20K'
--explore double --rails 3 --msg '0>1:100K'
--explore double --rails 2 --protocol put --msg '0>1:100K' --msg '1>0:64'
--explore double --rails 2 --protocol get --msg '0>1:200K'
--explore single --data mixed --data-rails 0
--explore double --rails 2 --data iov --data-rails 0 --msg '0>1:150K' --msg '1>0:100'
--explore double --rails 2 --data pack --data-rails none --msg '0>1:150K' --msg '1>0:3K'
--explore double --rails 2 --rdma-rails 1 --msg '0>1:100K' --msg '1>0:200K'
--random 100000 --seed 7
--explore double --rails 2 --msg '0>1:64:sync:late' --msg '1>1:9K:late' --msg '0>1:20K:ctx=7:sync' --msg '1>0:100:ctx=4000000000:late'
--explore double --rails 2 --msg '0>1:64:mprobe:late' --msg '0>1:20K:mprobe' --msg '1>0:100K:cancel' --msg '0>1:10:cancel-send' --msg '1>0:9:probe'
--explore double --rails 2 --protocol copy --msg '0>1:20K:mprobe' --msg '0>1:3K:cancel'
--explore single --seq-start 65530 --msg '0>1:64' --msg '0>1:100' --msg '0>1:20K' --msg '0>1:1' --msg '0>1:64:sync' --msg '0>1:8' --msg '1>0:9' --msg '0>1:10'
--explore single --seq-start 4294967290 --msg '0>1:64' --msg '0>1:100' --msg '0>1:20K' --msg '0>1:1' --msg '0>1:64:sync' --msg '0>1:8' --msg '1>0:9' --msg '0>1:10'
--random 20000 --seed 11 --data mixed --data-rails 1
--explore double --rails 2 --budget 4K --msg '0>1:1K:late' --msg '0>1:1K' --msg '0>1:2K:late' --msg '0>1:1K' --msg '0>1:900' --msg '1>0:3K' --msg '0>1:20K:late'
--explore single --ranks 3 --rails 2 --budget 2K --msg '0>1:1K:late' --msg '2>1:1K:late' --msg '0>1:1K' --msg '2>1:900:any' --msg '1>0:64'
--random 3000 --seed 13 --budget 1K
--explore single --leave
--explore single --leave --leave-gap 30
--explore single --ranks 3 --rails 3 --msg '0>1:1K' --msg '1>2:100K' --msg '2>0:5K:any' --leave --leave-gap 20
--explore single --ranks 4 --rails 2 --msg '0>1:1K' --msg '2>3:30K' --msg '3>0:10:any' --leave --leave-gap 7
--explore double --rails 2 --msg '0>1:64' --msg '1>0:20K' --leave
--random 20000 --seed 5 --leave --leave-gap 10
--explore double --rails 2 --protocol copy --msg '0>1:200K' --msg '1>0:100K' --place
--random 20000 --seed 3 --place
--explore kill --ranks 3
--explore kill --ranks 3 --rails 1 --data iov --msg '0>1:100K' --msg '2>1:30K:any' --msg '1>2:64' --msg '0>2:5K:mprobe'
--random 20000 --seed 17 --ranks 3 --kill random
--random 10000 --seed 19 --ranks 4 --kill random --place
--explore cut --relay --ranks 3 --rails 2
--explore cut --relay --ranks 4 --rails 2
--explore cut --relay --ranks 3 --rails 1 --data iov --msg '0>1:100K' --msg '2>1:30K:any' --msg '1>2:64' --msg '0>2:5K:mprobe'
--explore cut --relay --ranks 3 --rails 2 --place
--explore kill --ranks 3 --relay
--random 5000 --seed 23 --ranks 3 --relay
--random 5000 --seed 29 --ranks 3 --relay --kill random
--explore single --ranks 3 --relay --leave --cut 0-1@60
--ranks 64 --exchange 6 --grow
--ranks 32 --exchange 5:5K --fault rail0@op:900:down
--ranks 3 --msg '0>1:5K' --msg '1>2:5K' --msg '2>0:5K' --fault rail0@op:1:down --fault rail1@op:1:down
endef
export SIM_RUNS
# groups' agreements and revocations (bfo agree-sim): one and two deaths,
# false suspicions, partial partitions and a revoker dying halfway, at
# every step; random mixes of them
define AGREE_RUNS
--explore kill --ranks 3
--explore kill2 --ranks 3
--explore kill --ranks 5 --agrees 3 --shrink
--explore kill2 --ranks 4 --agrees 3 --shrink
--explore suspect --ranks 4 --shrink
--explore cut --ranks 4 --shrink
--explore revoke --ranks 3
--explore revoke --ranks 4 --shrink --revoke-alone
--explore revoke --ranks 5 --agrees 3 --shrink
--random 3000 --seed 7 --ranks 4 --agrees 3 --shrink
--random 1000 --seed 8 --ranks 6 --agrees 3 --shrink
endef
export AGREE_RUNS
check-sim: $(BUILD)/bfo
	@printf '%s\n' "$$SIM_RUNS" | bash tests/run_lines.sh $(CHECK_JOBS) ./$(BUILD)/bfo sim
	@printf '%s\n' "$$AGREE_RUNS" | bash tests/run_lines.sh $(CHECK_JOBS) ./$(BUILD)/bfo agree-sim

# Hostile input (tests/fuzz/): libFuzzer targets for frame decoding (wire),
# an engine whose peers are the input (engine) and the TCP backend's
# framing and reassembly over a loopback connection (tcp_frames).  `make
# check` replays each corpus without libFuzzer (fuzz_replay_*, with the
# project's compiler); `make fuzz` builds the fuzzers with clang; `make
# check-fuzz` runs each for FUZZ_SECONDS over its corpus (new inputs go to
# build/fuzz/new-<target>, crashes to build/fuzz/<target>-crash-*, never
# into the committed corpus).
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_BUILD   := build/fuzz$(LAYOUT_SUFFIX)
FUZZ_FLAGS   := -std=c11 $(WARN) -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
                $(INC) -Itests/fuzz -Ibackends -Ibackends/tcp -Ibackends/auth
FUZZ_HDR     := tests/fuzz/fuzz.h tests/fuzz/fuzz_tcp_script.h $(HEADERS)
FUZZ_SRC_wire       := tests/fuzz/fuzz_wire.c
FUZZ_SRC_engine     := tests/fuzz/fuzz_engine.c
FUZZ_SRC_tcp_frames := tests/fuzz/fuzz_tcp_frames.c $(TCP_SRC) $(AUTH_SRC) $(SODIUM_LIBS)

fuzz: $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz_%)

$(FUZZ_BUILD):
	mkdir -p $@

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_HDR) $(TCP_HDR) $(TCP_SRC) | $(FUZZ_BUILD)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(FUZZ_SRC_$*) -o $@

check-fuzz: fuzz
	@set -eo pipefail; n=0; for t in $(FUZZ_TARGETS); do \
	  echo "== fuzz_$$t: $(FUZZ_SECONDS) s over tests/fuzz/corpus/$$t ($$(ls tests/fuzz/corpus/$$t | wc -l) inputs)"; \
	  rm -rf $(FUZZ_BUILD)/new-$$t; mkdir -p $(FUZZ_BUILD)/new-$$t; \
	  if ! ./$(FUZZ_BUILD)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -print_final_stats=1 \
	       -artifact_prefix=$(FUZZ_BUILD)/$$t- $(FUZZ_BUILD)/new-$$t tests/fuzz/corpus/$$t \
	       > $(FUZZ_BUILD)/$$t.log 2>&1; then \
	    grep -v '^#' $(FUZZ_BUILD)/$$t.log | tail -40; \
	    echo "check-fuzz: fuzz_$$t failed: the input is $$(ls $(FUZZ_BUILD)/$$t-* 2>/dev/null | head -1)"; exit 1; \
	  fi; \
	  execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(FUZZ_BUILD)/$$t.log); \
	  rate=$$(sed -n 's/^stat::average_exec_per_sec: *//p' $(FUZZ_BUILD)/$$t.log); \
	  cov=$$(grep -o 'cov: [0-9]*' $(FUZZ_BUILD)/$$t.log | tail -1); \
	  echo "   fuzz_$$t: $$execs executions ($$rate/s), $$cov, $$(ls $(FUZZ_BUILD)/new-$$t | wc -l) new inputs in $(FUZZ_BUILD)/new-$$t"; \
	  [ "$$execs" -gt 0 ] || { echo "check-fuzz: fuzz_$$t ran nothing"; exit 1; }; \
	  n=$$((n + 1)); \
	done; echo "== check-fuzz: every fuzzer ran $(FUZZ_SECONDS) s without a crash"; \
	echo "tests: $$n passed, 0 failed"

# Seeds: valid frames of every type, real engine exchanges recorded as
# scripts, TCP byte streams (tests/fuzz/gen_corpus.c).
fuzz-corpus: $(BUILD)/gen_corpus
	mkdir -p tests/fuzz/corpus
	./$(BUILD)/gen_corpus tests/fuzz/corpus

# Real processes over loopback rails (127.0.0.1, 127.0.0.2): a clean
# stream, connections reset from outside (ss -K), silent loss (nftables, or
# the backend's fault hook), a rank killed, a peer sending malformed frames,
# both ends of a rail reconnecting at once (t9, in one process).
check-tcp: $(BUILD)/bfo $(BUILD)/tcp_badpeer $(BUILD)/tcp_race $(BUILD)/master_worker
	@set -eo pipefail; n=0; for t in tests/tcp/t*_*.sh; do \
	  if [ -n "$(TCP_SKIP)" ] && echo "$$t" | grep -Eq '$(TCP_SKIP)'; then echo "== $$t: skipped (TCP_SKIP)"; continue; fi; \
	  echo "== $$t"; BFO_TCP=./$(BUILD)/bfo BFO_BADPEER=./$(BUILD)/tcp_badpeer BFO_RACE=./$(BUILD)/tcp_race \
	    BFO_MASTER_WORKER=./$(BUILD)/master_worker \
	    bash $$t | tee $(BUILD)/tcp.log; \
	  n=$$((n + $$(grep -c '^ok:' $(BUILD)/tcp.log || true))); \
	done; echo "== check-tcp: every TCP test passed ($(CC)$(if $(filter 1,$(SAN)), with ASan+UBSan,))"; \
	echo "tests: $$n passed, 0 failed"

# Gray failures (tests/netns): each test makes its own namespaces and veth
# pairs and removes them.
check-netns: $(BUILD)/bfo
	@set -eo pipefail; n=0; for t in tests/netns/n*_*.sh; do \
	  echo "== $$t"; BFO_NETNS=./$(BUILD)/bfo bash $$t | tee $(BUILD)/netns.log; \
	  n=$$((n + $$(grep -c '^ok:' $(BUILD)/netns.log || true))); \
	done; echo "== check-netns: every gray-failure test passed"; \
	echo "tests: $$n passed, 0 failed"

# ThreadSanitizer (tests/tcp/threads.c): bfo_net with thread_safe, 4
# threads on one engine per rank, each posting, testing and progressing at
# once; two ranks over loopback rails (bfo run from the normal build), once
# with bfo_net's progress thread too.  Built apart (TSan owns the threads):
# TCP and shm, no verbs, no PMIx (GCC: -Wno-tsan, for the shm rings' fences,
# which order memory shared with another process: nothing TSan sees).
TSAN_BUILD := build/$(notdir $(CC))-tsan
TSAN_SRC   := backends/net/bfo_net.c backends/net/bfo_limits.c backends/bfo_setting.c backends/boot/bfo_boot.c backends/boot/bfo_boot_pmix.c $(AUTH_SRC) $(TCP_SRC) $(SHM_SRC)
$(TSAN_BUILD)/threads: tests/tcp/threads.c $(TSAN_SRC) $(NET_HDR)
	mkdir -p $(TSAN_BUILD)
	$(CC) -std=c11 $(WARN) $(if $(findstring clang,$(CC)),,-Wno-tsan) -O1 -g -fsanitize=thread -fno-omit-frame-pointer \
	  $(INC) $(BACK_INC) \
	  tests/tcp/threads.c $(TSAN_SRC) -o $@ $(SODIUM_LIBS) -pthread
check-tsan: $(BUILD)/bfo $(TSAN_BUILD)/threads
	@set -e; n=0; for extra in "" --progress-thread; do \
	  echo "== threads $$extra (ThreadSanitizer, 2 ranks, rails 127.0.0.2,127.0.0.3)"; \
	  TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
	    ./$(BUILD)/bfo run -n 2 --rails 127.0.0.2,127.0.0.3 --timeout 100 -- ./$(TSAN_BUILD)/threads $$extra; \
	  n=$$((n + 1)); \
	done; echo "== check-tsan: ThreadSanitizer clean, 4 threads per engine"; echo "tests: $$n passed, 0 failed"

# The verbs backend on real Soft-RoCE: two QEMU/TCG guests, two rxe rails
# and a TCP rail between them; the faults of t1-t5 and the ping-pong of t6,
# (t9) an MPI stream over pml/bfo across the guests with a verbs cable
# pulled, and (t10) an MPI program that unmaps and maps again its buffers
# between RDMA transfers (tests/verbs/; root, qemu-system-x86, rdma-core,
# ibverbs-providers, busybox-static, Open MPI; ~7 min).  Needs the verbs
# backend built (libibverbs-dev); builds pml/bfo, the MPI stream and
# tests/pml/remap.c next to it (libopenmpi-dev), which run.sh stages.
check-verbs: $(BUILD)/bfo pml faults-stream pml-remap
	@if [ -z "$(VERBS_SRC)" ]; then echo "check-verbs: built without libibverbs (apt-get install libibverbs-dev)"; exit 1; fi
	bash tests/verbs/run.sh ./$(BUILD)/bfo

.PHONY: pml-remap
pml-remap: $(BUILD)/pml/remap
$(BUILD)/pml/remap: tests/pml/remap.c tests/pml/common.h | $(BUILD)/pml
	$(MPICC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -o $@ $<

vm-setup:
	bash tests/verbs/vm.sh setup

# Instructions per eager pair and per 1 MiB rendezvous under callgrind (the
# allocation count after init is tests/test_noalloc.c, in make check).
bench-engine: $(BUILD)/bench_engine
	bash bench/bench_engine.sh ./$(BUILD)/bench_engine

# Throughput between two network namespaces over veth rails, clean,
# shaped and degraded (bench/netns.sh; root), and a plot of a degrade and
# recover (bench-netns.png).  make bench: both benches.
bench-netns: $(BUILD)/bfo
	BFO_NETNS=./$(BUILD)/bfo bash bench/netns.sh $(BUILD)/bench-netns.png
bench-relay: $(BUILD)/bfo
	BFO_NETNS=./$(BUILD)/bfo bash bench/relay.sh
# 8-byte latency and 1 MiB bandwidth against raw TCP, and two loopback
# rails against one, ratios of interleaved rounds in one run (bench/tcp.sh).
bench-tcp: $(BUILD)/bfo
	bash bench/tcp.sh ./$(BUILD)/bfo
# What authenticated TCP hellos cost: connection set-up (dial to CONNECTED
# at both ends) and 8-byte ping-pong, without and with a bfo_auth,
# interleaved in one run (bench/tcp_auth.c; loopback, one process).
bench-tcp-auth: $(BUILD)/tcp_auth
	./$(BUILD)/tcp_auth
$(BUILD)/tcp_auth: bench/tcp_auth.c $(TCP_SRC) $(AUTH_SRC) backends/bfo_setting.c $(HEADERS) | $(BUILD)
	$(CC) -std=c11 $(WARN) $(CFLAGS) $(INC) $(BACK_INC) bench/tcp_auth.c $(TCP_SRC) $(AUTH_SRC) backends/bfo_setting.c \
	  -o $@ $(SODIUM_LIBS) -pthread
# What a shm connection costs: N forked ranks of this host, each with its own
# shm transport and bfo_auth, rank 0 to rank 1 or every rank to every other at
# once, sleeping as pml/bfo does (bench/shm_conn.c).
bench-shm-conn: $(BUILD)/shm_conn
	./$(BUILD)/shm_conn -n 2 -m pair -r 3
	./$(BUILD)/shm_conn -n 16 -m all -r 3
$(BUILD)/shm_conn: bench/shm_conn.c $(SHM_SRC) $(AUTH_SRC) $(HEADERS) | $(BUILD)
	$(CC) -std=c11 $(WARN) $(CFLAGS) $(INC) $(BACK_INC) bench/shm_conn.c $(SHM_SRC) $(AUTH_SRC) \
	  -o $@ $(SODIUM_LIBS) -pthread
bench: bench-engine bench-tcp bench-netns bench-relay

$(BUILD)/bench_engine: bench/bench_engine.c $(HEADERS) $(wildcard sim/*.h) | $(BUILD)
	$(CC) -std=c11 $(WARN) $(CFLAGS) $(SANFLAGS) $(INC) -Isim $< -o $@

# The main job: bfo demo (2 processes, 2 rails, a verified stream through a
# connection reset and a silent rail; root for ss -K and nft).
demo: $(BUILD)/bfo
	./$(BUILD)/bfo demo

# The restart dance, traced transition by transition (no network needed).
dance: $(BUILD)/dance
	./$(BUILD)/dance

$(BUILD)/dance: examples/dance.c $(HEADERS) | $(BUILD)
	$(CC) -std=c11 $(WARN) $(CFLAGS) $(SANFLAGS) $(INC) $< -o $@

# examples/mini_mpi's in-process program, in the tree (check-install builds
# it out of the tree); make check runs it, under the sanitizers with SAN=1.
MINI_MPI := examples/mini_mpi
$(BUILD)/mini_mpi_loopback: $(MINI_MPI)/loopback.c $(MINI_MPI)/mini_mpi.c $(MINI_MPI)/exchange.c \
                            $(MINI_MPI)/mini_mpi.h $(MINI_MPI)/exchange.h $(HEADERS) | $(BUILD)
	$(CC) -std=c11 $(WARN) $(CFLAGS) $(SANFLAGS) $(INC) $(filter %.c,$^) -o $@

# make check builds with CHECK_JOBS jobs (default: every core) unless it runs
# under a make that has its own (-jN given)
CHECK_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
check:
	@$(MAKE) --no-print-directory $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(CHECK_JOBS)) \
	  all check-headers check-amalgamate check-docs check-spdx
	@set -eo pipefail; total=0; for t in $(TESTS); do \
	  echo "== $$t"; ./$(BUILD)/$$t 2>&1 | tee $(BUILD)/$$t.log; \
	  n=$$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' $(BUILD)/$$t.log); total=$$((total + n)); \
	done; \
	echo "== mini_mpi_loopback (examples/mini_mpi: two engines, one process, every byte checked)"; \
	./$(BUILD)/mini_mpi_loopback; total=$$((total + 1)); \
	echo "== all tests passed ($(CC)$(if $(filter 1,$(SAN)), with ASan+UBSan,))"; \
	echo "tests: $$total passed, 0 failed"

# Every public and generated header must compile on its own, as C11 and as
# C++17, with every warning an error; first, they must include downward only.
# A part of the engine (bfo_engine_*.h) compiles first, with only the parts
# below it seen, then bfo_engine.h defines what it calls up through the
# prototypes of bfo_engine_hooks.h (alone, those would be used but never
# defined).
check-headers: check-layers | $(BUILD)
	@set -e; for h in $(HEADERS); do \
	  b=$$(basename $$h); \
	  case $$b in bfo_engine_*) rest='#include "bfo_engine.h"\n' what="does not compile before the rest of bfo_engine.h";; \
	                           *) rest= what="is not self-contained";; esac; \
	  printf "#include \"%s\"\n$$rest" $$b > $(BUILD)/hdr.c; \
	  $(CC) -std=c11 $(WARN) $(INC) -fsyntax-only $(BUILD)/hdr.c || { echo "$$h: $$what in C11"; exit 1; }; \
	  $(CXX) -x c++ -std=c++17 $(WARN) $(INC) -fsyntax-only $(BUILD)/hdr.c || { echo "$$h: $$what in C++17"; exit 1; }; \
	done; echo "== $(words $(HEADERS)) headers compile alone as C11 ($(CC)) and C++17 ($(CXX)), each part of the engine before the rest of it"
	@if grep -nE '\b(malloc|calloc|realloc|free|aligned_alloc)[[:space:]]*\(' include/fsm/*.h gen/*.h; then \
	  echo "the headers must not allocate: malloc/calloc/realloc/free found above"; exit 1; \
	fi; echo "== no malloc, calloc, realloc or free under include/ and gen/"

# The layers, lowest first: include/fsm/'s base (bfo_core.h, bfo_le.h: they
# include nothing of gen/), gen/, the rest of include/fsm/, backends/,
# tools/.  A generated header including a header that includes gen/ back,
# or any include cycle, fails here (tests/check_layers.py); so does a part
# of the engine (bfo_engine_*.h) that includes one of its own level or
# above, or one included by anything but bfo_engine.h (ENGINE_PARTS there).
check-layers:
	@$(PYTHON) tests/check_layers.py

# Every source file says its license on its first line (the second after
# #!): gen/ included (tools/bfo_gen.py writes it), tests/fuzz/corpus/ (data)
# not; git's tracked files, or in a tarball the files found
# (tests/check_spdx.sh).
check-spdx:
	@bash tests/check_spdx.sh

# The single header: every header of include/fsm/ and gen/ in dependency
# order, their own #include lines removed (tools/bfo_amalgamate.sh).  Made
# from the committed headers, not committed itself: CI makes it afresh.
AMALG := build/dist/bfo_single.h
amalgamate: $(AMALG)
$(AMALG): $(HEADERS) tools/bfo_amalgamate.sh
	@bash tools/bfo_amalgamate.sh $@

check-amalgamate: $(AMALG) | $(BUILD)
	@CC=$(CC) CXX=$(CXX) bash tests/check_amalgamate.sh $(AMALG) $(BUILD)

# Installing: the public headers and the backends' (one directory, as they
# include each other by name), bfo, the archives and bfo.pc.  bfo.pc
# names pmix and libibverbs when they are built in (tools/bfo_install.sh).
PREFIX       ?= /usr/local
DESTDIR      ?=
BINDIR       ?= $(PREFIX)/bin
INCLUDEDIR   ?= $(PREFIX)/include
LIBDIR       ?= $(PREFIX)/lib
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DOCDIR       ?= $(PREFIX)/share/doc/bfo
bfo_ver      = $(shell sed -n 's/^\#define BFO_VERSION_$(1) \([0-9]*\)$$/\1/p' include/fsm/bfo.h)
VERSION      := $(call bfo_ver,MAJOR).$(call bfo_ver,MINOR).$(call bfo_ver,PATCH)
INSTALL_HDR  := $(HEADERS) backends/bfo_sink.h backends/bfo_transport.h backends/bfo_setting.h backends/boot/bfo_boot.h \
                backends/tcp/bfo_tcp.h backends/verbs/bfo_verbs.h backends/shm/bfo_shm.h backends/net/bfo_net.h \
                backends/net/bfo_railsel.h
PC_REQUIRES  :=
PC_LIBS      :=
ifneq ($(PMIX_LIBS),)
ifneq ($(shell pkg-config --exists pmix 2>/dev/null && echo yes),)
PC_REQUIRES  += pmix
else
PC_LIBS      += $(PMIX_LIBS)
endif
endif
ifneq ($(VERBS_SRC),)
ifneq ($(shell pkg-config --exists libibverbs 2>/dev/null && echo yes),)
PC_REQUIRES  += libibverbs
else
PC_LIBS      += -libverbs
endif
endif
# bfo_auth (the bootstrap's and the connections' keys)
ifneq ($(shell pkg-config --exists libsodium 2>/dev/null && echo yes),)
PC_REQUIRES  += libsodium
else
PC_LIBS      += $(SODIUM_LIBS)
endif
# bfo_net's lock and progress thread (and the verbs backend's)
PC_LIBS      += -pthread
INSTALL_VARS = DESTDIR='$(DESTDIR)' PREFIX='$(PREFIX)' BINDIR='$(BINDIR)' INCLUDEDIR='$(INCLUDEDIR)' \
               LIBDIR='$(LIBDIR)' PKGCONFIGDIR='$(PKGCONFIGDIR)' DOCDIR='$(DOCDIR)'
# The layout the archives and bfo were built with, as the compiler sees it
# (the headers' defaults, or this make's BFO_MAX_RAILS and BFO_MAX_ACTIONS):
# bfo.pc's Cflags carry it, so a program built through pkg-config has it.
LAYOUT_VALUES = $(shell printf '\043include "bfo_engine.h"\nBFO_MAX_RAILS BFO_MAX_ACTIONS\n' | \
                  $(CC) $(CFLAGS) $(INC) -E -P -x c - 2>/dev/null | tail -1)
PC_CFLAGS     = $(join $(LAYOUT_OPTS:%=-D%=),$(LAYOUT_VALUES))

install: $(BUILD)/bfo $(ARCHIVES)
	@if [ "$(SAN)" = 1 ]; then echo "install: not a sanitizer build (SAN=1)"; exit 1; fi
	@$(INSTALL_VARS) BFO_BIN='$(BUILD)/bfo' HEADERS='$(INSTALL_HDR)' ARCHIVES='$(ARCHIVES)' \
	  VERSION='$(VERSION)' PC_REQUIRES='$(PC_REQUIRES)' PC_LIBS='$(PC_LIBS)' PC_CFLAGS='$(PC_CFLAGS)' \
	  bash tools/bfo_install.sh install

uninstall:
	@$(INSTALL_VARS) ALL_HEADER_NAMES='$(notdir $(INSTALL_HDR))' \
	  bash tools/bfo_install.sh uninstall

# An out-of-tree consumer end to end: install into a scratch prefix (and
# once under DESTDIR), build examples/mini_mpi there through pkg-config and
# run its two ranks over loopback rails, build it against build/dist's
# single header copied alone, uninstall, and find nothing left.
check-install: $(BUILD)/bfo $(ARCHIVES) $(AMALG)
	@CC='$(CC)' CXX='$(CXX)' MAKE='$(MAKE)' MAKE_ARGS='CC=$(CC) CXX=$(CXX) PMIX=$(PMIX) VERBS=$(VERBS) $(LAYOUT_ARGS)' \
	  VERSION='$(VERSION)' INSTALL_HDR='$(notdir $(INSTALL_HDR))' AMALG='$(AMALG)' bash tests/check_install.sh

gen:
	$(PYTHON) tools/bfo_gen.py --ragel $(RAGEL)

# The docs that the code generates: sequence diagrams drawn from bfo sim
# traces, tables from spec/ and gen/ (the README's machines), snippets
# copied from tests/test_porting.c (compiled and run by make check), and
# the API reference's coverage of the headers.
docs-seq: $(BUILD)/bfo
	$(PYTHON) tools/bfo_seq.py update --bfo ./$(BUILD)/bfo $(DOCS_GEN)

check-docs: $(BUILD)/bfo
	@$(PYTHON) tools/bfo_seq.py update --check --bfo ./$(BUILD)/bfo $(DOCS_GEN)
	@$(PYTHON) tests/check_api_docs.py

# Memcheck on a subset (tests/valgrind.sh): not with SAN=1, which owns malloc.
check-valgrind: $(BUILD)/bfo $(BUILD)/test_wire $(BUILD)/test_transitions $(BUILD)/test_scenarios \
                $(ENGINE_TESTS:%=$(BUILD)/%) $(BUILD)/test_verbs_map $(BUILD)/test_porting $(BUILD)/test_net $(BUILD)/test_boot
	@if [ "$(SAN)" = 1 ]; then echo "check-valgrind: not with SAN=1 (the sanitizers own malloc)"; exit 1; fi
	ENGINE_TESTS='$(ENGINE_TESTS)' bash tests/valgrind.sh ./$(BUILD)

check-gen:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(PYTHON) tools/bfo_gen.py --ragel $(RAGEL) --out "$$tmp" >/dev/null && \
	if grep -rnE '^[[:space:]]*#[[:space:]]*line|$(CURDIR)|/tmp/' gen; then \
	  echo "check-gen: gen/ must hold no #line directive and no path of this machine"; exit 1; \
	fi; \
	if diff -r -u gen "$$tmp" > "$$tmp.diff"; then \
	  rm -f "$$tmp.diff"; echo "== check-gen: gen/ is what spec/ generates"; \
	else \
	  head -40 "$$tmp.diff"; rm -f "$$tmp.diff"; \
	  echo "check-gen: gen/ differs from what spec/ generates: run 'make gen' and commit; never edit gen/ by hand"; \
	  exit 1; \
	fi

diagrams: $(MACHINES:%=docs/diagrams/bfo_%.svg)

docs/diagrams/%.svg: gen/%.dot
	@mkdir -p docs/diagrams
	$(DOT) -Tsvg $< -o $@

clean:
	rm -rf build

# Proves check-gen and the coverage test catch a hand edit of gen/ and a
# spec change without tests, the gen/ stamp a gen/ for other headers,
# check-layers a header that includes gen/ back and a part of the engine
# that includes one above it or beside it, check-headers a part that calls
# up without its prototype in bfo_engine_hooks.h, test_abi an engine init
# that does not check its caller's layout, the docs checks an
# undocumented function and stale diagrams or snippets, and check-spdx a
# source file without its license line (on a scratch copy; needs Ragel and
# python3).
check-meta: $(BUILD)/bfo
	CC=$(CC) CXX=$(CXX) BFO=$(CURDIR)/$(BUILD)/bfo bash tests/check_meta.sh

# ---------------------------------------------------------------- pml/bfo
# The Open MPI 4.1 PML component (mpi/ompi/, docs/mpi.md), built against
# the system's Open MPI (Debian: libopenmpi-dev): its headers are where
# `mpicc --showme:incdirs` says, with a stand-in for ompi/peruse/peruse.h,
# the one header the package lacks.  The component links bfo_net (the
# -fPIC archive) into itself and keeps its symbols to itself.
#   make pml          $(BUILD)/pml/mca_pml_bfo.so
#   make install-pml  into ~/.openmpi/components (or PML_PREFIX: Open MPI's
#                     own component directory, `ompi_info --path pkglibdir`)
#   make check-pml    MPI programs over it, 2 and 4 ranks, faults (tests/pml)
#   make bench-pml    against ob1 and ucx, one run (bench/pml)
#   make bench-scale  16 to 128 ranks, ob1 and pml/bfo, one run (bench/scale)
.PHONY: pml pml-test install-pml uninstall-pml check-pml bench-pml
MPICC        ?= mpicc
OMPI_INCDIRS := $(shell $(MPICC) --showme:incdirs 2>/dev/null)
OMPI_CFLAGS  := $(foreach d,$(OMPI_INCDIRS),-isystem $(d)) \
                $(if $(filter x86_64%,$(shell $(CC) -dumpmachine)),-mcx16)
OMPI_LIBS    := $(shell $(MPICC) --showme:link 2>/dev/null) -lopen-rte -lopen-pal
PML_SRC      := mpi/ompi/pml_bfo.c mpi/ompi/pml_bfo_component.c
PML_SO       := $(BUILD)/pml/mca_pml_bfo.so
PML_PREFIX   ?= $(HOME)/.openmpi/components
pml: $(PML_SO)
$(BUILD)/pml:
	mkdir -p $@
$(PML_SO): $(PML_SRC) mpi/ompi/pml_bfo.h $(BUILD)/libbfo_net.a | $(BUILD)/pml
	@test -n "$(OMPI_INCDIRS)" || { echo "make pml: mpicc not found (apt-get install libopenmpi-dev)"; exit 1; }
	$(CC) -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter $(CFLAGS) $(SANFLAGS) -fPIC -shared \
	  $(OMPI_CFLAGS) $(INC) $(BACK_INC) $(PML_SRC) $(BUILD)/libbfo_net.a -o $@ \
	  -Wl,--exclude-libs,ALL -Wl,-z,defs $(OMPI_LIBS) $(NET_LIBS)
# The test build (pml_bfo_test.h): the same sources with -DPML_BFO_TEST_HOOKS,
# in a directory of its own (the shipped component has no hook); run by
# tests/pml/hooks.c under make check-pml (BFO_PML_TEST_DIR).
PML_TEST_SO  := $(BUILD)/pml-test/mca_pml_bfo.so
pml-test: $(PML_TEST_SO)
$(BUILD)/pml-test:
	mkdir -p $@
$(PML_TEST_SO): $(PML_SRC) mpi/ompi/pml_bfo.h mpi/ompi/pml_bfo_test.h $(BUILD)/libbfo_net.a | $(BUILD)/pml-test
	@test -n "$(OMPI_INCDIRS)" || { echo "make pml-test: mpicc not found (apt-get install libopenmpi-dev)"; exit 1; }
	$(CC) -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter $(CFLAGS) $(SANFLAGS) -fPIC -shared \
	  -DPML_BFO_TEST_HOOKS $(OMPI_CFLAGS) $(INC) $(BACK_INC) $(PML_SRC) $(BUILD)/libbfo_net.a -o $@ \
	  -Wl,--exclude-libs,ALL -Wl,-z,defs $(OMPI_LIBS) $(NET_LIBS) -ldl
install-pml: $(PML_SO)
	mkdir -p $(DESTDIR)$(PML_PREFIX)
	cp $(PML_SO) $(DESTDIR)$(PML_PREFIX)/mca_pml_bfo.so
uninstall-pml:
	rm -f $(DESTDIR)$(PML_PREFIX)/mca_pml_bfo.so
# the tests' and the benchmark's own rules
include tests/pml/check.mk
include tests/pml/faults/faults.mk
include bench/pml/bench.mk
bench-pml: pml
include bench/scale/bench.mk
check-pml: pml pml-test
	SHORT=$${SHORT:-1} BFO_PML_DIR=$(CURDIR)/$(BUILD)/pml BFO_PML_TEST_DIR=$(CURDIR)/$(BUILD)/pml-test \
	  $(MAKE) check-pml-features check-pml-faults
# Across hosts (tests/hosts/README.md): 4 network + UTS namespaces as
# hosts, 4 ranks each, mpirun through an rsh agent that enters them; the
# cases that do not work yet (issue 36) print "gap:" and are not counted.
.PHONY: check-hosts
check-hosts: pml pml-tests $(FAULTS_STREAM)
	@BFO_PML_DIR=$(CURDIR)/$(BUILD)/pml PMLT_BUILD=$(CURDIR)/$(PMLT_BUILD) \
	  FAULTS_STREAM=$(CURDIR)/$(FAULTS_STREAM) bash tests/hosts/run.sh
