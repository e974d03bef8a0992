"""Parity with the public AtariBench harness: the same scripted replies through both, compared.

Usage:  .venv/bin/python bench/harness_parity.py HARNESS_DIR [--memory structured|append] [--games a,b]
        [--frames N] [--keep DIR]

HARNESS_DIR is your own checkout of github.com/mignonjia/AtariBench. The harness is
imported from it at run time only (nothing of its code or text is in this repository).

1. ``workstation prompts from-atari-bench HARNESS_DIR --out PACK`` builds the pack.
2. For each of the 21 games (seed 0, 900 frames) and the Breakout runs whose game
   ends on budget frames 898 and 899 (900: no sequence found yet), a script of replies in the harness's own
   words (its ACTION_MAP words, some upper-cased or with ``_`` for blanks, a few
   refused: an unknown word, no thought line, eleven actions) is played
   - through the harness's ``PipelineRunner`` with a client that returns the script;
   - through the real CLI, ``workstation run --prompts PACK --agent compat:standin
     --base-url URL``, against a loopback Chat Completions stand-in
     (tests/fake_provider.py) that returns the same script.
3. Compared: every turn (start frame, executed action ids, per action end frame,
   reward and life loss, a new game), the totals (turns, reward, lives lost, frames),
   every frame's pixels, and for turns 0, 1, 2, 7, 20 and the last the prompt:
   ``workstation request REC --turn N --json`` against the harness's saved prompt
   (turns.jsonl ``prompt_text``; text parts joined with the harness's image marker at
   each image, and in append mode each message as ``<role>\\ntext\\n</role>`` blocks
   as the harness saves them), exact after stripping leading and trailing blanks,
   and the frames of the images (``referenced_image_paths``).

Prints one row per run and the count identical; exit status 0 when all are identical.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fake_provider import FakeProvider, Step
from workstation.game.games import get_game
from workstation.store.recording import Recording

WORKSTATION = [sys.executable, "-m", "workstation"]
PROMPT_TURNS = (0, 1, 2, 7, 20)
MARKER = "IMG_HOLDER"  # the harness's image marker in a saved prompt
FILLER = "thought: the script ran out\nmove: [noop]"

# Breakout action scripts (minimal-set ids: 0 noop, 1 fire, 2 right, 3 left) whose game
# ends on the budget frame named: four quick lives (serve, then run right), a wait,
# a last serve, then moves. Found by searching serve times and paddle moves with ale-py.
_QUICK = ([1] + [2] * 39) * 4


def _edge(serve_at: int, wait: int, side: int) -> list[int]:
    return _QUICK + [0] * (serve_at - len(_QUICK)) + [1] + [0] * wait + [side] * 150


# After the four quick lives: a wait, a serve, a few paddle moves, then still (digits are ids).
_AFTER_899 = "00000000000000000000000000133333000003000030203302033020332233322330003333000223322233220"
EDGE_RUNS = {  # budget frame of the game over -> the actions
    898: _edge(167, 0, 2),
    899: _QUICK + [int(c) for c in _AFTER_899] + [0] * 150,
}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*WORKSTATION, *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


class Harness:
    """The harness's pipeline, imported from the user's checkout."""

    def __init__(self, path: Path):
        sys.path.insert(0, str(path))
        try:
            from core.pipeline import PipelineConfig, PipelineRunner
            from games.registry import get_game_spec, list_game_keys
            from llm.common import LlmTurnResponse
        except ImportError as e:
            raise SystemExit(f"{path} does not import as the AtariBench harness ({e}); give its checkout") from None
        self.config, self.runner, self.spec, self.keys, self.response = (
            PipelineConfig, PipelineRunner, get_game_spec, list_game_keys, LlmTurnResponse)

    def words(self, game: str) -> list[str]:
        return list(self.spec(game).action_map)

    def play(self, game: str, replies: list[str], memory: str, frames: int, out: Path) -> dict:
        """Run the pipeline; returns summary, turns and pixels by local frame index."""
        pixels: dict[int, np.ndarray] = {}
        response = self.response

        def keep(frame, path):
            pixels[int(Path(path).stem.split("_")[1])] = np.asarray(frame).copy()

        class Client:
            i = 0

            def generate_turn(self, prompt_text, image_paths=None, **kw):
                text = replies[self.i] if self.i < len(replies) else FILLER
                self.i += 1
                return response(text=text)

        mode = "append_only" if memory == "append" else "structured_history"
        cfg = self.config(duration_seconds=frames // 30, prompt_mode=mode, output_dir=str(out), seed=0)
        with contextlib.redirect_stdout(io.StringIO()):
            summary = self.runner(self.spec(game), Client(), cfg, frame_writer=keep).run()
        run_dir = Path(summary["run_dir"])
        turns = [json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines() if line.strip()]
        return {"summary": summary, "turns": turns, "pixels": pixels}


def script(words: list[str], seed: str, n: int = 320) -> list[str]:
    """Replies in the harness's words: mostly 1..10 of them, a few shaped, a few refused."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        r = rng.random()
        picked = [rng.choice(words) for _ in range(rng.randint(1, 10))]
        if r < 0.04:
            out.append(f"thought: try a word the game lacks\nmove: [{picked[0]}, jump]")
        elif r < 0.07:
            out.append(f"move: [{picked[0]}]")
        elif r < 0.09:
            out.append("thought: too many\nmove: [" + ", ".join([words[0]] * 11) + "]")
        else:
            shaped = [w.upper() if rng.random() < 0.15 else w.replace(" ", "_") if rng.random() < 0.2 else w
                      for w in picked]
            out.append(f"thought: turn {i}, plan {len(shaped)}\nmove: [{', '.join(shaped)}]")
    return out


