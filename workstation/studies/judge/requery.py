"""The re-query study (the paper's Figure 14): does the error persist with the current frame only?

For every judged failure in a judge directory, the model that played is asked that turn again
twice: with the full prompt it got (``full``) and with the instructions and the current frame
only (``current``: history images, action and reward text and earlier replies removed;
``PromptBuilder.current_only``). The judge judges each new answer as it judged the first,
seeing the prompt of that condition and the new reply. A pair counts when both answers were
judged: an error is a verdict with ``failure`` true. ``DIR/requery.jsonl`` holds one line per
(turn, condition), resumable; ``DIR/requery.json`` the counts and the exact McNemar test with
the odds ratio of an error with the current frame only (``workstation.studies.judge.stats``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from workstation.base.errors import UserError
from workstation.store.ledger import Ledger, write_json
from workstation.store.recording import Recording
from workstation.store.seal import SEAL
from workstation.studies.judge.evidence import Blinder, judge_request
from workstation.studies.judge.records import (
    REQUERY_CONDITIONS,
    PlayerAnswer,
    RequeryLine,
    RequeryResult,
    StudyMeta,
    read_file,
)
from workstation.studies.judge.run import REQUERY_LINES, ask, make_judge_agent, read_study, seal_study, verdict_ledger
from workstation.studies.judge.stats import mcnemar_exact
from workstation.studies.judge.verdict import load_judge_prompt

if TYPE_CHECKING:
    from workstation.engine.prompt import Prompt
    from workstation.run.providers import ProviderOptions
    from workstation.run.providers.agent import ProviderAgent

LINES, RESULT = REQUERY_LINES, "requery.json"
Players = Callable[[Recording, "str | None"], "ProviderAgent"]


def _players() -> tuple[Players, dict[tuple[str, ProviderOptions], ProviderAgent]]:
    from workstation.run.providers import ProviderConfigError, make_provider_agent, options_from_description

    made: dict[tuple[str, ProviderOptions], ProviderAgent] = {}

    def get(rec: Recording, base_url: str | None) -> ProviderAgent:
        m = rec.manifest_record
        spec = m.agent_spec or ""
        options = options_from_description(m.agent)
        if base_url:
            options = replace(options, base_url=base_url)
        key = (spec, options)
        if key not in made:
            try:
                made[key] = make_provider_agent(spec, options)
            except ProviderConfigError as e:
                raise UserError(f"the model that played {rec.path.name} cannot be asked again: {e}") from None
        return made[key]

    return get, made


def _ask_player(agent: ProviderAgent, prompt: Prompt, rec: Recording, turn: int) -> PlayerAnswer:
    from workstation.engine.calls import FatalAgentError, TurnContext
    from workstation.engine.parser import parse_reply
    from workstation.game.games import get_game

    game = get_game(rec.manifest_record.game or "")
    t = rec.turn_records[turn]
    protocol = rec.manifest_record.protocol if isinstance(rec.manifest_record.protocol, dict) else {}
    max_actions = int(protocol["max_actions"]) if "max_actions" in protocol else 10
    try:
        reply = agent.act(prompt, TurnContext(game=game, turn=turn, max_actions=max_actions, frame=t.start_frame))
    except FatalAgentError as e:
        raise UserError(f"the model that played failed for good: {e}; use --model-base-url to say where it "
                        "answers now (lines so far are kept)") from None
    usage = reply.usage.to_json() if reply.usage else None
    if reply.error:
        return PlayerAnswer(usage, reply.cost_usd, error=reply.error)
    parsed = parse_reply(reply.text, game, max_actions)
    return PlayerAnswer(usage, reply.cost_usd, reply.text, parsed.thought, list(parsed.names), parsed.valid)


def requery_ledger(d: Path) -> Ledger[RequeryLine]:
    return Ledger(d / LINES, RequeryLine.from_json, lambda x: x.key, cost=lambda x: x.cost, what="re-query lines")


def read_result(d: Path) -> RequeryResult:
    """requery.json, checked (the study's seal is checked by ``read_study``)."""
    return read_file(d / RESULT, RequeryResult.read, study=d)


def run_requery(d: Path, judge: str | None = None, options: ProviderOptions | None = None,
                model_base_url: str | None = None, max_cost: float | None = None) -> RequeryResult:
    from workstation.engine.calls import TurnContext
    from workstation.game.games import get_game
    from workstation.run.request import prompt_builder, rebuild_prompt

    meta, _summary = read_study(d)
    if judge:
        make_judge_agent(judge, options).close()  # a bad spec or key is one line before anything is read or written
    judge = judge or meta.judge
    if options is None:
        from workstation.run.providers import ProviderOptions

        try:
            options = ProviderOptions(**(meta.options or {}))
        except (TypeError, ValueError) as e:
            raise UserError(f"{d}: the judge options in judge.json do not read ({e}); pass the judge's flags") \
                from None
    samples = {s.run_id: s for s in meta.samples}
    failures = [v for v in verdict_ledger(d).done.values()
                if v.answer.parsed and v.answer.failure and v.run_id in samples]
    ledger = requery_ledger(d)
    todo = [(v, c) for v in failures for c in REQUERY_CONDITIONS if not ledger.is_done((v.run_id, v.turn, c))]
    old = read_result(d) if (d / RESULT).is_file() else None
    if old is not None and old.judge != judge:
        raise UserError(f"{d} was re-queried with the judge {old.judge}; a different --judge needs another judge "
                        "directory", "judge")
    if not todo and old is not None:
        return old  # finished: nothing is asked and nothing is written again
    stopped = None
    if todo:
        jp = load_judge_prompt(meta.prompt_path if Path(meta.prompt_path).is_file() else None)
        for v, _ in todo:
            p = Path(samples[v.run_id].path)
            if not (p / "manifest.json").is_file():
                raise UserError(f"{d}: the recording of {v.run_id} is not at {p}; re-query needs the recordings "
                                "the study judged", file=p)
        recs = {rid: Recording(Path(samples[rid].path)) for rid in {v.run_id for v, _ in todo}}
        blind = Blinder.for_runs(list(recs.values()), [s.setting for s in samples.values()])
        player_for, players = _players()
        if model_base_url:
            from workstation.run.providers.spec import base_url_problem

            why = base_url_problem(model_base_url)
            if why:
                raise UserError(why.replace("--base-url", "--model-base-url"), "model_base_url")
        for rec in recs.values():
            player_for(rec, model_base_url)  # every player can be made before anything is asked or written
        judge_agent = make_judge_agent(judge, options)
        (d / SEAL).unlink(missing_ok=True)  # checked by read_study; sealed again below
        spent = ledger.spent
        try:
            for v, cond in todo:
                if max_cost is not None and spent >= max_cost:
                    stopped = "max cost"
                    break
                rec = recs[v.run_id]
                turn = v.turn
                if cond == "full":
                    prompt = rebuild_prompt(rec, turn)
                else:
                    prompt = prompt_builder(rec).current_only(rec.turn_records[turn].start_frame)
                got = _ask_player(player_for(rec, model_base_url), prompt, rec, turn)
                spent += got.cost_usd or 0.0
                if got.error is not None:
                    continue
                req = judge_request(rec, turn, jp, blind, prompt=prompt, reply=(got.thought, got.plan))
                verdict = ask(judge_agent, req, TurnContext(get_game(v.game), turn, 1, 0), jp)
                spent += verdict.cost_usd or 0.0
                if verdict.error is not None:
                    continue
                line = RequeryLine(v.run_id, v.setting, v.game, turn, cond, v.answer.category, got, verdict)
                ledger.append(line, line.to_json())
        except BaseException:
            seal_study(d)  # stopped by an error: the lines so far are whole, sealed for the next reader
            raise
        finally:
            judge_agent.close()
            for agent in players.values():
                agent.close()
    result = replace(tally(ledger.done.values()), complete=len(ledger.done) >= 2 * len(failures) and stopped is None,
                     stopped=stopped, failures_requeried=len(failures), judge=judge)
    write_json(d / RESULT, result.to_json())
    seal_study(d)
    return result


def tally(lines: Iterable[RequeryLine]) -> RequeryResult:
    """Pairs of (full, current) verdicts on the same turn, both parsed, and the McNemar test on them."""
    by_turn: dict[tuple[str, int], dict[str, bool]] = {}
    for x in lines:
        if x.answer.parsed:
            by_turn.setdefault((x.run_id, x.turn), {})[x.condition] = bool(x.answer.failure)
    pairs = [(p["full"], p["current"]) for p in by_turn.values() if "full" in p and "current" in p]
    b = sum(1 for f, c in pairs if f and not c)
    c = sum(1 for f, cur in pairs if cur and not f)
    return RequeryResult(len(pairs), sum(f for f, _ in pairs), sum(cur for _, cur in pairs),
                         sum(1 for f, cur in pairs if f and cur), sum(1 for f, cur in pairs if not f and not cur),
                         mcnemar_exact(b, c))


__all__ = ["LINES", "RESULT", "StudyMeta", "read_result", "run_requery", "tally"]
