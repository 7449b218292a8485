// SPDX-License-Identifier: BSD-3-Clause
/* send_binding.rl - binds the send request grammar (send.rl) to C.
 *
 * Each action emits its own BFO_SEND_ACT_* into the step record; the engine
 * carries the actions out.  Nothing here allocates, blocks or does I/O.
 * tools/bfo_gen.py runs Ragel on this file (-G2) and wraps the output into
 * gen/bfo_send.h with the names and the typed API.
 */
#define BFO_SEND__EMIT(a) bfo__emit(out, BFO_SEND_ACT_##a)

%%{
  machine bfo_send;
  alphtype unsigned char;

  action post_match        { BFO_SEND__EMIT(POST_MATCH); }
  action post_rndv         { BFO_SEND__EMIT(POST_RNDV); }
  action post_rget         { BFO_SEND__EMIT(POST_RGET); }
  action send_frags        { BFO_SEND__EMIT(SEND_FRAGS); }
  action post_write        { BFO_SEND__EMIT(POST_WRITE); }
  action post_fin          { BFO_SEND__EMIT(POST_FIN); }
  action note_fin          { BFO_SEND__EMIT(NOTE_FIN); }
  action note_error        { BFO_SEND__EMIT(NOTE_ERROR); }
  action post_notify       { BFO_SEND__EMIT(POST_NOTIFY); }
  action repost_notify     { BFO_SEND__EMIT(REPOST_NOTIFY); }
  action restart           { BFO_SEND__EMIT(RESTART); }
  action complete          { BFO_SEND__EMIT(COMPLETE); }
  action fail_unreachable  { BFO_SEND__EMIT(FAIL_UNREACHABLE); }
  action drop              { BFO_SEND__EMIT(DROP); }
  action withdraw          { BFO_SEND__EMIT(WITHDRAW); }
  action complete_cancelled { BFO_SEND__EMIT(COMPLETE_CANCELLED); }

  include bfo_send_grammar "send.rl";

  # Ragel exports a state's number (and tools/bfo_gen.py its name) only for
  # labels that something references.  This action references them all; it
  # is an end-of-input action, and the machine is never given end of input,
  # so it never runs.  A state missing here fails `make gen`.
  action name_states {
    (void)fentry(IDLE); (void)fentry(MATCH_SENT); (void)fentry(RNDV_SENT);
    (void)fentry(FRAGS_SENDING); (void)fentry(PUTS_SERVING); (void)fentry(RGET_SENT);
    (void)fentry(ERROR_DRAINING); (void)fentry(NOTIFY_SENT); (void)fentry(NOTIFY_LANDED);
    (void)fentry(RESTART_ACKED); (void)fentry(RESTART_NACKED); (void)fentry(RESTARTED);
    (void)fentry(UNREACHABLE_DRAINING); (void)fentry(COMPLETE); (void)fentry(FAILED);
    (void)fentry(CANCEL_SENT); (void)fentry(CANCEL_DRAINING); (void)fentry(CANCELLED);
  }

  main := SendRequest $eof(name_states);
}%%

%% write data noerror nofinal noentry;

/* Runs the machine on one event from state cs.  Returns the new state, or 0
 * when the spec has no transition for (cs, event).  Inlined wherever the
 * machine is known (BFO__EXEC_INLINE, tools/bfo_gen.py). */
static BFO__EXEC_INLINE int bfo_send__exec(int cs, unsigned char event, bfo_step *out)
{
    const unsigned char *p = &event;
    const unsigned char *pe = p + 1;
    const unsigned char *eof = 0;

    (void)bfo_send_start;
    %% write exec;
    return cs;
}

#undef BFO_SEND__EMIT