def edge_script(actions: list[int], words_by_id: dict[int, str]) -> list[str]:
    return [f"thought: edge plan {i // 10}\nmove: [{', '.join(words_by_id[a] for a in actions[i:i + 10])}]"
            for i in range(0, len(actions), 10)]


def ws_play(game: str, replies: list[str], pack: Path, memory: str, frames: int, fake: FakeProvider,
            out: Path) -> Path:
    fake.reset()
    fake.push(*[Step(text=t) for t in replies], *[Step(text=FILLER)] * 50)
    res = cli("run", "--quiet", "--game", game, "--prompts", str(pack), "--agent", "compat:standin",
              "--base-url", fake.url("compat"), "--frames", str(frames), "--memory", memory, "--seed", "0",
              "--out", str(out))
    if res.returncode != 0:
        raise RuntimeError(f"workstation run failed ({res.returncode}): {res.stderr.strip()[-300:]}")
    return Path(res.stdout.strip().splitlines()[-1])


def _saved_form(messages: list[dict], memory: str) -> tuple[str, list[int]]:
    """Our request in the harness's saved form: the text with the marker at images, and the image frames."""
    blocks, frames = [], []
    for m in messages:
        text = "".join(c["text"] if c["type"] == "text" else MARKER for c in m["content"])
        frames += [c["frame"] for c in m["content"] if c["type"] == "image"]
        blocks.append(text if memory == "structured" else f"<{m['role']}>\n{text}\n</{m['role']}>")
    return "\n\n".join(blocks), frames


