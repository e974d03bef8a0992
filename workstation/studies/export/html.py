"""One self-contained HTML page of a run (or runs side by side): frames, scrubber, prompt, thought, plan, score.

Frames travel as the recording holds them, palette values: each frame XOR-ed with
the one before, the lot deflated and base64-encoded (a 900-frame Breakout run is
about 40 KB). The page inflates them with the browser's DecompressionStream and
undoes the XOR in a few lines of script, then draws a frame through the palette
into a canvas that CSS scales up without smoothing. Turn data and the prompts
(each distinct text stored once, images as frame numbers drawn from the same
frames) travel as one deflated JSON. No server and no network: open the file.
"""

from __future__ import annotations

import base64
import html as _html
import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from workstation.game.games import FPS_PAPER
from workstation.store.recording import Recording
from workstation.studies.export.timeline import build_timeline

TEMPLATE = Path(__file__).with_name("page.html")


def _prompt(rec: Recording, turn: int, texts: dict[str, int]) -> dict[str, Any]:
    """A turn's prompt as [role, parts] with texts by index into the run's string table."""
    from workstation.engine.prompt import ImagePart
    from workstation.run.request import rebuild_prompt

    try:
        prompt = rebuild_prompt(rec, turn)
    except Exception as e:  # a prompt that cannot be rebuilt is said on the page, not fatal
        return {"error": f"the prompt cannot be rebuilt: {e}"}
    out = []
    for m in prompt.messages:
        parts: list[Any] = []
        for p in m.parts:
            if isinstance(p, ImagePart):
                parts.append([p.frame, p.label])
            else:
                parts.append(texts.setdefault(p.text, len(texts)))
        out.append([m.role, parts])
    return {"messages": out}


def run_data(rec: Recording, start: int, stop: int, overlays: tuple[str, ...]) -> tuple[dict[str, Any], bytes]:
    """The page's JSON for one run, and its frames as palette values (rows ``lo..stop-1``)."""
    tl = build_timeline(rec)
    n = min(stop, len(rec.frames))
    turns_out = []
    texts: dict[str, int] = {}
    lo = start
    wanted = {int(x) for x in np.unique(tl.turn[start:n]) if x >= 0}
    match = rec.manifest_record.is_match  # a match's turn has no reply, validity or latency of its own (its sides do)
    for ti, t in enumerate(tl.turns):
        entry: dict[str, Any] = {
            "turn": t.turn, "start": t.start_frame, "end": t.end_frame, "actions": t.actions, "planned": t.planned,
            "valid": None if match else t.valid, "rule": t.rule, "thought": t.thought, "raw": t.raw,
            "reward": t.reward, "latency": None if match else t.latency_s}
        if ti in wanted and t.prompt:
            entry["prompt"] = _prompt(rec, ti, texts)
            for _, parts in entry["prompt"].get("messages", []):
                for p in parts:
                    if isinstance(p, list) and p[0] < lo:
                        lo = max(0, p[0])
        turns_out.append(entry)
    frames = np.stack([rec.frames.indices(i) for i in range(lo, n)])
    m = rec.manifest_record
    pal = np.zeros((256, 3), np.uint8)
    for v, rgb in rec.frames.palette().items():
        pal[v] = rgb
    data = {
        "path": str(rec.path), "game": m.game, "seed": m.seed,
        "agent": m.agent.get("spec"), "budget": tl.budget, "frames_held": len(rec.frames),
        "height": rec.frames.height, "width": rec.frames.width, "first": lo, "count": len(frames),
        "palette": pal.reshape(-1).tolist(),
        "score": [round(float(x), 3) for x in tl.score[:n]], "lives": tl.lives[:n].tolist(),
        "turn_at": tl.turn[:n].tolist(), "action_at": tl.action[:n].tolist(),
        "turns": turns_out, "texts": sorted(texts, key=lambda t: texts[t]),
        "summary": rec.summary_or_partial(),
    }
    return data, frames.tobytes()


def _xor_deflate(raw: bytes, frame_size: int) -> bytes:
    a = np.frombuffer(raw, np.uint8).reshape(-1, frame_size).copy()
    a[1:] ^= np.frombuffer(raw, np.uint8).reshape(-1, frame_size)[:-1]
    return zlib.compress(a.tobytes(), 9)


def export_html(recs: list[Recording], out: Path, start: int, stop: int, overlays: tuple[str, ...],
                pace: str = "paper") -> int:
    """Write the page; ``pace`` sets the play button's speed (paper 30, native 60 frames a second)."""
    from workstation.game.games import PACES

    runs, blobs = [], []
    for r in recs:
        data, raw = run_data(r, start, stop, overlays)
        runs.append(data)
        blobs.append(base64.b64encode(_xor_deflate(raw, data["height"] * data["width"])).decode("ascii"))
    meta = {"start": start, "stop": stop, "fps": FPS_PAPER, "play_fps": PACES[pace], "overlays": list(overlays),
            "runs": runs}
    meta_blob = base64.b64encode(zlib.compress(json.dumps(meta, separators=(",", ":")).encode("utf-8"), 9)).decode("ascii")
    title = " vs ".join(f"{d['game']} {d['agent']} s{d['seed']}" for d in runs)
    page = TEMPLATE.read_text(encoding="utf-8")
    page = page.replace("__TITLE__", _html.escape(title))
    page = page.replace("__META__", meta_blob).replace("__FRAMES__", json.dumps(blobs))
    out.write_text(page, encoding="utf-8")
    return stop - start
