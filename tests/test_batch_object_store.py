"""``batch --out s3://...``: a batch kept in object storage, against moto's S3 server on 127.0.0.1.

Real parts: the real CLI in a subprocess, the real emulator, real recordings, s3fs over HTTP to
moto's server (a real S3 API on a free local port), fsspec's in-memory file system in process.
Skipped, saying why, only when moto's server or s3fs cannot be imported (the test extra has both).
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

moto_server = pytest.importorskip("moto.server", reason="moto is not installed (the test extra: pip install -e '.[test]')")
s3fs = pytest.importorskip("s3fs", reason="s3fs is not installed (the object-store extra: pip install -e '.[object-store]')")

from workstation.store.integrity import quick_verdict
from workstation.store.recording import Recording

ROOT = Path(__file__).resolve().parent.parent
SECRET = "s3cr3t-not-to-be-shown-4711"
GRID = """\
name = "objstore"
games = ["breakout", "seaquest"]
seeds = [0, 1]

[protocol]
frames = {frames}

[[settings]]
label = "random"
spec = "random"
"""


@pytest.fixture(scope="module")
def endpoint():
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def aws_env(endpoint: str, stage: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "FSSPEC_"))}
    env.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY=SECRET, AWS_DEFAULT_REGION="us-east-1",
               AWS_ENDPOINT_URL=endpoint, AWS_CONFIG_FILE=os.devnull, AWS_SHARED_CREDENTIALS_FILE=os.devnull,
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost",
               WORKSTATION_OUT_STAGE=str(stage), WORKSTATION_OUT_TIMEOUT="3", PYTHONPATH=str(ROOT))
    return env


def s3(endpoint: str):
    return s3fs.S3FileSystem(key="testing", secret=SECRET, client_kwargs={"endpoint_url": endpoint,
                                                                          "region_name": "us-east-1"},
                             skip_instance_cache=True, use_listings_cache=False)


@pytest.fixture
def bucket(endpoint, request):
    name = "b-" + request.node.name.lower().replace("_", "-")[:40].strip("-")
    import boto3

    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing",
                 aws_secret_access_key=SECRET).create_bucket(Bucket=name)
    return name


def grid_file(tmp_path: Path, frames: int) -> Path:
    p = tmp_path / "grid.toml"
    p.write_text(textwrap.dedent(GRID.format(frames=frames)), encoding="utf-8")
    return p


def cli(env: dict, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workstation", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def markers(fs, prefix: str) -> dict[str, dict]:
    return {p.rsplit("/", 1)[-1][:-5]: json.loads(fs.cat_file(p)) for p in fs.find(f"{prefix}/uploaded")}


def check_bucket(fs, prefix: str, tmp_path: Path, n: int) -> list[dict]:
    """Every marked recording is whole and verifies once downloaded; the results rows name exactly those."""
    marked = markers(fs, prefix)
    assert len(marked) == n
    folders = {p.split("/runs/", 1)[1].split("/", 1)[0] for p in fs.find(f"{prefix}/runs")}
    assert folders == set(marked)  # no folder without its marker, no marker without its folder
    ids = {}
    for name, m in marked.items():
        local = tmp_path / "down" / name
        rels = sorted(m["files"])
        fs.get([f"{prefix}/runs/{name}/{r}" for r in rels], [str(local / r) for r in rels])
        rec = Recording(local)
        assert rec.complete
        ok, line = quick_verdict(rec)
        assert ok, line
        ids[name] = rec.run_id
    rows = list(csv.DictReader(io.StringIO(fs.cat_file(f"{prefix}/results.csv").decode())))
    assert sorted(r["run_id"] for r in rows) == sorted(ids.values())
    assert all(r["complete"] == "true" for r in rows)
    jsonl = [json.loads(x) for x in fs.cat_file(f"{prefix}/results.jsonl").decode().splitlines()]
    assert {r["path"] for r in jsonl} == {f"s3://{prefix}/runs/{name}" for name in marked}
    assert fs.cat_file(f"{prefix}/grid.toml").decode().startswith('name = "objstore"')
    for path in fs.find(prefix):  # no credential went up with the batch
        assert SECRET.encode() not in fs.cat_file(path)
    return rows


def test_batch_into_s3_and_resume_from_another_stage_plays_nothing(endpoint, bucket, tmp_path):
    grid = grid_file(tmp_path, 30)
    prefix = f"{bucket}/batches/one"
    env = aws_env(endpoint, tmp_path / "stage-a")
    fs = s3(endpoint)
    dry = cli(env, "batch", str(grid), "--out", f"s3://{prefix}", "--dry-run")
    assert dry.returncode == 0 and "total" in dry.stdout, dry.stdout + dry.stderr
    assert fs.find(prefix) == []  # a dry run writes nothing to the URI
    r = cli(env, "batch", str(grid), "--out", f"s3://{prefix}", "--plain", "--concurrency", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "uploaded 4 recordings" in r.stdout and f"s3://{prefix}/results.csv" in r.stdout
    assert SECRET not in r.stdout + r.stderr
    rows = check_bucket(fs, prefix, tmp_path, 4)
    before = {p: fs.info(p)["ETag"] for p in fs.find(f"{prefix}/runs")}

    # another machine (an empty stage): the four recordings come down, nothing is played again
    env_b = aws_env(endpoint, tmp_path / "stage-b")
    r2 = cli(env_b, "batch", str(grid), "--out", f"s3://{prefix}", "--plain")
    assert r2.returncode == 0, r2.stdout + r2.stderr
    assert "4/4 done (4 before)" in r2.stdout and "uploaded 0 recordings" in r2.stdout
    assert "brought down 4 recordings" in r2.stdout
    assert {p: fs.info(p)["ETag"] for p in fs.find(f"{prefix}/runs")} == before
    assert check_bucket(fs, prefix, tmp_path / "again", 4) == rows

    # `report` reads the URI's results table
    rep = cli(env_b, "report", f"s3://{prefix}")
    assert rep.returncode == 0 and "random" in rep.stdout, rep.stdout + rep.stderr
    none = cli(env_b, "report", f"s3://{bucket}/no/batch/here")
    assert none.returncode == 2 and "no results.csv there" in none.stderr and len(none.stderr.splitlines()) == 1

    # another grid into the same URI: refused, naming the URI, nothing changed there
    other = tmp_path / "other.toml"
    other.write_text(grid.read_text().replace("seeds = [0, 1]", "seeds = [0, 1, 2]"), encoding="utf-8")
    r4 = cli(env_b, "batch", str(other), "--out", f"s3://{prefix}", "--plain")
    assert r4.returncode == 2 and len(r4.stderr.strip().splitlines()) == 1, r4.stderr
    assert f"s3://{prefix} holds another batch: seeds" in r4.stderr and "Traceback" not in r4.stderr
    assert {p: fs.info(p)["ETag"] for p in fs.find(f"{prefix}/runs")} == before

    # a recording damaged in the bucket (a file gone): not brought down, its run played and uploaded again
    gone = sorted(markers(fs, prefix))[-1]
    fs.rm(f"{prefix}/runs/{gone}/turns.jsonl")
    r5 = cli(aws_env(endpoint, tmp_path / "stage-c"), "batch", str(grid), "--out", f"s3://{prefix}", "--plain")
    assert r5.returncode == 0, r5.stdout + r5.stderr
    assert "brought down 3 recordings" in r5.stdout and "4/4 done (3 before)" in r5.stdout
    assert "uploaded 1 recording " in r5.stdout
    check_bucket(fs, prefix, tmp_path / "damaged", 4)

    # an upload cut short: a marker gone, a stray file in its folder; the stage that has it uploads it whole
    name = sorted(markers(fs, prefix))[0]
    fs.rm(f"{prefix}/uploaded/{name}.json")
    fs.pipe_file(f"{prefix}/runs/{name}/stray.bin", b"half an upload")
    r3 = cli(env, "batch", str(grid), "--out", f"s3://{prefix}", "--plain")
    assert r3.returncode == 0, r3.stdout + r3.stderr
    assert "4/4 done (4 before)" in r3.stdout and "uploaded 1 recording " in r3.stdout
    assert not fs.exists(f"{prefix}/runs/{name}/stray.bin")
    check_bucket(fs, prefix, tmp_path / "third", 4)


def test_killed_batch_resumes_into_s3(endpoint, bucket, tmp_path):
    grid = grid_file(tmp_path, 600)
    prefix = f"{bucket}/killed"
    env = aws_env(endpoint, tmp_path / "stage")
    fs = s3(endpoint)
    proc = subprocess.Popen([sys.executable, "-m", "workstation", "batch", str(grid), "--out", f"s3://{prefix}",
                             "--plain", "--concurrency", "1"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not fs.find(f"{prefix}/uploaded") and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
            fs.invalidate_cache()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    fs.invalidate_cache()
    assert 1 <= len(markers(fs, prefix)) < 4
    r = cli(env, "batch", str(grid), "--out", f"s3://{prefix}", "--plain")
    assert r.returncode == 0, r.stdout + r.stderr
    check_bucket(fs, prefix, tmp_path, 4)
    r2 = cli(env, "batch", str(grid), "--out", f"s3://{prefix}", "--plain")
    assert r2.returncode == 0 and "4/4 done (4 before)" in r2.stdout and "uploaded 0 recordings" in r2.stdout


def test_memory_file_system_in_process(tmp_path, monkeypatch, capsys):
    import fsspec

    from workstation.cli import main

    monkeypatch.setenv("WORKSTATION_OUT_STAGE", str(tmp_path / "stage"))
    grid = grid_file(tmp_path, 30)
    uri = f"memory://objstore-{os.getpid()}/{tmp_path.name}"
    assert main(["batch", str(grid), "--out", uri, "--plain"]) == 0
    fs = fsspec.filesystem("memory")
    root = uri.split("://", 1)[1]
    assert len(fs.find(f"{root}/uploaded")) == 4
    assert {json.loads(x)["run_id"] for x in fs.cat_file(f"{root}/results.jsonl").decode().splitlines()} \
        == {Recording(p).run_id for p in (next((tmp_path / "stage").iterdir()) / "runs").iterdir()
            if not p.name.startswith(".")}
    capsys.readouterr()
    assert main(["batch", str(grid), "--out", uri, "--plain"]) == 0
    assert "4/4 done (4 before)" in capsys.readouterr().out


def test_a_recording_edited_in_the_uri_is_set_aside_and_played_again(tmp_path, monkeypatch, capsys):
    """A score forged in the URI's copy of a recording: the resume that brings it down names it, plays its run
    again and uploads that in its place; the results never show the forged score."""
    import fsspec

    from workstation.cli import main

    monkeypatch.setenv("WORKSTATION_OUT_STAGE", str(tmp_path / "stage-a"))
    grid = grid_file(tmp_path, 30)
    uri = f"memory://objstore-{os.getpid()}/{tmp_path.name}"
    assert main(["batch", str(grid), "--out", uri, "--plain"]) == 0
    fs = fsspec.filesystem("memory")
    root = uri.split("://", 1)[1]
    name = sorted(markers(fs, root))[0]
    summary = f"{root}/runs/{name}/summary.json"
    text = fs.cat_file(summary)
    assert b'"total_reward": 0.0,' in text  # edited to the same size: it passes the marker's sizes and comes down
    fs.pipe_file(summary, text.replace(b'"total_reward": 0.0,', b'"total_reward": 9.0,'))
    monkeypatch.setenv("WORKSTATION_OUT_STAGE", str(tmp_path / "stage-b"))  # another machine: it comes down
    capsys.readouterr()
    assert main(["batch", str(grid), "--out", uri, "--plain"]) == 0
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if "damaged" in x]
    assert name in line and "total_reward 9 contradicts" in line, out
    assert "brought down 4 recordings" in out and "4/4 done (3 before)" in out and "uploaded 1 recording " in out, out
    m = markers(fs, root)[name]
    local = tmp_path / "down" / name
    fs.get([f"{root}/runs/{name}/{r}" for r in sorted(m["files"])], [str(local / r) for r in sorted(m["files"])])
    ok, verdict = quick_verdict(Recording(local))
    assert ok, verdict
    rows = [json.loads(x) for x in fs.cat_file(f"{root}/results.jsonl").decode().splitlines()]
    assert len(rows) == 4 and all(r["score"] == 0.0 for r in rows)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


BAD = {
    "unknown scheme": ("nosuchfs://bucket/prefix", {}, "unknown storage scheme"),
    "no bucket": ("s3://no-such-bucket-here/prefix", {}, "no bucket"),
    "no bucket named": ("s3:///prefix", {}, "no bucket"),
    "bucket name": ("s3://Not_A_Bucket/prefix", {}, "not an S3 bucket name"),
    "login in the URI": (f"s3://someone:{SECRET}@bucket/prefix", {}, "credentials in the environment"),
    "query": ("s3://bucket/prefix?endpoint=x", {}, "no ?query"),
    "scheme without its package": ("gs://bucket/prefix", {}, "gcsfs"),
    "unreachable endpoint": ("s3://bucket/prefix", {"AWS_ENDPOINT_URL": "closed"}, "cannot reach it"),
    "missing extra": ("s3://bucket/prefix", {"hide": "fsspec"}, "object-store"),
    "no credentials": ("s3://bucket/prefix", {"drop": ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")},
                       "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile"),
}


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_bad_out_uri(case, endpoint, tmp_path):
    uri, extra, words = BAD[case]
    grid = grid_file(tmp_path, 30)
    env = aws_env(endpoint, tmp_path / "stage")
    if extra.get("AWS_ENDPOINT_URL") == "closed":
        env["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{closed_port()}"
    for name in extra.get("drop", ()):  # no key in the environment, and no instance role to find one
        env.pop(name)
        env["AWS_EC2_METADATA_DISABLED"] = "true"
    args = ["batch", str(grid), "--out", uri, "--plain"]
    if "hide" in extra:  # the package is not there: `import fsspec` fails as in an install without the extra
        code = (f"import sys; sys.modules[{extra['hide']!r}] = None; from workstation.cli import main; "
                f"sys.exit(main({args!r}))")
        r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=120)
    else:
        r = cli(env, *args, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], r.stderr
    assert "Traceback" not in r.stderr and SECRET not in r.stdout + r.stderr
    assert not (tmp_path / "stage").exists()  # nothing written locally


def test_an_upload_that_fails_is_kept_and_said(tmp_path, monkeypatch, capsys):
    """fsspec's local file system as the store (``local://``): a folder the upload cannot make fails it."""
    from workstation.cli import main

    monkeypatch.setenv("WORKSTATION_OUT_STAGE", str(tmp_path / "stage"))
    grid = grid_file(tmp_path, 30)
    store = tmp_path / "store"
    uri = f"local://{store}"
    assert main(["batch", str(grid), "--out", uri, "--plain"]) == 0
    assert len(list((store / "uploaded").iterdir())) == 4
    name = sorted(p.name for p in (store / "runs").iterdir())[0]
    (store / "uploaded" / f"{name}.json").unlink()  # as if the driver died before its marker
    shutil.rmtree(store / "runs")
    (store / "runs").write_text("not a folder")  # and now no recording can go up
    capsys.readouterr()
    assert main(["batch", str(grid), "--out", uri, "--plain"]) == 1
    out = capsys.readouterr().out
    assert f"not everything reached {uri}: runs/{name}" in out and "run the same command again" in out
    stage = next((tmp_path / "stage").iterdir())
    assert Recording(stage / "runs" / name).complete  # kept in the stage
    (store / "runs").unlink()
    assert main(["batch", str(grid), "--out", uri, "--plain"]) == 0
    assert "uploaded 1 recording " in capsys.readouterr().out
    assert (store / "uploaded" / f"{name}.json").is_file() and (store / "runs" / name / "summary.json").is_file()


