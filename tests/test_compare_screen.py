"""The compare screen in the real app: scrub, turn steps, event jumps, divergence, the summary table."""

from __future__ import annotations

import numpy as np
import pytest

from screens.app import CompareLaunch, HomeLaunch, make_app
from screens.views.compare import CompareScreen
from screens.widgets.frame_view import FrameView
from tests.test_compare import make_run
from tests.tui_helpers import run_async, wait_until
from workstation.base.errors import UserError
from workstation.studies.analysis.compare import summary_cells


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    out = tmp_path_factory.mktemp("cmp-screen")
    return make_run(out, seed=0, frames=600), make_run(out, seed=1, frames=600), \
        make_run(out, game="freeway", frames=30)


def text(screen, selector: str) -> str:
    return str(screen.query_one(selector).render())


async def opened(pilot):
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, CompareScreen), what="the compare screen")
    return pilot.app.screen


@run_async
async def test_scrub_jump_and_divergence(pair):
    a, b, _ = pair
    app = make_app(CompareLaunch((str(a), str(b))))
    async with app.run_test(size=(200, 60)) as pilot:
        screen = await opened(pilot)
        c = screen.c
        frames = [screen.query_one(f"#cmp-frame-{i}", FrameView) for i in range(2)]
        assert [f.frame_index for f in frames] == [0, 0]
        await pilot.press("full_stop", "full_stop", "comma", "full_stop")
        assert screen.frame == 2 and [f.frame_index for f in frames] == [2, 2]
        # next turn of the focused run (run 1), then of run 2
        await pilot.press("right")
        starts = c.runs[0].series.starts
        assert screen.frame == next(s for s in starts if s > 2)
        await pilot.press("2", "home", "right")
        assert screen.frame == next(s for s in c.runs[1].series.starts if s > 0)
        # next life loss in any run
        await pilot.press("home", "l")
        losses = sorted(int(f) for r in c.runs for f in np.flatnonzero(r.series.losses))
        assert screen.frame == losses[0]
        who = next(i for i, r in enumerate(c.runs) if r.series.losses[losses[0]])
        info = text(screen, f"#cmp-info-{who}")
        assert f"lives {int(c.runs[who].series.lives[losses[0]])} (lost 1)" in info
        await pilot.press("l")
        assert screen.frame == next(f for f in losses if f > losses[0])
        # the divergence point: shown, and a key away
        assert c.divergent_frame is not None
        assert f"runs diverge at frame {c.divergent_frame}" in text(screen, "#cmp-diverge")
        assert "◆" in text(screen, "#cmp-scrub")
        await pilot.press("d")
        assert screen.frame == c.divergent_frame
        assert [f.frame_index for f in frames] == [c.divergent_frame] * 2
        # each panel: score, lives, the action executing, the turn's thought and plan
        for i, run in enumerate(c.runs):
            info = text(screen, f"#cmp-info-{i}")
            f = c.divergent_frame
            assert f"score {run.series.score[f]:g}" in info and f"action {run.series.action_at(f)}" in info
            assert "thought random baseline" in info
            assert " ".join(run.turns[run.series.turn_at(f)].shown_plan) in info
        await pilot.press("t")
        t = c.divergent_turn
        assert screen.frame == min(r.turns[t].start_frame for r in c.runs)
        await pilot.press("end")
        assert screen.frame == c.end == 600
        start = text(screen, "#cmp-start")  # two seeds under the fixed start: one first frame
        assert start.startswith("same start (the fixed start") and "seeds differ (0, 1)" in start
        assert "NOT" not in start


@run_async
async def test_the_summary_table_shows_the_series_figures(pair):
    a, b, _ = pair
    app = make_app(CompareLaunch((str(a), str(b))))
    async with app.run_test(size=(200, 60)) as pilot:
        screen = await opened(pilot)
        table = screen.query_one("#cmp-table")
        assert table.row_count == 2
        for i, run in enumerate(screen.c.runs):
            cells = [str(x) for x in table.get_row(str(i))]
            expected = list(summary_cells(screen.c.rows[i]))
            assert cells[1:] == expected[1:]
            assert cells[1] == f"{run.series.score[-1]:g}" and cells[2] == str(int(run.series.losses.sum()))
            assert cells[4] == str(len(run.turns))


