"""The rules of runs changed by hand (``workstation.store.changes``), each stated on plain records: which turn
fields are a change of which kind, what a branch keeps, how changes are counted and marked, and the run id a
changed run gets. (The end-to-end tests, with real runs, are in test_changed_by_hand.py; these pin each rule so
that a one-line mutation of it fails: ``bench/mutation_kill_rate.py store/changes``.)"""

from __future__ import annotations

import hashlib
import json

import pytest

from workstation.store import changes as C
from workstation.store.records import Manifest, RecordError, TurnRecord


def T(d):  # a turn record as the one checked reader makes it
    return TurnRecord.from_json(d)


def M(d):
    return Manifest.from_json(d)


def test_a_plain_turn_has_no_changes_and_a_non_object_is_none():
    assert C.of_turn(T({"turn": 3, "actions": ["fire"], "prompt": {"variant": "default"}})) == []
    with pytest.raises(RecordError):  # a turn that is no object never reaches the rules: the reader refuses it
        T([1, 2])


def test_an_override_is_a_change_unless_a_person_typed_it_or_an_import_replays_it():
    t = {"turn": 4, "overridden": True, "actions": ["left", "fire"]}
    assert C.of_turn(T(t)) == [{"kind": "override", "turn": 4, "plan": ["left", "fire"]}]
    assert C.of_turn(T({**t, "override_source": "import"})) == []  # an import replays the harness's actions
    assert C.of_turn(T({**t, "overridden": False})) == []
    typed = C.of_turn(T({**t, "human_plan": True}))  # a person typed the plan: that kind, not an override
    assert typed == [{"kind": "human_plan", "turn": 4, "plan": ["left", "fire"]}]
    assert C.of_turn(T({"turn": 1, "overridden": True})) == [{"kind": "override", "turn": 1, "plan": []}]


def test_an_edited_prompt_a_resend_and_current_only_are_changes_in_kinds_order():
    t = {"turn": 2, "overridden": True, "actions": ["up"], "prompt": {"variant": "edited", "digest": "d1"},
         "discarded_replies": ["a", "b"], "current_only": True, "human_plan": False}
    assert [c["kind"] for c in C.of_turn(T(t))] == ["override", "edited_prompt", "resend", "current_only"]
    assert C.of_turn(T(t))[1] == {"kind": "edited_prompt", "turn": 2, "prompt": "d1"}
    assert C.of_turn(T(t))[2] == {"kind": "resend", "turn": 2, "times": 2}
    assert C.of_turn(T({"turn": 0, "prompt": {"variant": "current_only"}})) == [{"kind": "current_only", "turn": 0}]
    assert C.of_turn(T({"turn": 0, "discarded_replies": []})) == []  # nothing discarded: no re-send
    for bad in ({"turn": 0, "discarded_replies": "x"}, {"turn": 0, "prompt": "edited"}):
        with pytest.raises(RecordError):  # text where a list or an object belongs: the reader refuses it
            T(bad)


def test_a_branch_keeps_its_parents_changes_before_the_turn_it_copies_and_every_branch():
    parent = [{"kind": "override", "turn": 1}, {"kind": "override", "turn": 3}, {"kind": "branch", "turn": 7},
              {"kind": "resend", "turn": "x"}]
    kept = C.inherited(parent, 3)
    assert kept == [{"kind": "override", "turn": 1}, {"kind": "branch", "turn": 7}]  # turn 3 is not copied
    assert C.inherited(parent, 4)[:2] == [{"kind": "override", "turn": 1}, {"kind": "override", "turn": 3}]
    assert C.branch_entry("abc", 5) == {"kind": "branch", "turn": 5, "parent": "abc"}


def test_counts_per_kind_in_kinds_order_and_marks():
    ch = [{"kind": "branch"}, {"kind": "override"}, {"kind": "override"}, {"kind": "nonsense"}, "x"]
    n = C.counts(ch)
    assert n == {"override": 2, "branch": 1} and list(n) == ["override", "branch"]
    assert C.mark(n) == "O2 B1" and C.mark({}) == "-" and C.mark(None) == "-" and C.mark({"zzz": 1}) == "-"
    assert C.describe(n) == "changed by hand: 2 plan overridden, 1 rewound and branched"
    assert C.describe(None) == "plain (not changed by hand)"
    assert C.legend().startswith("O plan overridden, E prompt edited, R prompt re-sent")


def test_a_changed_runs_id_is_the_hash_of_the_plain_id_and_its_changes():
    ch = [{"kind": "override", "turn": 0, "plan": ["fire"]}]
    assert C.changed_run_id("plain", []) == "plain" and C.changed_run_id(None, []) is None
    want = hashlib.sha256(json.dumps(["plain", ch], sort_keys=True, default=str).encode()).hexdigest()[:16]
    assert C.changed_run_id("plain", ch) == want and len(want) == 16
    # a second change by hand: a new id, still from the plain id (not from the first changed id)
    twice = ch + [{"kind": "resend", "turn": 1, "times": 1}]
    assert C.changed_run_id("plain", twice) != want
    assert C.changed_run_id("plain", twice) == hashlib.sha256(
        json.dumps(["plain", twice], sort_keys=True, default=str).encode()).hexdigest()[:16]


def test_an_old_recording_gets_its_changes_from_its_parent_and_turns_an_imports_overrides_left_out():
    turns = [T({"turn": 0}), T({"turn": 1, "overridden": True, "actions": ["fire"]})]
    got = C.derived(M({"parent": {"turn": 1, "run_id": "p"}}), turns)
    assert got == [{"kind": "branch", "turn": 1, "parent": "p"}, {"kind": "override", "turn": 1, "plan": ["fire"]}]
    assert C.derived(M({"source": {"harness": "x"}}), turns) == []  # an import's overrides replay recorded actions
    assert C.derived(M({}), []) == []
