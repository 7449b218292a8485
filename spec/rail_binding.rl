// SPDX-License-Identifier: BSD-3-Clause
/* rail_binding.rl - binds the rail grammar (rail.rl) to C.
 *
 * Each action emits its own BFO_RAIL_ACT_* into the step record; the engine
 * and the transport carry the actions out.  Nothing here allocates, blocks
 * or does I/O.  tools/bfo_gen.py wraps Ragel's output into gen/bfo_rail.h.
 */
#define BFO_RAIL__EMIT(a) bfo__emit(out, BFO_RAIL_ACT_##a)

%%{
  machine bfo_rail;
  alphtype unsigned char;

  action send_probe         { BFO_RAIL__EMIT(SEND_PROBE); }
  action send_probeack      { BFO_RAIL__EMIT(SEND_PROBEACK); }
  action admit              { BFO_RAIL__EMIT(ADMIT); }
  action map_out            { BFO_RAIL__EMIT(MAP_OUT); }
  action send_broken        { BFO_RAIL__EMIT(SEND_BROKEN); }
  action schedule_reconnect { BFO_RAIL__EMIT(SCHEDULE_RECONNECT); }
  action connect            { BFO_RAIL__EMIT(CONNECT); }
  action reconnect          { BFO_RAIL__EMIT(RECONNECT); }
  action retire             { BFO_RAIL__EMIT(RETIRE); }
  action take_credit        { BFO_RAIL__EMIT(TAKE_CREDIT); }
  action take_relay         { BFO_RAIL__EMIT(TAKE_RELAY); }
  action take_relayack      { BFO_RAIL__EMIT(TAKE_RELAYACK); }
  action take_reach         { BFO_RAIL__EMIT(TAKE_REACH); }
  action send_bye           { BFO_RAIL__EMIT(SEND_BYE); }
  action part               { BFO_RAIL__EMIT(PART); }
  action demote             { BFO_RAIL__EMIT(DEMOTE); }
  action promote            { BFO_RAIL__EMIT(PROMOTE); }

  include bfo_rail_grammar "rail.rl";

  # References every label so that Ragel exports its state number; an
  # end-of-input action that never runs (see send_binding.rl).
  action name_states {
    (void)fentry(DORMANT); (void)fentry(CONNECTING); (void)fentry(PROBING); (void)fentry(UP);
    (void)fentry(FAILED); (void)fentry(RECONNECTING); (void)fentry(RETIRED);
    (void)fentry(ABSENT); (void)fentry(LEFT); (void)fentry(DEMOTED);
  }

  main := Rail $eof(name_states);
}%%

%% write data noerror nofinal noentry;

/* Runs the machine on one event from state cs.  Returns the new state, or 0
 * when the spec has no transition for (cs, event).  Inlined wherever the
 * machine is known (BFO__EXEC_INLINE, tools/bfo_gen.py). */
static BFO__EXEC_INLINE int bfo_rail__exec(int cs, unsigned char event, bfo_step *out)
{
    const unsigned char *p = &event;
    const unsigned char *pe = p + 1;
    const unsigned char *eof = 0;

    (void)bfo_rail_start;
    %% write exec;
    return cs;
}

#undef BFO_RAIL__EMIT
