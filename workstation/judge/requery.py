"""The re-query study (the paper's Figure 14): does the error persist with the current frame only?

For every judged failure in a judge directory, the model that played is asked that turn again
twice: with the full prompt it got (``full``) and with the instructions and the current frame
only (``current``: history images, action and reward text and earlier replies removed;
``PromptBuilder.current_only``). The judge judges each new answer as it judged the first,
seeing the prompt of that condition and the new reply. A pair counts when both answers were
judged: an error is a verdict with ``failure`` true. ``DIR/requery.jsonl`` holds one line per
(turn, condition), resumable; ``DIR/requery.json`` the counts and the exact McNemar test with
the odds ratio of an error with the current frame only (``workstation.judge.stats``).
"""

from __future__ import annotations

import json
from pathlib import Path

from workstation.errors import UserError
from workstation.judge.evidence import Blinder, judge_request
from workstation.judge.run import (
    META,
    VERDICTS,
    _append,
    ask,
    make_judge_agent,
    read_lines,
    write_json,
)
from workstation.judge.stats import mcnemar_exact
from workstation.judge.verdict import load_judge_prompt
from workstation.store.recording import Recording

LINES, RESULT = "requery.jsonl", "requery.json"
CONDITIONS = ("full", "current")


def _players():
    from workstation.providers import (
        ProviderConfigError,
        make_provider_agent,
        options_from_description,
    )

    made: dict = {}

    def get(rec: Recording, base_url: str | None):
        m = rec.manifest_record
        spec = m.agent_spec or ""
        options = options_from_description(m.agent)
        if base_url:
            from dataclasses import replace

            options = replace(options, base_url=base_url)
        key = (spec, options)
        if key not in made:
            try:
                made[key] = make_provider_agent(spec, options)
            except ProviderConfigError as e:
                raise UserError(f"the model that played {rec.path.name} cannot be asked again: {e}") from None
        return made[key]

    return get, made


def _ask_player(agent, prompt, rec: Recording, turn: int) -> dict:
    from workstation.calls import FatalAgentError, TurnContext
    from workstation.game.games import get_game
    from workstation.turn.parser import parse_reply

    game = get_game(rec.manifest_record.game)
    t = rec.turn_records[turn]
    max_actions = int((rec.manifest_record.protocol or {}).get("max_actions", 10))
    try:
        reply = agent.act(prompt, TurnContext(game=game, turn=turn, max_actions=max_actions, frame=t.start_frame))
    except FatalAgentError as e:
        raise UserError(f"the model that played failed for good: {e}; use --model-base-url to say where it "
                        "answers now (lines so far are kept)") from None
    out = {"player_usage": reply.usage.to_json() if reply.usage else None, "player_cost_usd": reply.cost_usd}
    if reply.error:
        return {**out, "error": reply.error}
    parsed = parse_reply(reply.text, game, max_actions)
    return {**out, "player_raw": reply.text, "thought": parsed.thought, "plan": parsed.names, "valid": parsed.valid}


def run_requery(d: Path, judge: str | None = None, options=None, model_base_url: str | None = None,
                max_cost: float | None = None) -> dict:
    from workstation.calls import TurnContext
    from workstation.game.games import get_game
    from workstation.runs.request import prompt_builder, rebuild_prompt

    meta = json.loads((d / META).read_text(encoding="utf-8"))
    judge = judge or meta["judge"]
    if options is None:
        from workstation.providers import ProviderOptions

        options = ProviderOptions(**(meta.get("options") or {}))
    jp = load_judge_prompt(meta["prompt"]["path"] if Path(meta["prompt"]["path"]).is_file() else None)
    samples = {s["run_id"]: s for s in meta["samples"]}
    failures = [v for v in read_lines(d / VERDICTS) if v.get("parsed") and v.get("failure") and v["run_id"] in samples]
    done = {(x["run_id"], x["turn"], x["condition"]): x for x in read_lines(d / LINES)}
    todo = [(v, c) for v in failures for c in CONDITIONS if (v["run_id"], v["turn"], c) not in done]
    spent = sum((x.get("cost_usd") or 0.0) + (x.get("player_cost_usd") or 0.0) for x in done.values())
    stopped = None
    if todo:
        recs = {rid: Recording(Path(samples[rid]["path"])) for rid in {v["run_id"] for v, _ in todo}}
        blind = Blinder.for_runs(list(recs.values()), [s["setting"] for s in samples.values()])
        player_for, players = _players()
        judge_agent = make_judge_agent(judge, options)
        sink = _append(d / LINES)
        try:
            for v, cond in todo:
                if max_cost is not None and spent >= max_cost:
                    stopped = "max cost"
                    break
                rec = recs[v["run_id"]]
                turn = v["turn"]
                if cond == "full":
                    prompt = rebuild_prompt(rec, turn)
                else:
                    prompt = prompt_builder(rec).current_only(rec.turn_records[turn].start_frame)
                line = {"run_id": v["run_id"], "setting": v["setting"], "game": v["game"], "turn": turn,
                        "condition": cond, "first_category": v["category"]}
                got = _ask_player(player_for(rec, model_base_url), prompt, rec, turn)
                spent += got.get("player_cost_usd") or 0.0
                if got.get("error"):
                    continue
                req = judge_request(rec, turn, jp, blind, prompt=prompt, reply=(got["thought"], got["plan"]))
                verdict = ask(judge_agent, req, TurnContext(get_game(v["game"]), turn, 1, 0), jp)
                spent += verdict.get("cost_usd") or 0.0
                if verdict.get("error"):
                    continue
                line.update(got)
                line.update(verdict)
                sink.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
                sink.flush()
                done[(v["run_id"], turn, cond)] = line
        finally:
            sink.close()
            judge_agent.close()
            for agent in players.values():
                agent.close()
    result = tally(done.values())
    result.update(complete=len(done) >= 2 * len(failures) and stopped is None, stopped=stopped,
                  failures_requeried=len(failures), judge=judge)
    write_json(d / RESULT, result)
    return result


def tally(lines) -> dict:
    """Pairs of (full, current) verdicts on the same turn, both parsed, and the McNemar test on them."""
    by_turn: dict = {}
    for x in lines:
        if x.get("parsed"):
            by_turn.setdefault((x["run_id"], x["turn"]), {})[x["condition"]] = bool(x["failure"])
    pairs = [(p["full"], p["current"]) for p in by_turn.values() if "full" in p and "current" in p]
    b = sum(1 for f, c in pairs if f and not c)
    c = sum(1 for f, cur in pairs if cur and not f)
    return {"pairs": len(pairs), "errors_full": sum(f for f, _ in pairs), "errors_current": sum(cur for _, cur in pairs),
            "both": sum(1 for f, cur in pairs if f and cur), "neither": sum(1 for f, cur in pairs if not f and not cur),
            "mcnemar": mcnemar_exact(b, c)}
