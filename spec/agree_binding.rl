// SPDX-License-Identifier: BSD-3-Clause
/* agree_binding.rl - binds the agree grammar (agree.rl) to C.
 *
 * Each action emits its own BFO_AGREE_ACT_* into the step record; the
 * group code carries the actions out (bfo__agree_step,
 * include/fsm/bfo_group.h).  Nothing here allocates, blocks or does I/O.
 * tools/bfo_gen.py wraps Ragel's output into gen/bfo_agree.h.
 */
#define BFO_AGREE__EMIT(a) bfo__emit(out, BFO_AGREE_ACT_##a)

%%{
  machine bfo_agree;
  alphtype unsigned char;

  action send_round     { BFO_AGREE__EMIT(SEND_ROUND); }
  action next_round     { BFO_AGREE__EMIT(NEXT_ROUND); }
  action decide         { BFO_AGREE__EMIT(DECIDE); }
  action adopt          { BFO_AGREE__EMIT(ADOPT); }
  action send_decision  { BFO_AGREE__EMIT(SEND_DECISION); }
  action finish         { BFO_AGREE__EMIT(FINISH); }
  action abort          { BFO_AGREE__EMIT(ABORT); }

  include bfo_agree_grammar "agree.rl";

  # References every label so that Ragel exports its state number; an
  # end-of-input action that never runs (see send_binding.rl).
  action name_states {
    (void)fentry(IDLE); (void)fentry(ROUND); (void)fentry(DECIDING);
    (void)fentry(ABORTING); (void)fentry(ABORTED);
  }

  main := Agree $eof(name_states);
}%%

%% write data noerror nofinal noentry;

/* Runs the machine on one event from state cs.  Returns the new state, or 0
 * when the spec has no transition for (cs, event). */
static BFO__EXEC_INLINE int bfo_agree__exec(int cs, unsigned char event, bfo_step *out)
{
    const unsigned char *p = &event;
    const unsigned char *pe = p + 1;
    const unsigned char *eof = 0;

    (void)bfo_agree_start;
    %% write exec;
    return cs;
}

#undef BFO_AGREE__EMIT
