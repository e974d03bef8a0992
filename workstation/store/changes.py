"""Runs changed by hand: what a person changed, how it is counted, and the run id it gives.

A run is *changed by hand* when a person stepped in: overrode a plan, edited or
re-sent a prompt, swapped in the current-frame-only prompt, typed the plan of a
model's turn instead of asking the model, or rewound and branched. Each such
change is one entry in the manifest's ``changes`` list (kept up to date as the
turns are written, so a killed run is marked too), counted per kind in the
summary's ``interventions``, and folded into the run id: a changed run's id is
the hash of the plain run's id (``plain_run_id``) and its list of changes, so no
lookup by run id (``ls --id``, batch resume, reports) takes it for the plain run.

Recordings written before changes were tracked (no ``changes`` key) get theirs
from their turns and their ``parent``; a plain run's id never changes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from workstation.store.records import Manifest, Summary, TurnRecord

# kind -> (ls letter, what it means)
CHANGE_KINDS: dict[str, tuple[str, str]] = {
    "override": ("O", "plan overridden"),
    "edited_prompt": ("E", "prompt edited"),
    "resend": ("R", "prompt re-sent"),
    "current_only": ("C", "re-asked with the current frame only"),
    "human_plan": ("H", "plan typed by a person, the model not asked"),
    "branch": ("B", "rewound and branched"),
}


def of_turn(turn: TurnRecord) -> list[dict[str, Any]]:
    """The changes one turn record carries, in ``CHANGE_KINDS`` order."""
    t = turn.turn
    out: list[dict[str, Any]] = []
    human = bool(turn.human_plan)
    if turn.overridden and not human and turn.override_source != "import":
        out.append({"kind": "override", "turn": t, "plan": list(turn.actions)})
    if turn.variant == "edited":
        out.append({"kind": "edited_prompt", "turn": t, "prompt": turn.prompt_digest})
    if turn.discarded_replies:
        out.append({"kind": "resend", "turn": t, "times": len(turn.discarded_replies)})
    if turn.variant == "current_only" or turn.current_only:
        out.append({"kind": "current_only", "turn": t})
    if human:
        out.append({"kind": "human_plan", "turn": t, "plan": list(turn.actions)})
    return out


def branch_entry(parent_run_id: str | None, turn: int) -> dict[str, Any]:
    """The change a rewind-and-branch at ``turn`` makes (it names the run it left)."""
    return {"kind": "branch", "turn": turn, "parent": parent_run_id}


def inherited(parent_changes: list[dict[str, Any]], n_turns: int) -> list[dict[str, Any]]:
    """What a branch keeps of its parent's changes: those of the turns it copies, and every earlier branch."""
    return [c for c in parent_changes
            if c.get("kind") == "branch" or (isinstance(c.get("turn"), int) and c["turn"] < n_turns)]


def counts(changes: list[dict[str, Any]]) -> dict[str, int]:
    """Changes per kind (only kinds that occur), in ``CHANGE_KINDS`` order."""
    n: dict[str, int] = {}
    for c in changes:
        kind = c.get("kind") if isinstance(c, dict) else None
        if kind in CHANGE_KINDS:
            n[kind] = n.get(kind, 0) + 1
    return {k: n[k] for k in CHANGE_KINDS if k in n}


def mark(n: dict[str, int] | None) -> str:
    """A short mark for a listing: ``O1 B1`` (letters in ``CHANGE_KINDS``), ``-`` for a plain run."""
    if not n:
        return "-"
    return " ".join(f"{CHANGE_KINDS[k][0]}{v}" for k, v in n.items() if k in CHANGE_KINDS) or "-"


def describe(n: dict[str, int] | None) -> str:
    """``changed by hand: 1 plan overridden, 1 rewound and branched`` or ``plain (not changed by hand)``."""
    if not n:
        return "plain (not changed by hand)"
    return "changed by hand: " + ", ".join(f"{v} {CHANGE_KINDS[k][1]}" for k, v in n.items() if k in CHANGE_KINDS)


def legend() -> str:
    return ", ".join(f"{letter} {what}" for letter, what in CHANGE_KINDS.values())


