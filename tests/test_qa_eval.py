"""`workstation qa eval` through the real SDKs to a local fake provider.

The fake reads the question out of each request and answers from the set's own
answer key (in a different reply style each time), so an eval scores 100 %; a fake
that always says "left" scores exactly the share of questions whose answer is left.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.fake_provider import SPECS, FakeProvider, Seen, Step, sent_messages
from workstation.cli import main
from workstation.game.protocol import Protocol
from workstation.run.drive import drive
from workstation.run.start import RunSpec, start_run
from workstation.studies.qa.qset import QA_CATEGORIES, read_set

STYLES = ("{a}", "Answer: {a}", "**{a}**", "Looking at the frames, I think the answer is {a}.", "({letter})",
          "Final answer: {letter}")


class Oracle(FakeProvider):
    """Answers each question from a key: (question text, frame times) -> (answer, choices)."""

    def __init__(self, key: dict[tuple, tuple[str, list[str]]], constant: str | None = None) -> None:
        super().__init__()
        self.key = key
        self.constant = constant
        self.n = 0

    def next_step(self, seen: Seen) -> Step:
        with self._lock:
            self.seen.append(seen)
            self.n += 1
            n = self.n
            if self.script:  # scripted faults first
                return self.script.popleft()
        text = "".join(t for _, parts in sent_messages(seen) for kind, t in parts if kind == "text")
        if self.constant is not None:
            return Step(text=self.constant)
        for (question, times), (answer, choices) in self.key.items():
            if question in text and all(f"Frame at {t}:" in text for t in times):
                style = STYLES[n % len(STYLES)]
                return Step(text=style.format(a=answer, letter="ABCDEFGHIJ"[choices.index(answer)]))
        return Step(text="no idea")


@pytest.fixture(scope="module")
def qset(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("qa")
    for game in ("breakout", "boxing"):
        engine = start_run(RunSpec(game=game, agent="random", seed=2, protocol=Protocol(frames=450),
                                   out=str(root / "recs")), rewindable=False)
        try:
            drive(engine)
        finally:
            engine.close()
    assert main(["qa", "gen", "--recordings", str(root / "recs"), "--out", str(root / "set"), "--per-game", "8"]) == 0
    # one decision question again as the long variant (the eval prepends the game's guide)
    qs = read_set(root / "set")
    short = next(q for q in qs if q["category"] == "decision-short")
    with open(root / "set" / "questions.jsonl", "a") as f:
        f.write(json.dumps(dict(short, id=short["id"] + "-long", category="decision-long",
                                question=short["question"] + " Think ahead.")) + "\n")
    return root / "set"


def _key(qset: Path) -> dict[tuple, tuple[str, list[str]]]:
    return {(q["question"], tuple(f["t"] for f in q["frames"])): (q["answer"], q["choices"]) for q in read_set(qset)}


def _eval(qset: Path, fake: FakeProvider, out: Path, *extra: str) -> int:
    return main(["qa", "eval", str(qset), "--agent", SPECS["compat"], "--base-url", fake.url("compat"),
                 "--out", str(out), *extra])


def test_a_correct_model_scores_100_in_every_category(qset, tmp_path, keys):
    fake = Oracle(_key(qset))
    try:
        assert _eval(qset, fake, tmp_path / "e", "--repeats", "2", "--concurrency", "3") == 0
    finally:
        fake.close()
    s = json.loads((tmp_path / "e" / "summary.json").read_text())
    qs = read_set(qset)
    assert s["answers"] == 2 * len(qs) and s["complete"]
    for key in ("perception", "motion", "decision", "overall"):
        assert s["accuracy"][key] == 1.0
    present = Counter(q["category"] for q in qs)
    for cat in QA_CATEGORIES:
        assert s["accuracy"][cat]["answers"] == 2 * present[cat]
        assert s["accuracy"][cat]["accuracy"] == (1.0 if present[cat] else None)
    assert s["agreement"] == 1.0
    lines = (tmp_path / "e" / "answers.jsonl").read_text().splitlines()
    assert len(lines) == 2 * len(qs) and all(json.loads(l)["correct"] for l in lines)


def test_the_request_is_the_question_then_timestamped_frames(qset, tmp_path, keys):
    fake = Oracle(_key(qset))
    try:
        assert _eval(qset, fake, tmp_path / "e", "--repeats", "1") == 0
    finally:
        fake.close()
    qs = {(q["question"], tuple(f["t"] for f in q["frames"])): q for q in read_set(qset)}
    long_seen = 0
    for seen in fake.seen:
        parts = [p for _, ps in sent_messages(seen) for p in ps]
        text = "".join(t for kind, t in parts if kind == "text")
        q = max((q for (question, times), q in qs.items()
                 if question in text and all(f"Frame at {t}:" in text for t in times)), key=lambda q: len(q["question"]))
        kinds = [kind for kind, _ in parts]
        assert kinds.count("image") == len(q["frames"])
        for f, k in zip(q["frames"], [i for i, kind in enumerate(kinds) if kind == "image"]):
            assert parts[k - 1][0] == "text" and f"Frame at {f['t']}" in parts[k - 1][1]
        first_text = parts[0][1]
        if q["category"] == "decision-long":
            assert first_text.startswith("About the game:") and "Goal" in first_text
            long_seen += 1
        else:
            assert first_text.startswith(q["question"])
        assert "(A) " in text
    assert long_seen == sum(q["category"] == "decision-long" for q in qs.values()) >= 1


def test_a_model_always_saying_left_scores_the_share_of_left(qset, tmp_path, keys):
    fake = Oracle({}, constant="left")
    try:
        assert _eval(qset, fake, tmp_path / "e", "--repeats", "1") == 0
    finally:
        fake.close()
    s = json.loads((tmp_path / "e" / "summary.json").read_text())
    qs = read_set(qset)
    share = sum(q["answer"] == "left" for q in qs) / len(qs)
    assert share > 0 and s["accuracy"]["overall"] == pytest.approx(share)


def test_eval_resumes_where_it_stopped(qset, tmp_path, keys):
    fake = Oracle(_key(qset))
    try:
        assert _eval(qset, fake, tmp_path / "e", "--repeats", "2") == 0
        answers = tmp_path / "e" / "answers.jsonl"
        lines = answers.read_text().splitlines()
        kept = lines[: len(lines) // 2]
        answers.write_text("\n".join(kept) + "\n" + lines[len(lines) // 2][:20])  # and a line cut mid-write
        (tmp_path / "e" / "seal.json").unlink()  # a run killed mid-way has no seal yet (it is written last)
        before = len(fake.seen)
        assert _eval(qset, fake, tmp_path / "e", "--repeats", "2") == 0
        assert len(fake.seen) - before == len(lines) - len(kept)  # only the missing ones were asked
        s = json.loads((tmp_path / "e" / "summary.json").read_text())
        assert s["complete"] and s["accuracy"]["overall"] == 1.0
        before = len(fake.seen)
        assert _eval(qset, fake, tmp_path / "e", "--repeats", "2") == 0  # all done: nothing asked
        assert len(fake.seen) == before
    finally:
        fake.close()


def test_a_model_always_saying_a_scores_the_share_of_first_choices(qset, tmp_path, keys):
    fake = Oracle({}, constant="A")
    try:
        assert _eval(qset, fake, tmp_path / "e", "--repeats", "1") == 0
    finally:
        fake.close()
    s = json.loads((tmp_path / "e" / "summary.json").read_text())
    qs = read_set(qset)
    assert s["accuracy"]["overall"] == pytest.approx(sum(q["answer"] == q["choices"][0] for q in qs) / len(qs))


def test_random_agent_and_bad_input(qset, tmp_path, capsys):
    assert main(["qa", "eval", str(qset), "--agent", "random", "--repeats", "2", "--out", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "perception" in out and "overall" in out
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert 0 <= s["accuracy"]["overall"] <= 1 and s["complete"]
    assert main(["qa", "table", str(tmp_path / "r"), str(tmp_path / "r")]) == 0
    assert capsys.readouterr().out.count("random ") >= 2
    assert main(["qa", "table", str(tmp_path)]) == 2
    # another agent into the same directory is refused
    assert main(["qa", "eval", str(qset), "--agent", "compat:x", "--base-url", "http://127.0.0.1:9/v1",
                 "--out", str(tmp_path / "r")]) == 2
    assert "another set or agent" in capsys.readouterr().err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "set.json").write_text('{"format": "atari-workstation-qa/1"}')
    (bad / "questions.jsonl").write_text('{"id": "x"}\n')
    assert main(["qa", "eval", str(bad), "--agent", "random"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "line 1" in err


def test_failed_calls_are_kept_and_retried(qset, tmp_path, keys):
    from tests.fake_provider import Step as S
    from workstation.run.providers import ProviderOptions
    from workstation.studies.qa.evaluate import run_eval

    fake = Oracle(_key(qset))
    try:
        # the first request gets an empty reply and no retry: no usable text, so that answer is an error
        fake.push(S(kind="empty"))
        s = run_eval(qset, SPECS["compat"], tmp_path / "e", repeats=1,
                     provider_options=ProviderOptions(base_url=fake.url("compat"), max_attempts=1))
        assert s.errors == 1 and not s.complete
        first = json.loads((tmp_path / "e" / "answers.jsonl").read_text().splitlines()[0])
        assert first["error"] and not first["correct"] and first["attempts"][0]["error_class"] == "empty"
        assert _eval(qset, fake, tmp_path / "e", "--repeats", "1") == 0  # the rerun retries it
        s = json.loads((tmp_path / "e" / "summary.json").read_text())
        assert s["errors"] == 0 and s["complete"] and s["accuracy"]["overall"] == 1.0
    finally:
        fake.close()


def test_cost_cap_stops_cleanly_and_resumes(qset, tmp_path, keys):
    fake = Oracle(_key(qset))
    args = ["qa", "eval", str(qset), "--agent", SPECS["openai"], "--base-url", fake.url("openai"),
            "--out", str(tmp_path / "e"), "--repeats", "1"]
    try:
        assert main(args + ["--max-cost", "0.000001"]) == 1
        s = json.loads((tmp_path / "e" / "summary.json").read_text())
        assert s["stopped"] == "max cost" and s["answers"] == 1 and s["cost_usd"] > 0
        assert main(args) == 0
        s = json.loads((tmp_path / "e" / "summary.json").read_text())
        assert s["complete"] and s["stopped"] is None and s["answers"] == len(read_set(qset))
    finally:
        fake.close()


def test_one_repeat_has_no_agreement(qset, tmp_path, capsys):
    """Agreement is among a question's repeats: with one answer each there is none to show (not 100%)."""
    assert main(["qa", "eval", str(qset), "--agent", "random", "--repeats", "1", "--out", str(tmp_path / "r")]) == 0
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert s["agreement"] is None and all(p["agreement"] is None for p in s["per_question"])
    capsys.readouterr()
    assert main(["qa", "table", str(tmp_path / "r")]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("random "))
    assert row.rstrip().endswith("-") and "100%" not in row
