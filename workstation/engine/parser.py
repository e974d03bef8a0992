"""The reply parser: a model's free-form reply -> a thought and a list of action ids.

The protocol asks for ``thought: ...`` then ``move: [a, b, c]``; real models wrap
that in code fences, markdown, JSON, XML-ish tags, bullet lists and prose. The
parser accepts all of these, and turns anything it cannot read into one NOOP
with a ``rule`` and one-line ``errors`` saying what was wrong.

Decisions, in the order they apply:

- Code-fence lines (```` ``` ````, ```` ```json ````) are dropped; ``<move>``/``<thought>``
  tags become labels. A reply that is one JSON object with a ``move``/``moves``/
  ``action``/``actions`` key is read as such (``thought``/``reasoning`` for the thought).
- A move line starts (after markdown such as ``**``, ``#``, ``>``, bullets) with
  ``move``, ``moves``, ``action`` or ``actions`` (optionally ``final``/``next``...) and
  a separator (``:``, ``=``, ``-``, ``->``). Without a separator it counts only when a
  bracket follows (``move [left]``) or every word after it is an action.
  A label in the middle of a line (``... move: [left]``) is used only when no
  line starts with one. A reply with no label at all is read from its last line
  when that line is a ``[...]`` list or nothing but action names, or from the
  whole reply when it is one ``[...]`` list (a bare JSON array).
- Several move lines: the LAST one that names at least one known action wins
  (models restate or correct their answer; trailing prose such as
  ``Action: this should hit the ball`` must not erase the answer). When none
  names a known action, the last one decides the error.
- The list is the ``[...]`` or ``(...)`` after the label (text after the closing
  bracket is ignored; a list may span lines), else the rest of the line cut at
  prose (`` - ``, ``(``, ``#``, ``//``, a sentence end), else the bulleted or
  numbered items, the bracket list or the single line that follow the label.
  Items split on ``,`` ``;`` ``|`` newlines ``->`` ``then`` ``and``.
- A name resolves, in order: the whole token through the game vocabulary
  (``normal_name`` form, so ``Up-Left``, ``"LEFT"``, ``fire right`` work); repeat
  shorthand ``left x3``, ``left*3``, ``left (x3)``, ``3x left``, ``3 left``,
  ``left 3 times``, ``left twice``; a space-separated run of names
  (``left left fire``), unless the token reads as one compound the game lacks
  (``fire right`` in Breakout stays unknown rather than becoming two actions).
  For an unbracketed list only, the last item may carry prose after its leading
  names (``left, fire to hit it`` -> left, fire). Bare numbers are not action ids.
- Any unknown name, an empty list, or more than ``max_actions`` actions makes
  the whole turn invalid: ``actions == [0]``, ``names == ["noop"]``.
- Names match the game's words (``Game.vocabulary``, the prompt pack's data) by
  their normal form: case, ``_``, ``-`` and spaces do not matter, and a compound of
  directions and one of the suffixes fire, punch or shoot may be written in any
  order (``leftup`` = ``upleft``, ``punch up`` = ``uppunch``, ``Fire-Right`` =
  ``rightfire``); see ``workstation.game.vocabulary``.
- A pack whose vocabulary says ``matching = "harness"`` is read by the public
  harness's stricter rules instead (``workstation.engine.harness_parser``): one
  ``thought:`` and the first ``move: [...]``, comma items only, no shorthand.
- Reasoning text comes first (``split_thinking``): a leading ``<think>...</think>`` block is
  the model's thinking, kept as the thought (its last ``LABELLED_THOUGHT_CHARS`` characters) and
  never read for moves; the plan is parsed from the text after it. A leading ``<think>`` never
  closed makes the whole reply thinking (no move line), under every rule. Under the ``think_tags``
  rule (reasoning models such as Qwen3, QwQ, DeepSeek-R1: ``workstation.run.providers.reasoning``)
  also a reply with only the closing ``</think>`` (the chat template opened it), blocks further
  in, and an opening ``<think>`` never closed (all of it thinking: no move line).
- The thought is the text after every ``thought:`` (also ``thoughts``,
  ``thinking``, ``reasoning``, ``analysis``) label up to the next label line,
  joined; without a label, the text before the move line, keeping its last
  ``FALLBACK_THOUGHT_CHARS`` characters (the conclusion sits next to the move).

``parse_reply`` never raises for a ``str``; anything else is a ``TypeError``.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from workstation.game.games import Game
from workstation.game.vocabulary import GameWords, normal_name

FALLBACK_THOUGHT_CHARS = 500  # cap on a thought taken from unlabelled text
LABELLED_THOUGHT_CHARS = 4000  # cap on a labelled thought
MAX_TOKENS = 100  # items beyond this are counted, not resolved or kept
_MAX_TOKEN_CHARS = 64  # longer items are unknown without further analysis
_MAX_LIST_LINES = 50  # lines a bracket list or bullet list may span

REASONING_RULES = ("leading", "think_tags")  # how think tags are read (see split_thinking)
PARSE_RULES = ("empty_reply", "no_move_line", "empty_move_list", "unknown_action", "too_many_actions", "no_thought_line")
# no_thought_line: only under a harness-matching pack (workstation.engine.harness_parser), which needs a thought


@dataclass
class ParseResult:
    thought: str  # "" when none found
    names: list[str]  # canonical lower-case ALE names of the parsed actions
    actions: list[int]  # action ids, same length as names; [0] when invalid
    valid: bool
    errors: list[str] = field(default_factory=list)  # one line each
    rule: str | None = None  # None when valid, else one of PARSE_RULES
    raw_moves: list[str] = field(default_factory=list)  # tokens as found, before mapping

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# --- line patterns -----------------------------------------------------------------

_LEAD = r"^[\s>#*_~`{•+\-]*(?:\d{1,2}[.)]\s+)?"  # markdown, bullets, an opening brace
_MOVE_LABEL = re.compile(
    _LEAD
    + r"(?:final\s+answer\s*[:\-]?[*_]*\s*)?[\"']?"
    r"(?:(?:final|next|chosen|selected|planned|my)\s+)?"
    r"(?P<label>move\s+list|action\s+list|action\s+sequence|moves?|actions?)[\"']?(?![a-z0-9])"
    r"[*_]*\s*(?P<sep>->|=>|[:=]|[-–—]+(?=\s|\[|$))?[*_]*\s*(?P<rest>.*)$",
    re.I,
)
_THOUGHT_LABEL = re.compile(
    _LEAD + r"[\"']?(?:thoughts?|thinking|reasoning|analysis)[\"']?(?![a-z0-9])[*_]*\s*"
    r"(?:(?:[:=]|[-–—]+(?=\s))[*_]*\s*(?P<rest>.*)|$)",
    re.I,
)
_INLINE_MOVE = re.compile(r"(?<![a-z0-9])[\"']?(?:moves?|actions?)[\"']?\s*[:=]\s*", re.I)
_ITEM = re.compile(r"^\s*(?:[-*•+]|\d{1,2}[.):])\s+(?P<item>.*\S)")
_FENCE_LINE = re.compile(r"^\s*`{3,}[\w+\-]*\s*$")
_TAG = re.compile(r"<\s*(/?)\s*(moves?|actions?|thoughts?|thinking|reasoning)\s*>", re.I)
_BARE_LIST = re.compile(r"^\s*\[[^\[\]]*\]\s*$")

# --- token patterns ----------------------------------------------------------------

_SPLIT = re.compile(r"[,;|\n]|->|=>|→|\b(?:then|and)\b", re.I)
_PROSE_CUT = re.compile(r"\s[-–—]{1,2}\s|//|#|[.!?](?=\s|$)|\((?!\s*[x×*]?\s*\d)")
_STRIP = " \t\r\n\"'`*_.,;:!?()[]{}<>“”‘’"
_REPEAT_AFTER = re.compile(
    r"^(?P<name>[a-z][a-z _\-'\"]*?)\s*[(\[]?\s*"
    r"(?:[x×*]\s*(?P<n>\d{1,3})|(?P<m>\d{1,3})\s*(?:x|×|times?))\s*[)\]]?$",
    re.I,
)
_REPEAT_BEFORE = re.compile(r"^(?P<n>\d{1,3})\s*(?:[x×*]|times?)?\s*(?P<name>[a-z][a-z _\-'\"]*)$", re.I)
_REPEAT_WORD = re.compile(r"^(?P<name>[a-z][a-z _\-]*?)\s+(?P<w>once|twice|thrice)$", re.I)
_WORD_COUNTS = {"once": 1, "twice": 2, "thrice": 3}
_COMPOUND = re.compile(r"(?:up|down)?(?:left|right)?(?:fire|punch|shoot)?")

_normal = functools.lru_cache(maxsize=4096)(normal_name)


def _vocab(game: Game) -> GameWords:
    """The game's words (built once per Game object)."""
    return game.vocabulary


