"""The round driver: play K episodes a round through the batch runner, reflect, roll back, transfer.

``Idc(config).run()`` plays round 0 with no skill, then for each later round
the skill the reflector wrote after the one before (or, after a round scoring
below half the best, the best skill m*). Every round is a batch directory
``DIR/round_R/`` (recordings under ``runs/``, named by run id, the skill in the
run spec). Each step done (a round played, a reflection, a transfer) is a line of
the IDC's ledger ``DIR/rounds.jsonl`` (``store/ledger.Ledger``), and ``DIR/curve.json``
is rewritten from it after every step, so a killed IDC resumes where it stopped: a
round in the ledger is never played again, and a round under way resumes at its
first episode that has no complete recording (the batch runner's resume).
"""

from __future__ import annotations

import fcntl
import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from workstation.base.errors import UserError
from workstation.engine.calls import CancelToken
from workstation.run.options import SKILL_MAX_CHARS, RunSpec
from workstation.store.ledger import Ledger
from workstation.studies.idc import curve as C
from workstation.studies.idc.reflector import Reflection, make_validator, reflect
from workstation.studies.idc.starts import episode_seeds, random_scores
from workstation.studies.idc.tools import Workbench

if TYPE_CHECKING:
    from workstation.studies.batch.runner import Batch

MAX_ROUNDS = 20
MAX_EPISODES = 50
MAX_CONCURRENCY = 256  # episodes at once (the bound of every --concurrency: judge, qa eval)
MAX_TOOL_CALLS = 500
LOCK = ".idc.lock"
# what marks a directory as another artifact (an IDC, anything sealed, a recording, a batch, a QA set): an IDC's
# --out is never inside one, at any depth. A grid.toml or a results.csv alone marks nothing (a working directory
# may hold them).
ARTIFACT_MARKS = ((C.CURVE,), ("seal.json",), ("manifest.json",), ("placement.jsonl",), ("results.csv", "runs"),
                  ("set.json", "questions.jsonl"))


def artifact_mark(directory: Path) -> str | None:
    """What in ``directory`` marks it as an artifact (``"results.csv and runs"``), or None."""
    for names in ARTIFACT_MARKS:
        if all((directory / n).exists() for n in names):
            return " and ".join(names)
    return None