def test_runs_of_different_games_are_refused_before_any_screen(pair):
    a, _, other = pair
    with pytest.raises(UserError, match="different games"):
        make_app(CompareLaunch((str(a), str(other))))


@run_async
async def test_home_marks_recordings_and_opens_them_in_compare(tmp_path):
    a, b = make_run(tmp_path, seed=0, frames=60), make_run(tmp_path, seed=1, frames=60)
    app = make_app(HomeLaunch(out=str(tmp_path)))
    async with app.run_test(size=(200, 60)) as pilot:
        from screens.views.home import HomeScreen

        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen), what="home")
        home = app.screen
        home.query_one("#recent").focus()
        await pilot.press("c")  # nothing marked yet: a notice, no screen
        assert isinstance(app.screen, HomeScreen)
        await pilot.press("m", "down", "m")
        assert sorted(home._marked()) == sorted([a, b])
        assert "2 marked" in str(home.query_one("#recent-hint").render())
        await pilot.press("c")
        screen = await opened(pilot)
        assert sorted(r.path for r in screen.runs) == sorted([a, b])
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen), what="back home")
        # back home the list is read again: the marks stay, and show, so `c` compares what the ✓ say
        assert "2 marked" in str(home.query_one("#recent-hint").render())
        box = home.query_one("#recent")
        assert all(str(box.get_option_at_index(i).prompt).startswith("✓ ") for i in range(2))
        await pilot.press("c")
        screen = await opened(pilot)
        assert sorted(r.path for r in screen.runs) == sorted([a, b])


@run_async
async def test_three_runs_with_a_replay_read_as_the_cli_says_and_list_only_their_keys(tmp_path, capsys):
    from screens.app import HelpScreen
    from workstation.cli import main

    a = make_run(tmp_path, seed=0, frames=60)
    paths = [a, make_run(tmp_path, seed=0, frames=60, agent=f"replay:{a}"), make_run(tmp_path, seed=1, frames=60)]
    assert main(["compare", "--text", *map(str, paths)]) == 0
    cli = capsys.readouterr().out.splitlines()
    app = make_app(CompareLaunch(tuple(map(str, paths))))
    async with app.run_test(size=(200, 60)) as pilot:
        screen = await opened(pilot)
        assert text(screen, "#cmp-diverge") == cli[1]  # the one computation (studies/analysis/compare.py)
        assert "3 vs 1: never" not in cli[1] and "2 vs 1: never" in cli[1]  # the replay never differs from run 1
        assert "1-3 run" in text(screen, "#cmp-status")
        await pilot.press("4")  # no fourth run: refused, the focus stays
        await pilot.press("3")
        assert screen.focus_index == 2
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        help_text = app.screen.text
        assert "`3`  Run 3" in help_text and "`4`" not in help_text and "Run 4" not in help_text


@run_async
async def test_a_click_on_the_scrubber_moves_the_cursor(pair):
    a, b, _ = pair
    app = make_app(CompareLaunch((str(a), str(b))))
    async with app.run_test(size=(200, 60)) as pilot:
        screen = await opened(pilot)
        bar = screen.query_one("#cmp-scrub")
        await pilot.click("#cmp-scrub", offset=(bar.size.width // 2, 0))
        assert screen.frame == (bar.size.width // 2) * (screen.c.end + 1) // bar.size.width
        assert screen.query_one("#cmp-frame-0", FrameView).frame_index == screen.frame


@run_async
async def test_e_exports_the_runs_side_by_side(tmp_path):
    import av

    a = make_run(tmp_path, seed=0, frames=60)
    b = make_run(tmp_path, seed=1, frames=60)
    app = make_app(CompareLaunch((str(a), str(b))))
    out = a.resolve().with_name(a.resolve().name + "-compare.mp4")
    async with app.run_test(size=(200, 60)) as pilot:
        await opened(pilot)
        await pilot.press("e")
        await wait_until(pilot, lambda: any("exported" in n.message for n in app._notifications), timeout=120,
                         what="the export notice")
    with av.open(str(out)) as video:
        stream = video.streams.video[0]
        frames = sum(1 for _ in video.decode(stream))
        assert frames == 60 and stream.width > 2 * 160, "two runs side by side"