# --- resolving names ----------------------------------------------------------------

Resolved = list[tuple[int, int]]  # (action id, repeat count)


def _clean(token: str) -> str:
    return token.strip(_STRIP)


def _lookup(word: str, vocab: GameWords) -> int | None:
    return vocab.lookup(_clean(word))


def _resolve(token: str, vocab: GameWords) -> Resolved | None:
    """One list item -> its actions, or None when it is not (only) action names."""
    t = _clean(token)
    if not t or len(t) > _MAX_TOKEN_CHARS:
        return None
    found = _lookup(t, vocab)
    if found is not None:
        return [(found, 1)]
    if vocab.matching == "harness":
        return None  # the harness reads one word per item, nothing more
    m = _REPEAT_AFTER.match(t) or _REPEAT_BEFORE.match(t)
    if m:
        n = int(m["n"] or m["m"])
        found = _lookup(m["name"], vocab)
        return [(found, n)] if found is not None and n >= 1 else None
    m = _REPEAT_WORD.match(t)
    if m:
        found = _lookup(m["name"], vocab)
        return [(found, _WORD_COUNTS[m["w"].lower()])] if found is not None else None
    words = t.split()
    if len(words) < 2 or _COMPOUND.fullmatch(_normal(t)):
        return None  # one word, or a compound this game lacks ("fire right" in Breakout)
    out: Resolved = []
    for w in words:
        found = _lookup(w, vocab)
        if found is None:
            return None
        out.append((found, 1))
    return out


