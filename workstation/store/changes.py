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
from typing import Any

# kind -> (ls letter, what it means)
KINDS: dict[str, tuple[str, str]] = {
    "override": ("O", "plan overridden"),
    "edited_prompt": ("E", "prompt edited"),
    "resend": ("R", "prompt re-sent"),
    "current_only": ("C", "re-asked with the current frame only"),
    "human_plan": ("H", "plan typed by a person, the model not asked"),
    "branch": ("B", "rewound and branched"),
}


def of_turn(turn: Any) -> list[dict[str, Any]]:
    """The changes one turn record (JSON) carries, in ``KINDS`` order."""
    if not isinstance(turn, dict):
        return []
    t = turn.get("turn")
    raw_prompt = turn.get("prompt")
    prompt: dict[str, Any] = raw_prompt if isinstance(raw_prompt, dict) else {}
    variant = prompt.get("variant")
    out: list[dict[str, Any]] = []
    human = bool(turn.get("human_plan"))
    if turn.get("overridden") and not human and turn.get("override_source") != "import":
        out.append({"kind": "override", "turn": t, "plan": list(turn.get("actions") or [])})
    if variant == "edited":
        out.append({"kind": "edited_prompt", "turn": t, "prompt": prompt.get("digest")})
    discarded = turn.get("discarded_replies")
    if isinstance(discarded, list) and discarded:
        out.append({"kind": "resend", "turn": t, "times": len(discarded)})
    if variant == "current_only" or turn.get("current_only"):
        out.append({"kind": "current_only", "turn": t})
    if human:
        out.append({"kind": "human_plan", "turn": t, "plan": list(turn.get("actions") or [])})
    return out


def branch_entry(parent_run_id: str | None, turn: int) -> dict[str, Any]:
    """The change a rewind-and-branch at ``turn`` makes (it names the run it left)."""
    return {"kind": "branch", "turn": turn, "parent": parent_run_id}


def inherited(parent_changes: list[dict[str, Any]], n_turns: int) -> list[dict[str, Any]]:
    """What a branch keeps of its parent's changes: those of the turns it copies, and every earlier branch."""
    return [c for c in parent_changes
            if c.get("kind") == "branch" or (isinstance(c.get("turn"), int) and c["turn"] < n_turns)]


def counts(changes: list[dict[str, Any]]) -> dict[str, int]:
    """Changes per kind (only kinds that occur), in ``KINDS`` order."""
    n: dict[str, int] = {}
    for c in changes:
        kind = c.get("kind") if isinstance(c, dict) else None
        if kind in KINDS:
            n[kind] = n.get(kind, 0) + 1
    return {k: n[k] for k in KINDS if k in n}


def mark(n: dict[str, int] | None) -> str:
    """A short mark for a listing: ``O1 B1`` (letters in ``KINDS``), ``-`` for a plain run."""
    if not n:
        return "-"
    return " ".join(f"{KINDS[k][0]}{v}" for k, v in n.items() if k in KINDS) or "-"


def describe(n: dict[str, int] | None) -> str:
    """``changed by hand: 1 plan overridden, 1 rewound and branched`` or ``plain (not changed by hand)``."""
    if not n:
        return "plain (not changed by hand)"
    return "changed by hand: " + ", ".join(f"{v} {KINDS[k][1]}" for k, v in n.items() if k in KINDS)


def legend() -> str:
    return ", ".join(f"{letter} {what}" for letter, what in KINDS.values())


def changed_run_id(plain_run_id: str | None, changes: list[dict[str, Any]]) -> str | None:
    """The run id of a run with these changes: the plain id itself when there are none."""
    if not changes:
        return plain_run_id
    blob = json.dumps([plain_run_id, changes], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def derived(manifest: dict[str, Any], turns: list[Any]) -> list[dict[str, Any]]:
    """The changes of a recording written before they were tracked: from its turns and its parent."""
    out: list[dict[str, Any]] = []
    parent = manifest.get("parent")
    if isinstance(parent, dict):
        out.append({"kind": "branch", "turn": parent.get("turn"), "parent": parent.get("run_id")})
    imported = isinstance(manifest.get("source"), dict)  # an import's overrides replay the harness's actions
    for t in turns:
        out.extend(c for c in of_turn(t) if not (imported and c["kind"] == "override"))
    return out


__all__ = ["KINDS", "branch_entry", "changed_run_id", "counts", "derived", "describe", "inherited", "legend",
           "mark", "of_turn"]
