"""A small directory shaped like a checkout of the public AtariBench harness, in this project's own words.

Same file layout and Python shapes as the harness's prompt modules (module-level
string templates with ``{NAME}`` placeholders and an image marker, a time-budget
text, notices appended under ``if`` tests in a prompt-builder module, per game a
guide with a timing placeholder, a timing text, an ``ACTION_MAP`` of words to
minimal-set indices and optional warm-up seconds); none of its text.
"""

from __future__ import annotations

from pathlib import Path

from workstation.game.games import GAMES

MARK = "IMG_HOLDER"

COMMON = '''"""Shared templates (test words)."""

SINGLE_TURN_PROMPT_TEMPLATE: str = """
Play well.

{GAME_PROMPT}
{GAME_OVER_PROMPT}

Scoring turns:
{LIST_OF_REWARD_CLIPS_TEMPLATE}

Latest turns:
<latest>
{LIST_OF_CLIPS_TEMPLATE}
</latest>

Now, at {CURRENT_TIME}:
IMG_HOLDER

Reply with thought and move lines. Braces {{like these}} stay.
"""

MULTI_TURN_PROMPT_TEMPLATE: str = """unused {GAME_PROMPT}"""

APPEND_ONLY_HEADER_TEMPLATE: str = """
Chat play.

{GAME_PROMPT}
{GAME_OVER_PROMPT}
"""

APPEND_ONLY_INITIAL_USER_TEMPLATE: str = """
First screen at {CURRENT_TIME}:
IMG_HOLDER

Answer now.
"""

APPEND_ONLY_UPDATED_USER_TEMPLATE: str = """
What happened:
{CLIP_TEMPLATE}

Answer again.
"""

REWARD_CLIPS_TEMPLATE: str = """
<scoring>
{LIST_OF_CLIPS_TEMPLATE}
</scoring>
"""

SINGLE_TURN_CLIP_TEMPLATE: str = """
<turn from="{START_TIME}" to="{END_TIME}">
IMG_HOLDER
<played>{ACTIONS_STR}</played>
{LIST_OF_STATE_REWARD_TEMPLATE}
</turn>
"""

STATE_REWARD_TEMPLATE: str = """
at {TIME}
IMG_HOLDER
"""
'''

TERMINATION = '''"""Budget text (test words)."""

MAX_TIME_PROMPT: str = """
You have {MAX_TIME} seconds.
"""
'''

BUILDER = '''"""Prompt assembly (test words)."""

from .prompts import common_prompt


def _build_structured_history_prompt(turns):
    prompt_text = common_prompt.SINGLE_TURN_PROMPT_TEMPLATE.format()
    if turns and turns[-1].new_game_started:
        prompt_text += "\\nNOTE: a new game began.\\n"
    return prompt_text


def build_clip_prompt(turn):
    clip_text = common_prompt.SINGLE_TURN_CLIP_TEMPLATE.format()
    if turn.new_game_started:
        clip_text += "That game ended here.\\n"
    return clip_text


def _build_state_reward_prompt(action):
    state_text = ""
    if action.reward_delta > 0:
        state_text += "Points up.\\n"
    if action.reward_delta < 0:
        state_text += "Points down.\\n"
    if action.lost_life:
        state_text += "Life gone.\\n"
    return state_text
'''

# game key -> the words its test prompt teaches (minimal-set indices, as the harness writes them)
SPECIAL = {
    "qbert": {"noop": 0, "top-right": 2, "bottom-right": 3, "top-left": 4, "bottom-left": 5},
    "assault": {"noop": 0, "fire up": 2, "move right": 3, "move left": 4, "fire right": 5, "fire left": 6},
    # one below the meaning, as the harness's own map does for the fast diagonals
    "journey_escape": {"noop": 0, "up": 1, "right": 2, "left": 3, "fastright": 9, "fastupright": 11},
}
WARMUP = {"beam_rider": 8.0, "pacman": 3}  # pacman differs from the game table (4 s) on purpose


def game_module(key: str) -> str:
    game = GAMES[key]
    words = SPECIAL.get(key) or {game.action_name(a): a for a in game.allowed}
    lines = [f'"""{key} (test words)."""', "", 'GAME_PROMPT: str = """',
             f"{key} guide in test words.", "  Indented line kept.", "", "{FPS_SPECIFIC_PROMPT}", "",
             "Trailing spaces kept.   ", '"""', "", 'FPS_10_PROMPT: str = """',
             "Up to 10 actions, 0.1 s each.", '"""', "", f"ACTION_MAP = {words!r}"]
    if key in WARMUP:
        lines.append(f"SKIP_SECONDS = {WARMUP[key]!r}")
    lines.append("MAX_FRAMES = 500")
    return "\n".join(lines) + "\n"


def make_harness(root: Path, skip: tuple[str, ...] = ()) -> Path:
    prompts = root / "games" / "prompts"
    prompts.mkdir(parents=True)
    (root / "games" / "__init__.py").write_text("")
    (prompts / "__init__.py").write_text('"""Game prompts."""\n')
    (prompts / "common_prompt.py").write_text(COMMON)
    (prompts / "termination.py").write_text(TERMINATION)
    (prompts / "game_clip.py").write_text("raise SystemExit('a helper module must not run')\n")
    (root / "games" / "prompt_builder.py").write_text(BUILDER)
    for key in GAMES:
        if key not in skip:
            (prompts / f"{key}.py").write_text(game_module(key))
    return root


def guide_text(key: str) -> str:
    """The guide as the harness would send it: its timing text in place."""
    return (f"\n{key} guide in test words.\n  Indented line kept.\n\n\nUp to 10 actions, 0.1 s each.\n\n\n"
            "Trailing spaces kept.   \n")