def _resolve_leading(token: str, vocab: GameWords) -> Resolved | None:
    """The names at the start of an item that goes on in prose ("fire to hit it")."""
    t = _clean(token)
    if _COMPOUND.fullmatch(_normal(t)):
        return None  # "fire right" in Breakout: a compound the game lacks, not fire + prose
    words = t.split()
    for k in range(min(len(words) - 1, 6), 0, -1):
        found = _resolve(" ".join(words[:k]), vocab)
        if found is not None:
            return found
    return None


# --- finding the list ---------------------------------------------------------------

Items = list[tuple[str, bool]]  # (raw item, may carry trailing prose)


def _opens(s: str) -> bool:
    return s[:1] in ("[", "(")


def _split(inner: str, prose_tail: bool) -> Items:
    parts = [p.strip() for p in _SPLIT.split(inner)]
    parts = [p for p in parts if _clean(p)]
    return [(p, prose_tail and i == len(parts) - 1) for i, p in enumerate(parts)]


def _items_from_text(s: str) -> Items:
    """Items of a list written on one (possibly joined) line."""
    s = s.replace("`", "").strip()
    if _opens(s):
        close = s.find("]" if s[0] == "[" else ")", 1)
        return _split(s[1:close] if close > 0 else s[1:], False)
    m = _PROSE_CUT.search(s)
    return _split(s[: m.start()] if m else s, True)


def _bracket_block(lines: list[str], j: int, first: str) -> tuple[str, int]:
    """Join lines from j on until the closing bracket of `first`; returns (text, last index)."""
    closer = "]" if first.lstrip().startswith("[") else ")"
    text, end = first, j
    while closer not in text and end + 1 < len(lines) and end - j < _MAX_LIST_LINES:
        end += 1
        text += "\n" + lines[end]
    return text, end


def _is_label(line: str) -> bool:
    m = _MOVE_LABEL.match(line)
    return bool(m and m["sep"]) or bool(_THOUGHT_LABEL.match(line))


def _content_after(lines: list[str], i: int, rest: str) -> tuple[Items, int]:
    """The items of the move label on line i whose same-line text is `rest`."""
    rest = rest.replace("`", "").strip()
    if rest:
        if _opens(rest):
            text, end = _bracket_block(lines, i, rest)
            return _items_from_text(text), end
        return _items_from_text(rest), i
    j = i + 1
    while j < len(lines) and j - i <= 3 and not lines[j].strip():
        j += 1
    if j >= len(lines) or not lines[j].strip() or _is_label(lines[j]):
        return [], i
    if _opens(lines[j].lstrip()):
        text, end = _bracket_block(lines, j, lines[j])
        return _items_from_text(text), end
    if _ITEM.match(lines[j]):
        items: Items = []
        end = j
        while end < len(lines) and end - j < _MAX_LIST_LINES:
            m = _ITEM.match(lines[end])
            if m:
                items += _items_from_text(m["item"])
            elif lines[end].strip():
                break
            end += 1
        return items, end - 1
    return _items_from_text(lines[j]), j


