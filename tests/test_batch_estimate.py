"""What ``batch --dry-run`` prints a batch will cost: the estimate per run and the plan's table.

Every number is the one a user reads, worked by hand from the rule: the paper's footprint (27,938 calls over
200 runs of 900 frames, 140.8M input and 2.85M + 17.2M output tokens) at the price table's list prices
(openai gpt-5.4-mini: $0.75 input, $4.50 output a million tokens), or the mean of earlier complete runs.
No emulator, no provider: the grid is read, the plan printed.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from workstation.studies.batch.estimate import Estimate, estimates, from_rows, paper_estimate
from workstation.studies.batch.grid import load_grid
from workstation.studies.batch.jobs import Job, jobs_of
from workstation.studies.batch.plan import plan_text
from workstation.studies.batch.runner import Batch

GRID = """\
name = "est"
games = ["breakout", "seaquest"]
seeds = [0, 1, 2]

[protocol]
frames = {frames}
max_actions = {max_actions}

[[settings]]
label = "mini"
spec = "openai:gpt-5.4-mini"

[[settings]]
label = "random"
spec = "random"
"""

PER_CALL = (5040 * 0.75 + 718 * 4.50) / 1e6  # the paper's 5,040 input and 718 output tokens a call, priced
PAPER_CALLS_A_RUN = 27_938 / 200  # 139.69 calls a 900-frame run at max_actions 10


def _grid(tmp_path: Path, frames: int = 900, max_actions: int = 10) -> Path:
    p = tmp_path / "grid.toml"
    p.write_text(textwrap.dedent(GRID.format(frames=frames, max_actions=max_actions)), encoding="utf-8")
    return p


def _jobs(tmp_path: Path, **kw: int) -> list[Job]:
    return jobs_of(load_grid(_grid(tmp_path, **kw), out=str(tmp_path / "out" / "runs")))


def _row(setting: str, calls: int | None, cost: float | None, complete: bool = True, tokens: int = 100) -> dict:
    return {"setting": setting, "complete": complete, "calls": calls, "input_tokens": tokens,
            "output_tokens": tokens // 10, "cost_usd": cost}


def test_the_paper_protocol_costs_the_papers_calls_a_run_at_list_prices(tmp_path):
    mini, rnd = (next(j for j in _jobs(tmp_path) if j.label == lab) for lab in ("mini", "random"))
    e = paper_estimate(mini)
    assert e.source == "paper"
    assert e.calls == pytest.approx(PAPER_CALLS_A_RUN)
    assert e.input_tokens == pytest.approx(140.8e6 / 200, rel=1e-12)  # per run: the paper's total over its 200 runs
    assert e.output_tokens == pytest.approx((2.85e6 + 17.2e6) / 200, rel=1e-12)
    assert e.cost_usd == pytest.approx(PAPER_CALLS_A_RUN * PER_CALL)  # $0.98 a run
    assert e.cost_per_call == pytest.approx(PER_CALL)
    assert paper_estimate(rnd) == Estimate(0.0, 0.0, 0.0, 0.0, "no calls")  # a built-in agent makes no calls
    assert paper_estimate(rnd).cost_per_call == 0.0


def test_fewer_actions_a_reply_mean_more_calls(tmp_path):
    mini = next(j for j in _jobs(tmp_path, frames=300, max_actions=1) if j.is_model)
    e = paper_estimate(mini)
    assert e.calls == pytest.approx(100)  # 300 frames / 3 a step / 1 action a reply
    assert e.cost_usd == pytest.approx(100 * PER_CALL)


def test_an_unpriced_model_has_no_cost_and_no_cost_a_call():
    e = Estimate(calls=10, cost_usd=None, source="paper")
    assert e.cost_per_call is None
    assert Estimate(calls=0, cost_usd=0.0).cost_per_call == 0.0  # no calls: nothing a call, not a division by 0
    assert Estimate(calls=4, cost_usd=1.0).cost_per_call == 0.25


def test_earlier_complete_runs_give_their_mean(tmp_path):
    rows = [_row("mini", 30, 1.0), _row("mini", 50, 2.0, tokens=300), _row("mini", 1000, 99.0, complete=False)]
    e = from_rows(rows)
    assert e is not None
    assert (e.calls, e.input_tokens, e.output_tokens, e.cost_usd) == (40, 200, 20, 1.5)  # the partial run left out
    assert e.source == "2 earlier runs"
    one = from_rows(rows[:1])
    assert one is not None and one.source == "1 earlier run" and one.cost_usd == 1.0
    assert from_rows([rows[2]]) is None  # no complete run: no estimate from runs
    unpriced = from_rows([_row("mini", 30, 1.0), _row("mini", 30, None)])
    assert unpriced is not None and unpriced.cost_usd is None  # one unpriced run: the cost is unknown
    assert from_rows([_row("mini", None, 0.0)]) == Estimate(0.0, 100.0, 10.0, 0.0, "1 earlier run")
    blank = {**_row("mini", 4, 0.0), "input_tokens": None, "output_tokens": None}  # no usage: counted 0
    assert from_rows([blank, _row("mini", 2, 0.0, tokens=60)]) == Estimate(3.0, 30.0, 3.0, 0.0, "2 earlier runs")


def test_estimates_per_setting_prefer_earlier_runs_of_that_setting(tmp_path):
    jobs = _jobs(tmp_path)
    got = estimates(jobs, [_row("mini", 30, 1.0), _row("random", 5, 3.0)])
    assert set(got) == {"mini", "random"}
    assert got["mini"].source == "1 earlier run" and got["mini"].calls == 30
    assert got["random"] == Estimate()  # a built-in agent's earlier rows are not a model's: no calls, free
    fresh = estimates(jobs, [_row("other", 30, 1.0)])
    assert fresh["mini"].source == "paper" and fresh["mini"].calls == pytest.approx(PAPER_CALLS_A_RUN)


def test_the_dry_run_plan_prints_the_estimates_times_the_runs_left(tmp_path):
    b = Batch(load_grid(_grid(tmp_path, frames=300, max_actions=1), out=str(tmp_path / "out" / "runs")),
              tmp_path / "out", max_cost=5)
    b.prepare(dry_run=True)
    text = plan_text(b)
    rows = {tuple(line.split()[:2]): line.split() for line in text.splitlines() if line.split()[:1] in (["mini"],
                                                                                                      ["random"])}
    # 3 seeds of mini on breakout: 3 x 100 calls, 3 x 100 x 5,039.7 input and 717.7 output tokens (unrounded), priced
    assert rows[("mini", "breakout")] == ["mini", "breakout", "3", "0", "3", "300", "1.51M", "215.3k",
                                          f"${300 * PER_CALL:.2f}"]
    assert rows[("random", "seaquest")] == ["random", "seaquest", "3", "0", "3", "0", "0", "0", "-"]
    assert text.splitlines()[3] == "mini     breakout     3     0       3    300  1.51M  215.3k  $2.10"  # numbers right
    total = next(line.split() for line in text.splitlines() if line.startswith("total"))
    assert total == ["total", "12", "0", "12", "600", "3.02M", "430.6k", f"${600 * PER_CALL:.2f}"]
    assert text.splitlines()[0].startswith("batch est: 12 runs (2 settings x 1 protocol variant x 2 games x 3 seeds)")
    assert "5.0k input and 718 output tokens" in text and "; --max-cost $5" in text
    assert not (tmp_path / "out").exists()


def test_runs_done_before_are_counted_and_cost_nothing_more(tmp_path):
    from workstation.studies.batch.progress import SKIPPED

    b = Batch(load_grid(_grid(tmp_path, frames=300, max_actions=1), out=str(tmp_path / "out" / "runs")),
              tmp_path / "out")
    b.prepare(dry_run=True)
    for c in b.cells:
        if c.is_model:  # as prepare marks a complete recording found in runs/
            b.state.runs[c.run_id].status = SKIPPED
    lines = plan_text(b).splitlines()
    assert next(x.split() for x in lines if x.startswith("mini ")) == ["mini", "breakout", "3", "3", "0", "0", "0",
                                                                      "0", "$0.0000"]
    assert next(x.split() for x in lines if x.startswith("total")) == ["total", "12", "6", "6", "0", "0", "0",
                                                                      "$0.0000"]


def test_token_counts_print_in_thousands_from_1000_and_millions_from_a_million():
    from workstation.studies.batch.plan import _k

    assert [_k(999), _k(1000), _k(999_949), _k(1e6), _k(2.5e6)] == ["999", "1.0k", "999.9k", "1.00M", "2.50M"]


def test_the_plan_names_the_protocol_variants_its_sources_and_rules_off_head_and_total(tmp_path):
    text = GRID.format(frames=300, max_actions="[1, 2]").split("[[settings]]")[0] + \
        '[[settings]]\nlabel = "mini"\nspec = "openai:gpt-5.4-mini"\n\n[[settings]]\nlabel = "rnd"\nspec = "random"\n'
    (tmp_path / "g.toml").write_text(text, encoding="utf-8")
    b = Batch(load_grid(tmp_path / "g.toml", out=str(tmp_path / "out" / "runs")), tmp_path / "out")
    b.prepare(dry_run=True)
    lines = plan_text(b).splitlines()
    assert lines[0].startswith("batch est: 24 runs (2 settings x 2 protocol variants x 2 games x 3 seeds)")
    dashes = [i for i, x in enumerate(lines) if set(x) <= {"-", " "} and x]
    assert dashes == [2, 11]  # under the head, and over the total after 4 labels x 2 games
    assert lines[dashes[1] + 1].startswith("total")
    sources = next(x for x in lines if x.startswith("estimates per run"))
    assert sources.startswith("estimates per run (mini|max_actions=1: paper; mini|max_actions=2: paper); ")
    one = tmp_path / "one.toml"
    one.write_text(text.split('\n\n[[settings]]\nlabel = "rnd"')[0].replace("[0, 1, 2]", "[0]") + "\n",
                   encoding="utf-8")
    b1 = Batch(load_grid(one, out=str(tmp_path / "out1" / "runs")), tmp_path / "out1")
    b1.prepare(dry_run=True)
    text1 = plan_text(b1)
    assert text1.startswith("batch est: 4 runs (1 setting x 2 protocol variants x 2 games x 1 seed)")
    row = next(x.split() for x in text1.splitlines() if x.startswith("mini|max_actions=2 "))
    assert row == ["mini|max_actions=2", "breakout", "1", "0", "1", "50", "252.0k", "35.9k", f"${50 * PER_CALL:.4f}"]
