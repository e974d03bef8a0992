"""workstation judge: sampling, blinding, verdicts against a scripted judge, resume, malformed verdicts,
the cost cap, RAM truth on real recordings, the golden statistics, and the bad-input corpus.

Real parts: the emulator plays a real two-setting batch through the OpenAI SDK to the fake provider;
the judge is a real provider agent talking to the same fake, which serves scripted JSON verdicts.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.fake_provider import FakeProvider, fake_server  # noqa: F401
from tests.judge_helpers import JUDGE, MODELS, VERDICTS, ScriptedJudge, make_batch
from workstation.cli import main
from workstation.run.drive import drive
from workstation.store.recording import Recording
from workstation.studies.judge.sample import choose, read_sources, spaced_turns
from workstation.studies.judge.verdict import CATEGORIES, VerdictError, parse_verdict

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def batch_dir(fake_server, tmp_path_factory):  # noqa: F811
    fake_server.reset()
    return make_batch(fake_server, tmp_path_factory.mktemp("judge") / "batch")


@pytest.fixture
def judge_fake(fake_server):  # noqa: F811
    fake_server.reset()
    yield fake_server
    fake_server.reset()


def judge_cli(batch: Path, fake: FakeProvider, out: Path, *extra: str) -> int:
    return main(["judge", str(batch), "--judge", f"compat:{JUDGE}", "--base-url", fake.url("compat"),
                 "--out", str(out), *extra])


def lines(path: Path) -> list[dict]:
    """The JSON lines of a file (a line a kill cut off, with no newline, skipped)."""
    out = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return out


def test_judges_the_median_run_per_cell_blinded_and_records_the_answers(batch_dir, judge_fake, tmp_path, capsys):
    judge = ScriptedJudge()
    judge_fake.responder = judge
    out = tmp_path / "j"
    assert judge_cli(batch_dir, judge_fake, out) == 0
    meta = json.loads((out / "judge.json").read_text())
    rows = lines(batch_dir / "results.jsonl")
    assert {(s["setting"], s["game"]) for s in meta["samples"]} == {("alpha", "breakout"), ("beta", "breakout")}
    for s in meta["samples"]:  # every seed scores alike here, so the tie goes to the lowest seed
        cell = [r for r in rows if r["setting"] == s["setting"]]
        assert s["seed"] == min(r["seed"] for r in cell if r["score"] == s["score"])
        t = s["turns"]
        assert len(t) == 5 and all(b - a >= 5 for a, b in zip(t, t[1:]))
    verdicts = lines(out / "verdicts.jsonl")
    assert len(verdicts) == 10 == len(judge.given)
    for v, answer in zip(verdicts, judge.given):  # the line is the judge's answer, key for key
        want = json.loads(answer)
        for key in ("failure", "category", "subtype", "evidence", "text_cue_followed"):
            assert v[key] == want[key], key
        assert v["parsed"] and v["usage"]["output_tokens"] > 0
    assert [(v["run_id"], v["turn"]) for v in verdicts] == [(s["run_id"], t) for s in meta["samples"] for t in s["turns"]]
    summary = json.loads((out / "summary.json").read_text())
    counted: dict = {}
    for v in verdicts:
        if v["failure"]:
            counted.setdefault(v["setting"], Counter())[v["category"]] += 1
    assert summary["counts"] == {st: dict(c) for st, c in counted.items()}  # as the judge wrote them
    assert any(v["category"] == "decision/control" and v["group"] == "decision" for v in verdicts)
    for st, cats in summary["categories"].items():  # the five, spellings folded
        assert list(cats) == list(CATEGORIES)
        assert cats == {c: sum(1 for v in verdicts if v["setting"] == st and v["group"] == c) for c in CATEGORIES}
    assert summary["turns_judged"] == 10 and summary["unparsed"] == 0
    assert summary["failures"] == sum(1 for v in verdicts if v["failure"])
    # blinded: no judge request names a model that played (the players wrote their names in their thoughts)
    for body in judge.bodies:
        text = json.dumps(body).lower()
        assert all(m.lower() not in text for m in MODELS)
        assert "alpha" not in text and "beta" not in text
        assert body["model"] == JUDGE
    assert "I am [name withheld], ball falls left" in json.dumps(judge.bodies[0])
    from io import BytesIO

    from PIL import Image

    from tests.fake_provider import sent_messages
    seen = [s for s in judge_fake.seen if s.body.get("model") == JUDGE]
    pngs = [v for s in seen[:2] for _, parts in sent_messages(s) for kind, v in parts if kind == "image"]
    assert len(pngs) > 10
    for png in pngs:  # no names in image metadata: the frames carry no text chunks at all
        img = Image.open(BytesIO(png))
        assert not getattr(img, "text", {}) and not {k for k in img.info if k not in ("transparency", "dpi")}
    # resumable: a second run asks nothing and changes nothing
    before = (out / "verdicts.jsonl").read_bytes()
    assert judge_cli(batch_dir, judge_fake, out) == 0
    assert len(judge.given) == 10 and (out / "verdicts.jsonl").read_bytes() == before
    with pytest.raises(Exception, match="was sampled with --turns 5 --gap 5 --seed 0"):
        from workstation.studies.judge.run import JudgeJob, run_judge
        from workstation.studies.judge.verdict import load_judge_prompt

        run_judge(JudgeJob([str(batch_dir)], f"compat:{JUDGE}", out, load_judge_prompt(), seed=1))


def test_a_killed_judge_resumes_where_it_stopped(batch_dir, judge_fake, tmp_path):
    judge = ScriptedJudge()
    judge_fake.responder = judge
    out = tmp_path / "j"
    assert judge_cli(batch_dir, judge_fake, out) == 0
    text = (out / "verdicts.jsonl").read_text().splitlines(keepends=True)
    (out / "verdicts.jsonl").write_text("".join(text[:4]) + text[4][:20])  # killed mid-line
    (out / "seal.json").unlink()  # a run killed mid-way has no seal yet (it is written last)
    assert judge_cli(batch_dir, judge_fake, out) == 0
    assert len(judge.given) == 16  # turns 5..10 asked again, the first four not
    verdicts = lines(out / "verdicts.jsonl")
    assert len(verdicts) == 10 and len({(v["run_id"], v["turn"]) for v in verdicts}) == 10


def test_concurrent_judging_records_every_turn_once(batch_dir, judge_fake, tmp_path):
    judge = ScriptedJudge([json.dumps(VERDICTS[0])])
    judge_fake.responder = judge
    out = tmp_path / "j"
    assert judge_cli(batch_dir, judge_fake, out, "--concurrency", "4") == 0
    verdicts = lines(out / "verdicts.jsonl")
    assert len(verdicts) == 10 == len(judge.given) and len({(v["run_id"], v["turn"]) for v in verdicts}) == 10
    assert json.loads((out / "summary.json").read_text())["categories"]["alpha"]["perception"] == 5


def test_a_malformed_verdict_is_retried_once_then_recorded_unparsed(batch_dir, judge_fake, tmp_path):
    good = json.dumps(VERDICTS[0])
    # turn 1: bad then good; turn 2: bad twice; the rest good
    judge = ScriptedJudge(["I think it is perception.", good, '{"failure": true, "category": "vision"}',
                           "still no json"] + [good] * 20)
    judge_fake.responder = judge
    out = tmp_path / "j"
    assert judge_cli(batch_dir, judge_fake, out) == 0
    v = lines(out / "verdicts.jsonl")
    assert v[0]["parsed"] and v[0]["retried"] and v[0]["category"] == "perception" and v[0]["calls"] == 2
    assert not v[1]["parsed"] and v[1]["failure"] is None and v[1]["category"] is None  # never guessed
    assert v[1]["raw"] == "still no json" and v[1]["calls"] == 2
    retry = judge.bodies[1]["messages"]  # the retry says what was wrong with the first answer
    assert "no JSON object" in retry[-1]["content"][0]["text"] if isinstance(retry[-1]["content"], list) \
        else "no JSON object" in retry[-1]["content"]
    s = json.loads((out / "summary.json").read_text())
    assert s["unparsed"] == 1 and s["turns_judged"] == 10


def test_the_cost_cap_stops_and_a_higher_cap_finishes(batch_dir, judge_fake, tmp_path):
    prices = tmp_path / "prices.toml"
    prices.write_text(f'version = 1\nas_of = "2026-12-01"\n[compat."{JUDGE}"]\ninput = 1000.0\ncache_read = 1000.0\n'
                      'cache_write = 1000.0\noutput = 1000.0\n')
    judge_fake.responder = ScriptedJudge()
    out = tmp_path / "j"
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ["HOME"], "WORKSTATION_PRICES": str(prices), "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-m", "workstation", "judge", str(batch_dir), "--judge", f"compat:{JUDGE}",
            "--base-url", judge_fake.url("compat"), "--out", str(out)]
    r = subprocess.run([*args, "--max-cost", "2.5"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert r.returncode == 1 and "cost cap" in r.stderr
    one = lines(out / "verdicts.jsonl")[0]["cost_usd"]
    assert one > 0 and len(lines(out / "verdicts.jsonl")) == int(2.5 // one) + 1
    r = subprocess.run([*args, "--max-cost", "1000"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["turns_judged"] == 10 and s["cost_usd"] == pytest.approx(10 * one)


def test_sampling_picks_the_run_closest_to_the_median_and_skips_changed_runs(batch_dir, tmp_path):
    import dataclasses
    import shutil

    every = read_sources([str(batch_dir)])
    key = lambda refs: sorted((r.run_id, r.setting, str(r.path)) for r in refs)
    assert key(read_sources([str(batch_dir / "results.csv")])) == key(every)  # a results CSV finds the same runs
    bare = read_sources([str(p) for p in (batch_dir / "runs").iterdir() if p.is_dir()])
    assert {r.run_id for r in bare} == {r.run_id for r in every}
    assert {r.setting for r in bare} == {f"compat:{m}|frames=250" for m in MODELS}  # spec + what differs
    runs = [r for r in every if r.setting == "alpha"]
    scores = {0: 3.0, 1: 5.0, 2: 9.0}  # median 5 -> seed 1
    runs = [dataclasses.replace(r, score=scores[r.seed]) for r in runs]
    assert choose(runs)[0].run.seed == 1
    tie = [dataclasses.replace(r, score={0: 2.0, 1: 6.0, 2: 4.0}[r.seed]) for r in runs]
    tie = [r for r in tie if r.seed != 2] + [dataclasses.replace(r, score=4.0) for r in tie if r.seed == 2]
    assert choose(tie)[0].run.seed == 2  # median 4: seed 2 sits on it
    even = [r for r in tie if r.seed != 2]  # 2 and 6: median 4, both 2 away -> the lower seed
    assert choose(even)[0].run.seed == 0
    # a run with an overridden turn is never sampled
    changed = tmp_path / "changed"
    shutil.copytree(runs[1].path, changed)
    turns = (changed / "turns.jsonl").read_text().splitlines()
    t = json.loads(turns[2])
    t["overridden"] = True
    turns[2] = json.dumps(t)
    (changed / "turns.jsonl").write_text("\n".join(turns) + "\n")
    swapped = [dataclasses.replace(r, path=changed) if r.seed == 1 else r for r in runs]
    s = choose(swapped)[0]
    assert s.run.seed != 1 and s.excluded == [runs[1].run_id]


def test_spaced_turns_are_seeded_spaced_and_not_chosen_by_reward():
    rng = random.Random("0:x")
    picks = [tuple(spaced_turns(list(range(40)), 5, 5, random.Random(f"{n}:x"))) for n in range(200)]
    assert all(len(p) == 5 and all(b - a >= 5 for a, b in zip(p, p[1:])) for p in picks)
    assert len(set(picks)) > 150  # spread over the spacings, not one fixed pattern
    assert spaced_turns(list(range(40)), 5, 5, rng) == spaced_turns(list(range(40)), 5, 5, random.Random("0:x"))
    assert spaced_turns(list(range(12)), 5, 5, rng) and len(spaced_turns(list(range(12)), 5, 5, rng)) == 3
    holes = [t for t in range(40) if t % 7]  # some turns unanswerable
    assert all(t in holes for t in spaced_turns(holes, 5, 5, rng))


@pytest.mark.parametrize("text, problem", [
    ("", "empty"), ("perception", "no JSON object"), ('{"failure": "yes", "evidence": ""}', "true or false"),
    ('{"failure": true, "category": "vision", "evidence": "x"}', "unknown category"),
    ('{"failure": true, "category": null, "evidence": "x"}', "needs a category"),
    ('{"failure": false, "category": "rule", "evidence": "x"}', "failure is false"),
    ('{"failure": true, "category": "rule", "evidence": 3}', "evidence must be text"),
    ('{"failure": true, "category": "rule", "evidence": "x", "text_cue_followed": "no"}', "text_cue_followed"),
    ('{"failure": true, "category": "rule", "evidence": "x"', "does not parse"),
])
def test_the_verdict_parser_refuses_what_it_cannot_read(text, problem):
    with pytest.raises(VerdictError, match=problem):
        parse_verdict(text)


def test_the_verdict_parser_reads_fenced_and_aliased_answers():
    v = parse_verdict('Here it is:\n```json\n{"failure": true, "category": "Decision/Control", "subtype": "late",'
                      ' "evidence": "moved late", "text_cue_followed": false}\n```')
    assert (v.failure, v.category, v.group, v.subtype, v.text_cue_followed) == (True, "decision/control", "decision",
                                                                                "late", False)
    v = parse_verdict('{"observable_failure": true, "category": "rule", "evidence": "x"}')
    assert v.failure and v.category == "rule" and v.subtype is None
    v = parse_verdict('{"failure": false, "category": "none", "subtype": null, "evidence": ""}')
    assert v.category is None and v.text_cue_followed is None


def test_truth_agreement_against_the_ram_of_a_real_recording(batch_dir):
    from workstation.studies.judge.truth import MOTION_FRAMES, check
    from workstation.studies.qa.truth import load_map

    rec = Recording(next(r.path for r in read_sources([str(batch_dir)])))
    ram_map = load_map("breakout")
    found = 0
    for t in rec.turn_records:
        a = [o for o in ram_map.objects(rec.frames.ram(t.start_frame)) if o.name == "ball"]
        b = [o for o in ram_map.objects(rec.frames.ram(min(t.end_frame, t.start_frame + MOTION_FRAMES)))
             if o.name == "ball"]
        if not a or not b or abs(b[0].cx - a[0].cx) < 2:
            continue
        way, other = ("right", "left") if b[0].cx > a[0].cx else ("left", "right")
        assert check(rec, t.turn, f"The ball is moving {way}, and it waits.")[0] is True
        agrees, claims = check(rec, t.turn, f"The ball is moving {other}.")
        assert agrees is False and claims[0]["object"] == "ball" and claims[0]["agrees"] is False
        assert check(rec, t.turn, f"The ball is not moving {other}.")[0] == "unknown"  # negations are not read
        found += 1
    assert found >= 3
    paddle = ram_map.objects(rec.frames.ram(rec.turn_records[10].start_frame))
    cx = next(o.cx for o in paddle if o.name == "paddle")
    side, wrong = ("left", "right") if cx < 72 else ("right", "left")
    assert check(rec, 10, f"The paddle is on the {side} side.")[0] is True
    assert check(rec, 10, f"The paddle sits on the {wrong}.")[0] is False
    assert check(rec, 10, "It missed.")[0] == "unknown"


def test_golden_statistics_match_the_paper():
    from workstation.studies.judge.stats import fisher_exact, mcnemar_exact

    m = mcnemar_exact(10, 2)
    assert m.p is not None and m.odds_ratio is not None
    assert round(m.p, 4) == 0.0386 and round(m.odds_ratio, 2) == 0.20
    assert [round(x or 0, 2) for x in m.ci95] == [0.02, 0.94]
    assert round(fisher_exact(2, 41, 15, 67).p or 0, 4) == 0.0154
    assert round(fisher_exact(2, 120, 15, 120).p or 0, 4) == 0.0016


def test_overreliance_groups_from_a_judge_directory(batch_dir, judge_fake, tmp_path, capsys):
    judge_fake.responder = ScriptedJudge()
    out = tmp_path / "j"
    assert judge_cli(batch_dir, judge_fake, out, "--groups", "alpha/beta") == 0
    s = json.loads((out / "summary.json").read_text())
    v = lines(out / "verdicts.jsonl")
    for st in ("alpha", "beta"):
        mine = [x for x in v if x["setting"] == st and x["text_cue_followed"] is not None]
        assert s["per_setting"][st]["text_cue_asked"] == len(mine)
        assert s["per_setting"][st]["text_cue_followed"] == sum(x["text_cue_followed"] for x in mine)
    assert s["overreliance"]["fisher"]["p"] is not None
    assert main(["judge", "overreliance", str(out), "--groups", "alpha/beta"]) == 0
    assert "Fisher's exact p" in capsys.readouterr().out


BAD = [
    (["judge", "{batch}", "--out", "{tmp}/o"], "--judge SPEC is required"),
    (["judge", "{batch}", "--judge", "compat:j"], "--out DIR is required"),
    (["judge", "{batch}", "--judge", "random", "--out", "{tmp}/o"], "is not a model"),
    (["judge", "{batch}", "--judge", "compat:j", "--out", "{tmp}/o"], "needs --base-url"),
    (["judge", "{batch}", "--judge", "nope:j", "--out", "{tmp}/o"], "unknown agent"),
    (["judge", "{tmp}/missing", "--judge", "compat:j", "--base-url", "http://127.0.0.1:9/v1", "--out", "{tmp}/o"],
     "no such batch directory"),
    (["judge", "{batch}", "--judge", "compat:j", "--base-url", "http://127.0.0.1:9/v1", "--out", "{tmp}/o",
      "--turns", "0"], "--turns must be at least 1"),
    (["judge", "{batch}", "--judge", "compat:j", "--base-url", "http://127.0.0.1:9/v1", "--out", "{tmp}/o",
      "--gap", "0"], "--gap must be at least 1"),
    (["judge", "{batch}", "--judge", "compat:j", "--base-url", "http://127.0.0.1:9/v1", "--out", "{tmp}/o",
      "--gap", "-1"], "--gap must be at least 1"),
    (["judge", "{batch}", "--judge", "compat:j", "--base-url", "notaurl", "--out", "{tmp}/o"],
     "is not an http:// or https:// URL"),  # the SDK would retry it for minutes
    (["judge", "{tmp}/empty", "--judge", "compat:j", "--base-url", "http://127.0.0.1:9/v1", "--out", "{tmp}/o"],
     "holds no readable recording"),
    (["judge", "{tmp}/lone/results.csv", "--judge", "compat:j", "--base-url", "http://127.0.0.1:9/v1",
      "--out", "{tmp}/o"], "has a readable recording"),  # a results CSV whose recordings are not beside it
    (["judge", "{batch}", "--judge", "compat:j", "--base-url", "http://127.0.0.1:9/v1", "--out", "{tmp}/o",
      "--groups", "alpha"], "two groups"),
    (["judge", "{batch}", "--judge", "compat:j", "--base-url", "http://127.0.0.1:9/v1", "--out", "{tmp}/o",
      "--judge-prompt", "{tmp}/nothing.toml"], "not a readable judge prompt"),
    (["judge", "{batch}", "--judge", "compat:j", "--base-url", "http://127.0.0.1:9/v1", "--out", "{tmp}/o",
      "--calibrate", "{tmp}/noset"], "no such QA set"),
    (["judge", "{batch}", "--judge", "compat:j", "--base-url", "http://127.0.0.1:9/v1", "--out", "{tmp}/o",
      "--temperature", "7"], "temperature"),
    (["judge", "{batch}", "--judge", "compat:j", "--base-url", "http://127.0.0.1:9/v1", "--out", "{tmp}/o"],
     "nothing answers"),
    (["judge", "{tmp}/notes.csv", "--judge", "compat:j", "--base-url", "http://127.0.0.1:9/v1", "--out", "{tmp}/o"],
     "not a results CSV"),
    (["judge", "requery", "{tmp}"], "not a judge directory"),
    (["judge", "requery", "{tmp}", "{tmp}"], "takes one judge directory"),
    (["judge", "overreliance", "{tmp}", "--groups", "a/b"], "not a judge directory"),
    (["judge", "stuck"], "needs SOURCE"),
    (["judge", "stuck", "{tmp}/missing"], "no such batch directory"),
    (["judge", "stuck", "{batch}", "--min-turns", "1"], "--min-turns must be at least 2"),
    (["judge", "{batch}", "--turns", "x"], "invalid int value"),
    (["judge", "{batch}", "--judge", "compat:j", "--out", "{tmp}/o", "--concurrency", "0"], "--concurrency must be"),
    (["judge", "{batch}", "--judge", "compat:j", "--base-url", "http://127.0.0.1:9/v1", "--out", "{batch}"],
     "holds a batch"),
    (["judge", "{batch}", "--judge", "compat:j", "--base-url", "http://127.0.0.1:9/v1", "--out", "{tmp}/notes.csv"],
     "is a file"),
    (["judge", "{batch}", "--judge", "compat:j", "--base-url", "http://127.0.0.1:9/v1", "--out", "{tmp}/o",
      "--max-cost", "-1"], "--max-cost must be 0 or more"),
    (["judge", "{batch}", "--judge", "compat:j", "--base-url", "http://127.0.0.1:9/v1", "--out", "{tmp}/prev"],
     "a different judge or prompt needs another --out"),
]


@pytest.mark.parametrize("argv, message", BAD, ids=[" ".join(a[1:3]) + f" #{i}" for i, (a, _) in enumerate(BAD)])
def test_bad_input_is_one_line_exit_2(argv, message, batch_dir, tmp_path):
    (tmp_path / "notes.csv").write_text("a,b\n1,2\n")
    (tmp_path / "empty").mkdir()
    (tmp_path / "lone").mkdir()
    (tmp_path / "lone" / "results.csv").write_text((batch_dir / "results.csv").read_text())
    (tmp_path / "prev").mkdir()
    (tmp_path / "prev" / "judge.json").write_text(json.dumps({"format": "atari-workstation-judge/1",
                                                             "judge": "compat:other", "prompt": {"digest": "x"}}))
    args = [a.replace("{batch}", str(batch_dir)).replace("{tmp}", str(tmp_path)) for a in argv]
    r = subprocess.run([sys.executable, "-m", "workstation", *args], capture_output=True, text=True, cwd=ROOT,
                       timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": os.environ["HOME"], "PYTHONPATH": str(ROOT)})
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert message in r.stderr
    v = tmp_path / "o" / "verdicts.jsonl"
    assert not v.exists() or not v.read_text().strip()


def test_a_moved_batch_is_read_where_it_is_and_a_damaged_recording_stops_the_judging(batch_dir, tmp_path):
    import shutil

    moved = tmp_path / "moved"
    shutil.copytree(batch_dir, moved)  # its rows still hold the old absolute paths
    refs = read_sources([str(moved)])
    assert refs and all(moved / "runs" in r.path.parents for r in refs)
    victim = next(r.path for r in refs if r.complete)
    (victim / "frames.bin").write_bytes(b"")  # the sampled run, or the one it was compared with: either way
    for source in (moved, moved / "results.csv", moved / "runs"):
        r = subprocess.run([sys.executable, "-m", "workstation", "judge", str(source), "--judge", "compat:j",
                            "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "o")],
                           capture_output=True, text=True, cwd=ROOT, timeout=60,
                           env={"PATH": "/usr/bin:/bin", "HOME": os.environ["HOME"], "PYTHONPATH": str(ROOT)})
        assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr  # damage: exit 1
        assert "damaged" in r.stderr and victim.name in r.stderr and "workstation verify" in r.stderr
        assert r.stderr.count(str(victim)) == 2, r.stderr  # named once, and in the command that checks it
        assert "Traceback" not in r.stderr and not (tmp_path / "o").exists()


def test_requery_asks_the_player_with_full_history_and_current_frame_only(batch_dir, judge_fake, tmp_path, capsys):
    from tests.judge_helpers import model_of

    judge = ScriptedJudge()
    judge_fake.responder = judge
    out = tmp_path / "j"
    assert judge_cli(batch_dir, judge_fake, out) == 0
    failures = [v for v in lines(out / "verdicts.jsonl") if v["failure"]]
    judge_fake.seen.clear()
    assert main(["judge", "requery", str(out)]) == 0  # the players answer at the URL their runs used
    played = [s.body for s in judge_fake.seen if model_of(s) in MODELS]
    assert len(played) == 2 * len(failures)
    images = [sum(1 for m in b["messages"] if isinstance(m["content"], list)
                  for c in m["content"] if c["type"] == "image_url") for b in played]
    assert images[1::2] == [1] * len(failures)  # asked in turn: full history, then the current frame only
    assert max(images[0::2]) > 1
    asked = [s.body for s in judge_fake.seen if model_of(s) == JUDGE]
    assert len(asked) == 2 * len(failures)
    assert all(m.lower() not in json.dumps(b).lower() for b in asked for m in MODELS)
    got = lines(out / "requery.jsonl")
    assert {(x["run_id"], x["turn"]) for x in got} == {(v["run_id"], v["turn"]) for v in failures}
    result = json.loads((out / "requery.json").read_text())
    pairs = {}
    for x in got:
        pairs.setdefault((x["run_id"], x["turn"]), {})[x["condition"]] = x["failure"]
    b = sum(1 for p in pairs.values() if p["full"] and not p["current"])
    c = sum(1 for p in pairs.values() if p["current"] and not p["full"])
    assert result["pairs"] == len(failures) and (result["mcnemar"]["b"], result["mcnemar"]["c"]) == (b, c)
    assert "exact McNemar" in capsys.readouterr().out or b + c == 0
    n = len(judge_fake.seen)
    assert main(["judge", "requery", str(out)]) == 0 and len(judge_fake.seen) == n  # resumed: nothing asked again


def test_requery_tally_gives_the_papers_figures():
    from tests.judge_helpers import requery_line
    from workstation.studies.judge.requery import tally

    rows = []
    for i, (full, cur) in enumerate([(True, False)] * 10 + [(False, True)] * 2 + [(True, True)] * 5):
        rows += [requery_line(i, "full", full), requery_line(i, "current", cur)]
    rows.append(requery_line(99, "full", None))
    t = tally(rows)
    assert t.pairs == 17 and t.errors_full == 15 and t.errors_current == 7
    assert round(t.mcnemar.p or 0, 4) == 0.0386 and round(t.mcnemar.odds_ratio or 0, 2) == 0.2


def test_calibrate_scores_the_judge_on_a_qa_set_first_and_records_it(batch_dir, judge_fake, tmp_path):
    from tests.fake_provider import Step, sent_messages
    from tests.judge_helpers import model_of
    from workstation.studies.qa.qset import read_set

    assert main(["qa", "gen", "--recordings", str(batch_dir / "runs"), "--out", str(tmp_path / "set"),
                 "--per-game", "4"]) == 0
    qs = read_set(tmp_path / "set")
    verdicts = ScriptedJudge()

    def respond(seen):
        text = "".join(t for _, parts in sent_messages(seen) for kind, t in parts if kind == "text")
        if model_of(seen) == JUDGE and "Choices:" in text:
            q = next(q for q in qs if q["question"] in text and all(f"Frame at {f['t']}:" in text for f in q["frames"]))
            wrong = q["id"] == qs[0]["id"]  # one question answered wrong
            return Step(text=next(c for c in q["choices"] if c != q["answer"]) if wrong else q["answer"])
        return verdicts(seen)

    judge_fake.responder = respond
    out = tmp_path / "j"
    assert judge_cli(batch_dir, judge_fake, out, "--calibrate", str(tmp_path / "set")) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["calibration"]["answers"] == len(qs)
    assert s["calibration"]["accuracy"] == pytest.approx((len(qs) - 1) / len(qs))
    assert json.loads((out / "judge.json").read_text())["calibration"] == s["calibration"]
    assert (out / "calibration" / "answers.jsonl").is_file()


def test_report_paper_lays_out_what_the_data_allows_and_lists_the_rest(batch_dir, judge_fake, tmp_path, capsys):
    judge_fake.responder = ScriptedJudge()
    out = tmp_path / "j"
    assert judge_cli(batch_dir, judge_fake, out, "--groups", "alpha/beta") == 0
    assert main(["judge", "requery", str(out)]) == 0
    assert main(["judge", "stuck", str(batch_dir), "--json"]) == 0
    capsys.readouterr()
    stuck = tmp_path / "stuck.json"
    assert main(["judge", "stuck", str(batch_dir), "--json"]) == 0
    stuck.write_text(capsys.readouterr().out)
    md = tmp_path / "paper.md"
    assert main(["report", str(batch_dir), str(out), str(stuck), "--paper", "--baseline", "alpha", "--md", str(md)]) == 0
    text = md.read_text()
    for heading in ("Fig. 3", "Fig. 4", "Failure categories per model", "Fig. 14", "Table 9", "Stuck stretches"):
        assert f"## {heading}" in text, heading
    s = json.loads((out / "summary.json").read_text())
    row = next(x for x in text.splitlines() if x.startswith("| alpha | 5 |"))
    assert f"| {s['per_setting']['alpha']['failures']} |" in row
    not_drawn = text.split("## Not drawn")[1]
    assert "Table 2: QA accuracy: needs" in not_drawn and "Ablation: Feedback on vs off: needs" in not_drawn
    assert "## Table 2" not in text  # missing data is listed, never drawn empty
    assert main(["report", str(batch_dir), "--paper", "--baseline", "alpha"]) == 0  # stuck read from the batch
    assert "## Stuck stretches" in capsys.readouterr().out
    assert main(["report", str(out), "--paper"]) == 0  # a judge directory alone: the batch tables are listed
    assert "Fig. 3 rank heatmap: needs a batch directory" in capsys.readouterr().out
    # a batch with no random baseline (the usual two-model batch): Fig. 4 is listed, the rest is drawn
    assert main(["report", str(batch_dir), str(out), "--paper"]) == 0
    text = capsys.readouterr().out
    assert "## Fig. 3" in text and "## Failure categories per model" in text and "## Fig. 4" not in text
    assert "Fig. 4 separability and criteria: needs runs of the baseline setting 'random'" in text


def test_a_baseline_is_not_judged(tmp_path, capsys):
    from workstation.game.protocol import Protocol
    from workstation.run.start import RunSpec, start_run

    e = start_run(RunSpec(game="breakout", agent="random", out=str(tmp_path / "recs"), protocol=Protocol(frames=30)),
                  rewindable=False)
    drive(e)
    e.close()
    assert main(["judge", str(tmp_path / "recs"), "--judge", "compat:j", "--base-url", "http://127.0.0.1:9/v1",
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "no model runs (only random|frames=30)" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_the_ram_truth_agreement_rate_is_recomputed_from_the_verdicts(batch_dir, judge_fake, tmp_path, capsys):
    """The figure `judge` and `report --paper` print: verdicts whose evidence the RAM agrees with, over the
    verdicts the RAM could check, recomputed here from verdicts.jsonl."""
    claims = ["The ball is moving left.", "The ball is moving right.", "The paddle is on the left.",
              "The paddle is on the right.", "It missed."]
    answers = [json.dumps({"failure": True, "category": "perception", "subtype": "x", "evidence": c,
                           "text_cue_followed": None}) for c in claims]
    judge_fake.responder = ScriptedJudge(answers)
    out = tmp_path / "j"
    assert judge_cli(batch_dir, judge_fake, out) == 0
    printed = capsys.readouterr().out
    verdicts = lines(out / "verdicts.jsonl")
    true = sum(1 for v in verdicts if v["truth_agrees"] is True)
    false = sum(1 for v in verdicts if v["truth_agrees"] is False)
    unknown = len(verdicts) - true - false
    assert true > 0 and false > 0 and true != false  # both kinds, so a swapped rule shows
    rate = round(true / (true + false), 4)
    s = json.loads((out / "summary.json").read_text())
    assert s["truth"] == {"true": true, "false": false, "unknown": unknown, "agreement_rate": rate}
    assert f"truth: {true} agree, {false} disagree, {unknown} unknown (agreement {100 * rate:.0f}%)" in printed
    assert main(["report", str(out), "--paper"]) == 0
    assert (f"evidence checked against RAM agrees in {100 * rate:.0f}% of {true + false} checkable verdicts"
            in capsys.readouterr().out)


def test_a_summary_that_counts_changes_by_hand_is_never_sampled(tmp_path):
    import shutil

    from workstation.store.recording import Recording
    from workstation.studies.judge.sample import changed_by_hand

    src = Path(__file__).resolve().parent / "data" / "rule1-breakout-random-s0"
    assert changed_by_hand(Recording(src)) is None
    for extra, why in (({"interventions": {"override": 1}}, "its summary counts interventions"),
                       ({"interventions": {"override": 0}}, None), ({"interventions_v2": 3}, "interventions_v2")):
        run = tmp_path / str(len(list(tmp_path.iterdir())))
        shutil.copytree(src, run)
        summary = json.loads((run / "summary.json").read_text())
        (run / "summary.json").write_text(json.dumps({**summary, **extra}))
        found = changed_by_hand(Recording(run))
        assert found == why if why is None else why in found
