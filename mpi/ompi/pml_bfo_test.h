// SPDX-License-Identifier: BSD-3-Clause
/* pml_bfo_test.h - the hooks of pml/bfo's test build (make pml-test:
 * $(BUILD)/pml-test/mca_pml_bfo.so, compiled with -DPML_BFO_TEST_HOOKS;
 * the shipped component has none of it).
 *
 * The test build calls the program's
 *     int pml_bfo_test_hook(int point, void *request);
 * (found with dlsym: link the program with -rdynamic) at each point below,
 * on the thread that runs that step, with no lock of the component held.
 * request is the MPI_Request (an mca_pml_bfo_request_t, Open MPI's request
 * first), or NULL where there is none yet.  The hook may call MPI on that
 * request (MPI_Request_free, MPI_Cancel): that is what tests/pml/hooks.c
 * does between the steps of a completion.  Its return value matters only
 * at the injection points: nonzero makes that step fail.  The test build
 * also poisons a released request and aborts ("pml bfo test: ...") when a
 * request is released twice or a completion touches a released one. */
#ifndef PML_BFO_TEST_H
#define PML_BFO_TEST_H

enum pml_bfo_test_point {
    /* a completion in progress (req_done), in this order */
    PML_BFO_HOOK_POPPED = 1,    /* popped from the engine's done queue (in_engine 0) */
    PML_BFO_HOOK_STATUS = 2,    /* its MPI status written, buffers given back */
    PML_BFO_HOOK_COMPLETED = 3, /* ompi_request_complete returned (or skipped: freed) */
    /* the request goes back to the free list (each request once) */
    PML_BFO_HOOK_RELEASE = 4,
    /* injection points: nonzero makes the step fail */
    PML_BFO_HOOK_MSG_ALLOC = 10, /* improbe's ompi_message_alloc (request: NULL) */
    PML_BFO_HOOK_START = 11,     /* MPI_Start(all) posting this request */
    PML_BFO_HOOK_PACK = 12,      /* the convertor packing a piece of this send */
    PML_BFO_HOOK_UNPACK = 13     /* the convertor unpacking a piece of this receive */
};

#define PML_BFO_TEST_LIVE 0x11fe11feu /* test_live of a request that is not released */
#define PML_BFO_TEST_DEAD 0xdeadbeefu /* and of a released one */

#endif /* PML_BFO_TEST_H */
