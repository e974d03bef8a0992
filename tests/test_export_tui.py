"""The open screen's export key: `e` writes RECORDING.mp4 beside the recording and says so."""

from __future__ import annotations

from argparse import Namespace

import av

from screens.app import make_app
from screens.views.replay_view import ReplayScreen
from tests.tui_helpers import record, run_async, wait_until


@run_async
async def test_e_in_the_open_screen_exports_an_mp4_beside_the_recording(tmp_path):
    rec = record(tmp_path, frames=45)
    out = rec.path.with_name(rec.path.name + ".mp4")
    app = make_app("open", Namespace(recording=str(rec.path)))
    async with app.run_test(size=(120, 40)) as pilot:
        assert isinstance(app.screen, ReplayScreen)
        await pilot.press("e")
        await wait_until(pilot, lambda: out.exists(), timeout=120, what="the exported MP4")
        await wait_until(pilot, lambda: any("exported 45 frames" in n.message for n in app._notifications),
                         what="the notice")
    with av.open(str(out)) as c:
        assert sum(1 for _ in c.decode(video=0)) == 45
    assert not (rec.path / out.name).exists()  # the recording's own directory is left alone
