"""No command writes inside any of its inputs, at any depth (issue 26, item 3): `report --json/--md/--plots`
over a file deep inside a batch, a recording or an improvement-rounds directory, or through a symbolic link
that leads into one, is refused in one line (exit 2) with every file as it was; the one guard is
``workstation.store.local_paths.refuse_inside_inputs``.

The world is built once for the module: a copy of the corpora's real one-run batch (``pristine_world``: the
emulator plays 30 frames, once per test process) and a real improvement-rounds directory (its curve saved by ``idc.curve.save``, a skill and a reflection beside it).
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from tests.bad_input_world import pristine_world, snapshot
from workstation.cli import main
from workstation.store.local_paths import LocalPathError, refuse_inside_inputs


def run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(args)
        except SystemExit as e:
            code = int(e.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    import shutil

    w = tmp_path_factory.mktemp("inside")
    shutil.copytree(pristine_world(tmp_path_factory) / "batch", w / "batch")  # a real one-run batch, built once
    shutil.copytree(pristine_world(tmp_path_factory) / "rec1", w / "rec1")  # a second run (breakout, seed 1)
    from workstation.studies.idc import curve as C

    idc = w / "idc"
    idc.mkdir()
    C.save(idc, {"game": "freeway", "player": "compat:p", "reflector": "compat:r", "random_mean": 0.0,
                 "best_round": 0, "rounds": [{"round": 0, "skill": None, "skill_round": None, "score_mean": 1.0,
                                              "score_se": 0.5, "normalised": 1.0, "rolled_back": False,
                                              "episodes": []}], "transfer": []})
    (idc / "skills").mkdir()
    (idc / "skills" / "round_1.md").write_text("keep left\n", encoding="utf-8")
    (idc / "reflections").mkdir()
    (idc / "reflections" / "round_0.json").write_text("{}\n", encoding="utf-8")
    (w / "elsewhere").mkdir()
    (w / "elsewhere" / "notes.txt").write_text("mine\n", encoding="utf-8")
    (w / "batch" / "linked").symlink_to(w / "elsewhere")  # a link inside the batch makes its target an input
    return w


def the_run(w: Path) -> str:
    rec = sorted(p for p in (w / "batch" / "runs").iterdir() if p.is_dir())[0]
    return f"batch/runs/{rec.name}"


CASES = [
    ("json-over-a-run-manifest", lambda w: ["report", f"{w}/batch", "--json", f"{w}/{the_run(w)}/manifest.json"]),
    ("paper-md-over-a-run-summary",
     lambda w: ["report", f"{w}/batch", "--paper", "--md", f"{w}/{the_run(w)}/summary.json"]),
    ("json-over-an-idc-skill", lambda w: ["report", f"{w}/idc", "--json", f"{w}/idc/skills/round_1.md"]),
    ("md-over-an-idc-reflection", lambda w: ["report", f"{w}/idc", "--md", f"{w}/idc/reflections/round_0.json"]),
    ("json-new-file-deep-inside", lambda w: ["report", f"{w}/batch", "--json", f"{w}/{the_run(w)}/new.json"]),
    ("md-through-a-link-inside", lambda w: ["report", f"{w}/batch", "--md", f"{w}/elsewhere/notes.txt"]),
    ("json-beside-through-a-link", lambda w: ["report", f"{w}/batch", "--json", f"{w}/elsewhere/new.json"]),
    ("plots-inside-the-batch", lambda w: ["report", f"{w}/batch", "--plots", f"{w}/batch/runs"]),
    ("plots-is-the-batch", lambda w: ["report", f"{w}/batch", "--plots", f"{w}/batch"]),
    ("json-is-the-input-csv", lambda w: ["report", f"{w}/batch/results.csv", "--json", f"{w}/batch/results.csv"]),
]


@pytest.mark.parametrize("make", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_report_never_writes_inside_its_inputs(world, make):
    before = snapshot(world)
    code, out, err = run(make(world))
    assert code == 2, (code, err)
    assert "input" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert not out.strip(), out  # refused before anything is read, computed or printed
    assert snapshot(world) == before


def test_a_file_beside_the_inputs_is_written(world, tmp_path):
    """The guard is not a blanket refusal: a file next to the batch (not in it) is written."""
    code, _, err = run(["report", f"{world}/batch", "--json", str(tmp_path / "r.json")])
    assert code == 0, err
    assert json.loads((tmp_path / "r.json").read_text())


def test_the_guard_rule(tmp_path):
    """The rule itself: equal to an input file, equal to or anywhere under an input directory, through links."""
    d = tmp_path / "in"
    (d / "a" / "b").mkdir(parents=True)
    f = tmp_path / "in.csv"
    f.write_text("x")
    refuse_inside_inputs(tmp_path / "out.json", [d, f], "--json", "the report")  # beside: fine
    refuse_inside_inputs(tmp_path / "in.csv.bak", [f], "--json", "the report")  # a file is not a directory
    refuse_inside_inputs(tmp_path / "inx" / "r.json", [d], "--json", "the report")  # a prefix is not a parent
    refuse_inside_inputs("s3://b/r.json", [d], "--json", "the report")  # a URI is never a local input
    for bad in (f, d, d / "r.json", d / "a" / "b" / "c" / "r.json"):
        with pytest.raises(LocalPathError) as e:
            refuse_inside_inputs(bad, [d, f], "--json", "the report")
        assert e.value.file == bad and "--json" in str(e.value)
    link = tmp_path / "link"
    link.symlink_to(d / "a")
    with pytest.raises(LocalPathError, match="inside"):  # an output through a link into an input
        refuse_inside_inputs(link / "r.json", [d], "--md", "the report")
    other = tmp_path / "other"
    other.mkdir()
    (d / "a" / "to-other").symlink_to(other)
    with pytest.raises(LocalPathError, match="inside"):  # a link inside an input makes its target an input
        refuse_inside_inputs(other / "r.json", [d], "--md", "the report")
    (tmp_path / "link-to-file").symlink_to(f)
    with pytest.raises(LocalPathError, match="one of"):  # an input given through a link
        refuse_inside_inputs(f, [tmp_path / "link-to-file"], "", "export")


# -- sealed batches and sessions; damaged runs left out and counted ------------------------------------------
def a_copy(world: Path, tmp_path: Path) -> Path:
    import shutil

    b = tmp_path / "batch"
    shutil.copytree(world / "batch", b, symlinks=False, ignore=shutil.ignore_patterns("linked"))
    return b


def test_a_finished_batch_is_sealed_and_an_edit_by_hand_is_named_exit_1(world, tmp_path):
    from workstation.store.seal import seal_problems

    b = a_copy(world, tmp_path)
    assert seal_problems(b, "batch") == []  # grid.toml, results.csv/jsonl, placement.jsonl sealed; runs/ skipped
    csv = b / "results.csv"
    csv.write_text(csv.read_text().replace(",true,", ",true,", 1) + "\n")  # one byte more
    before = snapshot(b)
    code, out, err = run(["report", str(b)])
    assert code == 1 and "results.csv" in err and "damaged" in err and len(err.strip().splitlines()) == 1, err
    code, _, err = run(["batch", str(b / "grid.toml"), "--out", str(b), "--plain"])  # resume: refused, named
    assert code == 1 and "results.csv" in err, err
    assert snapshot(b) == before


def test_a_damaged_run_is_left_out_of_the_report_and_counted(world, tmp_path):
    b = a_copy(world, tmp_path)
    code, out, _ = run(["report", str(b), "--json", str(tmp_path / "all.json")])
    assert code == 0 and "damaged run" not in out
    assert json.loads((tmp_path / "all.json").read_text())["damaged_left_out"] == 0
    import shutil

    rec = sorted(p for p in (b / "runs").iterdir() if p.is_dir())[0]
    frames = rec / "frames.bin"
    data = bytearray(frames.read_bytes())
    data[-1] ^= 0xFF
    frames.write_bytes(bytes(data))  # the recording's digests no longer hold; the batch's own seal does
    code, out, err = run(["report", str(b), "--json", str(tmp_path / "r.json")])
    assert code == 2 and "no complete runs (1 damaged run left out)" in err, err  # nothing else to report
    assert not (tmp_path / "r.json").exists()
    # beside a second, sound run: the damaged one is left out and counted, the other reported
    from workstation.store.recording import Recording

    sound = Recording(world / "rec1")
    csv = (b / "results.csv").read_text().splitlines()
    other = csv[1].replace(csv[1].split(",")[0], sound.run_id).replace(",random,breakout,0,", ",model,breakout,1,")
    shutil.copytree(world / "rec1", b / "runs" / "rec1")
    (b / "results.csv").write_text("\n".join([csv[0], csv[1], other]) + "\n")
    (b / "seal.json").unlink()  # a batch from before seals: read as it is
    code, out, err = run(["report", str(b), "--baseline", "model", "--json", str(tmp_path / "r.json")])
    assert code == 0, err
    assert "1 complete run," in out and "1 damaged run left out" in out, out
    r = json.loads((tmp_path / "r.json").read_text())
    assert r["runs"] == 1 and r["damaged_left_out"] == 1 and r["settings"] == ["model"]
    (rec / "manifest.json").write_text("{not json")  # unreadable: found by its folder's name, left out too
    code, out, err = run(["report", str(b), "--baseline", "model"])
    assert code == 0 and "1 damaged run left out" in out, err


def test_a_session_is_sealed_and_a_hand_edit_is_refused_on_resume(tmp_path):
    from workstation.base.errors import DamagedArtifact
    from workstation.studies.session import Session, make_settings

    s = Session.open(tmp_path / "s", make_settings("p1", "breakout", "0"))
    s.save()
    s.write_results()
    assert (tmp_path / "s" / "seal.json").is_file()
    Session.open(tmp_path / "s", make_settings("p1", "breakout", "0"))  # untouched: resumes
    f = tmp_path / "s" / "session.json"
    data = json.loads(f.read_text())
    data["steps"][0]["score"] = 99
    f.write_text(json.dumps(data))
    with pytest.raises(DamagedArtifact, match="session.json"):
        Session.open(tmp_path / "s", make_settings("p1", "breakout", "0"))
    code, _, err = run(["report", str(tmp_path / "s")])
    assert code == 1 and "session.json" in err, err


# -- batch and session: never written inside what they read -----------------------------------------------------
def test_a_batch_is_never_written_inside_a_recording_it_replays(world, tmp_path):
    import shutil

    rec = tmp_path / "rec"
    shutil.copytree(world / "rec1", rec)
    grid = tmp_path / "g.toml"
    grid.write_text('name = "g"\ngames = ["breakout"]\nseeds = [1]\n[protocol]\nframes = 30\n'
                    f'[[settings]]\nlabel = "again"\nspec = "replay:{rec}"\n'
                    '[[settings]]\nlabel = "random"\nspec = "random"\n', encoding="utf-8")
    before = snapshot(tmp_path)
    for out in (rec / "b", rec / "runs"):
        code, stdout, err = run(["batch", str(grid), "--out", str(out), "--plain"])
        assert code == 2 and "input" in err and len(err.strip().splitlines()) == 1, (out, err)
    assert snapshot(tmp_path) == before


def test_a_session_is_never_written_inside_its_prompt_pack(tmp_path):
    import shutil

    pack = tmp_path / "pack"
    shutil.copytree(Path(__file__).resolve().parents[1] / "prompts", pack)
    before = snapshot(tmp_path)
    code, _, err = run(["session", "--participant", "p", "--games", "breakout", "--seeds", "0", "--prompts", str(pack),
                        "--out", str(pack / "s")])
    assert code == 2 and "inside the session's input" in err, err
    assert snapshot(tmp_path) == before


def test_an_output_inside_the_sealed_artifact_that_holds_an_input_is_refused(tmp_path):
    """`report IDC/round_0 --json IDC/reflections/x.json`: the round is the input, the IDC that holds it is sealed,
    and writing anywhere in it would change what its seal covers."""
    from workstation.store.local_paths import LocalPathError, refuse_inside_inputs
    from workstation.store.seal import seal

    idc = tmp_path / "idc"
    (idc / "round_0").mkdir(parents=True)
    (idc / "reflections").mkdir()
    (idc / "round_0" / "results.csv").write_text("x\n")
    seal(idc, "idc")
    with pytest.raises(LocalPathError, match="the sealed artifact that holds"):
        refuse_inside_inputs(idc / "reflections" / "round_0.json", [idc / "round_0"], "--json", "report")
    refuse_inside_inputs(idc, [idc / "round_0" / "results.csv"], "--out", "batch")  # a resume into itself
    refuse_inside_inputs(tmp_path / "elsewhere.json", [idc / "round_0"], "--json", "report")
