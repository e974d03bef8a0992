"""An experience library (issue 30, after PokeGym and ExpeL): rules a model keeps from its own play.

``--experience DIR --reflect-every K``: every K turns the player gets one extra request (its last K
turns: the screen each began on, what it played, its thought, the feedback; the screen now; and the
library so far) and answers with edits, one a line::

    add: RULE           a new rule at the end
    modify N: RULE      rule N (numbered from 1, as shown) becomes RULE
    delete N            rule N goes
    keep                no change

Other lines of the reply (a ``thought:`` line, prose) are ignored. The bounds (``MAX_EDITS``,
``MAX_RULES``, ``MAX_RULE_CHARS``): at most 4 edits an update (``keep`` counts; later ones are skipped),
at most 20 rules, each at most 200 characters (a longer rule, or an add to a full library, is skipped).
Numbers refer to the library as the request showed it; a line that starts like an edit but does not
parse (``modify two: ...``, ``delete 9`` of 3 rules) is recorded with why and skipped; the rest apply.

Storage: ``DIR/<model>/<game>/library.json`` (the model is the agent spec, made safe for a folder
name), sealed (``workstation.store.seal``, kind ``experience library``) after every write, checked
whenever it is read: a library edited by hand is damaged (exit 1). A run reads it at its start (its
digest, with K, is part of the run id: ``identity_part``), places it in the player's instructions by
the pack's experience slot (``[experience]`` in template.toml, placeholders ``{title}`` ``{rules}``),
writes it back after each update, and records every update in the recording's ``experience.jsonl``:
the turn, the library before and after, the request (its messages), the reply, the edits applied and
skipped, usage and cost. A replay (``--agent replay:REC``) takes each update's reply from REC's
``experience.jsonl`` (no model), and ``verify`` checks the chain of updates (``recording_problems``).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workstation.base.errors import DamagedArtifact
from workstation.engine.calls import FatalAgentError, Reply, TurnContext, call_agent
from workstation.engine.memory import Clip
from workstation.engine.prompt import ImagePart, Message, Prompt, TextPart, merge_parts, timestamp
from workstation.engine.promptpack import display_title
from workstation.game.games import Game
from workstation.store.atomic import write_atomic
from workstation.store.records import ExperienceStart, Manifest, RecordFileError, check_fields
from workstation.store.seal import check_seal, seal

MAX_EDITS = 4  # edits applied per update (ExpeL bounds them too)
MAX_RULES = 20  # rules a library holds
MAX_RULE_CHARS = 200  # characters a rule may have
MAX_EVERY = 1000  # --reflect-every K: 1..MAX_EVERY
DEFAULT_EVERY = 5
LIBRARY = "library.json"
KIND = "experience library"
UPDATES = "experience.jsonl"  # in a recording: one line per update
FORMAT = "atari-workstation-experience/1"

_EDIT_WORD = re.compile(r"^(add|modify|delete|keep)\b", re.IGNORECASE)
_ADD = re.compile(r"^add\s*:\s*(.*\S)\s*$", re.IGNORECASE)
_MODIFY = re.compile(r"^modify\s+(\d+)\s*:\s*(.*\S)\s*$", re.IGNORECASE)
_DELETE = re.compile(r"^delete\s+(\d+)\s*\.?\s*$", re.IGNORECASE)
_KEEP = re.compile(r"^keep\s*\.?\s*$", re.IGNORECASE)


class ExperienceError(ValueError):
    """A bad --experience / --reflect-every; the message names the flag and the fix."""


@dataclass(frozen=True)
class Edit:
    op: str  # add | modify | delete | keep
    index: int | None = None  # 1-based, for modify and delete
    rule: str | None = None  # for add and modify
    line: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "index": self.index, "rule": self.rule, "line": self.line}


def parse_edits(text: str) -> tuple[list[Edit], list[dict[str, str]]]:
    """The edits a reply asks for, and the lines that start like an edit but are malformed (with why)."""
    edits: list[Edit] = []
    bad: list[dict[str, str]] = []
    for raw in (text or "").splitlines():
        line = raw.strip().lstrip("-*• ").strip().strip("`").strip()
        if not _EDIT_WORD.match(line):
            continue
        if m := _ADD.match(line):
            edits.append(Edit("add", rule=_clean(m.group(1)), line=line))
        elif m := _MODIFY.match(line):
            edits.append(Edit("modify", int(m.group(1)), _clean(m.group(2)), line))
        elif m := _DELETE.match(line):
            edits.append(Edit("delete", int(m.group(1)), line=line))
        elif _KEEP.match(line):
            edits.append(Edit("keep", line=line))
        else:
            bad.append({"line": line, "why": "not one of add: RULE, modify N: RULE, delete N, keep"})
    return edits, bad


def _clean(rule: str) -> str:
    return " ".join(rule.split())


def apply_edits(before: list[str], edits: list[Edit]) -> tuple[list[str], list[dict[str, Any]], list[dict[str, Any]]]:
    """``before`` with the edits applied (numbers refer to ``before``): (after, applied, skipped)."""
    applied: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    rules: list[str | None] = list(before)
    added: list[str] = []
    for i, e in enumerate(edits):
        why = None
        if i >= MAX_EDITS:
            why = f"more than {MAX_EDITS} edits in one update"
        elif e.rule is not None and len(e.rule) > MAX_RULE_CHARS:
            why = f"the rule has {len(e.rule)} characters; at most {MAX_RULE_CHARS}"
        elif e.op in ("modify", "delete"):
            if e.index is None or not 1 <= e.index <= len(before):
                why = f"there is no rule {e.index} (the library had {len(before)})"
            elif rules[e.index - 1] is None:
                why = f"rule {e.index} was already deleted in this update"
        elif e.op == "add":
            live = [r for r in rules if r is not None] + added
            if e.rule in live:
                why = "the library already has this rule"
            elif len(live) >= MAX_RULES:
                why = f"the library is full ({MAX_RULES} rules): delete or modify one instead"
        if why:
            skipped.append({**e.to_json(), "why": why})
            continue
        if e.op == "modify" and e.index is not None:
            rules[e.index - 1] = e.rule
        elif e.op == "delete" and e.index is not None:
            rules[e.index - 1] = None
        elif e.op == "add" and e.rule is not None:
            added.append(e.rule)
        applied.append(e.to_json())
    return [r for r in rules if r is not None] + added, applied, skipped


def digest(rules: list[str]) -> str:
    """A library's identity: its rules in order (16 hex digits)."""
    return hashlib.sha256(json.dumps(list(rules), ensure_ascii=False).encode()).hexdigest()[:16]


