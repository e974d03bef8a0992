"""The numbers ``qa eval`` prints and writes to summary.json, worked by hand: accuracy per category and group
(the paper's Table 2 layout), agreement among repeats, errors, cost, completeness; ``qa table``'s row with its
95% Wilson intervals; and the check that a summary adds up and holds no more than answers.jsonl (``verify``).

No emulator, no provider: the answers are written as an eval writes them.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from workstation.studies.qa.evaluate import (
    ANSWERS,
    Answer,
    CategoryAccuracy,
    EvalSummary,
    answer_ledger,
    summarise,
    summary_problem,
    table,
    wilson,
)

CATS = ("perception-detection", "perception-spatial", "motion-target", "motion-controlled", "decision-short",
        "decision-long")
QS = [{"id": f"q{i}", "category": c} for i, c in enumerate(CATS, 1)]
META = {"format": "qa-eval/1", "set": "sets/mini", "agent": "m", "seed": 0, "repeats": 3}


def _a(q: int, r: int, parsed: str | None, correct: bool, error: str | None = None, cost: float = 0.0) -> Answer:
    return Answer(f"q{q}", r, "breakout", CATS[q - 1], "a", parsed, parsed, correct,
                  {"error": error, "cost_usd": cost})


ANS = [_a(1, 0, "a", True, cost=0.001), _a(1, 1, "a", True, cost=0.001), _a(1, 2, "b", False, cost=0.0000004),
       _a(2, 0, "left", True), _a(2, 1, "left", True), _a(2, 2, "left", True),
       _a(3, 0, "a", True),  # one repeat only: no agreement
       _a(4, 0, None, False, error="timeout"), _a(4, 1, "x", True),
       _a(5, 0, "b", False), _a(5, 1, "b", False), _a(5, 2, "b", False)]  # q6 never asked


def _done(answers: list[Answer]) -> dict[tuple[str, int], Answer]:
    return {a.key: a for a in answers}


def _wilson(c: int, n: int) -> tuple[float, float]:
    """The Wilson score interval by its formula (z of a 95% two-sided interval)."""
    z, p = 1.959963984540054, c / n
    centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n
                                                                                               + z * z / (4 * n * n))
    return centre - half, centre + half


def test_accuracy_per_category_and_group_agreement_errors_and_cost():
    s = summarise(QS, _done(ANS), 3, META)
    a = s.accuracy
    assert (a.perception, a.motion, a.decision) == (pytest.approx(5 / 6), pytest.approx(2 / 3), 0.0)
    assert a.overall == pytest.approx(7 / 12)
    got = {c: (v.accuracy, v.correct, v.answers) for c, v in a.categories.items()}
    assert got == {"perception-detection": (pytest.approx(2 / 3), 2, 3), "perception-spatial": (1.0, 3, 3),
                   "motion-target": (1.0, 1, 1), "motion-controlled": (0.5, 1, 2), "decision-short": (0.0, 0, 3),
                   "decision-long": (None, 0, 0)}
    assert s.counts == {"perception": 6, "motion": 3, "decision": 3, "overall": 12, **{c: v[2] for c, v in got.items()}}
    assert (s.questions, s.answers, s.errors, s.complete) == (6, 12, 1, False)
    tallies = {t.id: (t.repeats, t.correct, t.agreement, t.answers) for t in s.per_question}
    assert tallies == {"q1": (3, 2, pytest.approx(2 / 3), {"a": 2, "b": 1}), "q2": (3, 3, 1.0, {"left": 3}),
                       "q3": (1, 1, None, {"a": 1}), "q4": (2, 1, 0.5, {"None": 1, "x": 1}),
                       "q5": (3, 0, 1.0, {"b": 3}), "q6": (0, 0, None, {})}
    assert s.agreement == pytest.approx((2 / 3 + 1 + 0.5 + 1) / 4)  # the mean over the questions that have one
    assert s.cost_usd == 0.002  # 0.0020004 to the millionth of a dollar
    assert s.meta == META


def test_complete_means_every_repeat_answered_and_none_failed():
    full = [_a(q, r, "a", True) for q in range(1, 7) for r in range(2)]
    assert summarise(QS, _done(full), 2, META).complete
    failed = [*full[:-1], _a(6, 1, None, False, error="timeout")]
    s = summarise(QS, _done(failed), 2, META)
    assert (s.answers, s.errors, s.complete) == (12, 1, False)  # every repeat has a line, one of them failed
    assert not summarise(QS, _done(full[:-1]), 2, META).complete  # one repeat missing, none failed
    assert summarise(QS, _done(full), 1, META).answers == 6  # repeats past the eval's are not counted
    one = summarise(QS, _done([]), 1, META)
    assert one.agreement is None and one.accuracy.overall is None and one.answers == 0


def test_qa_table_prints_accuracy_its_wilson_interval_and_answers():
    s = summarise(QS, _done(ANS), 3, META)
    text = table([s])
    lo, hi = _wilson(5, 6)
    row = next(line for line in text.splitlines() if line.startswith("m ("))
    assert row.startswith("m (set mini)")
    cells = [c.strip() for c in row.split("  ") if c.strip()][1:]
    assert cells[0] == f"83.3% [{100 * lo:.1f}-{100 * hi:.1f}] (6)"
    assert cells[2] == "0.0% [0.0-56.1] (3)"
    lo, hi = _wilson(7, 12)
    assert cells[3] == f"58.3% [{100 * lo:.1f}-{100 * hi:.1f}] (12)" and cells[4] == "79%"
    detail = next(line for line in text.splitlines() if line.startswith("m (set mini): "))
    assert "perception-spatial 100.0% [43.9-100.0] (3)" in detail and "decision-long -" in detail
    none = dataclasses.replace(s, agreement=None)
    assert next(x for x in table([none]).splitlines() if x.startswith("m (")).rstrip().endswith("-")
    rnd = dataclasses.replace(s, meta={**META, "agent": "random", "seed": 7}, dir="/evals/r1")
    assert table([rnd]).splitlines()[1].startswith("random (r1, set mini, seed 7)")
    assert wilson(5, 6) == pytest.approx(_wilson(5, 6)) and wilson(0, 0) is None


# -- verify: a summary that does not add up, or counts more than its answers hold -------------------------------
@pytest.fixture
def evaluated(tmp_path: Path) -> tuple[EvalSummary, Path]:
    ledger = answer_ledger(tmp_path)
    extra = [_a(1, 3, "a", True), Answer("q9", 0, "breakout", CATS[0], "a", "a", "a", True, {"error": None})]
    for a in [*ANS, *extra]:  # a repeat past the eval's and a question not in it: never counted
        ledger.append(a, a.to_json())
    assert (tmp_path / ANSWERS).is_file()
    return summarise(QS, _done(ANS), 3, META), tmp_path


def _cat(s: EvalSummary, cat: str, **kw: object) -> EvalSummary:
    cats = {**s.accuracy.categories, cat: dataclasses.replace(s.accuracy.categories[cat], **kw)}
    return dataclasses.replace(s, accuracy=dataclasses.replace(s.accuracy, categories=cats))


def test_a_summary_that_adds_up_and_holds_what_its_answers_hold_passes(evaluated):
    s, out = evaluated
    assert summary_problem(s, out) is None
    fewer = _cat(_cat(s, "perception-detection", correct=1, answers=2, accuracy=0.5), "perception-spatial")
    fewer = dataclasses.replace(fewer, accuracy=dataclasses.replace(fewer.accuracy, perception=4 / 5, overall=6 / 11),
                                counts={**s.counts, "perception": 5, "overall": 11})
    assert summary_problem(fewer, out) is None  # a summary from before a stopped resume counts fewer
    no_repeats = dataclasses.replace(s, meta={k: v for k, v in META.items() if k != "repeats"})
    assert summary_problem(no_repeats, out) is None  # every repeat counted: repeat 3 of q1 is one more, not one less
    tiny = dataclasses.replace(s, accuracy=dataclasses.replace(s.accuracy, overall=7 / 12 + 1e-10))
    assert summary_problem(tiny, out) is None  # a float's last digit is not a contradiction


def test_a_category_that_is_not_its_correct_over_its_answers(evaluated):
    s, out = evaluated
    assert summary_problem(_cat(s, "motion-controlled", accuracy=0.6), out) == \
        "accuracy.motion-controlled is not its correct over its answers"
    assert summary_problem(_cat(s, "decision-long", accuracy=0.0), out) == \
        "accuracy.decision-long is not its correct over its answers"  # no answers: no accuracy, not 0
    assert summary_problem(_cat(s, "motion-controlled", accuracy=None), out) == \
        "accuracy.motion-controlled is not its correct over its answers"
    assert summary_problem(_cat(s, "motion-target", correct=2, accuracy=2.0), out) == \
        "accuracy.motion-target is not its correct over its answers"  # more correct than answers


def test_a_category_counting_more_than_answers_jsonl_holds(evaluated):
    s, out = evaluated
    assert summary_problem(_cat(s, "decision-short", correct=1, accuracy=1 / 3), out) == \
        "accuracy.decision-short counts 1 correct of 3; answers.jsonl holds 0 of 3"
    more = _cat(s, "motion-target", correct=2, answers=2, accuracy=1.0)
    assert summary_problem(more, out) == "accuracy.motion-target counts 2 correct of 2; answers.jsonl holds 1 of 1"
    four = _cat(s, "perception-detection", correct=3, answers=4, accuracy=3 / 4)
    four = dataclasses.replace(four, accuracy=dataclasses.replace(four.accuracy, perception=6 / 7, overall=8 / 13),
                               counts={**s.counts, "perception": 7, "overall": 13})
    assert summary_problem(four, out) == \
        "accuracy.perception-detection counts 3 correct of 4; answers.jsonl holds 2 of 3"
    with_q9 = dataclasses.replace(four, per_question=[*s.per_question, dataclasses.replace(s.per_question[0], id="q9")])
    assert summary_problem(with_q9, out) is None  # q9 is the summary's question: its answer counts


def test_a_group_that_is_not_the_share_of_its_categories(evaluated):
    s, out = evaluated
    acc = s.accuracy
    assert summary_problem(dataclasses.replace(s, accuracy=dataclasses.replace(acc, motion=0.5)), out) == \
        "accuracy.motion is not the share of its categories' correct answers"
    assert summary_problem(dataclasses.replace(s, accuracy=dataclasses.replace(acc, overall=0.5)), out) == \
        "accuracy.overall is not the share of its categories' correct answers"
    assert summary_problem(dataclasses.replace(s, counts={**s.counts, "decision": 4}), out) == \
        "counts.decision is 4, its categories hold 3"
    assert summary_problem(dataclasses.replace(s, counts={**s.counts, "overall": 11}), out) == \
        "counts.overall is 11, its categories hold 12"
    no_count = dataclasses.replace(s, counts={k: v for k, v in s.counts.items() if k != "decision"})
    assert summary_problem(no_count, out) is None  # an older summary without the group's count
    cats = {c: v for c, v in acc.categories.items() if c != "decision-long"}
    partial = dataclasses.replace(s, accuracy=dataclasses.replace(acc, categories=cats, decision=0.7, overall=0.9))
    assert summary_problem(partial, out) is None  # a group with a category missing is not summed
    empty = {**acc.categories, "decision-short": CategoryAccuracy(None, 0, 0)}
    none = dataclasses.replace(s, accuracy=dataclasses.replace(acc, categories=empty, decision=0.0, overall=7 / 9),
                               counts={**s.counts, "decision": 0, "overall": 9, "decision-short": 0})
    assert summary_problem(none, out) == "accuracy.decision is not the share of its categories' correct answers"
