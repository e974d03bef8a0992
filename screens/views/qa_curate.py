"""The QA curator: look at a question's frames, accept, reject or edit it (``workstation qa curate SET``).

The frames show at full size with the RAM-derived objects outlined (``o`` toggles
the outlines); ``left``/``right`` step through the question's frames, ``n``/``p``
through the questions. ``a`` accepts and ``r`` rejects; ``tab`` reaches the
question, choices (comma separated) and answer fields, and ``enter`` in a field
saves the edit. Every change is one line appended to the set at once
(``workstation.studies.qa.curate``), so a crash loses at most the field being typed.

``w`` writes a new question by hand on the current question's frames: it starts
from the category's template named with the game's objects (from its RAM map);
``c`` steps through the categories' templates, ``1`` and ``2`` through the game's
object names for object A and B, the fields are edited as usual, and ``a`` (or
``ctrl+s``, or ``enter`` in the answer field) saves it (``truth: "human"``,
``accepted`` as the template gave it, ``edited`` when changed); ``r`` or ``esc``
drops it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from screens.widgets.frame_view import FRAME_WIDTH, FrameRenderer, FrameView, fit_grid, pool_blocks
from workstation.base.errors import UserError
from workstation.studies.qa import curate, templates
from workstation.studies.qa.qset import QA_CATEGORIES, read_set

OUTLINE = np.array([255, 0, 255], np.uint8)


def outlined(rgb: np.ndarray, boxes: list[dict[str, Any]]) -> np.ndarray:
    """The frame with a one-pixel magenta rectangle around each box."""
    out = rgb.copy()
    h, w = out.shape[:2]
    for b in boxes:
        x0, y0 = int(round(b["x"])) - 1, int(round(b["y"])) - 1
        x1, y1 = x0 + int(b["w"]) + 1, y0 + int(b["h"]) + 1
        xs, ys = slice(max(0, x0), min(w, x1 + 1)), slice(max(0, y0), min(h, y1 + 1))
        for y in (y0, y1):
            if 0 <= y < h:
                out[y, xs] = OUTLINE
        for x in (x0, x1):
            if 0 <= x < w:
                out[ys, x] = OUTLINE
    return out


def outline_grid(packed: np.ndarray, boxes: list[dict[str, Any]], frame_height: int) -> np.ndarray:
    """The scaled-down frame (packed 0xRRGGBB, rows x columns) with each box outlined at that scale: drawn
    after scaling, so an outline never vanishes into a block's brightest pixel."""
    rows, columns = packed.shape
    if not boxes or rows == 0:
        return packed
    out = packed.copy()
    colour = (int(OUTLINE[0]) << 16) | (int(OUTLINE[1]) << 8) | int(OUTLINE[2])
    sx, sy = columns / FRAME_WIDTH, rows / frame_height
    for b in boxes:
        x0 = max(0, min(columns - 1, math.floor((b["x"] - 1) * sx)))
        x1 = max(0, min(columns - 1, math.ceil((b["x"] + b["w"]) * sx)))
        y0 = max(0, min(rows - 1, math.floor((b["y"] - 1) * sy)))
        y1 = max(0, min(rows - 1, math.ceil((b["y"] + b["h"]) * sy)))
        out[[y0, y1], x0:x1 + 1] = colour
        out[y0:y1 + 1, [x0, x1]] = colour
    return out


class OutlineRenderer(FrameRenderer):
    """A FrameRenderer that outlines ``boxes`` on the frame after it is scaled to the cells."""

    boxes: list[dict[str, Any]] = []

    def cells(self, rgb: np.ndarray) -> np.ndarray:
        columns, rows = fit_grid(rgb.shape[0], self.width, self.height)
        if columns == 0:
            return np.zeros((0, 0), dtype=np.int64)
        packed = outline_grid(pool_blocks(rgb, columns, rows), self.boxes, rgb.shape[0])
        keys: np.ndarray = (packed[0::2] << 24) | packed[1::2]
        return keys


class OutlinedFrameView(FrameView):
    """The curator's frame: the RAM objects outlined at the size the frame is drawn."""

    boxes: list[dict[str, Any]] = []

    def _resize_renderer(self, width: int, height: int) -> None:
        self._renderer = OutlineRenderer(width, height)
        self._renderer.boxes = self.boxes
        if self._rgb is not None:
            self._renderer.render(self._rgb)

    def show_outlined(self, rgb: np.ndarray, boxes: list[dict[str, Any]], index: int) -> None:
        self.boxes = list(boxes)
        if isinstance(self._renderer, OutlineRenderer):
            self._renderer.boxes = self.boxes
        else:
            self._resize_renderer(*self.size)
        self.show(rgb, index)


