// SPDX-License-Identifier: BSD-3-Clause
/* conn_binding.rl - binds the conn grammar (conn.rl) to C.
 *
 * Each action emits its own BFO_CONN_ACT_* into the step record; the
 * transport carries the actions out (backends/bfo_link.h runs the steps and
 * calls the transport's binding).  Nothing here allocates, blocks or does
 * I/O.  tools/bfo_gen.py wraps Ragel's output into gen/bfo_conn.h.
 */
#define BFO_CONN__EMIT(a) bfo__emit(out, BFO_CONN_ACT_##a)

%%{
  machine bfo_conn;
  alphtype unsigned char;

  action dial           { BFO_CONN__EMIT(DIAL); }
  action send_hello     { BFO_CONN__EMIT(SEND_HELLO); }
  action wait           { BFO_CONN__EMIT(WAIT); }
  action take           { BFO_CONN__EMIT(TAKE); }
  action send_reply     { BFO_CONN__EMIT(SEND_REPLY); }
  action refuse         { BFO_CONN__EMIT(REFUSE); }
  action refuse_tie     { BFO_CONN__EMIT(REFUSE_TIE); }
  action report_up      { BFO_CONN__EMIT(REPORT_UP); }
  action report_failed  { BFO_CONN__EMIT(REPORT_FAILED); }
  action report_error   { BFO_CONN__EMIT(REPORT_ERROR); }
  action close          { BFO_CONN__EMIT(CLOSE); }

  include bfo_conn_grammar "conn.rl";

  # References every label so that Ragel exports its state number; an
  # end-of-input action that never runs (see send_binding.rl).
  action name_states {
    (void)fentry(NEW); (void)fentry(DOWN); (void)fentry(DIALING); (void)fentry(HELLO_SENT);
    (void)fentry(AWAITING_HELLO); (void)fentry(REPLY_SENT); (void)fentry(REPLY_SENT_ASKED);
    (void)fentry(UP);
  }

  main := Conn $eof(name_states);
}%%

%% write data noerror nofinal noentry;

/* Runs the machine on one event from state cs.  Returns the new state, or 0
 * when the spec has no transition for (cs, event). */
static BFO__EXEC_INLINE int bfo_conn__exec(int cs, unsigned char event, bfo_step *out)
{
    const unsigned char *p = &event;
    const unsigned char *pe = p + 1;
    const unsigned char *eof = 0;

    (void)bfo_conn_start;
    %% write exec;
    return cs;
}

#undef BFO_CONN__EMIT