@dataclass
class _Found:
    items: Items
    line: int  # line of the label (or list)
    col: int  # column where it starts; the thought may use the text before it
    end: int  # last line the list used


def _knows_any(items: Items, vocab: GameWords) -> bool:
    return any(
        _resolve(t, vocab) or (tail and _resolve_leading(t, vocab)) for t, tail in items[:MAX_TOKENS]
    )


def _find_moves(lines: list[str], vocab: GameWords) -> _Found | None:
    candidates: list[_Found] = []
    for i, line in enumerate(lines):
        low = line.lower()
        if "move" not in low and "action" not in low:
            continue
        m = _MOVE_LABEL.match(line)
        if not m:
            continue
        rest = m["rest"]
        if not m["sep"]:
            stripped = rest.replace("`", "").strip()
            item = _ITEM.match(line)
            if stripped and _lookup(item["item"] if item else line, vocab) is not None:
                continue  # an action word that starts with "move" ("move left" in Assault), not a label
            if stripped:
                if not _opens(stripped):
                    items = _items_from_text(stripped)
                    if not items or not all(_resolve(t, vocab) for t, _ in items):
                        continue  # prose such as "Move left to catch the ball"
            else:
                nxt = next((x for x in lines[i + 1 : i + 4] if x.strip()), "")
                if not (_ITEM.match(nxt) or nxt.lstrip()[:1] == "["):
                    continue  # a heading word with no list under it
        items, end = _content_after(lines, i, rest)
        candidates.append(_Found(items, i, 0, end))
    if not candidates:
        for i in range(len(lines) - 1, -1, -1):  # a label inside a line, last one first
            hits = list(_INLINE_MOVE.finditer(lines[i]))
            if hits:
                items, end = _content_after(lines, i, lines[i][hits[-1].end() :])
                return _Found(items, i, hits[-1].start(), end)
        return None
    if len(candidates) > 1:
        for found in reversed(candidates):
            if _knows_any(found.items, vocab):
                return found
    return candidates[-1]


def _bare_list(lines: list[str], vocab: GameWords) -> _Found | None:
    """A reply with no label whose last line is a [...] list or only action names,
    or that is one [...] list as a whole."""
    filled = [i for i, x in enumerate(lines) if x.strip()]
    if not filled:
        return None
    first, last = filled[0], filled[-1]
    if _BARE_LIST.match(lines[last]):
        return _Found(_items_from_text(lines[last]), last, 0, last)
    if lines[first].lstrip().startswith("[") and lines[last].rstrip().endswith("]"):
        return _Found(_items_from_text("\n".join(lines[first : last + 1])), first, 0, last)
    if len(lines[last]) <= 200:
        items = _split(lines[last].replace("`", ""), False)
        if items and all(_resolve(t, vocab) for t, _ in items):
            return _Found(items, last, 0, last)
    return None


# --- the thought --------------------------------------------------------------------

_MD_LINE_LEAD = re.compile(r"^[ \t]*(?:#+|>)[ \t]*", re.M)


def _tidy(text: str) -> str:
    """Text without markdown marks, on one line."""
    for junk in ("*", "`", "~~", "__"):
        if junk in text:
            text = text.replace(junk, "")
    if "#" in text or ">" in text:
        text = _MD_LINE_LEAD.sub("", text)
    return " ".join(text.split()).strip(" \"',")


def _thought(lines: list[str], found: _Found | None) -> str:
    view: list[str | None] = list(lines)  # None marks the move list: a thought stops there
    if found is not None:
        for k in range(found.line, found.end + 1):
            view[k] = None
        if found.col:
            view[found.line] = lines[found.line][: found.col]
    sections: list[str] = []
    i = 0
    while i < len(view):
        line = view[i]
        m = _THOUGHT_LABEL.match(line) if line is not None else None
        if not m:
            i += 1
            continue
        parts = [m["rest"] or ""]
        j = i + 1
        while (
            j < len(view)
            and view[j] is not None
            and not (found and j - 1 == found.line)  # an inline label ends its line's thought
            and not _is_label(view[j] or "")
        ):
            parts.append(view[j])
            j += 1
        sections.append(_tidy("\n".join(parts)))
        i = j
    text = " ".join(s for s in sections if s)
    if text:
        return text[:LABELLED_THOUGHT_CHARS]
    before = lines[: found.line] + [lines[found.line][: found.col]] if found else lines
    text = _tidy("\n".join(before))
    if len(text) > FALLBACK_THOUGHT_CHARS:
        text = "…" + text[-(FALLBACK_THOUGHT_CHARS - 1) :].lstrip()
    return text


