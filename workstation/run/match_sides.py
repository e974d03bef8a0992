"""Each player's prompt: the pack's two-player text for a game, and the prompt builder that uses it.

The pack's ``twoplayer/`` folder holds ``template.toml`` (the side heading and the
score lines) and ``<game>.md`` for each two-player game, with the sections
``## guide``, ``## short``, ``## side 1`` and ``## side 2`` (which sprite is whose).
A side's guide is the game's two-player guide followed by its side text; the rest
of the prompt is the one-player builder's, plus a score line before the current
frame. The one-player pack digest does not cover these files, so one-player run
ids are unchanged; a match's digest covers both.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workstation.base.locations import default_pack_dir
from workstation.engine.prompt import FrameSource, TextPart
from workstation.engine.prompt_builder import PromptBuilder
from workstation.engine.promptpack import PromptPack, PromptPackError
from workstation.game.games import Game
from workstation.game.protocol import Protocol

SECTIONS = ("guide", "short", "side 1", "side 2")
TEMPLATE_KEYS = {"side_heading": {"side"}, "score": {"mine", "theirs"}, "team_score": {"team", "mine", "theirs"}}


@dataclass(frozen=True)
class MatchText:
    """The two-player words of one game."""

    sections: dict[str, str]
    strings: dict[str, str]
    digest: str  # of the one-player pack and these two files

    def guide(self, side: int, variant: str) -> str:
        guide = self.sections["guide" if variant == "full" else "short"]
        heading = self.strings["side_heading"].format(side=side)
        return f"{guide}\n\n{heading}\n{self.sections[f'side {side}']}"


def _folder(pack: PromptPack) -> Path:
    own = pack.path / "twoplayer"
    return own if own.is_dir() else default_pack_dir() / "twoplayer"  # a one-player pack borrows the default's


def load_match_text(pack: PromptPack, key: str) -> MatchText:
    folder = _folder(pack)
    template, guide = folder / "template.toml", folder / f"{key}.md"
    for f in (template, guide):
        if not f.is_file():
            raise PromptPackError(f"prompt pack {pack.path}: twoplayer/{f.name} is missing; "
                                  "copy it from the default pack's prompts/twoplayer/")
    t_text, g_text = template.read_text(encoding="utf-8"), guide.read_text(encoding="utf-8")
    try:
        strings = tomllib.loads(t_text)
    except tomllib.TOMLDecodeError as e:
        raise PromptPackError(f"{template}: not valid TOML ({e})") from None
    for k, allowed in TEMPLATE_KEYS.items():
        value = strings.get(k)
        if not isinstance(value, str):
            raise PromptPackError(f"{template}: key {k!r} is missing or not text (placeholders: "
                                  f"{', '.join(sorted(allowed))})")
    sections: dict[str, str] = {}
    for m in re.finditer(r"^## +(.+?)\s*\n(.*?)(?=^## |\Z)", g_text, re.MULTILINE | re.DOTALL):
        sections[m.group(1).strip().lower()] = m.group(2).strip()
    missing = [s for s in SECTIONS if not sections.get(s)]
    if missing:
        raise PromptPackError(f"{guide}: section '## {missing[0]}' is missing or empty (the sections are "
                              f"{', '.join('## ' + s for s in SECTIONS)})")
    h = hashlib.sha256(f"{pack.digest}\0{t_text}\0{g_text}".encode())
    return MatchText(sections, {k: strings[k] for k in TEMPLATE_KEYS}, h.hexdigest()[:16])


@dataclass(frozen=True)
class SidePack(PromptPack):
    """The pack as one side sees it: this game's guide is the two-player guide and the side's text."""

    side_guides: dict[str, str] = field(default_factory=dict, compare=False, repr=False)  # variant -> text

    def guide(self, game: Game | str, variant: str = "full") -> str:
        return self.side_guides[variant]


def side_pack(pack: PromptPack, text: MatchText, side: int) -> SidePack:
    return SidePack(pack.path, pack.name, text.digest, pack.strings, pack.guides,
                    side_guides={v: text.guide(side, v) for v in ("full", "short")})


class SidePromptBuilder(PromptBuilder):
    """The one-player builder, with this side's score (and the team's) before the current frame."""

    def __init__(self, game: Game, protocol: Protocol, pack: SidePack, text: MatchText, side: int,
                 team: bool, frames: FrameSource | None = None) -> None:
        super().__init__(game, protocol, pack, frames)
        self.text, self.side, self.team = text, side, team
        self.scores = (0.0, 0.0)  # (mine, theirs), set before each build

    def _current(self, frame: int, parts: list[Any], latency_s: float | None) -> None:
        mine, theirs = (f"{s:g}" for s in self.scores)
        line = (self.text.strings["team_score"].format(team=f"{sum(self.scores):g}", mine=mine, theirs=theirs)
                if self.team else self.text.strings["score"].format(mine=mine, theirs=theirs))
        parts.append(TextPart(line + "\n"))
        super()._current(frame, parts, latency_s)
