// SPDX-License-Identifier: BSD-3-Clause
/* dance.c - the restart dance, traced.
 *
 * Drives a sender and a receiver machine through a rendezvous whose FRAG is
 * lost on a failing rail, the restart dance that follows, and the restarted
 * message, printing every transition through the trace hook.  The events
 * are what an engine would feed; the actions are what it would carry out.
 *
 *   make demo
 */
#include <stdio.h>

#include "bfo.h"

static void trace(void *user, const bfo_machine *m, const bfo_step *st)
{
    (void)user;
    printf("%-8s %-22s --%-20s--> %s", (const char *)st->obj,
           bfo_fsm_state_name(m, st->from), bfo_event_name(st->event),
           bfo_fsm_state_name(m, st->to));
    for (unsigned i = 0; i < st->n_actions; i++)
        printf("%s%s", i ? ", " : " / ", m->action_names[st->actions[i]]);
    if (st->result != BFO_OK)
        printf("  [%s]", bfo_errname(st->result));
    printf("\n");
}

int main(void)
{
    static const struct { char side; int event; const char *why; } story[] = {
        { 'S', BFO_EV_RNDV_CHOSEN, "a 4 MiB message: rendezvous" },
        { 'R', BFO_EV_RNDV_RCVD, NULL },
        { 'R', BFO_EV_COPY_CHOSEN, "no RDMA: the receiver takes it by copy" },
        { 'S', BFO_EV_RNDV_DELIVERED, NULL },
        { 'S', BFO_EV_ACK_RCVD, NULL },
        { 'R', BFO_EV_ACK_DELIVERED, NULL },
        { 'S', BFO_EV_FRAG_FAILED, "rail 0 dies under a FRAG" },
        { 'S', BFO_EV_FRAG_DELIVERED, "a FRAG on rail 1 still lands" },
        { 'S', BFO_EV_DRAINED, "nothing left in flight: start the dance" },
        { 'R', BFO_EV_NOTIFY_RCVD, NULL },
        { 'S', BFO_EV_NOTIFY_FAILED, "the NOTIFY was on a dying rail too, but arrived" },
        { 'R', BFO_EV_NOTIFY_DUP_RCVD, NULL },
        { 'R', BFO_EV_DRAINED, NULL },
        { 'S', BFO_EV_RESTARTACK_RCVD, NULL },
        { 'S', BFO_EV_NOTIFY_DELIVERED, NULL },
        { 'S', BFO_EV_RNDV_CHOSEN, "the message again from offset 0, on rail 1" },
        { 'R', BFO_EV_RNDV_RCVD, NULL },
        { 'R', BFO_EV_COPY_CHOSEN, NULL },
        { 'S', BFO_EV_RESTARTNACK_RCVD, "a forged NACK is refused, nothing changes" },
        { 'S', BFO_EV_RNDV_DELIVERED, NULL },
        { 'S', BFO_EV_ACK_RCVD, NULL },
        { 'R', BFO_EV_FRAG_RCVD, NULL },
        { 'S', BFO_EV_FRAG_DELIVERED, NULL },
        { 'R', BFO_EV_ACK_DELIVERED, NULL },
        { 'S', BFO_EV_ALL_DELIVERED, NULL },
        { 'R', BFO_EV_ALL_DELIVERED, NULL },
    };
    bfo_tracer tr = { trace, NULL };
    bfo_send_fsm send;
    bfo_recv_fsm recv;
    bfo_step st_s = { 0 }, st_r = { 0 };

    st_s.trace = &tr;
    st_s.obj = "sender";
    st_r.trace = &tr;
    st_r.obj = "receiver";
    bfo_send_init(&send);
    bfo_recv_init(&recv);
    for (size_t i = 0; i < sizeof story / sizeof story[0]; i++) {
        if (story[i].why)
            printf("\n# %s\n", story[i].why);
        if (story[i].side == 'S')
            bfo_send_step(&send, story[i].event, &st_s);
        else
            bfo_recv_step(&recv, story[i].event, &st_r);
    }
    printf("\nsender %s, receiver %s\n", bfo_send_state_name(send.cs),
           bfo_recv_state_name(recv.cs));
    return send.cs == BFO_SEND_ST_COMPLETE && recv.cs == BFO_RECV_ST_COMPLETE ? 0 : 1;
}