def model_folder(agent_spec: str) -> str:
    """The agent spec as a folder name: ``openai:gpt-5.2`` -> ``openai_gpt-5.2``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", agent_spec.strip()).strip("._") or "model"


def library_dir(root: str | Path, agent_spec: str, game_key: str) -> Path:
    return Path(root).expanduser() / model_folder(agent_spec) / game_key


def read_library(root: str | Path, agent_spec: str, game_key: str) -> list[str]:
    """The rules stored for this model and game (none yet: ``[]``); a damaged library raises DamagedArtifact."""
    folder = library_dir(root, agent_spec, game_key)
    if not folder.exists():
        return []
    check_seal(folder, KIND, what="experience library")
    try:
        data = json.loads((folder / LIBRARY).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DamagedArtifact(f"experience library {folder} is damaged: {LIBRARY} cannot be read ({e}); "
                              "remove it to start an empty library", file=folder) from None
    rules = data.get("rules") if isinstance(data, dict) else None
    if (not isinstance(rules, list) or not all(isinstance(r, str) and 0 < len(r) <= MAX_RULE_CHARS for r in rules)
            or len(rules) > MAX_RULES):
        raise DamagedArtifact(f"experience library {folder} is damaged: its rules are not a list of at most "
                              f"{MAX_RULES} texts of 1..{MAX_RULE_CHARS} characters; remove it to start again",
                              file=folder)
    return list(rules)


def write_library(root: str | Path, agent_spec: str, game_key: str, rules: list[str], updates: int,
                  run_id: str | None) -> None:
    """Write the library and seal it again (atomically, file by file)."""
    folder = library_dir(root, agent_spec, game_key)
    folder.mkdir(parents=True, exist_ok=True)
    record = {"format": FORMAT, "model": agent_spec, "game": game_key, "rules": list(rules),
              "digest": digest(rules), "updates": updates, "last_run": run_id,
              "bounds": {"rules": MAX_RULES, "chars": MAX_RULE_CHARS, "edits": MAX_EDITS}}
    write_atomic(folder / LIBRARY, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    seal(folder, KIND)


def dir_problem(root: str) -> str | None:
    """Why ``--experience DIR`` cannot be used (one line), or None. Nothing is written."""
    if not str(root).strip():
        return "--experience is empty; name the directory that keeps the libraries"
    if "://" in str(root):
        return f"--experience {root}: an experience library is kept in a local directory, not {root.split('://')[0]}://"
    path = Path(root).expanduser()
    probe = path
    while True:
        if (probe / "manifest.json").is_file() and any((probe / f).exists() for f in ("turns.jsonl", "frames.idx")):
            where = "is a recording" if probe == path else f"is inside the recording {probe}"
            return f"--experience {root} {where}; keep the library outside recordings (e.g. --experience experience/)"
        if probe.parent == probe:
            break
        probe = probe.parent
    probe = path
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        return f"--experience {root}: {probe} is a file, not a directory; choose a directory"
    return None


def identity_part(rules: list[str], every: int, slot: str) -> dict[str, Any]:
    """What a library adds to the run id: its digest at the start, K, and the pack's slot that places it."""
    return {"start": digest(rules), "every": every, "slot": hashlib.sha256(slot.encode()).hexdigest()[:16]}


