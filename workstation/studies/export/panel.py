"""The text panel beside the frame, drawn straight into palette space.

ALE palette values are even (0..254), so the canvas keeps them as they are and the
panel uses the odd values: colour class ``c`` at antialiasing level ``l`` (0..15) is
value ``1 + 2 * (16 * c + l)``; level 0 of every class is the panel background. One
uint8 canvas then holds frames and text, converts to YUV (video) or a GIF palette
with one table look-up, and a marked plan line is a recolour of that line's pixels.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

BG = (18, 18, 22)
CLASSES = {  # colour class -> text colour
    "text": (228, 228, 228),
    "dim": (130, 134, 142),
    "mark": (255, 214, 90),
    "good": (110, 220, 120),
    "bad": (255, 105, 97),
    "accent": (110, 178, 255),
}
CLASS_INDEX = {name: i for i, name in enumerate(CLASSES)}
INK_LEVELS = 16  # shades of each text colour over the background (anti-aliased glyphs)
BACKGROUND = 1  # palette value of the panel background

_FONT_FILES = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
    "/usr/share/fonts/TTF/DejaVuSansMono.ttf",
    "/System/Library/Fonts/Menlo.ttc",
)


def panel_palette() -> np.ndarray:
    """RGB of the odd palette values (rows of a 256x3 table; even rows left zero)."""
    lut = np.zeros((256, 3), np.uint8)
    bg = np.array(BG, np.float64)
    for c, fg in enumerate(CLASSES.values()):
        for level in range(INK_LEVELS):
            j = 16 * c + level
            lut[1 + 2 * j] = np.round(bg + (np.array(fg) - bg) * level / (INK_LEVELS - 1))
    return lut


@lru_cache(maxsize=8)
def font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    for path in _FONT_FILES:
        if Path(path).is_file():
            return ImageFont.truetype(path, size)
    return ImageFont.load_default(size)


def value(cls: str, level: np.ndarray | int) -> np.ndarray | int:
    return 1 + 2 * (16 * CLASS_INDEX[cls] + level)


def recolour(region: np.ndarray, to: str) -> None:
    """Repaint every text pixel of ``region`` (in place) in class ``to``, keeping its level."""
    j = (region.astype(np.int16) - 1) >> 1
    text = (region & 1).astype(bool) & (j % 16 > 0)
    region[text] = (1 + 2 * (16 * CLASS_INDEX[to] + j[text] % 16)).astype(np.uint8)


class TextBlock:
    """Lines of text, each in one colour class, rendered to palette values of a fixed width."""

    def __init__(self, width: int, size: int = 15) -> None:
        self.width = width
        self.font = font(size)
        box = self.font.getbbox("Mg")
        self.line_height = int(box[3] + 4)
        self.char_width = max(1.0, self.font.getlength("M"))

    def columns(self, indent: int = 0) -> int:
        return max(8, int((self.width - 12 - indent) / self.char_width))

    def render(self, lines: list[tuple[str, str]], height: int | None = None) -> np.ndarray:
        h = height if height is not None else max(1, len(lines)) * self.line_height
        mask = Image.new("L", (self.width, h), 0)
        draw = ImageDraw.Draw(mask)
        cls_rows = np.zeros(h, np.uint8)
        for i, (text, cls) in enumerate(lines):
            y = i * self.line_height
            if y + self.line_height > h:
                break
            if text:
                draw.text((6, y + 1), text, fill=255, font=self.font)
            cls_rows[y:y + self.line_height] = CLASS_INDEX[cls]
        levels = np.asarray(mask, np.uint8) >> 4  # 0..15
        return (1 + 2 * (16 * cls_rows[:, None].astype(np.uint16) + levels)).astype(np.uint8)


    def render_line(self, text: str, cls: str) -> np.ndarray:
        """One line from cached glyphs (for text that changes every frame, such as the clock)."""
        atlas = self.__dict__.setdefault("_glyphs", {})
        h, adv = self.line_height, self.char_width
        mask = np.zeros((h, self.width), np.uint8)
        for i, ch in enumerate(text):
            if ch == " ":
                continue
            g = atlas.get(ch)
            if g is None:
                cell = Image.new("L", (int(adv * 2) + 4, h), 0)
                ImageDraw.Draw(cell).text((2, 1), ch, fill=255, font=self.font)
                g = atlas[ch] = np.asarray(cell, np.uint8) >> 4
            x = 6 + int(round(i * adv)) - 2
            if x < 0 or x + g.shape[1] > self.width:
                continue
            np.maximum(mask[:, x:x + g.shape[1]], g, out=mask[:, x:x + g.shape[1]])
        return (1 + 2 * (16 * CLASS_INDEX[cls] + mask.astype(np.uint16))).astype(np.uint8)


def wrap(text: str, columns: int, max_lines: int) -> list[str]:
    """Greedy word wrap to ``columns``, at most ``max_lines`` (the last one ends in an ellipsis if cut)."""
    import textwrap

    out: list[str] = []
    for para in (text or "").splitlines() or [""]:
        out.extend(textwrap.wrap(para, columns, break_long_words=True, replace_whitespace=True) or [""])
    while out and not out[-1]:
        out.pop()
    if len(out) > max_lines:
        out = out[:max_lines]
        out[-1] = (out[-1][: columns - 1] + "…") if out[-1] else "…"
    return out
