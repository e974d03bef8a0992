"""The reflector's tools over one round: read-only views of its recordings, and the stages' submissions.

Every path a tool takes is resolved against the round's root (symlinks
included) and refused when it points outside it; reads are capped. The
notebook, the diagnosis and the skill are kept on ``Workbench`` and written by
the round driver, never by the tools themselves into a place a player reads.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workstation.engine.calls import ToolCall, ToolResult, ToolSpec

READ_CAP = 16_000  # characters one read_text returns
GREP_CAP = 60  # matching lines one grep returns
LIST_CAP = 200  # entries one list_dir returns
NOTEBOOK_MAX_CHARS = 8_000  # about 2,000 tokens at 4 characters a token (the paper's cap)
DIAGNOSIS_MAX_CHARS = 8_000
VALIDATION_TRIES = 5  # rejections before the round keeps its previous skill


def _string(name: str, what: str) -> dict[str, Any]:
    return {"type": "object", "properties": {name: {"type": "string", "description": what}}, "required": [name]}


def tool_specs(with_validator: bool) -> list[ToolSpec]:
    specs = [
        ToolSpec("list_dir", "List a directory of this round's recordings (path relative to the round's root; "
                 "'.' is the root). Directories end in '/'; files show their size in bytes.",
                 {"type": "object", "properties": {"path": {"type": "string", "description": "directory, default ."}}}),
        ToolSpec("read_text", "Read a text file of the round (manifest.json, turns.jsonl, summary.json, ...), "
                 f"at most {READ_CAP} characters from offset.",
                 {"type": "object", "properties": {"path": {"type": "string"},
                                                   "offset": {"type": "integer", "description": "default 0"}},
                  "required": ["path"]}),
        ToolSpec("read_image", "See one frame of a recording as an image: the recording's directory and the frame "
                 "index (turns.jsonl gives each turn's start_frame).",
                 {"type": "object", "properties": {"path": {"type": "string", "description": "a recording directory"},
                                                   "frame": {"type": "integer"}}, "required": ["path", "frame"]}),
        ToolSpec("grep", f"Lines matching a regular expression in the round's text files (at most {GREP_CAP}).",
                 {"type": "object", "properties": {"pattern": {"type": "string"},
                                                   "path": {"type": "string", "description": "file or directory, default ."}},
                  "required": ["pattern"]}),
        ToolSpec("write_notebook", "Rewrite your notebook (the whole text; the player never sees it; at most "
                 f"{NOTEBOOK_MAX_CHARS} characters).", _string("text", "the notebook's new text")),
        ToolSpec("submit_diagnosis", "Submit your diagnosis of this round's play: what went wrong and why.",
                 _string("diagnosis", "the diagnosis")),
    ]
    if with_validator:
        specs.append(ToolSpec("validate_skill", "Ask an independent judge whether a skill is general (no frame-timed "
                              f"action scripts, no memorised map) and fits the diagnosis; {VALIDATION_TRIES} "
                              "rejections keep the previous skill.", _string("skill", "the skill to check")))
    specs.append(ToolSpec("submit_skill", "Submit the skill the player gets next round (markdown, at most about "
                          "1,200 tokens). Submit a diagnosis first. This ends your turn.",
                          _string("skill", "the skill's text")))
    return specs


# argument names a model may use for a tool's one text argument
_TEXT_NAMES = {"write_notebook": ("text", "notebook", "content", "notes"),
               "submit_diagnosis": ("diagnosis", "text", "content"),
               "submit_skill": ("skill", "text", "content", "markdown"),
               "validate_skill": ("skill", "text", "content")}


class ToolError(Exception):
    """A call the tool refuses; the message goes back to the model as an error result."""


@dataclass
class Workbench:
    """What one reflection has produced so far, and what its tools may read."""

    root: Path
    notebook: str = ""
    diagnosis: str | None = None
    skill: str | None = None  # the accepted submission
    skill_max_chars: int = 4_800
    validate: Callable[[str, str | None], tuple[bool, str]] | None = None  # (skill, diagnosis) -> (ok, why)
    accepted: set[str] = field(default_factory=set)  # skills the validator accepted
    rejections: int = 0
    notebook_written: bool = False

    def __post_init__(self) -> None:
        self.root = Path(self.root).resolve()

    # -- paths ------------------------------------------------------------------
    def resolve(self, path: str | None, want: str = "any") -> Path:
        rel = (path or ".").strip() or "."
        target = (self.root / rel).resolve()
        if target != self.root and self.root not in target.parents:
            raise ToolError(f"{rel} is outside this round's recordings; paths are relative to its root '.'")
        if not target.exists():
            raise ToolError(f"{rel}: no such file or directory (list_dir shows what there is)")
        if want == "dir" and not target.is_dir():
            raise ToolError(f"{rel} is a file, not a directory; read it with read_text")
        if want == "file" and not target.is_file():
            raise ToolError(f"{rel} is a directory; list it with list_dir")
        return target

    def shown(self, p: Path) -> str:
        return str(p.relative_to(self.root)) if p != self.root else "."

    # -- the tools ------------------------------------------------------------------
    def call(self, call: ToolCall) -> ToolResult:
        """Run one call; every refusal is an error result, never an exception."""
        try:
            if call.error:
                raise ToolError(call.error)
            handler = getattr(self, f"_t_{call.name}", None)
            if handler is None or (call.name == "validate_skill" and self.validate is None):
                raise ToolError(f"there is no tool {call.name!r}")
            text, images = handler(call.arguments)
            return ToolResult(call.id, call.name, text, images)
        except ToolError as e:
            return ToolResult(call.id, call.name, f"error: {e}", is_error=True)

    def _text_arg(self, name: str, args: dict[str, Any]) -> str:
        """The tool's one text argument, whatever the model called it: its name, a name that says what it is
        (``skill_markdown``), the only text given, or else the longest."""
        for key in _TEXT_NAMES[name]:
            value = args.get(key)
            if isinstance(value, str):
                return value
        stem = _TEXT_NAMES[name][0][:6]  # "skill", "diagno", "text" -> also notebook_*, note*
        named = [v for k, v in args.items() if isinstance(v, str) and (stem in k.lower() or
                                                                       (name == "write_notebook" and "note" in k.lower()))]
        strings = named or [v for v in args.values() if isinstance(v, str)]
        if strings:
            return max(strings, key=len)
        raise ToolError(f"{name} takes one text argument, {_TEXT_NAMES[name][0]!r}")

    def _t_list_dir(self, args: dict[str, Any]) -> tuple[str, list[Any]]:
        target = self.resolve(args.get("path") or args.get("dir") or args.get("directory"), "dir")
        entries = sorted(target.iterdir(), key=lambda p: (not p.is_dir(), p.name))
        lines = [f"{p.name}/" if p.is_dir() else f"{p.name}  {p.stat().st_size} bytes"
                 for p in entries[:LIST_CAP] if not p.name.startswith(".")]
        more = f"\n... and {len(entries) - LIST_CAP} more" if len(entries) > LIST_CAP else ""
        return (f"{self.shown(target)}:\n" + ("\n".join(lines) or "(empty)") + more), []

    def _t_read_text(self, args: dict[str, Any]) -> tuple[str, list[Any]]:
        target = self.resolve(args.get("path"), "file")
        offset = args.get("offset") or 0
        if not isinstance(offset, int) or offset < 0:
            raise ToolError("offset must be a whole number 0 or more")
        raw = target.read_bytes()
        if b"\0" in raw[:4096]:
            raise ToolError(f"{self.shown(target)} is binary; frames are read with read_image")
        text = raw.decode("utf-8", errors="replace")
        chunk = text[offset:offset + READ_CAP]
        tail = (f"\n[... {len(text) - offset - len(chunk)} more characters; read on with offset "
                f"{offset + len(chunk)}]") if offset + len(chunk) < len(text) else ""
        return chunk + tail, []

    def _t_read_image(self, args: dict[str, Any]) -> tuple[str, list[Any]]:
        from workstation.store.recording import Recording
        from workstation.store.records import RecordingError

        target = self.resolve(args.get("path"), "dir")
        frame = args.get("frame")
        if not isinstance(frame, int) or isinstance(frame, bool):
            raise ToolError("frame must be a whole number (a frame index of the recording)")
        try:
            frames = Recording(target).frames
            n = len(frames)
            if not 0 <= frame < n:
                raise ToolError(f"{self.shown(target)} has frames 0..{n - 1}")
            png = frames.png(frame)
        except RecordingError as e:
            raise ToolError(f"{self.shown(target)} is not a readable recording ({e})") from None
        return f"frame {frame} of {self.shown(target)}", [png]

    def _t_grep(self, args: dict[str, Any]) -> tuple[str, list[Any]]:
        pattern = args.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise ToolError("grep needs a pattern")
        try:
            rx = re.compile(pattern)
        except re.error as e:
            raise ToolError(f"bad pattern: {e}") from None
        target = self.resolve(args.get("path"))
        files = [target] if target.is_file() else sorted(p for p in target.rglob("*") if p.is_file())
        hits: list[str] = []
        for f in files:
            if f.resolve() != f or f.suffix not in (".json", ".jsonl", ".md", ".txt", ".csv", ".toml"):
                continue
            for number, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                if rx.search(line):
                    hits.append(f"{self.shown(f)}:{number}: {line[:300]}")
                    if len(hits) >= GREP_CAP:
                        return "\n".join(hits) + f"\n[stopped at {GREP_CAP} matches]", []
        return "\n".join(hits) or "no matches", []

    def _t_write_notebook(self, args: dict[str, Any]) -> tuple[str, list[Any]]:
        text = self._text_arg("write_notebook", args)
        if len(text) > NOTEBOOK_MAX_CHARS:
            raise ToolError(f"the notebook is {len(text)} characters; at most {NOTEBOOK_MAX_CHARS}: rewrite it shorter")
        self.notebook, self.notebook_written = text, True
        return f"notebook saved ({len(text)} characters)", []

    def _t_submit_diagnosis(self, args: dict[str, Any]) -> tuple[str, list[Any]]:
        text = self._text_arg("submit_diagnosis", args).strip()
        if not text:
            raise ToolError("the diagnosis is empty")
        if len(text) > DIAGNOSIS_MAX_CHARS:
            raise ToolError(f"the diagnosis is {len(text)} characters; at most {DIAGNOSIS_MAX_CHARS}")
        self.diagnosis = text
        return "diagnosis recorded; now distill a skill and submit it with submit_skill", []

    def _check_skill(self, text: str) -> str:
        text = text.strip()
        if not text:
            raise ToolError("the skill is empty")
        if len(text) > self.skill_max_chars:
            raise ToolError(f"the skill is {len(text)} characters; at most {self.skill_max_chars} (about 1,200 "
                            "tokens): shorten it")
        return text

    def _judge(self, text: str) -> tuple[bool, str]:
        assert self.validate is not None  # validate_skill is offered only with a validator
        ok, why = self.validate(text, self.diagnosis)
        if ok:
            self.accepted.add(text)
        else:
            self.rejections += 1
        return ok, why

    def _t_validate_skill(self, args: dict[str, Any]) -> tuple[str, list[Any]]:
        text = self._check_skill(self._text_arg("validate_skill", args))
        ok, why = self._judge(text)
        left = VALIDATION_TRIES - self.rejections
        return (f"accepted: {why}" if ok else f"rejected ({left} tries left): {why}"), []

    def _t_submit_skill(self, args: dict[str, Any]) -> tuple[str, list[Any]]:
        text = self._check_skill(self._text_arg("submit_skill", args))
        if self.diagnosis is None:
            raise ToolError("submit your diagnosis first (submit_diagnosis)")
        if self.validate is not None and text not in self.accepted:
            ok, why = self._judge(text)
            if not ok:
                raise ToolError(f"the validator rejected this skill ({VALIDATION_TRIES - self.rejections} tries "
                                f"left): {why}")
        self.skill = text
        return "skill accepted; it goes to the player next round", []


def result_summary(result: ToolResult) -> dict[str, Any]:
    """A tool result as a transcript keeps it (text in full, images counted)."""
    return {**result.to_json(), "chars": len(result.text)}


__all__ = ["NOTEBOOK_MAX_CHARS", "ToolError", "VALIDATION_TRIES", "Workbench", "result_summary",
           "tool_specs"]
