"""`workstation export --inspect`: real runs (the real engine; a model over real HTTP to the fake provider on
127.0.0.1) written as Inspect logs by our code, read back by inspect-ai's own `read_eval_log`, every field
checked against the recording; bad input refused with nothing written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.fake_provider import KEYS, SPECS, FakeProvider, fake_server  # noqa: F401
from workstation.engine.turn_engine import Phase
from workstation.game.protocol import Protocol
from workstation.run.drive import drive
from workstation.run.options import RunSpec
from workstation.run.start import start_run
from workstation.store.recording import Recording

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "workstation"]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)


def run_random(out: Path, seed: int = 0, frames: int = 300) -> Path:
    r = cli("run", "--game", "breakout", "--agent", "random", "--seed", str(seed), "--frames", str(frames),
            "--out", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    return Path(r.stdout.split()[0])


def read_log(path: Path) -> Any:
    log_mod = pytest.importorskip("inspect_ai.log")
    return log_mod.read_eval_log(str(path))


def model_events(sample: Any) -> list[Any]:
    return [e for e in sample.events if e.event == "model"]


def info_events(sample: Any) -> list[Any]:
    return [e for e in sample.events if e.event == "info"]


def images_of(event: Any) -> list[str]:
    out = []
    for m in event.input:
        if isinstance(m.content, list):
            out += [c.image for c in m.content if c.type == "image"]
    return out


def check_sample_against(sample: Any, rec: Recording) -> None:
    """Every field we map, against the recording it came from."""
    s, turns = rec.outcome(), rec.turn_records
    assert sample.metadata["run_id"] == rec.run_id
    assert sample.metadata["game"] == rec.manifest_record.game and sample.metadata["seed"] == rec.manifest_record.seed
    assert sample.metadata["protocol"] == rec.manifest_record.protocol
    assert sample.metadata["prompt_pack"]["digest"] == rec.manifest_record.prompt_pack["digest"]
    assert sample.scores["total_reward"].value == s.total_reward
    assert sample.scores["lives_lost"].value == s.lives_lost
    models, infos = model_events(sample), info_events(sample)
    assert len(models) == len(turns) == len(infos)
    for e, i, t in zip(models, infos, turns):
        assert e.output.completion == t.raw and e.working_time == t.latency_s
        shown = images_of(e)
        assert len(shown) == len(t.prompt["images"]) > 0  # the frames the model saw, each an image
        for ref in shown:  # every image an attachment of the sample, a PNG
            assert ref.startswith("attachment://") and sample.attachments[ref[len("attachment://"):]].startswith(
                "data:image/png;base64,")
        if t.usage is None:  # no call was made: zero tokens, as the recording counts them
            assert e.output.usage.input_tokens == e.output.usage.output_tokens == 0
        else:
            assert e.output.usage.input_tokens == t.usage["input_tokens"]
            assert e.output.usage.output_tokens == t.usage["output_tokens"]
            assert e.output.usage.input_tokens_cache_read == t.usage["cache_read_tokens"]
        assert i.data["reward"] == t.reward and i.data["frames"] == [t.start_frame, t.end_frame]
        assert i.data["lives_lost"] == t.lives_lost and i.data["parse"]["valid"] == t.valid
    # each frame stored once: as many attachments as distinct frames shown
    frames = {f for t in turns for f in t.prompt["images"]}
    assert len(sample.attachments) == len({rec.frames.png(f) for f in frames})


def test_a_random_run_exports_as_one_sample_inspect_reads(tmp_path):
    path = run_random(tmp_path / "recs")
    rec = Recording(path)
    r = cli("export", str(path), "--inspect", str(tmp_path / "logs"))
    assert r.returncode == 0, r.stderr
    logs = sorted((tmp_path / "logs").iterdir())
    assert len(logs) == 1 and logs[0].suffix == ".eval" and str(logs[0]) in r.stdout
    with zipfile.ZipFile(logs[0]) as z:
        assert {"header.json", "summaries.json", "samples/breakout_epoch_1.json"} <= set(z.namelist())
    log = read_log(logs[0])
    assert log.version == 2 and log.status == "success" and log.eval.model == "none/random"
    assert log.eval.task == "atari_workstation/atari" and log.plan.steps
    assert len(log.samples) == 1
    check_sample_against(log.samples[0], rec)
    assert log.results.scores[0].name == "total_reward"
    assert log.results.scores[0].metrics["mean"].value == rec.outcome().total_reward


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory, fake_server: FakeProvider) -> Path:  # noqa: F811
    """A two-setting batch (a model over HTTP to the fake provider, and random), two seeds each."""
    fake_server.reset()
    root = tmp_path_factory.mktemp("batch")
    grid = root / "grid.toml"
    grid.write_text(f'''name = "two"
games = ["breakout"]
seeds = "0..1"
[[settings]]
label = "gpt"
spec = "{SPECS['openai']}"
base_url = "{fake_server.url('openai')}"
[[settings]]
label = "rnd"
spec = "random"
[protocol]
frames = 90
''')
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(KEYS)
    r = cli("batch", str(grid), "--out", str(root / "b"), "--plain", env=env)
    assert r.returncode == 0, r.stderr
    return root / "b"


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_a_two_setting_batch_exports_one_log_per_setting_with_usage_equal_to_the_recordings(batch, tmp_path, fmt):
    out = tmp_path / "logs"
    r = cli("export", str(batch), "--inspect", str(out), "--format", fmt)
    assert r.returncode == 0, r.stderr
    assert "4 runs in 2 Inspect logs" in r.stdout
    logs = [read_log(p) for p in sorted(out.iterdir())]
    assert all(p.suffix == f".{fmt}" for p in out.iterdir())
    by_model = {log.eval.model: log for log in logs}
    assert set(by_model) == {"openai/gpt-5.2", "none/random"}
    recs = {Recording(p).run_id: Recording(p) for p in (batch / "runs").iterdir() if p.is_dir()}
    for log in logs:
        assert len(log.samples) == 2 and sorted(s.epoch for s in log.samples) == [1, 2]
        for sample in log.samples:
            check_sample_against(sample, recs[sample.metadata["run_id"]])
    model_log = by_model["openai/gpt-5.2"]
    usage = model_log.stats.model_usage["openai/gpt-5.2"]
    runs = [recs[s.metadata["run_id"]].outcome() for s in model_log.samples]
    assert usage.input_tokens == sum(s.usage["input_tokens"] for s in runs) > 0
    assert usage.output_tokens == sum(s.usage["output_tokens"] for s in runs)
    assert usage.input_tokens_cache_read == sum(s.usage["cache_read_tokens"] for s in runs)
    assert usage.input_tokens_cache_write == sum(s.usage["cache_write_tokens"] for s in runs)
    assert usage.reasoning_tokens == sum(s.usage["reasoning_tokens"] for s in runs)
    assert usage.total_cost == pytest.approx(sum(s.cost_usd or 0 for s in runs))
    assert by_model["none/random"].stats.model_usage["none/random"].total_tokens == 0
    endpoint = recs[model_log.samples[0].metadata["run_id"]].manifest_record.agent["endpoint"]
    for e in model_events(model_log.samples[0]):  # the provider's own request, its key redacted
        assert e.call.request["url"] == endpoint and e.call.request["headers"]["Authorization"] == "Bearer [redacted]"
        assert e.call.request["body"]["model"] == "gpt-5.2"
    assert all(e.call is None for e in model_events(by_model["none/random"].samples[0]))
    for sample in model_log.samples:  # each sample's usage is its run's
        rec_usage = recs[sample.metadata["run_id"]].outcome().usage
        assert sample.model_usage["openai/gpt-5.2"].input_tokens == rec_usage["input_tokens"]
    assert all(v not in p.read_bytes().decode("utf-8", "replace") for p in out.iterdir() for v in KEYS.values())
    if fmt == "json":  # the viewer reads the header as a stream that stops at "samples"
        keys = list(json.loads(next(out.iterdir()).read_text()))
        assert keys.index("samples") > max(keys.index(k) for k in ("version", "status", "eval", "plan", "stats"))


def test_seeds_of_one_setting_are_epochs_and_random_runs_give_a_normalised_score(batch, tmp_path):
    out = tmp_path / "logs"
    assert cli("export", str(batch), "--inspect", str(out)).returncode == 0
    for p in out.iterdir():
        log = read_log(p)
        assert log.eval.config.epochs == 2 and log.eval.dataset.sample_ids == ["breakout"]
        assert [s.metadata["seed"] for s in sorted(log.samples, key=lambda s: s.epoch)] == [0, 1]
        for s in log.samples:
            assert "random_normalised" in s.scores  # the batch holds random runs of the game: a baseline


def _changed(out: Path) -> Path:
    spec = RunSpec(game="breakout", agent="random", seed=5, out=str(out), protocol=Protocol(frames=60))
    e = start_run(spec)
    try:
        e.start()
        e.run_turn()
        e.step()
        assert e.phase is Phase.PROMPT
        e.step()
        e.override_plan(["left", "left", "fire"])
        drive(e)
    finally:
        e.close()
    return Path(e.writer.path)


def test_a_run_changed_by_hand_is_left_out_unless_asked_for_and_then_marked(tmp_path):
    plain = run_random(tmp_path / "recs", seed=5, frames=60)
    changed = _changed(tmp_path / "recs")
    out = tmp_path / "logs"
    r = cli("export", str(plain), str(changed), "--inspect", str(out))
    assert r.returncode == 0, r.stderr
    assert "1 changed by hand left out" in r.stdout
    assert len(list(out.iterdir())) == 1
    r = cli("export", str(changed), "--inspect", str(tmp_path / "only"))
    assert r.returncode == 2 and "--include-changed" in r.stderr and not (tmp_path / "only").exists()
    assert "the one run was changed by hand" in r.stderr and "all 1 runs" not in r.stderr
    r = cli("export", str(plain), str(changed), "--inspect", str(tmp_path / "all"), "--include-changed")
    assert r.returncode == 0, r.stderr
    logs = [read_log(p) for p in (tmp_path / "all").iterdir()]
    assert len(logs) == 2
    marked = [s for log in logs for s in log.samples if s.metadata["changed_by_hand"]]
    assert len(marked) == 1 and marked[0].metadata["changed_by_hand"] == {"override": 1}
    assert marked[0].metadata["run_id"] == Recording(changed).run_id != Recording(plain).run_id
    assert "changed by hand" in marked[0].metadata["setting"] and "CHANGED BY HAND" in marked[0].input


def test_bad_input_is_one_line_and_writes_nothing(tmp_path):
    path = run_random(tmp_path / "recs", frames=60)
    good = tmp_path / "logs"
    a_file = tmp_path / "notes"
    a_file.write_text("mine")
    cases = [
        (["export", str(path), "--inspect", str(path / "logs")], 2, "inside the input"),
        (["export", str(tmp_path / "recs"), "--inspect", str(tmp_path / "recs" / "x")], 2, "inside the input"),
        (["export", str(tmp_path / "nope"), "--inspect", str(good)], 2, "no such recording"),
        (["export", str(path), "--inspect", str(path / "manifest.json")], 2, "inside the input"),
        (["export", str(path), "--inspect", str(a_file)], 2, "is a file"),
        (["export", str(path), str(path), "-o", str(tmp_path / "x.mp4")], 2, "one recording"),
        (["export", str(path), "--inspect", str(good), "-o", str(tmp_path / "x.mp4")], 2, "no -o"),
        (["export", str(path)], 2, "-o FILE"),
        (["export", str(path), "-o", str(tmp_path / "x.mp4"), "--format", "json"], 2, "add --inspect"),
        (["export", str(path), "--inspect", str(tmp_path / "one.eval"), "--format", "json"], 2, "make them agree"),
        (["export", str(path), "--inspect", str(tmp_path / "no" / "one.json")], 2, "does not exist"),
        (["export", str(path), "--inspect", str(good), "--from", "3", "--pace", "native"], 2,
         "--pace, --from shape a video"),
        (["export", str(path), "--inspect", str(good), "--pace", "paper"], 2, "--pace shapes a video"),
        (["export", str(path), "--inspect", str(good), "--overlay", "thought,plan,score"], 2, "--overlay shapes"),
    ]
    for args, code, says in cases:
        r = cli(*args)
        assert r.returncode == code and says in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not good.exists() and not (path / "logs").exists() and not (tmp_path / "recs" / "x").exists()
    assert a_file.read_text() == "mine" and not (tmp_path / "one.eval").exists()


def test_one_log_into_a_named_file_and_a_batch_refused_there(tmp_path, batch):
    path = run_random(tmp_path / "recs", frames=60)
    r = cli("export", str(path), "--inspect", str(tmp_path / "one.json"))
    assert r.returncode == 0, r.stderr
    log = read_log(tmp_path / "one.json")
    assert len(log.samples) == 1 and log.samples[0].metadata["run_id"] == Recording(path).run_id
    r = cli("export", str(batch), "--inspect", str(tmp_path / "two.eval"))
    assert r.returncode == 2 and "make 2 logs" in r.stderr and not (tmp_path / "two.eval").exists()


def test_loose_runs_of_one_agent_under_two_protocols_are_two_settings(tmp_path):
    a = run_random(tmp_path / "recs", frames=60)
    r = cli("run", "--game", "breakout", "--agent", "random", "--seed", "0", "--frames", "60", "--no-feedback",
            "--out", str(tmp_path / "recs"), "--quiet")
    assert r.returncode == 0, r.stderr
    b = Path(r.stdout.split()[0])
    out = tmp_path / "logs"
    assert cli("export", str(a), str(b), "--inspect", str(out)).returncode == 0
    settings = {read_log(p).eval.task_args["setting"] for p in out.iterdir()}
    assert settings == {"random|frames=60", "random|frames=60|feedback=false"}
    folder = tmp_path / "from-folder"  # the folder that holds them: the same logs, nothing written into it
    before = sorted(p.name for p in (tmp_path / "recs").iterdir())
    assert cli("export", str(tmp_path / "recs"), "--inspect", str(folder)).returncode == 0
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in out.iterdir())
    assert sorted(p.name for p in (tmp_path / "recs").iterdir()) == before


def test_a_match_is_refused_in_one_line(tmp_path):
    r = cli("match", "--game", "boxing", "--p1", "random", "--p2", "random", "--frames", "30", "--out",
            str(tmp_path / "m"))
    assert r.returncode == 0, r.stderr
    match = next((tmp_path / "m").iterdir())
    r = cli("export", str(match), "--inspect", str(tmp_path / "logs"))
    assert r.returncode == 2 and "two-player match" in r.stderr and not (tmp_path / "logs").exists()


def test_a_killed_run_exports_marked_unfinished(tmp_path):
    killed = tmp_path / "killed"
    shutil.copytree(run_random(tmp_path / "recs", frames=60), killed)
    (killed / "summary.json").unlink()  # what a killed run leaves
    r = cli("export", str(killed), "--inspect", str(tmp_path / "one.eval"))
    assert r.returncode == 0, r.stderr
    log = read_log(tmp_path / "one.eval")
    assert log.status == "error" and "did not finish" in log.error.message
    sample = log.samples[0]
    assert sample.error is not None and sample.metadata["complete"] is False
    check_sample_against(sample, Recording(killed))


def test_a_damaged_recording_is_named_exit_1_and_nothing_is_written(tmp_path):
    good = run_random(tmp_path / "recs", seed=1, frames=60)
    bad = tmp_path / "bad"
    shutil.copytree(run_random(tmp_path / "recs2", seed=2, frames=60), bad)
    turns = bad / "turns.jsonl"
    turns.write_bytes(turns.read_bytes().replace(b'"reward":0.0', b'"reward":9.0', 1))
    out = tmp_path / "logs"
    r = cli("export", str(good), str(bad), "--inspect", str(out))
    assert r.returncode == 1 and str(bad) in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()


def test_a_manifest_damaged_two_ways_exits_as_verify_and_info_do(tmp_path):
    good = run_random(tmp_path / "recs", seed=1, frames=60)
    for name, damage, code in (("edited", lambda t: t.replace('"seed": 1', '"seed": 4'), 1),  # fails its digest
                               ("cut", lambda t: t[:100], 1)):  # not JSON: damaged too (verify and info: exit 1)
        bad = tmp_path / name
        shutil.copytree(good, bad)
        manifest = bad / "manifest.json"
        manifest.write_text(damage(manifest.read_text()))
        out = tmp_path / f"logs-{name}"
        r = cli("export", str(bad), "--inspect", str(out))
        assert r.returncode == code and "manifest.json" in r.stderr and len(r.stderr.strip().splitlines()) == 1
        assert "Traceback" not in r.stderr and not out.exists()
        assert cli("verify", str(bad)).returncode == cli("info", str(bad)).returncode == code


def test_a_session_exports_its_scored_runs_as_human_setting_and_gives_a_human_normalised_score(tmp_path, batch):
    from workstation.studies.session import Session, Settings

    settings = Settings(participant="P01", games=("breakout",), seeds=(0, 1), practice=0, mode="paused",
                        pace="instant", protocol=Protocol(frames=900))
    session = Session.open(tmp_path / "s", settings)
    while (step := session.next_step()) is not None:
        session.begin(step)
        # the session's runs here are played by the random agent (a person needs a terminal); the session names them
        e = start_run(RunSpec("breakout", agent="random", seed=step.seed, protocol=Protocol(frames=900),
                              out=str(session.runs_dir(step))), rewindable=False)
        summary = drive(e)
        e.close()
        assert session.finish(step, e.writer.path, summary)
    long_random = run_random(tmp_path / "recs", seed=3, frames=900)  # the session's budget, unlike the batch's 90
    out = tmp_path / "logs"
    r = cli("export", str(tmp_path / "s"), str(batch), str(long_random), "--inspect", str(out))
    assert r.returncode == 0, r.stderr
    logs = {log.eval.task_args["setting"]: log for log in map(read_log, out.iterdir())}
    assert set(logs) == {"human:P01", "gpt", "rnd", "random"}
    human = logs["human:P01"]
    assert len(human.samples) == 2
    for s in human.samples:
        check_sample_against(s, Recording(s.metadata["recording"]))
    human_mean = sum(s.scores["total_reward"].value for s in human.samples) / 2
    random_900 = Recording(long_random).outcome().total_reward
    assert human_mean != random_900
    for s in human.samples:  # normalised by the 900-frame random run only
        score = s.scores["total_reward"].value
        assert s.scores["random_normalised"].value == pytest.approx(score - random_900)
        assert s.scores["human_normalised"].value == pytest.approx((score - random_900) / (human_mean - random_900))
    random_90 = sum(s.scores["total_reward"].value for s in logs["rnd"].samples) / 2
    for s in logs["gpt"].samples:  # 90 frames: the batch's random runs, and no human runs of that budget
        assert s.scores["random_normalised"].value == pytest.approx(s.scores["total_reward"].value - random_90)
        assert "human_normalised" not in s.scores


def test_a_baseline_counts_only_for_runs_of_the_same_budget(tmp_path, batch):
    long_random = run_random(tmp_path / "recs", seed=0, frames=300)
    score_300 = Recording(long_random).outcome().total_reward
    out = tmp_path / "logs"
    r = cli("export", str(batch), str(long_random), "--inspect", str(out))
    assert r.returncode == 0, r.stderr
    logs = {log.eval.task_args["setting"]: log for log in map(read_log, out.iterdir())}
    random_90 = sum(s.scores["total_reward"].value for s in logs["rnd"].samples) / 2
    assert random_90 != (2 * random_90 + score_300) / 3  # the 300-frame run would move the batch's baseline
    for label in ("gpt", "rnd"):
        for s in logs[label].samples:
            assert s.scores["random_normalised"].value == pytest.approx(s.scores["total_reward"].value - random_90)
    (alone,) = logs["random|frames=300"].samples
    assert alone.scores["random_normalised"].value == 0


def test_a_damaged_run_in_a_batch_stops_the_export_naming_it(tmp_path, batch):
    copy = tmp_path / "b"
    shutil.copytree(batch, copy)
    run = sorted(p for p in (copy / "runs").iterdir() if p.is_dir())[0]
    turns = run / "turns.jsonl"
    turns.write_bytes(turns.read_bytes()[:-40] + b"x" * 40)
    r = cli("export", str(copy), "--inspect", str(tmp_path / "logs"))
    assert r.returncode == 1 and run.name in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "logs").exists()


def _experience_run(fake: FakeProvider, out: Path, lib: Path, agent: str | None = None) -> Path:
    spec = RunSpec(game="breakout", agent=agent or SPECS["openai"], out=str(out), protocol=Protocol(frames=150),
                   experience=str(lib), reflect_every=2)
    if agent is None:
        spec = spec.with_values(base_url=fake.url("openai"))
    e = start_run(spec)
    try:
        drive(e)
    finally:
        e.close()
    return Path(e.writer.path)


def test_runs_with_an_experience_library_export_each_turn_with_the_library_it_carried(fake, keys, tmp_path):
    """An empty library at the start, a rule added after turn 2: each turn's prompt is rebuilt with the library
    it carried (as ``workstation request`` does), for the model's run and for a replay of it."""
    from tests.fake_provider import Step

    rule = "Serve with fire as soon as the ball is gone."
    fake.responder = lambda seen: Step(text=f"thought: go\nmove: [fire, left]\nadd: {rule}")
    run = _experience_run(fake, tmp_path / "runs", tmp_path / "lib")
    replay = _experience_run(fake, tmp_path / "replays", tmp_path / "lib2", agent=f"replay:{run}")
    for path in (run, replay):
        out = tmp_path / f"{path.parent.name}.eval"
        r = cli("export", str(path), "--inspect", str(out))
        assert r.returncode == 0, r.stderr
        sample = read_log(out).samples[0]
        check_sample_against(sample, Recording(path))
        systems = [e.input[0].content for e in model_events(sample)]
        assert rule not in systems[0] and rule not in systems[1] and all(rule in s for s in systems[3:])


