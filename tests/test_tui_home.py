"""Home: the game list, the preview, the settings form, and starting runs from it."""

from __future__ import annotations

from argparse import Namespace

from textual.widgets import DataTable, Input

from screens.app import HelpScreen, make_app
from screens.views.home import HomeScreen
from screens.views.live import LiveScreen
from screens.widgets.frame_view import FrameView
from tests.tui_helpers import run_async, wait_until
from workstation.game.games import GAMES
from workstation.run.drive import drive
from workstation.store.index import find_recordings
from workstation.store.recording import Recording


def home_app(out):
    return make_app("home", Namespace(out=str(out), speed="instant"))


@run_async
async def test_home_lists_the_games_and_starts_a_watch(tmp_path):
    app = home_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        home = app.screen
        assert isinstance(home, HomeScreen)
        table = home.query_one("#games", DataTable)
        assert table.row_count == 21
        assert [k.value for k in table.rows] == list(GAMES)
        preview = home.query_one("#preview", FrameView)
        await wait_until(pilot, lambda: home.preview_game == "breakout", what="the breakout preview")
        assert preview.frame_index == 0
        await pilot.press("down")  # demon_attack: a new preview from a real emulator
        assert home.selected_game == "demon_attack"
        await wait_until(pilot, lambda: home.preview_game == "demon_attack", what="the demon_attack preview")
        row = home.query_one(".field-frames")
        assert not row.has_class("-changed")
        home.query_one("#p-frames", Input).value = "30"
        await pilot.pause()
        assert row.has_class("-changed")  # a setting that differs from the paper is highlighted
        assert not home.query_one(".field-history").has_class("-changed")
        await pilot.press("w")
        await wait_until(pilot, lambda: isinstance(app.screen, LiveScreen), what="the live view")
        live = app.screen
        await wait_until(pilot, lambda: live.summary is not None, what="the run to finish")
        await pilot.press("escape")  # back home; the new recording is listed
        await wait_until(pilot, lambda: app.screen is home, what="home")
        assert home.recent and home.recent[0] == live.recording_path
    rec = Recording(find_recordings(tmp_path)[0])
    assert rec.manifest_record.game == "demon_attack" and rec.manifest_record.protocol["frames"] == 30 and rec.complete


@run_async
async def test_home_reports_bad_input_as_a_notice(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    app = home_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        home = app.screen
        home.query_one("#agent", Input).value = "openai:gpt-5.1"
        await pilot.press("w")
        await wait_until(pilot, lambda: any("OPENAI_API_KEY" in n.message for n in app._notifications),
                         what="the missing-key notice")
        assert home.invalid == "agent" and home.query_one("#agent").has_class("-invalid")
        home.query_one("#agent", Input).value = "random"
        home.query_one("#p-max_actions", Input).value = "12"
        await pilot.press("escape", "w")  # the cursor was left on the marked field: esc leaves it
        await wait_until(pilot, lambda: any("max-actions" in n.message for n in app._notifications),
                         what="the bad-setting notice")
        assert app.screen is home
        assert find_recordings(tmp_path) == []  # nothing was started


@run_async
async def test_help_palette_and_play_routes(tmp_path):
    app = home_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        home = app.screen
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert app.screen is home
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"step")
        await wait_until(pilot, lambda: _palette_has_hits(app), what="palette hits")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, LiveScreen), what="the live view from the palette")
        live = app.screen
        assert live.step_mode
        await wait_until(pilot, lambda: live.phase == "prompt", what="the step-mode hold")
        await pilot.press("escape")  # a live step run: it asks first
        from screens.widgets.confirm import ConfirmScreen

        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await pilot.press("y")
        await wait_until(pilot, lambda: app.screen is home, what="home")
        await pilot.press("p")
        await pilot.pause()
        from screens.views.play import PlayScreen

        assert isinstance(app.screen, PlayScreen)


def _palette_has_hits(app) -> bool:
    from textual.command import CommandList

    try:
        return app.screen.query_one(CommandList).option_count > 0
    except Exception:  # not mounted yet
        return False


@run_async
async def test_bad_seed_in_the_form_marks_the_field_and_keeps_the_app(tmp_path):
    from textual.widgets import Static

    app = home_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        home = app.screen
        seed = home.query_one("#seed", Input)
        seed.value = "-1"
        await pilot.press("escape")  # out of the field: w starts again
        await pilot.press("w")
        await pilot.pause()
        assert app.screen is home and app.is_running
        assert home.invalid == "seed" and seed.has_class("-invalid") and seed.parent.has_class("-invalid")
        error = home.query_one("#form-error", Static)
        assert error.display and "--seed must be 0..4294967295" in str(error.render())
        assert app.focused is seed  # the cursor is on the field at fault
        seed.value = "3"  # typing clears the mark
        await pilot.pause()
        assert not seed.has_class("-invalid") and not error.display
        out_file = tmp_path / "file"
        out_file.write_text("x")
        home.query_one("#out", Input).value = str(out_file)
        home.query_one("#p-start", Input).value = "noops:99999"
        await pilot.press("escape", "w")
        await pilot.pause()
        assert home.invalid == "start" and home.query_one("#p-start").has_class("-invalid")
        home.query_one("#p-start", Input).value = "fixed"
        await pilot.press("escape", "p")
        await pilot.pause()
        assert home.invalid == "out" and "is a file" in str(error.render()) and app.screen is home
        home.query_one("#out", Input).value = str(tmp_path / "rec")
        home.query_one("#m-timeout", Input).value = "5"  # a model option with the random agent
        await pilot.press("escape", "w")
        await pilot.pause()
        assert home.invalid == "timeout" and "--timeout applies to model agents" in str(error.render())
        home.query_one("#agent", Input).value = "compat:m"
        home.query_one("#m-timeout", Input).value = "-2"
        await pilot.press("escape", "w")
        await pilot.pause()
        assert home.invalid == "timeout" and "--timeout must be more than 0" in str(error.render())
        home.query_one("#m-timeout", Input).value = ""
        await pilot.press("escape", "w")
        await pilot.pause()
        assert home.invalid == "base_url" and "needs --base-url" in str(error.render())
        assert app.screen is home
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]  # nothing was started


