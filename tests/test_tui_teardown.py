"""Closing a screen while it is still mounting never crashes the app (issue 27: ``NoMatches: '#label' on
SelectCurrent`` under load, when the app quit while a screen with a Select was still mounting)."""

from __future__ import annotations

from textual.app import App, ComposeResult

from screens.widgets.alive import SafeSelect, leaving
from tests.tui_helpers import run_async


class OneSelect(App[None]):
    def compose(self) -> ComposeResult:
        yield SafeSelect([("a", "a"), ("b", "b")], value="a", allow_blank=False, id="s")


@run_async
async def test_a_select_whose_label_is_gone_while_it_is_removed_is_quiet():
    app = OneSelect()
    async with app.run_test() as pilot:
        select = app.query_one("#s", SafeSelect)
        label = select.query_one("#label")
        await label.remove()  # what a prune does first: the children go before their parent
        select.remove()  # the select is being removed now
        assert leaving(select)
        select.value = "b"  # Textual's Select writes into the label it no longer has: no NoMatches
        await pilot.pause()
    assert app.return_code in (None, 0)


@run_async
async def test_a_select_not_being_removed_still_raises_on_a_missing_label():
    app = OneSelect()
    failed: list[BaseException] = []
    async with app.run_test() as pilot:
        select = app.query_one("#s", SafeSelect)
        await select.query_one("#label").remove()
        try:
            select.value = "b"
        except Exception as e:  # what is asserted
            failed.append(e)
        await pilot.pause()
    assert failed and type(failed[0]).__name__ == "NoMatches"  # a real bug still shows