def test_a_prompt_that_cannot_be_rebuilt_says_why_without_contradicting_itself(tmp_path):
    from workstation.store.records import RecordingError
    from workstation.studies.export.inspect_log.sample import turn_prompts

    copy = tmp_path / "run"
    shutil.copytree(run_random(tmp_path / "recs", frames=30), copy)
    turns = copy / "turns.jsonl"
    text = turns.read_text()
    digest = json.loads(text.splitlines()[0])["prompt"]["digest"]
    turns.write_text(text.replace(digest, "0" * len(digest), 1))  # the pack is the recorded one; the turn is not
    with pytest.raises(RecordingError) as caught:
        turn_prompts(Recording(copy))
    said, pack = str(caught.value), Recording(copy).manifest_record.prompt_pack["digest"]
    assert "turn 0's prompt cannot be rebuilt exactly" in said and "prompt pack is the recorded one" in said
    assert f"prompt pack {pack} differs from the recorded {pack}" not in said


def test_exporting_a_batch_writes_nothing_inside_it_not_even_an_index_cache(batch, tmp_path):
    """``export BATCH --inspect OUT`` reads the batch: nothing is made or refreshed inside it (the listing's index
    cache is the user's, store/index.py; a judge of the batch reads it the same way)."""
    from tests.bad_input_world import snapshot
    from workstation.store.index import Index

    cache = Index(batch / "runs").cache_file
    assert cache is not None
    cache.unlink(missing_ok=True)
    before = snapshot(batch)
    assert cli("export", str(batch), "--inspect", str(tmp_path / "logs")).returncode == 0
    assert snapshot(batch) == before and cache.is_file()