def changed_run_id(plain_run_id: str | None, changes: list[dict[str, Any]]) -> str | None:
    """The run id of a run with these changes: the plain id itself when there are none."""
    if not changes:
        return plain_run_id
    blob = json.dumps([plain_run_id, changes], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def derived(manifest: Manifest, turns: list[TurnRecord]) -> list[dict[str, Any]]:
    """The changes a recording's turns and parent show (all of them, for one written before they were tracked)."""
    out: list[dict[str, Any]] = []
    if manifest.parent is not None:
        out.append({"kind": "branch", "turn": manifest.parent_turn, "parent": manifest.parent_run_id})
    for t in turns:  # an import's overrides replay the harness's actions
        out.extend(c for c in of_turn(t) if not (manifest.imported and c["kind"] == "override"))
    return out


@dataclass(frozen=True)
class HandVerdict:
    """Whether a run was changed by hand, as every reader takes it (``ls``, ``info``, ``report``, batch resume).

    ``changes`` are the run's changes: its manifest's list when the recording agrees with it, else every change
    any part of the recording shows (so a run edited to look plain is still counted as changed). ``problems``
    says, one line each, where the manifest, the turns and the summary disagree: such a recording is damaged.
    """

    changes: list[dict[str, Any]]
    problems: list[str] = field(default_factory=list[str])

    @property
    def counts(self) -> dict[str, int]:
        return counts(self.changes)


def _key(change: dict[str, Any]) -> tuple[Any, Any]:
    return change["kind"], change["turn"]


def _declared(value: Any) -> tuple[list[dict[str, Any]], str | None]:
    """The manifest's ``changes`` as a list of changes, and why it is not one (None: it is)."""
    if not isinstance(value, list):
        return [], f"manifest.json's changes is {type(value).__name__}, not a list of changes"
    for i, c in enumerate(value):
        if not isinstance(c, dict):
            return [], f"manifest.json's changes[{i}] is {type(c).__name__}, not a change"
        kind, turn = c.get("kind"), c.get("turn")
        if kind not in CHANGE_KINDS:
            return [], f"manifest.json's changes[{i}] has kind {kind!r}, not one of {', '.join(CHANGE_KINDS)}"
        if not (isinstance(turn, int) and not isinstance(turn, bool) and turn >= 0):
            return [], f"manifest.json's changes[{i}] names turn {turn!r}, not a turn number"
    return list(value), None


def verdict(manifest: Manifest, summary: Summary | None, turns: list[TurnRecord]) -> HandVerdict:
    """The one verdict on a run's changes by hand, from its manifest, summary (None: none yet) and turns.

    A recording whose manifest has no ``changes`` (written before they were tracked) gets them from its turns
    and its parent. Otherwise the manifest's list must account for every change the turns and the parent show,
    its ``run_id`` must be the one its ``plain_run_id`` and changes give (the plain id itself with no changes),
    and the summary's ``interventions`` must count them. A two-player match is judged by its own rule.
    """
    if manifest.is_match:
        return HandVerdict([])
    shown = derived(manifest, turns)
    counted = summary.interventions if summary is not None else None
    if manifest.changes is None:
        found: list[str] = []
        if counted is not None and counted != counts(shown):
            found.append(f"summary.json's interventions {counted!r} do not count the changes the turns "
                         f"show {counts(shown)!r}")
        if manifest.plain_run_id is not None and manifest.plain_run_id != manifest.run_id:
            found.append(f"manifest.json names plain_run_id {manifest.plain_run_id!r} but no list of changes")
        return HandVerdict(shown, found)
    declared, why = _declared(manifest.changes)
    problems = [why] if why else []
    have = {_key(c) for c in declared}
    missing = [c for c in shown if _key(c) not in have]
    if missing and why is None:
        c = missing[0]
        problems.append(f"turn {c['turn']} shows a change by hand ({c['kind']}) that manifest.json's "
                        f"changes do not list" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
    run_id = manifest.run_id
    plain = manifest.plain_run_id if manifest.plain_run_id is not None else run_id
    if declared or missing:
        if plain is None:
            problems.append("manifest.json names no plain_run_id for a run changed by hand")
        elif run_id != changed_run_id(plain, declared) or run_id == plain:
            problems.append(f"manifest.json's run_id {run_id!r} is not the id its changes give "
                            f"({changed_run_id(plain, declared)!r} from plain run id {plain!r})")
    elif why is None and plain != run_id:
        problems.append(f"manifest.json's plain_run_id {plain!r} differs from its run_id {run_id!r}, "
                        "but it lists no changes")
    if summary is not None and why is None:
        want = counts(declared + missing)
        got = counted or {}
        if got != want:
            problems.append(f"summary.json's interventions {got!r} do not count the run's changes {want!r}")
        elif summary.changed_by_hand is not None and summary.changed_by_hand is not bool(want):
            problems.append(f"summary.json's changed_by_hand {summary.changed_by_hand!r} contradicts the "
                            f"run's changes {want!r}")
    if not problems:
        return HandVerdict(declared)
    union = declared + missing
    if isinstance(counted, dict):  # the summary's counts are evidence too
        kinds = {c.get("kind") for c in union}
        union += [{"kind": k, "turn": None} for k in counted if k in CHANGE_KINDS and k not in kinds]
    return HandVerdict(union, problems)


__all__ = ["CHANGE_KINDS", "HandVerdict", "branch_entry", "changed_run_id", "counts", "derived", "describe", "inherited",
           "legend", "mark", "of_turn", "verdict"]
