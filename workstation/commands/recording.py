"""`workstation verify`, `info` and `request`: what a recording holds, re-executed, described, or asked.

One player or a two-player match (workstation.studies.arena), and for `verify` every other artifact kind too
(workstation.studies.analysis.artifacts): so this module stands in the studies layer, above both.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from workstation.base.errors import UserError
from workstation.commands.run import RECORDING_HELP, open_recording
from workstation.store.recording import DamagedRecording

VERIFY_TEXT = """Re-execute a recording's actions and check them against what it holds (exit 0 identical, 1
mismatch). Also takes a batch, session, judge study, stuck report, QA set or eval, IDC or arena directory: its seal
and records, and (without --quick) every recording inside."""


def register(sub: Any) -> None:
    v = sub.add_parser("verify", help="re-execute a recording and check every frame (or check any artifact)",
                       description=VERIFY_TEXT)
    v.add_argument("recording", metavar="RECORDING", help=RECORDING_HELP + ", or an artifact directory holding them")
    v.add_argument("--quick", action="store_true", help="no re-execution: check each file against the size and "
                   "digest in the summary, and the summary against the turns and frames")
    v.set_defaults(func=_verify)
    i = sub.add_parser("info", help="describe a recording", description="What a recording is and how it ended.")
    i.add_argument("recording", metavar="RECORDING", help=RECORDING_HELP)
    i.add_argument("--json", action="store_true", help="print the manifest, the summary and the size as JSON")
    i.set_defaults(func=_info)

    q = sub.add_parser("request", help="print the exact request sent for one turn (images elided, keys redacted)",
                       description="The exact request a model got on one turn, rebuilt from the recording "
                       "(images as size and digest, keys redacted); the neutral prompt for other agents.")
    q.add_argument("recording", metavar="RECORDING", help=RECORDING_HELP)
    q.add_argument("--turn", type=int, required=True, metavar="N",
                   help="the turn, counted from 0 as in the recording and the TUI")
    q.add_argument("--json", action="store_true",
                   help="print the neutral request as JSON: messages of text and image parts (image = budget frame)")
    q.add_argument("--side", type=int, default=1, metavar="1|2", help="a two-player match: the side (default 1)")
    q.set_defaults(func=_request)


def _verify(a: argparse.Namespace) -> int:
    from workstation.run.verify import verify
    from workstation.studies.analysis.artifacts import is_artifact, verify_artifact

    if is_artifact(a.recording):  # a judge study, IDC rounds, a QA set or eval, a batch, a session ...
        ok, line = verify_artifact(a.recording, quick=a.quick)
        print(line)
        return 0 if ok else 1
    rec = open_recording(a.recording)
    if rec.manifest_record.kind == "match":  # a two-player match has its own rule (workstation.run.match_verify)
        from workstation.run.match_verify import verify_match as verify
    from workstation.run.hand_check import replan_problems

    if a.quick:
        from workstation.store.integrity import quick_verdict

        ok, line = quick_verdict(rec)
        if ok and (replanned := replan_problems(rec)):  # a run changed by hand that claims to be plain
            ok, line = False, f"DAMAGED: {replanned[0]} ({rec.path})"
        print(line)
        return 0 if ok else 1
    damage = rec.problems()
    if not damage and (replanned := replan_problems(rec)):
        print(f"DAMAGED: {replanned[0]} ({rec.path})")
        return 1
    if damage:  # a file differs from its digest: re-executing would compare against something else than was written
        from workstation.store.integrity import quick_verdict

        print(quick_verdict(rec)[1])
        return 1
    res = verify(rec)
    if res.ok:
        note = (f"; the last {res.unchecked_frames} frames belong to a turn the killed run never recorded"
                if res.unchecked_frames else "")
        from workstation.base.words import plural

        print(f"OK: {plural(res.frames_checked, 'frame')} identical, {plural(res.turns_checked, 'turn')} and the "
              "totals agree "
              f"({rec.path}){note}")
        return 0
    print(f"MISMATCH: first differing frame {res.first_mismatch}: {res.detail}")
    return 1


def _info(a: argparse.Namespace) -> int:
    from workstation.run.hand_check import replan_problems
    from workstation.store.series import summary_line

    rec = open_recording(a.recording)
    # changed by hand or plain is the one thing info cannot leave open (other damage is shown with the rest)
    if rec.manifest_record.kind == "match":  # a match is read only whole: both sides, scores and result
        from workstation.store.integrity import match_problems

        found = match_problems(rec)
    else:
        found = rec.hand.problems or ([] if rec.damage() else replan_problems(rec))
    if found:
        raise DamagedRecording(f"damaged recording {rec.path}: {found[0]}; `workstation verify --quick "
                               f"{rec.path}` says more")
    damage = rec.damage()  # the fast integrity check: a damaged recording is never called complete
    if a.json:  # the JSON as written (a killed run's summary rebuilt from its turns)
        print(json.dumps({"manifest": rec.raw_manifest(), "summary": rec.summary_or_partial(),
                          "size_bytes": rec.size_bytes(),
                          "damage": damage, "run_id": rec.run_id, "plain_run_id": rec.plain_run_id,
                          "interventions": rec.interventions}, indent=2))
        if damage:
            sys.stderr.write(f"workstation: {damage}\n")
        return 1 if damage else 0
    m = rec.manifest_record  # typed: a field of the wrong type was already one line
    from workstation.game.protocol import Protocol

    changed = Protocol.from_json(m.protocol if isinstance(m.protocol, dict) else {}).changed()
    print(f"recording  {rec.path}")
    print(f"game       {m.game} ({m.env_id})   seed {m.seed}   run id {rec.run_id}")
    print(f"agent      {m.agent_spec}")
    print(f"protocol   {'paper defaults' if not changed else ', '.join(f'{k}={v}' for k, v in changed.items())}")
    print(f"prompts    {m.prompt_pack.get('name')} ({m.prompt_pack.get('digest')})")
    if m.parent is not None:
        print(f"branch of  {m.parent.get('path')} at turn {m.parent.get('turn')}")
    s = rec.outcome()
    print(f"result     {summary_line(s, damage and rec.problems()[0])}")
    if rec.manifest_record.kind == "match" and s.players:  # score= above is side 1's
        print("players    " + ", ".join(f"side {p['side']} {p['agent']} {p['score']:g}" for p in s.players)
              + f"; {'' if s.result is None else s.result}")
    from workstation.run.info import calls_line, hand_line

    print(hand_line(rec))
    if (line := calls_line(rec, s)) is not None:
        print(line)
    print(f"size       {rec.size_bytes() / 1e6:.2f} MB, {len(rec.frames)} frame{'s' if len(rec.frames) != 1 else ''}")
    if damage:
        sys.stderr.write(f"workstation: {damage}\n")
    return 1 if damage else 0


def _request(a: argparse.Namespace) -> int:
    from workstation.run.request import dump_request, request_json

    rec = open_recording(a.recording).require_sound()
    if rec.manifest_record.kind == "match":  # each side was asked its own prompt (workstation.run.match_request)
        from workstation.run.match_request import dump_side_request, side_request_json

        if a.json:
            print(json.dumps(side_request_json(rec, a.turn, a.side), ensure_ascii=False))
            return 0
        print(dump_side_request(rec, a.turn, a.side))
        return 0
    if a.side != 1:  # one player: there is no other side's prompt to show
        raise UserError(f"this recording has one player; --side {a.side} is for two-player match recordings "
                        "(drop --side)")
    if a.json:
        print(json.dumps(request_json(rec, a.turn), ensure_ascii=False))
        return 0
    print(dump_request(rec, a.turn))
    return 0