# -- during a run ---------------------------------------------------------------------------------------------
_SYSTEM = """You keep an experience library for the Atari 2600 game {title}: short rules you learned from \
your own play. The library goes into your instructions in every later turn, and into later runs of this game.

Read your recent turns below and the library so far, then answer with edits, one a line:
add: <a new rule>
modify <N>: <the new text of rule N>
delete <N>
keep
At most {edits} edits; the library holds at most {rules} rules of at most {chars} characters each. \
Keep rules concrete (what to do in which situation) and drop rules your play has shown wrong. \
Answer keep when nothing should change."""


@dataclass
class ExperienceRun:
    """One run's library: read at the start, placed in the prompt, updated every K turns, recorded."""

    root: str
    agent_spec: str
    game: Game
    every: int
    slot: str = ""  # the pack's experience slot (PromptPack.experience_slot)
    rules: list[str] = field(default_factory=list)
    start: list[str] = field(default_factory=list)
    updates: int = 0  # this run's
    stored_updates: int = 0  # the library's before this run
    _replayed: dict[int, RecordedUpdate] | None = None

    @classmethod
    def open(cls, root: str, agent_spec: str, game: Game, every: int, slot: str) -> ExperienceRun:
        rules = read_library(root, agent_spec, game.key)
        stored = 0
        if rules or library_dir(root, agent_spec, game.key).exists():  # read_library checked its seal
            try:
                stored = int(json.loads((library_dir(root, agent_spec, game.key) / LIBRARY).read_text())["updates"])
            except (OSError, ValueError, KeyError, TypeError):
                stored = 0
        return cls(root, agent_spec, game, every, slot, list(rules), list(rules), stored_updates=stored)

    def identity(self) -> dict[str, Any]:
        return identity_part(self.start, self.every, self.slot)

    def manifest(self) -> dict[str, Any]:
        return {"dir": str(Path(self.root).expanduser().resolve()), "model": self.agent_spec,
                "every": self.every, "start_digest": digest(self.start), "rules": list(self.start), "slot": self.slot,
                "bounds": {"rules": MAX_RULES, "chars": MAX_RULE_CHARS, "edits": MAX_EDITS}}

    def attach(self, engine: Any) -> None:
        """Put the library in the player's prompt, and find recorded updates when the agent is a replay."""
        engine.builder.set_experience(self.rules)
        source = getattr(engine.agent, "source", None)
        if source is not None and hasattr(source, "path"):
            self._replayed = {u.turns: u for u in read_updates(Path(source.path))}

    def maybe_reflect(self, engine: Any) -> None:
        """After a turn: every K turns, ask for edits, apply them, write the library, record the update."""
        turns = engine.turn  # turns played so far
        if turns == 0 or turns % self.every or engine.stopped:
            return
        before = list(self.rules)
        guide = engine.pack.guide(engine.game, engine.protocol.guide).strip()
        prompt = self.request(engine.clips[-self.every:], engine.clock.frame, before, engine.builder.frames, guide)
        if self._replayed is not None:
            recorded = self._replayed.get(turns)
            reply = Reply(recorded.reply if recorded else "")
        else:
            ctx = TurnContext(engine.game, turns, engine.protocol.max_actions, engine.clock.frame)
            try:
                reply = call_agent(engine.agent, prompt, ctx, cancel=engine.cancel)
            except FatalAgentError as e:  # recorded; the next turn's request meets the same and stops the run
                reply = e.reply or Reply("", error=str(e))
                reply.error = reply.error or str(e)
            engine.totals.add_reply(reply)  # the run's account (workstation.engine.accounting)
        edits, malformed = parse_edits(reply.text if reply.error is None else "")
        after, applied, skipped = apply_edits(before, edits)
        self.rules = after
        self.updates += 1
        record = {"turns": turns, "frame": engine.clock.frame, "before": before, "after": after,
                  "before_digest": digest(before), "after_digest": digest(after),
                  "request": prompt.to_json(), "request_digest": prompt.digest(), "reply": reply.text,
                  "applied": applied, "skipped": skipped, "malformed": malformed,
                  "usage": reply.usage.to_json() if reply.usage else None, "cost_usd": reply.cost_usd,
                  "latency_s": round(reply.latency_s, 4), "error": reply.error,
                  "replayed": self._replayed is not None}
        writer = engine.writer
        if writer is not None:
            with open(Path(writer.path) / UPDATES, "a", encoding="utf-8") as f:
                f.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
        run_id = writer.record.run_id if writer is not None else None
        write_library(self.root, self.agent_spec, self.game.key, after, self.stored_updates + self.updates, run_id)
        engine.builder.set_experience(self.rules)

    def request(self, clips: list[Clip], frame: int, rules: list[str], frames: Any, guide: str = "") -> Prompt:
        """The reflection request: what the player is told about the game (its guide at the run's level), the
        library so far, the last turns (first screen, actions, thought, feedback) and the screen now."""
        system = _SYSTEM.format(title=display_title(self.game), edits=MAX_EDITS, rules=MAX_RULES,
                                chars=MAX_RULE_CHARS)
        if guide:
            system += f"\n\nWhat you are told about {display_title(self.game)} when you play:\n{guide}"
        listed = "\n".join(f"{i}. {r}" for i, r in enumerate(rules, 1)) or "(empty: no rules yet)"
        parts: list[Any] = [TextPart(f"The library now ({len(rules)} of {MAX_RULES} rules):\n{listed}\n\n"
                                     f"Your last {len(clips)} turns:\n")]
        for c in clips:
            lost = sum(1 for s in c.steps if s.life_lost)
            thought = next((ln.split(":", 1)[1].strip() for ln in (c.raw or "").splitlines()
                            if ln.lower().startswith("thought:")), "")
            parts.append(TextPart(f"Turn {c.turn}, from {timestamp(c.start_frame)}: you played "
                                  f"[{', '.join(c.actions)}]" + (f"; your thought: {thought}" if thought else "")
                                  + f". Points {c.reward:+g}" + (f", lives lost {lost}" if lost else "")
                                  + ". The screen when it began:\n"))
            parts.append(ImagePart(c.start_frame, "start"))
            parts.append(TextPart("\n"))
        parts.append(TextPart(f"The screen now, at {timestamp(frame)}:\n"))
        parts.append(ImagePart(frame, "current"))
        parts.append(TextPart("\nNow answer with your edits, one a line (add: / modify N: / delete N / keep)."))
        return Prompt([Message("system", [TextPart(system)]), Message("user", merge_parts(parts))], frames)


