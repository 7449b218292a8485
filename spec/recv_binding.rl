// SPDX-License-Identifier: BSD-3-Clause
/* recv_binding.rl - binds the receive request grammar (recv.rl) to C.
 *
 * Each action emits its own BFO_RECV_ACT_* into the step record; the engine
 * carries the actions out.  Nothing here allocates, blocks or does I/O.
 * tools/bfo_gen.py runs Ragel on this file (-G2) and wraps the output into
 * gen/bfo_recv.h with the names and the typed API.
 */
#define BFO_RECV__EMIT(a) bfo__emit(out, BFO_RECV_ACT_##a)

%%{
  machine bfo_recv;
  alphtype unsigned char;

  action deliver_match      { BFO_RECV__EMIT(DELIVER_MATCH); }
  action accept_rndv        { BFO_RECV__EMIT(ACCEPT_RNDV); }
  action accept_rget        { BFO_RECV__EMIT(ACCEPT_RGET); }
  action post_ack           { BFO_RECV__EMIT(POST_ACK); }
  action post_puts          { BFO_RECV__EMIT(POST_PUTS); }
  action post_reads         { BFO_RECV__EMIT(POST_READS); }
  action account_read       { BFO_RECV__EMIT(ACCOUNT_READ); }
  action accept_frag        { BFO_RECV__EMIT(ACCEPT_FRAG); }
  action accept_fin         { BFO_RECV__EMIT(ACCEPT_FIN); }
  action post_fin           { BFO_RECV__EMIT(POST_FIN); }
  action post_recverrnotify { BFO_RECV__EMIT(POST_RECVERRNOTIFY); }
  action accept_notify      { BFO_RECV__EMIT(ACCEPT_NOTIFY); }
  action post_restartack    { BFO_RECV__EMIT(POST_RESTARTACK); }
  action post_restartnack   { BFO_RECV__EMIT(POST_RESTARTNACK); }
  action reset              { BFO_RECV__EMIT(RESET); }
  action complete           { BFO_RECV__EMIT(COMPLETE); }
  action fail_unreachable   { BFO_RECV__EMIT(FAIL_UNREACHABLE); }
  action drop               { BFO_RECV__EMIT(DROP); }
  action claim              { BFO_RECV__EMIT(CLAIM); }
  action complete_cancelled { BFO_RECV__EMIT(COMPLETE_CANCELLED); }

  include bfo_recv_grammar "recv.rl";

  # References every label so that Ragel exports its state number; an
  # end-of-input action that never runs (see send_binding.rl).
  action name_states {
    (void)fentry(POSTED); (void)fentry(RNDV_MATCHED); (void)fentry(RGET_MATCHED);
    (void)fentry(ACK_SENT); (void)fentry(PUTS_SENT); (void)fentry(READING);
    (void)fentry(FIN_SENT); (void)fentry(RECVERR_SENT); (void)fentry(RESTART_ACK_OWED);
    (void)fentry(RESTART_ACKED); (void)fentry(UNREACHABLE_DRAINING);
    (void)fentry(COMPLETE); (void)fentry(FAILED); (void)fentry(CLAIMED);
    (void)fentry(CANCELLED);
  }

  main := RecvRequest $eof(name_states);
}%%

%% write data noerror nofinal noentry;

/* Runs the machine on one event from state cs.  Returns the new state, or 0
 * when the spec has no transition for (cs, event).  Inlined wherever the
 * machine is known (BFO__EXEC_INLINE, tools/bfo_gen.py). */
static BFO__EXEC_INLINE int bfo_recv__exec(int cs, unsigned char event, bfo_step *out)
{
    const unsigned char *p = &event;
    const unsigned char *pe = p + 1;
    const unsigned char *eof = 0;

    (void)bfo_recv_start;
    %% write exec;
    return cs;
}

#undef BFO_RECV__EMIT
