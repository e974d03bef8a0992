"""Re-execute a recording's actions from its manifest and compare every frame."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workstation.game.clock import GameClock
from workstation.store.framestore import FrameStoreError
from workstation.game.games import get_game
from workstation.game.protocol import Protocol
from workstation.store.recording import Recording, RecordingError


@dataclass
class VerifyResult:
    frames_checked: int
    first_mismatch: int | None = None
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.first_mismatch is None


def verify(rec: Recording) -> VerifyResult:
    m = rec.manifest
    try:
        game = get_game(m["game"])
        protocol = Protocol.from_json(m["protocol"])
        seed = int(m["seed"])
    except (KeyError, ValueError, TypeError) as e:
        raise RecordingError(f"{rec.path}: manifest lacks what verify needs ({e}); it cannot be re-executed") from e
    frames = rec.frames
    n = len(frames)
    replayed: list[np.ndarray] = []
    clock = GameClock(game, protocol, seed, sink=lambda screen, rgb, ram: replayed.append(screen.copy()))
    checked = 0

    def check() -> VerifyResult | None:
        nonlocal checked
        while replayed:
            i = checked
            screen = replayed.pop(0)
            if i >= n:
                return None
            try:
                stored = frames.indices(i)
            except FrameStoreError as e:
                return VerifyResult(i, i, str(e))
            if not np.array_equal(screen, stored):
                diff = int(np.count_nonzero(screen != stored))
                return VerifyResult(i, i, f"frame {i} differs in {diff} pixels")
            checked += 1
        return None

    try:
        clock.start()
        bad = check()
        if bad:
            return bad
        name_to_id = {game.action_name(a): a for a in game.allowed}
        for t in rec.turns:
            for _ in range(int(t.get("noop_frames", 0))):
                if clock.done or checked >= n:
                    break
                clock.step_frame(0)
                bad = check()
                if bad:
                    return bad
            for name in t["actions"]:
                if name not in name_to_id:
                    return VerifyResult(checked, checked, f"turn {t['turn']}: action {name!r} is not allowed in {game.key}")
                for _ in range(protocol.repeat):
                    if clock.done or checked >= n:
                        break
                    clock.step_frame(name_to_id[name])
                    bad = check()
                    if bad:
                        return bad
    finally:
        clock.close()
    if checked < n:
        return VerifyResult(checked, checked, f"recording has {n} frames but its actions reproduce only {checked}")
    return VerifyResult(checked)
