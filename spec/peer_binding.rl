// SPDX-License-Identifier: BSD-3-Clause
/* peer_binding.rl - binds the peer grammar (peer.rl) to C.
 *
 * Each action emits its own BFO_PEER_ACT_* into the step record; the engine
 * carries the actions out (bfo__peer_step, include/fsm/bfo_engine.h).
 * Nothing here allocates, blocks or does I/O.  tools/bfo_gen.py wraps
 * Ragel's output into gen/bfo_peer.h.
 */
#define BFO_PEER__EMIT(a) bfo__emit(out, BFO_PEER_ACT_##a)

%%{
  machine bfo_peer;
  alphtype unsigned char;

  action give_up    { BFO_PEER__EMIT(GIVE_UP); }
  action part       { BFO_PEER__EMIT(PART); }
  action close_out  { BFO_PEER__EMIT(CLOSE_OUT); }
  action fence      { BFO_PEER__EMIT(FENCE); }
  action take_route { BFO_PEER__EMIT(TAKE_ROUTE); }
  action report_route_lost { BFO_PEER__EMIT(REPORT_ROUTE_LOST); }

  include bfo_peer_grammar "peer.rl";

  # References every label so that Ragel exports its state number; an
  # end-of-input action that never runs (see send_binding.rl).
  action name_states {
    (void)fentry(NEW); (void)fentry(SELF); (void)fentry(DOWN);
    (void)fentry(REACHABLE); (void)fentry(UNREACHABLE); (void)fentry(LEAVING);
    (void)fentry(LEFT); (void)fentry(PARTED); (void)fentry(FAILED);
    (void)fentry(RELAYED);
  }

  main := Peer $eof(name_states);
}%%

%% write data noerror nofinal noentry;

/* Runs the machine on one event from state cs.  Returns the new state, or 0
 * when the spec has no transition for (cs, event). */
static BFO__EXEC_INLINE int bfo_peer__exec(int cs, unsigned char event, bfo_step *out)
{
    const unsigned char *p = &event;
    const unsigned char *pe = p + 1;
    const unsigned char *eof = 0;

    (void)bfo_peer_start;
    %% write exec;
    return cs;
}

#undef BFO_PEER__EMIT