# --- JSON object replies ------------------------------------------------------------

_MOVE_KEYS = ("move", "moves", "action", "actions", "next_move", "next_moves")
_THOUGHT_KEYS = ("thought", "thoughts", "thinking", "reasoning", "analysis")


def _from_json(text: str) -> tuple[Items, str] | None:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        obj = json.loads(text[start : end + 1])
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    keys = {str(k).lower(): v for k, v in obj.items()}
    key = next((k for k in _MOVE_KEYS if k in keys), None)
    if key is None:
        return None
    value = keys[key]
    if isinstance(value, list):
        items = [(x if isinstance(x, str) else json.dumps(x), False) for x in value]
        items = [(t.strip(), tail) for t, tail in items if _clean(t)]
    else:
        items = _items_from_text(value if isinstance(value, str) else json.dumps(value))
    thought = next((keys[k] for k in _THOUGHT_KEYS if k in keys), None)
    if thought is None:
        thought = _tidy(text[:start])[-FALLBACK_THOUGHT_CHARS:]
    elif not isinstance(thought, str):
        thought = json.dumps(thought)
    return items, _tidy(thought)[:LABELLED_THOUGHT_CHARS]


# --- reasoning text -----------------------------------------------------------------

_THINK_BLOCK = re.compile(r"<think>(.*?)</think>", re.S | re.I)
_THINK_LEADING = re.compile(r"\s*<think>(.*?)</think>", re.S | re.I)
_THINK_OPEN = re.compile(r"<think>", re.I)
_THINK_CLOSE = re.compile(r"</think>", re.I)


def split_thinking(text: str, rule: str = "leading") -> tuple[str | None, str]:
    """``(thinking, answer)``: the reasoning text a reply carries in think tags, and the rest.

    ``thinking`` is None when the reply has none. ``leading`` (every model): a ``<think>...</think>``
    block at the start, or a ``<think>`` at the start never closed (all of it thinking; the answer is
    empty). ``think_tags`` (reasoning models): also every other complete block, a
    closing ``</think>`` with no opening before it (all before it is thinking) and an opening
    ``<think>`` never closed (all after it is thinking; the answer is empty).
    """
    if rule not in REASONING_RULES:
        raise ValueError(f"unknown reasoning rule {rule!r}; use one of {', '.join(REASONING_RULES)}")
    if "<" not in text:
        return None, text
    m = _THINK_LEADING.match(text)
    if rule == "leading":
        if m is not None:
            return m[1], text[m.end():]
        lead = _THINK_OPEN.match(text.lstrip())
        if lead is not None:  # a leading block never closed: all of it is thinking, never the plan
            return text.lstrip()[lead.end():], ""
        return None, text
    thoughts: list[str] = []
    if m is None:
        close, opening = _THINK_CLOSE.search(text), _THINK_OPEN.search(text)
        if close is not None and (opening is None or opening.start() > close.start()):
            thoughts.append(text[:close.start()])
            text = text[close.end():]
    else:
        thoughts.append(m[1])
        text = text[m.end():]
    found = False
    while True:  # later complete blocks
        block = _THINK_BLOCK.search(text)
        if block is None:
            break
        found = True
        thoughts.append(block[1])
        text = text[:block.start()] + "\n" + text[block.end():]
    opening = _THINK_OPEN.search(text)
    if opening is not None:  # never closed: the rest is thinking
        thoughts.append(text[opening.end():])
        text = text[:opening.start()]
    if not thoughts and not found:
        return None, text
    return "\n".join(thoughts), text


def _with_thinking(thinking: str, result: ParseResult) -> ParseResult:
    """``result`` with the thinking text first in its thought (the tail kept when it is long)."""
    said = _tidy(thinking)
    if len(said) > LABELLED_THOUGHT_CHARS:
        said = "…" + said[-(LABELLED_THOUGHT_CHARS - 1):].lstrip()
    result.thought = (said + " " + result.thought).strip() if said else result.thought
    return result


# --- the entry point ----------------------------------------------------------------