def test_results_go_up_while_the_batch_runs(tmp_path, monkeypatch):
    """The uploader thread sends the results table every ``every_s`` once something new is up, before the end."""
    import fsspec

    from workstation.cli import main
    from workstation.studies.batch.grid import load_grid
    from workstation.studies.batch.jobs import jobs_of
    from workstation.studies.batch.remote_out import RemoteOut, Uploads

    monkeypatch.setenv("WORKSTATION_OUT_STAGE", str(tmp_path / "stage"))
    grid = grid_file(tmp_path, 30)
    uri = f"memory://objstore-{os.getpid()}/periodic-{tmp_path.name}"
    assert main(["batch", str(grid), "--out", uri, "--plain"]) == 0
    fs, root = fsspec.filesystem("memory"), uri.split("://", 1)[1]
    fs.rm(f"{root}/uploaded", recursive=True)  # as if the driver had died before any marker or table
    fs.rm([f"{root}/results.csv", f"{root}/results.jsonl"])
    out = RemoteOut.open(uri)
    try:
        cells = jobs_of(load_grid(grid))
        uploads = Uploads(out, cells, every_s=0.0)

        class Driver:
            on_settled = None

        driver = Driver()
        uploads.start(driver)
        deadline = time.monotonic() + 60
        while not fs.exists(f"{root}/results.jsonl") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert fs.exists(f"{root}/results.jsonl")  # sent by the thread: finish() has not been called
        assert callable(driver.on_settled)  # the runner's hook is set
        n, why = uploads.finish()
        assert (n, why) == (4, None) and len(fs.find(f"{root}/uploaded")) == 4
    finally:
        out.close()


def test_ray_batch_into_s3(endpoint, bucket, tmp_path):
    """With --executor ray, recordings come home to the driver's stage and the driver uploads them."""
    pytest.importorskip("ray", reason="Ray is not installed (the optional extra: pip install -e '.[ray]')")
    grid = grid_file(tmp_path, 30)
    prefix = f"{bucket}/ray"
    r = cli(aws_env(endpoint, tmp_path / "stage"), "batch", str(grid), "--out", f"s3://{prefix}", "--plain",
            "--executor", "ray")
    assert r.returncode == 0, r.stdout + r.stderr
    fs = s3(endpoint)
    rows = check_bucket(fs, prefix, tmp_path, 4)
    assert {row["executor"] for row in rows} == {"ray"} and all(row["node_id"] for row in rows)