@run_async
async def test_home_keys_enter_tab_and_escape(tmp_path):
    app = home_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        home = app.screen
        table = home.query_one("#games", DataTable)
        assert app.focused is table
        await pilot.press("tab")
        assert app.focused is home.query_one("#seed")  # not the settings box
        await pilot.press("escape")  # Esc leaves a form field
        assert app.focused is table
        await pilot.press("down", "enter")  # Enter picks the game and goes on to its settings
        assert home.selected_game == "demon_attack" and app.focused is home.query_one("#seed")
        assert "demon_attack" in str(home.query_one("#settings-col").border_title)
        for _ in range(40):  # the recordings list is on the Tab path
            await pilot.press("tab")
            if app.focused is home.query_one("#recent"):
                break
        assert app.focused is home.query_one("#recent")


def test_the_recordings_list_flags_a_forged_score(tmp_path):
    import json

    from screens.views.home import recent_label
    from workstation.game.protocol import Protocol
    from workstation.run.start import RunSpec, start_run

    e = start_run(RunSpec(game="breakout", out=str(tmp_path), protocol=Protocol(frames=30)), rewindable=False)
    drive(e)
    e.close()
    assert "DAMAGED" not in recent_label(e.writer.path).plain
    summary = json.loads((e.writer.path / "summary.json").read_text())
    summary["total_reward"] = 9999
    (e.writer.path / "summary.json").write_text(json.dumps(summary))
    label = recent_label(e.writer.path).plain
    assert "DAMAGED" in label and "9999" not in label.split("DAMAGED")[0]


@run_async
async def test_a_run_changed_by_hand_and_left_is_listed_and_opened_under_its_new_name(tmp_path):
    """Step mode, a plan typed by hand, then leave (yes): the folder is renamed for the changed run's id as the run
    ends, after home has come back; home lists the folder as it is now and `o` opens it."""
    from screens.views.replay_view import ReplayScreen
    from screens.widgets.confirm import ConfirmScreen
    from tests.test_tui_step_override import keys_for

    app = home_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        home = app.screen
        home.query_one("#p-frames", Input).value = "120"
        await pilot.press("s")
        await wait_until(pilot, lambda: isinstance(app.screen, LiveScreen), what="the live view")
        live = app.screen
        await wait_until(pilot, lambda: live.phase == "prompt", what="the hold before the first prompt")
        first = live.recording_path
        await pilot.press("g")
        await wait_until(pilot, lambda: live.phase == "plan", what="the reply")
        await pilot.press("t")
        await wait_until(pilot, lambda: live.phase == "prompt" and live.last_turn == 1, what="the second prompt")
        await pilot.press("o", *keys_for("fire, right, right"), "enter")
        await pilot.press("escape", "t")
        await wait_until(pilot, lambda: live.driver.engine.changes, what="the plan typed by hand")
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await pilot.press("y")
        await wait_until(pilot, lambda: app.screen is home, what="home")
        await wait_until(pilot, lambda: home.recent and home.recent[0].is_dir(), what="the list to show the folder")
        assert not first.exists() and home.recent[0] != first  # renamed for the changed run's own id
        assert "changed by hand" in str(home.query_one("#recent").get_option_at_index(0).prompt)
        assert "stopped" in str(home.query_one("#recent").get_option_at_index(0).prompt)  # as `ls` says it
        await pilot.press("o")
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen), what="the recording to open")
        assert app.screen.rec.path == home.recent[0]
        assert "STOPPED" in str(app.screen.query_one("#title").render())  # the same word there too


@run_async
async def test_marks_for_compare_stay_on_their_recordings_when_the_list_is_read_again(tmp_path):
    from tests.tui_helpers import record

    a, b = record(tmp_path, frames=15), record(tmp_path, frames=15)
    app = home_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        home = app.screen
        box = home.query_one("#recent")
        await wait_until(pilot, lambda: len(home.recent) == 2, what="the two recordings")
        await pilot.press("m")
        marked = home.recent[0]
        box.highlighted = 1
        home.refresh_recent()  # as on coming back to home, or when a run closes
        await pilot.pause()
        assert home.marked_for_compare == [marked] and box.highlighted == 1
        shown = [str(box.get_option_at_index(i).prompt) for i in range(2)]
        assert shown[home.recent.index(marked)].startswith("✓ ") and not shown[1 - home.recent.index(marked)].startswith("✓")
        assert {a.path, b.path} == set(home.recent)