def compare(h: dict, rec_path: Path, game: str, memory: str) -> tuple[list[str], int]:
    """The differences (empty when identical) and how many prompts were compared."""
    g = get_game(game)
    rec = Recording(rec_path)
    ours = rec.turn_records
    summ = json.loads((rec_path / "summary.json").read_text())
    hs, ht = h["summary"], h["turns"]
    problems = []
    mine = (summ["turns"], summ["total_reward"], summ["lives_lost"], summ["frames"])
    theirs = (hs["turn_count"], hs["total_reward"], hs["total_lost_lives"], hs["frame_count"] - 1)
    if mine[:3] != theirs[:3]:
        problems.append(f"totals (turns, reward, lives lost) {mine[:3]} vs the harness's {theirs[:3]}")
    for t, w in zip(ht, ours):
        ids = [a["action_id"] for a in t["action_records"]]
        mine_ids = [g.minimal_set.index(a.upper()) for a in w.actions]
        h_steps = [(a["end_frame_index"], a["reward_delta"], a["lost_life"]) for a in t["action_records"]]
        w_steps = list(zip(w.action_frames, w.action_rewards, w.action_life_lost))
        if t["start_frame_index"] != w.start_frame or ids != mine_ids or h_steps != w_steps \
                or bool(t["new_game_started"]) != bool(w.game_over):
            problems.append(f"turn {w.turn}: start {w.start_frame} ids {mine_ids} steps {w_steps[:3]} game over "
                            f"{w.game_over} vs the harness's {t['start_frame_index']} {ids} {h_steps[:3]} "
                            f"{t['new_game_started']}")
            break
    for idx, px in sorted(h["pixels"].items()):
        if idx >= len(rec.frames) or not np.array_equal(rec.frames.rgb(idx), px):
            problems.append(f"frame {idx}: pixels differ" if idx < len(rec.frames) else f"frame {idx} missing")
            break
    n = min(len(ht), len(ours))
    checked = 0
    for ti in sorted({*(t for t in PROMPT_TURNS if t < n), n - 1}):
        res = cli("request", str(rec_path), "--turn", str(ti), "--json")
        if res.returncode != 0:
            problems.append(f"request --turn {ti} --json failed: {res.stderr.strip()}")
            continue
        text, frames = _saved_form(json.loads(res.stdout)["messages"], memory)
        saved = ht[ti]
        h_frames = [int(Path(p).stem.split("_")[1]) for p in saved["referenced_image_paths"]]
        checked += 1
        if text.strip() != saved["prompt_text"].strip():
            a, b = text.strip(), saved["prompt_text"].strip()
            at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            problems.append(f"turn {ti} prompt text differs at character {at}: ours {a[at:at + 60]!r} "
                            f"vs the harness's {b[at:at + 60]!r}")
        if frames != h_frames:
            problems.append(f"turn {ti} image frames {frames[:8]} vs the harness's {h_frames[:8]}")
    return problems, checked


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("harness", type=Path)
    ap.add_argument("--memory", choices=("structured", "append"), default="structured")
    ap.add_argument("--games", help="comma-separated runs: game keys, breakout@898 ... (default: all)")
    ap.add_argument("--frames", type=int, default=900)
    ap.add_argument("--keep", type=Path, help="keep the pack and both sides' runs here")
    args = ap.parse_args(argv)
    if not (args.harness / "games" / "prompts").is_dir():
        print(f"{args.harness} is not a checkout of the AtariBench harness (no games/prompts/)", file=sys.stderr)
        return 2
    harness = Harness(args.harness.resolve())
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="harness-parity-"))
    work.mkdir(parents=True, exist_ok=True)
    pack = work / "pack"
    built = cli("prompts", "from-atari-bench", str(args.harness), "--out", str(pack))
    if built.returncode != 0:
        print(f"prompts from-atari-bench failed: {built.stderr.strip()}", file=sys.stderr)
        return 1
    print(built.stdout.strip().splitlines()[1] if len(built.stdout.splitlines()) > 1 else built.stdout.strip())
    runs: list[tuple[str, str, list[str]]] = [
        (game, game, script(harness.words(game), f"parity-{game}")) for game in harness.keys()]
    words = harness.spec("breakout").action_map
    by_id = {i: next(w for w, v in words.items() if v == i) for i in sorted(set(words.values()))}
    runs += [(f"breakout@{frame}", "breakout", edge_script(actions, by_id)) for frame, actions in EDGE_RUNS.items()]
    if args.games:
        wanted = args.games.split(",")
        unknown = sorted(set(wanted) - {label for label, _, _ in runs})
        if unknown:
            print(f"--games: {unknown[0]} is not a run here; use game keys or breakout@898 etc.", file=sys.stderr)
            return 2
        runs = [r for r in runs if r[0] in wanted]
    fake = FakeProvider()
    same = 0
    print(f"{'run':<20} {'turns':>5} {'reward':>8} {'lost':>4} {'prompts':>7} {'s':>5}  result")
    try:
        for label, game, replies in runs:
            t0 = time.perf_counter()
            h = harness.play(game, replies, args.memory, args.frames, work / "harness" / label)
            rec = ws_play(game, replies, pack, args.memory, args.frames, fake, work / "ws" / label)
            problems, checked = compare(h, rec, game, args.memory)
            hs = h["summary"]
            if label.startswith("breakout@"):
                over = [t["executed_frame_end"] for t in h["turns"] if t["new_game_started"]]
                label = f"{label} (over {over[-1] if over else '-'})"
            same += not problems
            print(f"{label:<20} {hs['turn_count']:>5} {hs['total_reward']:>8g} {hs['total_lost_lives']:>4} "
                  f"{checked:>7} {time.perf_counter() - t0:>5.1f}  "
                  f"{'identical' if not problems else 'DIFFERS: ' + problems[0]}", flush=True)
            for p in problems[1:4]:
                print(f"{'':<20} {p}")
    finally:
        fake.close()
    print(f"identical: {same} of {len(runs)} ({args.memory} memory, {args.frames} frames)")
    return 0 if same == len(runs) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