@dataclass(frozen=True)
class RecordedUpdate:
    """One line of a recording's ``experience.jsonl``, as a replay and ``verify`` read it: the turns played
    when it was asked, the library before and after it as recorded (None: not recorded), the reply and the
    error that stood in for one (the other keys, the request, usage and cost, are only written)."""

    turns: int
    before: list[str] | None
    after: list[str] | None
    reply: str
    error: str | None


# the keys of an update that are read, with their types (workstation.store.records.check_fields)
UPDATE_FIELDS: dict[str, tuple[Any, ...]] = {"before": ("list", True), "after": ("list", True),
                                             "reply": ("str", True), "error": ("str", True)}


def _update(rec: Any, path: Path, n: int) -> RecordedUpdate:
    """Line ``n`` of ``path``, checked: ``DamagedArtifact`` (one line naming the file, line and field) if it is
    not an experience update."""
    if not isinstance(rec, dict) or not isinstance(rec.get("turns"), int):
        raise DamagedArtifact(f"{path} line {n} is not an experience update", file=path)
    try:
        check_fields(rec, UPDATE_FIELDS, f"{path} line {n}")
    except RecordFileError as e:
        raise DamagedArtifact(f"{e} (not an experience update)", file=path) from None
    for key in ("before", "after"):
        if not all(isinstance(r, str) for r in rec.get(key) or []):
            raise DamagedArtifact(f"{path} line {n}: field {key!r} holds a rule that is not text "
                                  "(not an experience update)", file=path)
    return RecordedUpdate(rec["turns"], rec.get("before"), rec.get("after"), rec.get("reply") or "",
                          rec.get("error"))


