"""The judge's reading of a stuck stretch: did the model's thoughts notice it was stuck?

Text only: the stretch's thoughts (blinded like every judge request: model names and specs
replaced) in the judge prompt's ``stuck`` question. The answer must start with yes or no;
anything else is unreadable (None) and the word rule decides.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from workstation.engine.prompt import Message, Prompt, TextPart
from workstation.studies.judge.evidence import Blinder
from workstation.studies.judge.verdict import JudgePrompt

if TYPE_CHECKING:
    from workstation.run.providers.agent import ProviderAgent
    from workstation.store.recording import Recording

_ANSWER = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)


def read_yes_no(text: str | None) -> bool | None:
    m = _ANSWER.match(text or "")
    return None if m is None else m.group(1).lower() == "yes"


class StuckJudge:
    def __init__(self, agent: ProviderAgent, jp: JudgePrompt, labels: list[str]) -> None:
        self.agent, self.jp, self.labels = agent, jp, labels
        self.usage_calls = 0
        self.cost_usd = 0.0

    def __call__(self, rec: Recording, thoughts: list[str]) -> bool | None:
        from workstation.base.errors import UserError
        from workstation.engine.calls import FatalAgentError, TurnContext
        from workstation.game.games import get_game

        if not self.jp.stuck:
            return None
        blind = Blinder.for_runs([rec], self.labels)
        listed = "\n".join(f"- {blind.own_words(t) or '(no thought)'}" for t in thoughts)
        text = self.jp.stuck.replace("{turns}", str(len(thoughts))).replace("{thoughts}", listed)
        prompt = Prompt([Message("user", [TextPart(text)])])
        blind.check(prompt.messages[0].parts)
        try:
            reply = self.agent.act(prompt, TurnContext(get_game(str(rec.manifest_record.game)), 0, 1, 0))
        except FatalAgentError as e:
            raise UserError(f"the judge failed for good: {e}") from None
        self.usage_calls += 1
        self.cost_usd += reply.cost_usd or 0.0
        return None if reply.error else read_yes_no(reply.text)