@dataclass
class IdcConfig:
    base: RunSpec  # the player's run spec (protocol, generation, transport); seed, out and skill set per episode
    reflector: str
    out: Path
    rounds: int = 3
    episodes: int = 5
    validator: str | None = None
    concurrency: int = 8
    max_cost: float | None = None
    tool_calls: int = 30
    transfer: list[tuple[int | None, int | None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not 1 <= self.rounds <= MAX_ROUNDS:
            raise UserError(f"--rounds must be 1..{MAX_ROUNDS} (got {self.rounds}): the rounds after round 0")
        if not 1 <= self.episodes <= MAX_EPISODES:
            raise UserError(f"--episodes must be 1..{MAX_EPISODES} (got {self.episodes}): episodes per round")
        if not 1 <= self.concurrency <= MAX_CONCURRENCY:
            raise UserError(f"--concurrency must be 1..{MAX_CONCURRENCY} (got {self.concurrency}): episodes at once")
        if not 1 <= self.tool_calls <= MAX_TOOL_CALLS:
            raise UserError(f"--tool-calls must be 1..{MAX_TOOL_CALLS} (got {self.tool_calls}): the reflector's "
                            "budget a round")
        if self.max_cost is not None and not (self.max_cost > 0 and math.isfinite(self.max_cost)):
            raise UserError(f"--max-cost must be a finite number of dollars above 0 (got {self.max_cost:g})")
        self.out = Path(self.out)
        self._check_seeds()

    def _check_seeds(self) -> None:
        """Every seed the IDC will play (each round's episodes, the transfers' share round 0's) is a run seed,
        checked before anything is written or paid."""
        from workstation.game.seed import SEED_MAX

        count = (self.rounds + 1) * self.episodes
        if self.base.seed + count - 1 > SEED_MAX:  # episode_seeds never goes below seed + count - 1
            last = self.base.seed + count - 1
        else:
            last = max(episode_seeds(self.base.seed, self.base.protocol.start, count))
        if last > SEED_MAX:
            raise UserError(f"--seed {self.base.seed}: {self.rounds + 1} rounds of {self.episodes} episodes play "
                            f"seeds up to {last}, past {SEED_MAX}; every seed must be 0..{SEED_MAX} (choose a "
                            "smaller --seed)", "seed")

    def identity(self) -> dict[str, Any]:
        """What a resumed IDC must share with the one that made DIR."""
        b = self.base
        return {"game": b.game, "player": b.agent, "reflector": self.reflector, "validator": self.validator,
                "episodes": self.episodes, "seed": b.seed, "protocol": b.protocol.to_json(), "prompts": b.prompts,
                "generation": b.to_json()["generation"]}


class Idc:
    def __init__(self, config: IdcConfig, log: Callable[[str], None] = print,
                 make_agent: Callable[[str], Any] | None = None) -> None:
        self.cfg = config
        self.out = config.out
        self.log = log
        self._make_agent = make_agent
        self.batch: Batch | None = None  # the batch under way (a signal handler stops it)
        self.stopping: str | None = None
        self.cancel = CancelToken()  # ends a reflection's call under way when the IDC is stopped
        self._lock_fd: int | None = None
        self.curve: dict[str, Any] = {"rounds": []}
        self.book: Ledger[C.Step] | None = None  # DIR/rounds.jsonl: each step done, what a resume reads back
        self._pins: dict[str, str] = {}  # episodes of a curve from before pins, verified now: path -> summary digest

    # -- the whole run ---------------------------------------------------------
    def run(self) -> int:
        self._check_out()
        self._check_curve(self._state())  # a damaged or foreign curve or ledger is refused before anything is written
        self.out.mkdir(parents=True, exist_ok=True)
        self._lock()
        try:
            return self._run()
        finally:
            if self._lock_fd is not None:
                os.close(self._lock_fd)

    def request_stop(self, reason: str) -> None:
        self.stopping = reason
        self.cancel.cancel(f"the IDC stopped ({reason})")
        if self.batch is not None:
            self.batch.request_stop(reason)

    def _check_out(self) -> None:
        """Refuse a directory that holds something other than an IDC (a batch, recordings, notes): the
        IDC would write its rounds among them; and one inside another artifact or the prompt pack, at any
        depth (an IDC never writes inside an input)."""
        here = self.out.expanduser().resolve()
        for above in here.parents:
            mark = artifact_mark(above)
            if mark is not None:
                raise UserError(f"--out {self.out} is inside {above} (it holds {mark}); an IDC is never written "
                                "inside another artifact: choose a directory outside it", "out")
        pack = self.cfg.base.prompts
        if pack is not None:
            root = Path(pack).expanduser().resolve()
            if here == root or root in here.parents:
                raise UserError(f"--out {self.out} is inside --prompts {pack}, an input; choose a directory "
                                "outside it", "out")
        if not self.out.is_dir() or (self.out / C.CURVE).exists():
            return
        other = sorted(p.name + ("/" if p.is_dir() else "") for p in self.out.iterdir() if not p.name.startswith("."))
        if other:
            shown = ", ".join(other[:3]) + (", ..." if len(other) > 3 else "")
            raise UserError(f"--out {self.out} holds {shown} and no IDC (curve.json); choose a new or empty "
                            "directory")

    def _lock(self) -> None:
        fd = os.open(self.out / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise UserError(f"another IDC is running in {self.out}; wait for it or choose another --out") from None
        self._lock_fd = fd

    def _check_curve(self, curve: dict[str, Any] | None) -> None:
        """A curve there must be this IDC's (the same identity), and each of its episodes sound."""
        if curve is None:
            return
        ident = self.cfg.identity()
        old = curve.get("identity") or {}
        if old != ident:
            # a key only the recorded identity has (an IDC of another version) is a difference too
            diff = next(k for k in [*ident, *old] if old.get(k) != ident.get(k))
            raise UserError(f"{self.out} holds an IDC with another {diff} ({old.get(diff)!r}, not "
                            f"{ident.get(diff)!r}); resume it with its own settings or choose another --out")
        typed = C.Curve.from_json(curve, str(self.out / C.CURVE))
        for r in typed.rounds:
            self._check_episodes(f"round {r.round}", [e.recording for e in r.episodes])
            self._check_pins(f"round {r.round}", r.episodes)

    def _state(self) -> dict[str, Any] | None:
        """DIR/curve.json (checked), its rounds and transfers as DIR/rounds.jsonl's steps made them (a curve from
        before the ledger: as it holds them); None for a new IDC."""
        curve = C.load(self.out)
        if curve is not None and (self.out / C.STEPS).exists():
            from workstation.base.errors import DamagedArtifact
            from workstation.store.records import RecordFileError

            try:
                C.apply_steps(curve, C.steps(self.out).records)
                C.Curve.from_json(curve, str(self.out / C.STEPS))
            except RecordFileError as e:
                raise DamagedArtifact(f"the IDC {self.out} is damaged: {e}; it is left as it is", file=self.out) \
                    from None
        return curve

    def _record(self, step: C.Step) -> None:
        """One step done, into the ledger (before curve.json is rewritten from it)."""
        assert self.book is not None
        self.book.append(step, step.to_json())

    def _path(self, p: str) -> Path:
        return Path(p) if Path(p).is_absolute() else self.out / p

    def _check_pins(self, what: str, episodes: tuple[C.Episode, ...]) -> None:
        """An episode in the curve is the recording that was verified when it was counted: its summary.json
        (which holds every file's digest) is the one pinned then, so a recording changed since, even with its
        digests redone, is named (exit 1). A curve from before pins: the recorded score must be the summary's."""
        from workstation.base.errors import DamagedArtifact
        from workstation.store.integrity import sha256_of
        from workstation.store.recording import Recording

        for e in episodes:
            if e.recording is None:
                continue
            path = self._path(e.recording)
            if e.summary_sha256 is not None:
                if sha256_of(path / "summary.json") == e.summary_sha256:
                    continue
                why = "its summary.json is not the one verified when the episode was counted"
            else:
                s = Recording(path).summary_record
                total = None if s is None else s.total_reward
                if total is None or e.score is None or float(total) == float(e.score):
                    if str(path) not in self._pins:  # counted before pins: re-executed once, pinned from now on
                        self._pins.update(self._verify_episodes(what, [str(path)]))
                    continue
                why = f"it scores {total:g}, the curve counted {e.score:g}"
            raise DamagedArtifact(f"{what}: an episode is damaged ({why}: {path}); move it out of {self.out} and "
                                  "run the same command to play it again", file=path)

    def _verify_episodes(self, what: str, paths: list[str]) -> dict[str, str]:
        """Re-execute every episode about to be counted (``workstation verify``: the emulator replays its plans
        and every frame, reward and the total must agree); a changed one is named (exit 1) and never counted.
        Each sound episode's summary.json digest, by path, to pin it in the curve."""
        from workstation.base.errors import DamagedArtifact
        from workstation.run.verify import verify
        from workstation.store.integrity import sha256_of
        from workstation.store.recording import Recording

        self._check_episodes(what, list(paths))
        pins = {}
        for p in paths:
            rec = Recording(Path(p))
            try:
                result = verify(rec)
            except UserError as e:  # a record that does not read: damage
                raise DamagedArtifact(f"{what}: an episode is damaged ({e}); its score is not counted: move {p} out "
                                      f"of {self.out} and run the same command to play it again", file=p) from None
            finally:
                rec.close()
            if not result.ok:
                frame = "" if result.first_mismatch is None else f"frame {result.first_mismatch} differs; "
                raise DamagedArtifact(f"{what}: an episode does not re-execute as recorded ({frame}"
                                      f"{result.detail or 'see workstation verify'}); its score is not counted: "
                                      f"move {p} out of {self.out} and run the same command to play it again",
                                      file=p)
            pins[p] = sha256_of(Path(p) / "summary.json")
        return pins

    def _check_episodes(self, what: str, paths: list[str | None]) -> None:
        """Every episode's recording passes the fast integrity check; a damaged one is named (exit 1), and its
        score never reaches the curve."""
        from workstation.base.errors import DamagedArtifact
        from workstation.store.recording import Recording
        from workstation.store.records import RecordingError

        for p in paths:
            if p is None:
                continue
            path = self._path(p)
            try:
                why = Recording(path).damage()
            except RecordingError as e:
                why = str(e)
            if why:
                raise DamagedArtifact(f"{what}: an episode is damaged ({why}); its score is not counted: move "
                                      f"{path} out of {self.out} and run the same command to play it again",
                                      file=path)

    def _start_curve(self) -> dict[str, Any]:
        cfg = self.cfg
        curve = self._state()
        self._check_curve(curve)
        ident = cfg.identity()
        if curve is None:
            curve = {"game": cfg.base.game, "player": cfg.base.agent, "reflector": cfg.reflector,
                     "validator": cfg.validator, "identity": ident, "rounds": [], "best_round": None,
                     "transfer": []}
        curve["rounds_planned"] = cfg.rounds
        for r in curve["rounds"]:  # a curve from before pins: its episodes, verified by _check_curve, pinned
            for e in r.get("episodes") or []:
                if e.get("summary_sha256") is None and e.get("recording"):
                    pin = self._pins.get(str(self._path(e["recording"])))
                    if pin is not None:
                        e["summary_sha256"] = pin
        seeds = episode_seeds(cfg.base.seed, cfg.base.protocol.start, (cfg.rounds + 1) * cfg.episodes)
        curve["seeds"] = [seeds[r * cfg.episodes:(r + 1) * cfg.episodes] for r in range(cfg.rounds + 1)]
        if curve.get("random_mean") is None:
            scores = random_scores(cfg.base, curve["seeds"][0])
            curve["random_mean"], curve["random_scores"] = C.mean_se(scores)[0], scores
        return curve

    def _run(self) -> int:
        cfg = self.cfg
        curve = self.curve = self._start_curve()
        self.book = C.steps(self.out)
        if not self.book.records:  # a new IDC, or a curve from before the ledger: its steps start the ledger
            C.save(self.out, curve)  # the curve as it starts (pinned), sealed: what the ledger is made from
            C.start_ledger(self.out)  # whole, in one rename; a kill before the next seal leaves it readable
            self.book = C.steps(self.out)
        C.save(self.out, curve)  # sealed with its ledger: every step is appended past what is sealed
        current: str | None = None  # the skill the next round plays
        current_from: int | None = None  # the round that first played it
        best: dict[str, Any] = {"round": None, "normalised": None, "skill": None, "skill_round": None}
        for r in range(cfg.rounds + 1):
            entry = curve["rounds"][r] if r < len(curve["rounds"]) else None
            if entry is None or entry.get("score_mean") is None:
                entry = self._play_round(curve, r, current, current_from)
                if entry is None:
                    return 1
                self._record(C.Step("round", dict(entry)))
            rolled, best_round = C.rollbacks([e["normalised"] for e in curve["rounds"][:r + 1]])
            entry["rolled_back"] = rolled[r]
            if best_round != best["round"]:
                b = curve["rounds"][best_round]
                best.update(round=best_round, normalised=b["normalised"], skill=b["skill"],
                            skill_round=b["skill_round"])
            curve["best_round"] = best["round"]
            curve["best_vs_final"] = C.best_vs_final(curve)
            C.save(self.out, curve)
            if r == cfg.rounds:
                break
            if "reflection" not in entry:
                if self._spent(curve) is None or not self._reflect(curve, entry, current, best):
                    return 1
                self._record(C.reflected_step(entry))
                C.save(self.out, curve)
            if entry["rolled_back"]:
                current, current_from = best["skill"], best["skill_round"]
            elif entry["reflection"].get("status") == "submitted":
                current, current_from = entry["next_skill"], r + 1
        code = self._transfers(curve, best)
        C.save(self.out, curve)
        self.log(C.table_text(curve))
        return code

    def _typed(self, curve: dict[str, Any]) -> C.Curve:
        """The curve as the checked reader types it (what the driver reads back of what it wrote)."""
        return C.Curve.from_json(curve, str(self.out / C.CURVE))

    # -- money -----------------------------------------------------------------------
    def _spent(self, curve: dict[str, Any]) -> float | None:
        """Dollars spent so far (every step's cost in the ledger); None (and a line saying so) once --max-cost is
        reached."""
        if self.book is None:  # not started: nothing spent (a curve's steps are in the ledger once it starts)
            return 0.0
        total = self.book.spent
        if self.book.over_cap(self.cfg.max_cost):
            self.log(f"stopped: the IDC spent ${total:.4f} of --max-cost ${self.cfg.max_cost:g}; "
                     "raise it and run the same command to go on")
            return None
        return total

    # -- playing -------------------------------------------------------------------------
    def _batch(self, name: str, arms: list[tuple[str, RunSpec, list[int]]]) -> list[dict[str, Any]] | None:
        """Play ``arms`` (label, spec, seeds) as one batch in DIR/name; the rows, or None if it did not finish."""
        from workstation.studies.batch import results
        from workstation.studies.batch.grid import Grid, GridCell, GridSetting
        from workstation.studies.batch.progress import PlainLog
        from workstation.studies.batch.runner import Batch

        spent = self._spent(self.curve)
        if spent is None:
            return None
        if self.stopping:
            self.log(f"stopped before {name} ({self.stopping}); run the same command to resume")
            return None
        root = self.out / name
        cells = []
        for label, spec, seeds in arms:
            for s in seeds:
                ep = replace(spec, seed=s, out=str(results.runs_dir(root)))
                cells.append(GridCell(label, label, ep.game, s, ep.agent, {}, {}, {}, {}, ep))
        all_seeds = sorted({c.seed for c in cells})
        grid = Grid(name.replace("/", "-"), [self.cfg.base.game], all_seeds,
                    [GridSetting(label, spec.agent, {}) for label, spec, _ in arms], {}, {}, cells,
                    source=str(root / "idc"))
        cap = None if self.cfg.max_cost is None else self.cfg.max_cost - spent
        batch = Batch(grid, root, concurrency=self.cfg.concurrency, max_cost=cap)
        self.batch = batch
        batch.prepare()
        for path, why in batch.damaged:  # an episode edited since it was written: kept whole, never counted
            self.log(f"set aside a damaged episode {path}: {why}; kept under {root}/runs/.damaged/, the episode is "
                     "played again")
        if self.stopping:
            batch.request_stop(self.stopping)
        log = PlainLog(cast(TextIO, _Lines(self.log)), every_s=5.0)
        code = batch.run(tick=log.tick)
        self.batch = None
        rows = results.collect(root, batch.cells)
        if code != 0:
            bad = [r for r in rows if not r.get("complete")]
            why = (bad[0].get("stopped") if bad else None) or self.stopping or "a run did not finish"
            self.log(f"stopped in {name}: {len(rows) - len(bad)} of {len(batch.cells)} episodes complete ({why}); "
                     "run the same command to resume")
            return None
        return rows

    def _play_round(self, curve: dict[str, Any], r: int, skill: str | None, skill_round: int | None) -> dict[str, Any] | None:
        seeds = curve["seeds"][r]
        skill_file = None
        if skill is not None:
            skill_file = f"skills/round_{r}.md"
            C.write_file(self.out, skill_file, skill + "\n")
        spec = replace(self.cfg.base, skill=skill)
        self.log(f"round {r}: {len(seeds)} episodes, " + ("no skill" if skill is None else
                                                         f"the skill first played in round {skill_round}"))
        rows = self._batch(f"round_{r}", [("skill" if skill else "no-skill", spec, seeds)])
        if rows is None:
            return None
        pins = self._verify_episodes(f"round {r}", [str(Path(row["path"]).resolve()) for row in rows])
        scores = [float(row["score"] or 0.0) for row in rows]
        m, se = C.mean_se(scores)
        assert m is not None and se is not None  # a finished round has episodes
        entry: dict[str, Any] = {"round": r, "skill": skill, "skill_round": skill_round, "skill_file": skill_file,
                 "score_mean": m, "score_se": se, "normalised": C.normalised(m, curve["random_mean"]),
                 "episodes": [{"run_id": row["run_id"], "score": row["score"], "seed": row["seed"],
                               "recording": str(Path(row["path"]).resolve()),
                               "in_dir": os.path.relpath(row["path"], self.out), "cost_usd": row.get("cost_usd"),
                               "summary_sha256": pins[str(Path(row["path"]).resolve())]}
                              for row in rows],
                 "rolled_back": False, "diagnosis": None}
        if r < len(curve["rounds"]):
            curve["rounds"][r] = entry
        else:
            curve["rounds"].append(entry)
        self.log(f"round {r}: mean {m:.2f} (se {se:.2f}, normalised {entry['normalised']:.2f})")
        return entry

    # -- reflecting ------------------------------------------------------------------------
    def _agent(self, spec: str) -> Any:
        if self._make_agent is not None:
            return self._make_agent(spec)
        from workstation.run.providers import ProviderConfigError, make_provider_agent

        try:
            return make_provider_agent(spec, self.cfg.base.provider_options)
        except ProviderConfigError as e:
            raise UserError(str(e)) from None

    def _reflect(self, curve: dict[str, Any], entry: dict[str, Any], current: str | None, best: dict[str, Any]) -> bool:
        """Reflect on round ``entry`` (or skip it after a rollback); False when the IDC was stopped meanwhile."""
        r = entry["round"]
        if entry["rolled_back"]:
            entry["reflection"] = {"status": "skipped", "why": (
                f"round {r} scored {entry['normalised']:.2f} (normalised), below half of the best "
                f"{best['normalised']:.2f} (round {best['round']}); round {r + 1} plays the best skill "
                f"and the reflector goes on from it")}
            entry["next_skill"] = best["skill"]
            return True
        notebook = self._notebook(curve)
        bench = Workbench(self.out / f"round_{r}" / "runs", notebook=notebook, skill_max_chars=SKILL_MAX_CHARS)
        log = Reflection("no_skill", "")
        agent = self._agent(self.cfg.reflector)
        validator = self._agent(self.cfg.validator) if self.cfg.validator else None
        if validator is not None:
            from workstation.engine.promptpack import display_title

            bench.validate = make_validator(validator, display_title(self.cfg.base.game), log)
        self.log(f"round {r}: the reflector studies the round")
        try:
            spent = self._spent(curve) or 0.0
            left = None if self.cfg.max_cost is None else self.cfg.max_cost - spent
            out = reflect(agent, bench, self._brief(curve, entry, current, notebook), self.cfg.tool_calls, log,
                          cancel=self.cancel, max_cost=left)
        finally:
            for a in (agent, validator):
                if a is not None and hasattr(a, "close"):
                    a.close()
        if self.stopping:  # not a finished reflection: the next run of the command reflects again
            self.log(f"stopped during round {r}'s reflection ({self.stopping}); run the same command to resume")
            return False
        name = f"reflections/round_{r}.json"
        transcript = {"round": r, "reflector": self.cfg.reflector, "validator": self.cfg.validator,
                      **out.account(), "skill": out.skill, "diagnosis": out.diagnosis, "notebook": out.notebook,
                      "events": out.events}
        C.write_file(self.out, name, json.dumps(transcript, indent=1, default=str) + "\n")
        entry["reflection"] = {**out.account(), "transcript": name}
        entry["diagnosis"] = out.diagnosis
        entry["notebook"] = out.notebook if out.notebook_written else notebook
        entry["next_skill"] = out.skill if out.status == "submitted" else current
        self._write_notebook(curve)
        self.log(f"round {r}: reflection {out.status} ({out.why}; {out.tool_calls} tool calls, ${out.cost_usd:.4f})")
        return True

    def _notebook(self, curve: dict[str, Any]) -> str:
        for e in reversed(self._typed(curve).rounds):
            if e.notebook:
                return e.notebook
        return ""

    def _write_notebook(self, curve: dict[str, Any]) -> None:
        parts = ["# The reflector's notebook (the player never sees it)\n"]
        for e in curve["rounds"]:
            if "notebook" in e:
                parts.append(f"## After round {e['round']}\n\n{e['notebook'] or '(empty)'}\n")
        C.write_file(self.out, "notebook.md", "\n".join(parts))

    def _brief(self, curve: dict[str, Any], entry: dict[str, Any], current: str | None, notebook: str) -> str:
        from workstation.engine.promptpack import display_title, load_pack

        r = entry["round"]
        guide = load_pack(self.cfg.base.prompts).guide(self.cfg.base.game, self.cfg.base.protocol.guide)
        lines = [f"Game: {display_title(self.cfg.base.game)}. Round {r} of the player {self.cfg.base.agent} is over.",
                 "What the player is told about the game:\n" + guide.strip(),
                 f"Random play scores {curve['random_mean']:.2f} on these starts.", "Scores so far:"]
        for e in curve["rounds"]:
            lines.append(f"- round {e['round']}: mean {e['score_mean']:.2f} over {len(e['episodes'])} episodes"
                         + (" (no skill)" if e["skill"] is None else ""))
        lines.append("This round's recordings (paths for the tools; each holds manifest.json, turns.jsonl, "
                     "summary.json and its frames):")
        for ep in entry["episodes"]:
            lines.append(f"- {Path(ep['recording']).name}: score {ep['score']}, seed {ep['seed']}")
        lines.append("The skill the player had this round:\n" + (current or "(none)"))
        lines.append("Your notebook:\n" + (notebook or "(empty)"))
        return "\n".join(lines)

    # -- transfer ------------------------------------------------------------------------
    def _transfers(self, curve: dict[str, Any], best: dict[str, Any]) -> int:
        done = {(t.mode, t.difficulty) for t in self._typed(curve).transfer}
        for mode, difficulty in self.cfg.transfer:
            if (mode, difficulty) in done:
                continue
            base = replace(self.cfg.base, protocol=replace(self.cfg.base.protocol, game_mode=mode,
                                                           game_difficulty=difficulty))
            seeds = curve["seeds"][0]
            arms = [("no-skill", base, seeds)]
            if best["skill"] is not None:
                arms.append(("best-skill", replace(base, skill=best["skill"]), seeds))
            name = f"transfer/mode{mode if mode is not None else '-'}-difficulty{difficulty if difficulty is not None else '-'}"
            self.log(f"transfer mode={mode} difficulty={difficulty}: the best skill (round {best['round']}) "
                     "and no skill")
            rows = self._batch(name, arms)
            if rows is None:
                return 1
            pins = self._verify_episodes(f"transfer {name}", [str(Path(x["path"]).resolve()) for x in rows])
            by = {label: [float(x["score"] or 0.0) for x in rows if x["setting"] == label] for label, _, _ in arms}
            none_m, none_se = C.mean_se(by["no-skill"])
            best_m, best_se = C.mean_se(by.get("best-skill") or by["no-skill"])
            gain, pct = C.transfer_gain(best_m, none_m)
            curve["transfer"].append({
                "mode": mode, "difficulty": difficulty, "best_round": best["round"],
                "no_skill_mean": none_m, "no_skill_se": none_se, "best_mean": best_m, "best_se": best_se,
                "gain": gain, "gain_pct": pct, "note": None if best["skill"] else "the best round played no skill",
                "episodes": [{"arm": x["setting"], "run_id": x["run_id"], "score": x["score"], "seed": x["seed"],
                              "recording": str(Path(x["path"]).resolve()),
                              "in_dir": os.path.relpath(x["path"], self.out),
                              "summary_sha256": pins[str(Path(x["path"]).resolve())]} for x in rows],
                "cost_usd": sum(x.get("cost_usd") or 0.0 for x in rows)})
            self._record(C.Step("transfer", dict(curve["transfer"][-1])))
            C.save(self.out, curve)
        return 0


class _Lines:
    """A text stream over a log function (the batch's progress lines)."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self._log = log

    def write(self, text: str) -> None:
        for line in text.splitlines():
            if line.strip():
                self._log(line)

    def flush(self) -> None:
        pass


__all__ = ["Idc", "IdcConfig", "MAX_CONCURRENCY", "MAX_EPISODES", "MAX_ROUNDS", "MAX_TOOL_CALLS"]
