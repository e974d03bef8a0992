"""How long listing and looking up recordings takes among 10,000, vs reading every manifest and summary.

Makes one real 30-frame recording, copies it into N small recordings (each
with its own seed and run id in manifest.json, the summary's seed and manifest
digest made to match, so each passes the listing's cheap check), then times in
the same run:

- the baseline: walk the tree and json-load every manifest.json and summary.json;
- the index, cold (no cache: it reads every recording and writes the user's index cache);
- the index, warm (the cache is checked against every recording's files);
- the index after 1 % of the summaries changed (a score edited: each is re-read and listed as damaged);
- a lookup by run id prefix (warm);
- `workstation ls DIR` (in process, its table printed to nowhere), cold and warm.

The index cache goes under a temporary $XDG_CACHE_HOME, never inside the folder listed: the
bench checks that listing added no file there.

Usage: .venv/bin/python bench/index.py [N]   (default 10000)
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workstation.run.drive import drive
from workstation.store.index import Index


def make_corpus(root: Path, n: int) -> list[str]:
    from workstation.game.protocol import Protocol
    from workstation.run.start import RunSpec, start_run

    src_root = root / "src"
    engine = start_run(RunSpec(game="breakout", protocol=Protocol(frames=30), out=str(src_root)), rewindable=False)
    try:
        drive(engine)
    finally:
        engine.close()
    src = engine.writer.path
    from workstation.store.integrity import sha256_of

    manifest = json.loads((src / "manifest.json").read_text())
    summary = json.loads((src / "summary.json").read_text())
    files = [p for p in src.iterdir() if p.is_file() and p.name not in ("manifest.json", "summary.json")]
    runs = root / "runs"
    runs.mkdir()
    ids = []
    for i in range(n):
        run_id = f"{i:08x}{'a' * 8}"
        d = runs / f"breakout-random-s{i}-{run_id[:8]}"
        d.mkdir()
        (d / "manifest.json").write_text(json.dumps({**manifest, "seed": i, "run_id": run_id}, indent=1))
        digests = {**summary["files"], "manifest.json": {"bytes": (d / "manifest.json").stat().st_size,
                                                          "sha256": sha256_of(d / "manifest.json")}}
        (d / "summary.json").write_text(json.dumps({**summary, "seed": i, "files": digests}, indent=1))
        for f in files:
            shutil.copyfile(f, d / f.name)
        ids.append(run_id)
    return ids


def baseline(root: Path) -> int:
    n = 0
    for dirpath, dirnames, filenames in os.walk(root):
        if "manifest.json" in filenames:
            json.loads(Path(dirpath, "manifest.json").read_text(encoding="utf-8"))
            if "summary.json" in filenames:
                json.loads(Path(dirpath, "summary.json").read_text(encoding="utf-8"))
            n += 1
            dirnames[:] = []
    return n


def timed(fn, repeat: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def ls(runs: Path) -> None:
    import contextlib
    import io

    from workstation.cli import main as cli

    with contextlib.redirect_stdout(io.StringIO()):
        assert cli(["ls", str(runs)]) == 0


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")  # the user's cache, away from the real home
        t0 = time.perf_counter()
        ids = make_corpus(tmp, n)
        print(f"made {n} recordings in {time.perf_counter() - t0:.1f} s")
        runs = tmp / "runs"
        t_base, count = timed(lambda: baseline(runs))
        assert count == n

        def uncache() -> None:
            cache = Index(runs).cache_file
            assert cache is not None
            cache.unlink(missing_ok=True)

        def cold():
            uncache()
            return Index(runs).entries()

        t_cold, entries = timed(cold, repeat=1)
        assert len(entries) == n
        t_warm, entries = timed(lambda: Index(runs).entries())
        assert len(entries) == n and all(e.state == "complete" for e in entries)
        index = Index(runs)
        t_find, found = timed(lambda: index.find(ids[n // 2][:8]))
        assert [e.run_id for e in found] == [ids[n // 2]]

        changed = ids[:: 100]
        for i, _ in enumerate(changed):
            p = runs / f"breakout-random-s{i * 100}-{ids[i * 100][:8]}" / "summary.json"
            s = json.loads(p.read_text())
            s["total_reward"] = 7.0
            p.write_text(json.dumps(s, indent=1))
        t0 = time.perf_counter()
        index = Index(runs)
        entries = index.entries()
        t_touched = time.perf_counter() - t0
        assert index.read_count == len(changed) and sum(e.state == "damaged" for e in entries) == len(changed)

        def ls_cold() -> None:
            uncache()
            ls(runs)

        t_ls_cold, _ = timed(ls_cold, repeat=1)
        t_ls_warm, _ = timed(lambda: ls(runs))
        assert not any(p.name.startswith(".") for p in runs.iterdir()), "a listing wrote inside the folder it lists"

        print(f"baseline: json-load every manifest + summary   {t_base * 1000:8.1f} ms")
        print(f"index, cold (reads all, writes the index)      {t_cold * 1000:8.1f} ms  ({t_cold / t_base:.2f}x baseline)")
        print(f"index, warm (checked against every file)       {t_warm * 1000:8.1f} ms  ({t_warm / t_base:.2f}x baseline)")
        print(f"index, {len(changed)} summaries changed (re-read them)    {t_touched * 1000:8.1f} ms  "
              f"({t_touched / t_base:.2f}x baseline)")
        print(f"lookup by run id prefix (8 chars), warm       {t_find * 1000:8.1f} ms  ({t_find / t_base:.2f}x baseline)")
        print(f"workstation ls DIR, cold                       {t_ls_cold * 1000:8.1f} ms  "
              f"({t_ls_cold / t_base:.2f}x baseline)")
        print(f"workstation ls DIR, warm                       {t_ls_warm * 1000:8.1f} ms  "
              f"({t_ls_warm / t_base:.2f}x baseline)")


if __name__ == "__main__":
    main()