def _prepare(text: str) -> list[str]:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "<" in text:
        text = _TAG.sub(lambda m: "\n" if m[1] else f"\n{m[2]}: ", text)
    lines = []
    for line in text.split("\n"):
        if "```" in line:
            if _FENCE_LINE.match(line):
                continue
            line = re.sub(r"`{3,}", "", line)
        lines.append(line)
    return lines


def _example(game: Game) -> str:
    return f"move: [{', '.join(game.action_names[1:3] or game.action_names[:1])}]"


def _invalid(game: Game, thought: str, rule: str, errors: list[str], raw: list[str]) -> ParseResult:
    return ParseResult(thought, [game.action_name(0)], [0], False, errors, rule, raw)


def _harness(text: str, game: Game, max_actions: int) -> ParseResult:
    from workstation.engine.harness_parser import parse_harness

    thought, words, ids, errors = parse_harness(text, game, max_actions)
    if not errors:
        return ParseResult(thought, [game.action_name(a) for a in ids], ids, True, [], None, words)
    first = errors[0]
    rule = ("no_thought_line" if first.startswith("no thought") else "no_move_line" if first.startswith("no move")
            else "empty_move_list" if "empty" in first else "unknown_action" if any(
                e.startswith("unknown") for e in errors) else "too_many_actions")
    if not text.strip():
        rule, errors = "empty_reply", ["empty reply: expected a thought line and a move line"]
    return ParseResult(thought, [game.action_name(0)], [0], False, errors, rule, words)


def parse_reply(text: str, game: Game, max_actions: int = 10, reasoning: str = "leading") -> ParseResult:
    """Parse one model reply for `game`; never raises for a str (see the module doc).

    ``reasoning`` is the think-tag rule (``REASONING_RULES``; see ``split_thinking``)."""
    if not isinstance(text, str):
        raise TypeError(f"parse_reply needs the reply as str, not {type(text).__name__}")
    if max_actions < 1:
        raise ValueError(f"max_actions must be at least 1, got {max_actions}")
    thinking, answer = split_thinking(text, reasoning)
    if thinking is not None:
        if not answer.strip():
            where = ("its <think> is never closed" if _THINK_CLOSE.search(text) is None
                     else "no move line after its think block")
            error = f"the reply is all thinking: {where}; end it with e.g. {_example(game)}"
            return _with_thinking(thinking, _invalid(game, "", "no_move_line", [error], []))
        return _with_thinking(thinking, _parse(answer, game, max_actions))
    return _parse(text, game, max_actions)


def _parse(text: str, game: Game, max_actions: int) -> ParseResult:
    if game.matching == "harness":
        return _harness(text, game, max_actions)
    vocab = _vocab(game)
    lines = _prepare(text)
    if not any(x.strip() for x in lines):
        return _invalid(game, "", "empty_reply", ["empty reply: expected a thought line and a move line"], [])

    from_json = _from_json("\n".join(lines)) if "{" in text else None
    if from_json is not None:
        items, thought = from_json
    else:
        found = _find_moves(lines, vocab) or _bare_list(lines, vocab)
        thought = _thought(lines, found)
        if found is None:
            error = f"no move line found: end the reply with e.g. {_example(game)}"
            return _invalid(game, thought, "no_move_line", [error], [])
        items = found.items

    raw = [t for t, _ in items[:MAX_TOKENS]]
    if not items:
        error = f"the move list is empty: give 1 to {max_actions} actions, e.g. {_example(game)}"
        return _invalid(game, thought, "empty_move_list", [error], raw)

    resolved: Resolved = []
    unknown: list[str] = []
    for token, tail in items[:MAX_TOKENS]:
        got = _resolve(token, vocab) or (_resolve_leading(token, vocab) if tail else None)
        if got is None:
            unknown.append(_clean(token)[:40] or token[:40])
        else:
            resolved += got
    total = sum(n for _, n in resolved) + len(unknown) + max(0, len(items) - MAX_TOKENS)

    errors: list[str] = []
    allowed = ", ".join(game.action_names) if unknown else ""
    for name in unknown[:5]:
        errors.append(f"unknown action {name!r} (allowed: {allowed})")
    if len(unknown) > 5:
        errors.append(f"... and {len(unknown) - 5} more unknown actions")
    if total > max_actions:
        errors.append(f"{total} actions but at most {max_actions} allowed")
    if errors:
        return _invalid(game, thought, "unknown_action" if unknown else "too_many_actions", errors, raw)

    actions = [a for a, n in resolved for _ in range(n)]
    return ParseResult(thought, [game.action_name(a) for a in actions], actions, True, [], None, raw)
