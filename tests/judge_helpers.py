"""Shared setup of the judge tests: a two-setting batch played by the fake provider, scripted verdicts."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.fake_provider import FakeProvider, Seen, Step

MODELS = ("secret-alpha-7b", "Secret-Beta-XL")
JUDGE = "judge-model"
GRID = """\
name = "two"
games = ["breakout"]
seeds = [0, 1, 2]

[protocol]
frames = {frames}

[[settings]]
label = "alpha"
spec = "compat:{a}"
base_url = "{url}"

[[settings]]
label = "beta"
spec = "compat:{b}"
base_url = "{url}"
"""


def model_of(seen: Seen) -> str:
    return seen.body.get("model", "") if isinstance(seen.body, dict) else ""


def player_step(seen: Seen) -> Step | None:
    """The players name themselves in their thoughts (the judge must never see it)."""
    model = model_of(seen)
    if model in MODELS:
        return Step(text=f"thought: I am {model}, ball falls left\nmove: [left, fire]")
    return None


def make_batch(fake: FakeProvider, out: Path, frames: int = 250) -> Path:
    from workstation.studies.batch.grid import load_grid
    from workstation.studies.batch.runner import Batch

    grid = out.parent / "grid.toml"
    grid.write_text(textwrap.dedent(GRID.format(frames=frames, a=MODELS[0], b=MODELS[1], url=fake.url("compat"))))
    fake.responder = player_step
    try:
        b = Batch(load_grid(grid, out=str(out / "runs")), out, concurrency=2)
        b.prepare()
        assert b.run() == 0
    finally:
        fake.responder = None
    return out


VERDICTS = [
    {"failure": True, "category": "perception", "subtype": "missed the ball", "evidence": "The ball is moving left.",
     "text_cue_followed": False},
    {"failure": False, "category": None, "subtype": None, "evidence": "It served as it should.", "text_cue_followed": False},
    {"failure": True, "category": "spatiotemporal", "subtype": "trajectory", "evidence": "The paddle is on the left.",
     "text_cue_followed": True},
    {"failure": True, "category": "decision", "subtype": "timing", "evidence": "It moved late.", "text_cue_followed": False},
    {"failure": True, "category": "exploration", "subtype": "loop", "evidence": "Same plan again.", "text_cue_followed": True},
    {"failure": True, "category": "rule", "subtype": "serve", "evidence": "Thinks fire moves.", "text_cue_followed": None},
    {"failure": True, "category": "decision/control", "subtype": "late", "evidence": "Too late.", "text_cue_followed": False},
]


class ScriptedJudge:
    """Answers judge requests (model JUDGE) from a list in turn, and keeps what it answered and was asked."""

    def __init__(self, answers: list[str] | None = None) -> None:
        self.answers = answers if answers is not None else [json.dumps(v) for v in VERDICTS]
        self.given: list[str] = []
        self.bodies: list[dict] = []

    def __call__(self, seen: Seen) -> Step | None:
        if model_of(seen) != JUDGE:
            return player_step(seen)
        text = self.answers[len(self.given) % len(self.answers)]
        self.given.append(text)
        self.bodies.append(seen.body)
        return Step(text=text)


def requery_line(turn: int, condition: str, failure: bool | None, run_id: str = "r"):
    """A typed re-query line (failure None: the judge's answer was not parsed)."""
    from workstation.studies.judge.records import JudgeAnswer, PlayerAnswer, RequeryLine

    answer = JudgeAnswer(failure is not None, failure, "perception" if failure else None,
                         "perception" if failure else None)
    return RequeryLine(run_id, "alpha", "breakout", turn, condition, "perception", PlayerAnswer(None, None), answer)