def read_updates(recording: Path) -> list[RecordedUpdate]:
    """A recording's updates (``experience.jsonl``), in order; none: ``[]``."""
    path = Path(recording) / UPDATES
    if not path.is_file():
        return []
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            raise DamagedArtifact(f"{path} line {n} is not a JSON record; the recording is damaged",
                                  file=path) from None
        out.append(_update(rec, path, n))
    return out


def rules_at(manifest: Manifest, updates: list[RecordedUpdate], turn: int) -> list[str] | None:
    """The library the player's prompt carried at ``turn`` (None: the run had no library)."""
    exp = manifest.experience
    if exp is None:
        return None
    rules = list(exp.rules)
    for u in updates:
        if u.turns <= turn:
            rules = list(u.after or [])
    return rules


def recording_problems(manifest: Manifest, updates: list[RecordedUpdate], turns: int) -> str | None:
    """Replays the recorded updates without a model: each one's edits, parsed from its recorded reply and
    applied to the library before it, must give the library after it; each starts where the last ended, at a
    multiple of K; the first starts from the manifest's library. The first problem, or None."""
    exp: ExperienceStart | None = manifest.experience
    if exp is None:
        return f"{UPDATES}: {len(updates)} updates, but the manifest records no experience library" if updates \
            else None
    every = exp.every
    rules = list(exp.rules)
    if digest(rules) != exp.start_digest:
        return "manifest.json experience: the start library does not match its digest"
    for n, u in enumerate(updates, 1):
        where = f"{UPDATES} update {n} (after turn {u.turns})"
        if every is None or u.turns % every or u.turns > turns:
            return f"{where}: not at a multiple of --reflect-every {every} within the {turns} turns"
        if u.before != rules:
            return f"{where}: the library before it is not the one the last update left"
        edits, _ = parse_edits(u.reply if u.error is None else "")
        after, _, _ = apply_edits(rules, edits)
        if after != u.after:
            return f"{where}: its reply's edits give another library than the one recorded"
        rules = after
    return None


__all__ = ["DEFAULT_EVERY", "Edit", "ExperienceError", "ExperienceRun", "MAX_EDITS", "MAX_RULES", "MAX_RULE_CHARS",
           "apply_edits", "digest", "dir_problem", "identity_part", "library_dir", "parse_edits", "read_library",
           "read_updates", "RecordedUpdate", "recording_problems", "rules_at", "write_library"]