class CurateScreen(Screen[None]):
    """A screen of the one app (``make_app(QaCurateLaunch(SET))``): help, palette and theme shared."""

    AUTO_FOCUS = ""  # no auto focus: keys drive the screen until tab reaches a field
    DEFAULT_CSS = """
    CurateScreen #qa-body { height: 1fr; }
    CurateScreen #qa-frame { width: 3fr; height: 1fr; }
    CurateScreen #qa-side { width: 2fr; padding: 0 1; }
    CurateScreen #qa-side Input { margin-bottom: 1; }
    CurateScreen #qa-meta { height: auto; margin-bottom: 1; }
    CurateScreen #qa-status { height: auto; color: $accent; }
    CurateScreen .qa-label { height: 1; text-style: bold; }
    CurateScreen #qa-question-text { height: auto; max-height: 6; color: $text-muted; }
    """
    BINDINGS = [
        Binding("a", "status('accepted')", "accept"),
        Binding("r", "status('rejected')", "reject"),
        Binding("n", "move(1)", "next"),
        Binding("p", "move(-1)", "previous"),
        Binding("left", "frame(-1)", "frame -1", show=False),
        Binding("right", "frame(1)", "frame +1", show=False),
        Binding("o", "outlines", "outlines"),
        Binding("w", "new_question", "new question"),
        Binding("c", "draft_category", "template", show=False),
        Binding("1", "draft_object(0)", "object A", show=False),
        Binding("2", "draft_object(1)", "object B", show=False),
        Binding("ctrl+s", "save_draft", "save new", show=False, priority=True),
        Binding("escape", "leave_field", "leave field", show=False),
        Binding("q", "leave", "quit"),
    ]

    def __init__(self, root: Path | str, can_go_back: bool = True) -> None:
        super().__init__()
        self.root = Path(root)
        self.can_go_back = can_go_back  # False: leaving ends the app (``workstation qa curate``)
        self.questions = read_set(self.root)
        if not self.questions:
            raise UserError(f"{self.root} has no questions to curate")
        self.index = next((i for i, q in enumerate(self.questions) if q["status"] == "proposed"), 0)
        self.frame_pos = 0
        self.show_outlines = True
        self.saved = 0  # changes written this session
        self.draft: dict[str, Any] | None = None  # a new hand-written question being written

    @property
    def question(self) -> dict[str, Any]:
        return self.questions[self.index]

    def compose(self) -> ComposeResult:
        with Horizontal(id="qa-body"):
            yield OutlinedFrameView(id="qa-frame")
            with Vertical(id="qa-side"):
                yield Static("", id="qa-meta")
                yield Static("Question (enter saves):", classes="qa-label")
                yield Static("", id="qa-question-text")  # the whole question, wrapped
                yield Input(id="qa-question", placeholder="question")
                yield Static("Choices (comma separated):", classes="qa-label")
                yield Input(id="qa-choices", placeholder="choices, comma separated")
                yield Static("Answer (one of the choices):", classes="qa-label")
                yield Input(id="qa-answer", placeholder="answer (one of the choices)")
                yield Static("", id="qa-status")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"QA curator: {self.root}"
        self._load()

    # -- showing -------------------------------------------------------------
    def _load(self) -> None:
        q = self.question
        self.frame_pos = min(self.frame_pos, len(q["frames"]) - 1)
        self.query_one("#qa-question", Input).value = q["question"]
        self.query_one("#qa-choices", Input).value = ", ".join(q["choices"])
        self.query_one("#qa-answer", Input).value = q["answer"]
        self._show()

    def _show(self) -> None:
        q = self.question
        f = q["frames"][self.frame_pos]
        rgb = np.asarray(Image.open(self.root / f["file"]).convert("RGB"))
        boxes = [u for u in q["truth"]["ram"] if u["frame"] == f["index"]] if isinstance(q["truth"], dict) else []
        self.query_one("#qa-frame", OutlinedFrameView).show_outlined(rgb, boxes if self.show_outlines else [], f["index"])
        truth = "human" if q["truth"] == "human" else q["truth"].get("rule", "ram")
        where = (f"frame {self.frame_pos + 1}/{len(q['frames'])}: index {f['index']} at {f['t']}"
                 f"  (outlines {'on' if self.show_outlines else 'off'})")
        if self.draft is not None:
            d = self.draft
            self.query_one("#qa-meta", Static).update(
                f"NEW hand-written question on the frames of {q['id']}\n"
                f"{q['game']} · template {d['category']} (c) · object A: {d['a']} (1) · object B: {d['b']} (2)\n"
                f"the game's objects: {', '.join(templates.object_names(q['game']))}\n"
                f"{where}\na / ctrl+s saves · r / esc drops")
            return
        self.query_one("#qa-meta", Static).update(
            f"{self.index + 1}/{len(self.questions)}  {q['id']}  [{q['status']}]\n"
            f"{q['game']} · {q['category']} · truth: {truth}\n{where}")

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "qa-question":
            self.query_one("#qa-question-text", Static).update(event.value)

    def _say(self, text: str) -> None:
        self.query_one("#qa-status", Static).update(text)

    def _replace(self, new: dict[str, Any]) -> None:
        self.questions[self.index] = new
        self.saved += 1

    # -- actions -------------------------------------------------------------
    def action_status(self, status: str) -> None:
        if self.draft is not None:
            self.action_save_draft() if status == "accepted" else self._drop_draft()
            return
        self._replace(curate.set_status(self.root, self.question["id"], status))
        self._say(f"{self.question['id']}: {status} (saved)")
        if self.index < len(self.questions) - 1:
            self.index += 1
            self.frame_pos = 0
        self._load()

    def action_move(self, delta: int) -> None:
        self.draft = None
        self.index = (self.index + delta) % len(self.questions)
        self.frame_pos = 0
        self._load()

    def action_frame(self, delta: int) -> None:
        self.frame_pos = (self.frame_pos + delta) % len(self.question["frames"])
        self._show()

    def action_leave(self) -> None:
        if self.can_go_back:
            self.app.pop_screen()
        else:
            self.app.exit(0)

    def action_outlines(self) -> None:
        self.show_outlines = not self.show_outlines
        self._show()

    def action_leave_field(self) -> None:
        if self.focused is None and self.draft is not None:
            self._drop_draft()
        self.set_focus(None)

    # -- a new question by hand ------------------------------------------------
    def action_new_question(self) -> None:
        cat = self.question["category"]
        self._set_draft(cat, *templates.default_objects(self.question["game"], cat))
        self._say("new question: set the answer (tab to the fields), then a or ctrl+s saves it")

    def _set_draft(self, category: str, a: str, b: str) -> None:
        filled = templates.fill(self.question["game"], category, a, b)
        self.draft = {"category": category, "a": a, "b": b, "template": filled}
        self.query_one("#qa-question", Input).value = filled["question"]
        self.query_one("#qa-choices", Input).value = ", ".join(filled["choices"])
        self.query_one("#qa-answer", Input).value = filled["answer"]
        self._show()

    def action_draft_category(self) -> None:
        if self.draft is None:
            return
        cat = QA_CATEGORIES[(QA_CATEGORIES.index(self.draft["category"]) + 1) % len(QA_CATEGORIES)]
        self._set_draft(cat, *templates.default_objects(self.question["game"], cat))

    def action_draft_object(self, which: int) -> None:
        if self.draft is None:
            return
        names = templates.object_names(self.question["game"])
        key = "ab"[which]
        d = dict(self.draft, **{key: names[(names.index(self.draft[key]) + 1) % len(names)]
                                if self.draft[key] in names else names[0]})
        self._set_draft(d["category"], d["a"], d["b"])

    def _drop_draft(self) -> None:
        self.draft = None
        self._say("new question dropped")
        self._load()

    def action_save_draft(self) -> None:
        if self.draft is None:
            return
        text = self.query_one("#qa-question", Input).value.strip()
        choices = [c.strip() for c in self.query_one("#qa-choices", Input).value.split(",") if c.strip()]
        answer = self.query_one("#qa-answer", Input).value.strip()
        t = self.draft["template"]
        status = "accepted" if text == t["question"] and choices == t["choices"] else "edited"
        try:
            new = curate.add_on_frames(self.root, self.question["id"], self.draft["category"], text, choices,
                                       answer, status=status)
        except UserError as e:
            self._say(f"not saved: {e}")
            return
        self.draft = None
        self.index += 1
        self.questions.insert(self.index, new)
        self.saved += 1
        self.set_focus(None)
        self._say(f"{new['id']}: new question saved ({status})")
        self._load()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if self.draft is not None:  # a new question is saved whole, from the answer field
            nxt = {"qa-question": "#qa-choices", "qa-choices": "#qa-answer"}.get(event.input.id or "")
            self.query_one(nxt, Input).focus() if nxt else self.action_save_draft()
            return
        field = {"qa-question": "question", "qa-choices": "choices", "qa-answer": "answer"}[event.input.id or ""]
        text = event.value.strip()
        value: str | list[str] = text
        if field == "choices":
            value = [c.strip() for c in text.split(",") if c.strip()]
        if value == self.question[field]:
            self._say("unchanged")
            return
        changes = {field: value}
        if field == "choices" and self.question["answer"] not in value:
            self._say("the answer is not among these choices: change the answer first, or include it")
            return
        try:
            self._replace(curate.edit(self.root, self.question["id"], **changes))
        except UserError as e:
            self._say(f"not saved: {e}")
            return
        warn = curate.contradiction(self.question) if field == "answer" else None
        self._say(f"{self.question['id']}: {field} edited (saved)" + (f"\nwarning: {warn}" if warn else ""))
        self._show()
