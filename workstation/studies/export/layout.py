"""One run's tile on the export canvas: the frame scaled up without blur, and its panel.

A tile writes palette values into its part of a shared uint8 canvas. The frame is
copied every frame (a broadcast of each pixel to a ``scale`` x ``scale`` block);
panel parts are redrawn only when what they show changed: score and lives on a
change, thought on a new turn, plan when the executing action moves, the clock line
and the progress bar every frame (a few hundred pixels).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workstation.game.games import FPS_PAPER
from workstation.store.recording import Recording
from workstation.studies.export import panel as P
from workstation.studies.export.timeline import NO_ACTION, Timeline, build_timeline

OVERLAYS = ("thought", "plan", "score")
PANEL_WIDTH = 360  # beside a single run's frame
PANEL_HEIGHT = 330  # under each frame of a comparison


@dataclass
class Box:
    y: int
    x: int
    h: int
    w: int

    def of(self, canvas: np.ndarray) -> np.ndarray:
        return canvas[self.y:self.y + self.h, self.x:self.x + self.w]


class Tile:
    def __init__(self, rec: Recording, frame_box: Box, panel_box: Box | None, scale: int,
                 overlays: tuple[str, ...] = OVERLAYS, label: str = "") -> None:
        self.rec = rec
        self.tl: Timeline = build_timeline(rec)
        self.frames = rec.frames
        self.n = len(rec.frames)
        self.scale = scale
        self.fh, self.fw = self.frames.height, self.frames.width
        self.frame_box = frame_box
        self.panel_box = panel_box
        self.overlays = overlays
        self.label = label
        self._shown: dict[str, object] = {}
        self._plan_cache: dict[tuple[int, int], np.ndarray] = {}
        if panel_box is not None:
            self._plan_panel(panel_box)

    # -- layout of the panel --------------------------------------------
    def _plan_panel(self, box: Box) -> None:
        w = box.w
        self.small = P.TextBlock(w, 13)
        self.body = P.TextBlock(w, 14)
        self.big = P.TextBlock(w, 20)
        y = 6
        m = self.rec.manifest_record
        agent = m.agent.get("spec", "?")
        game, seed = "?" if m.game is None else m.game, "?" if m.seed is None else m.seed
        head = [(f"{self.label}{game} · seed {seed}", "accent"), (f"agent {agent}", "dim")]
        self.header = (Box(box.y + y, box.x, 2 * self.small.line_height, w), self.small.render(head))
        y += 2 * self.small.line_height + 4
        self.score_box = None
        if "score" in self.overlays:
            self.score_box = Box(box.y + y, box.x, self.big.line_height, w)
            y += self.big.line_height + 2
        self.clock_box = Box(box.y + y, box.x, self.small.line_height, w)
        y += self.small.line_height + 2
        bar_h = 8
        self.bar_box = Box(box.y + y + 2, box.x + 6, bar_h, w - 12)
        y += bar_h + 10
        rest = box.h - y - 4
        self.thought_box = self.plan_box = None
        parts = [o for o in ("thought", "plan") if o in self.overlays]
        if rest > 0 and parts:
            lh = self.body.line_height
            if len(parts) == 2:
                plan_lines = min(12, max(3, rest // lh // 2))
                th = rest - plan_lines * lh
                self.thought_box = Box(box.y + y, box.x, th - th % lh, w)
                self.plan_box = Box(box.y + y + self.thought_box.h, box.x, rest - self.thought_box.h, w)
            elif parts == ["thought"]:
                self.thought_box = Box(box.y + y, box.x, rest, w)
            else:
                self.plan_box = Box(box.y + y, box.x, rest, w)
        self._bar_base()

    def _bar_base(self) -> None:
        b = self.bar_box
        base = np.full((b.h, b.w), P.value("dim", 4), np.uint8)
        self.bar_done = P.value("accent", 12)
        n = max(1, self.tl.budget)
        for t in self.tl.turns:
            for f, r, lost in zip(t.action_frames, t.action_rewards, t.action_life_lost):
                x = min(b.w - 1, int(f * b.w / n))
                if lost:
                    base[:, x] = P.value("bad", 15)
                elif r and r > 0:
                    base[:, x] = P.value("good", 15)
                elif r and r < 0:
                    base[:, x] = P.value("bad", 10)
        self.bar = base
        self.bar_ticks = base != P.value("dim", 4)

    def paint_static(self, canvas: np.ndarray) -> None:
        if self.panel_box is None:
            return
        self.panel_box.of(canvas)[:] = P.BACKGROUND
        box, img = self.header
        box.of(canvas)[:] = img

    # -- per frame --------------------------------------------------------
    def frame_indices(self, f: int) -> np.ndarray:
        """Palette values of the frame shown at ``f`` (held at the last one past the run's end)."""
        return self.frames.indices(min(f, self.n - 1))

    def draw(self, canvas: np.ndarray, f: int, paint_frame: bool = True) -> list[Box]:
        """Paint frame ``f`` and its panel; returns the panel boxes repainted."""
        fi = min(f, self.n - 1)
        ended = f >= self.n
        s = self.scale
        if paint_frame:
            region = self.frame_box.of(canvas)[: self.fh * s, : self.fw * s]
            region[:] = np.repeat(np.repeat(self.frames.indices(fi), s, 0), s, 1)
        dirty: list[Box] = []
        if self.panel_box is None:
            return dirty
        tl = self.tl
        turn = int(tl.turn[fi]) if not ended else -1
        action = int(tl.action[fi]) if not ended else NO_ACTION
        if self.score_box is not None:
            key = (float(tl.score[fi]), int(tl.lives[fi]))
            if self._shown.get("score") != key:
                self._shown["score"] = key
                lives = "" if key[1] < 0 else f"   lives {key[1]}"
                self.score_box.of(canvas)[:] = self.big.render([(f"score {key[0]:g}{lives}", "text")])
                dirty.append(self.score_box)
        t_txt = f"t {fi / FPS_PAPER:6.2f} s   frame {fi}/{tl.budget}"
        if ended:
            t_txt += "   ended"
        elif turn >= 0:
            t_txt += f"   turn {tl.turns[turn].turn}"
        if self._shown.get("clock") != t_txt:
            self._shown["clock"] = t_txt
            self.clock_box.of(canvas)[:] = self.small.render_line(t_txt, "dim")
            dirty.append(self.clock_box)
        b = self.bar_box.of(canvas)
        done = int(min(fi, tl.budget) * self.bar_box.w / max(1, tl.budget))
        if self._shown.get("bar") != done:
            self._shown["bar"] = done
            b[:] = self.bar
            head = b[:, :done]
            head[~self.bar_ticks[:, :done]] = self.bar_done
            dirty.append(self.bar_box)
        if self.thought_box is not None and self._shown.get("thought") != turn:
            self._shown["thought"] = turn
            self.thought_box.of(canvas)[:] = self._thought(turn)
            dirty.append(self.thought_box)
        if self.plan_box is not None and self._shown.get("plan") != (turn, action):
            self._shown["plan"] = (turn, action)
            self.plan_box.of(canvas)[:] = self._plan(turn, action)
            dirty.append(self.plan_box)
        return dirty

    def _thought(self, turn: int) -> np.ndarray:
        box, body = self.thought_box, self.body
        assert box is not None  # drawn only when the panel has a thought box
        rows = box.h // body.line_height
        lines: list[tuple[str, str]] = [("thought", "accent")]
        if turn >= 0:
            t = self.tl.turns[turn]
            text = t.thought
            if not text and t.raw:  # nothing parsed as a thought: show the reply itself
                lines, text = [("reply (no thought parsed)", "accent")], t.raw
            lines += [(line, "text") for line in P.wrap(text, body.columns(), max(1, rows - 1))]
        return body.render(lines, box.h)

    def _plan(self, turn: int, action: int) -> np.ndarray:
        key = (turn, action)
        hit = self._plan_cache.get(key)
        if hit is not None:
            return hit
        box, body = self.plan_box, self.body
        assert box is not None  # drawn only when the panel has a plan box
        rows = box.h // body.line_height
        lines: list[tuple[str, str]] = []
        if turn < 0:
            lines.append(("plan", "accent"))
        else:
            t = self.tl.turns[turn]
            state = "" if t.valid else f"  invalid: {t.rule or 'rejected'}"
            lines.append((f"plan{state}", "accent" if t.valid else "bad"))
            acts = list(t.actions)
            if not acts:
                lines.append(("  (no actions: NOOP)", "dim"))
            if action == NO_ACTION and acts:
                lines.append(("  … waiting (latency NOOPs)", "mark"))
            for k, a in enumerate(acts[: max(0, rows - len(lines))]):
                if k == action:
                    lines.append((f"▶ {k + 1:2d} {a}", "mark"))
                else:
                    lines.append((f"  {k + 1:2d} {a}", "dim" if k < action else "text"))
        img = body.render(lines, box.h)
        if len(self._plan_cache) > 64:
            self._plan_cache.clear()
        self._plan_cache[key] = img
        return img


def build_tiles(recs: list[Recording], overlays: tuple[str, ...], scale: int | None = None) -> tuple[list[Tile], tuple[int, int]]:
    """Tiles for one run (panel beside) or several (columns, panel under each frame); returns the canvas size."""
    n = len(recs)
    if scale is None:
        scale = 3 if n <= 2 else 2
    heights = [r.frames.height for r in recs]
    widths = [r.frames.width for r in recs]
    fh, fw = max(heights) * scale, max(widths) * scale
    tiles = []  # the panel is always there (game, clock, progress); ``overlays`` pick the rest
    if n == 1:
        W, H = fw + PANEL_WIDTH, fh
        tiles.append(Tile(recs[0], Box(0, 0, fh, fw), Box(0, fw, fh, PANEL_WIDTH), scale, overlays))
    else:
        gap = 8  # keeps every frame box at an even x (the chroma planes are half size)
        col = fw
        W, H = n * col + (n - 1) * gap, fh + PANEL_HEIGHT
        for i, r in enumerate(recs):
            x = i * (col + gap)
            tiles.append(Tile(r, Box(0, x, fh, fw), Box(fh, x, PANEL_HEIGHT, col), scale, overlays,
                              label=f"{chr(65 + i)}  "))
    W += W % 2
    H += H % 2
    return tiles, (H, W)
