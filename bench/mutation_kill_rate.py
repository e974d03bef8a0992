"""Mutation testing of the code that computes what reports print: one-line mutations, each module's own tests.

    python bench/mutation_kill_rate.py                       # every module below
    python bench/mutation_kill_rate.py studies/analysis/stats.py     # the modules whose path contains this text
    python bench/mutation_kill_rate.py --list                # the mutations only, nothing run

For each module, a small AST mutator makes every one-line mutation of one kind at a time: an arithmetic
operator swapped (``+``/``-``, ``*``/``/``, ``//``, ``%``, ``**``), a comparison moved by one (``<``/``<=``,
``>``/``>=``, ``==``/``!=``, ``in``/``not in``, ``is``/``is not``), ``and``/``or`` swapped, a ``not`` dropped, a
number moved by one (``n`` -> ``n + 1``), ``True``/``False`` swapped, ``min``/``max`` swapped, ``sum(x)`` ->
``max(x)``, ``abs(x)`` -> ``x``, ``+=``/``-=`` swapped. Strings are never mutated (messages, keys). The
mutated module (``ast.unparse`` of the changed tree) replaces the module in a scratch copy of the tree (the
working tree is never written), and the module's tests run there in one process, stopping at the first
failure (``pytest -x -n 0``). A mutant is killed when they fail (or time out), survives when they pass. The
script prints the kill rate per module and every survivor (file:line, the mutation).

Why a small mutator rather than mutmut: mutmut 3 copies the tree into ``mutants/``, first runs the whole
suite to map tests to lines (1,900 tests, minutes on this machine) and drives pytest through its own
trampoline; here each module has a handful of test files that state its rules, so running just those is
cheaper and needs no new dependency. Not part of ``./test``: it runs the tests once per mutant.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Target:
    path: str  # under workstation/
    tests: tuple[str, ...]  # test files, under tests/
    functions: tuple[str, ...] = ()  # only these functions (and methods); all of the module when empty
    select: str = ""  # pytest -k: the tests that state this module's rules (a survivor is then a lower bound)


# test_arena.py's tests of the ratings and the report's figures (no match played)
ARENA_RULES = ("ln3 or chain or score_equations or cycle or bootstrap or wins_matrix or win_rates or strengths or "
               "non_transitive or share_is or co_op_team or report_figures or equal_strengths or shades or team_means "
               "or only_damaged or stopped_match or malformed")
# test_idc.py's tests of the curve's rules and its table (no round played)
IDC_RULES = ("rollback_rule or transfer_gain_and or report_shows or rollbacks_are or small_rules or "
             "rolled_back_round_below or reflection_note or mean_se_is or ledger_steps")

TARGETS = (
    Target("studies/analysis/stats.py", ("test_analysis_stats.py",)),
    Target("studies/analysis/report.py", ("test_report_sources.py", "test_analysis_stats.py"),
           ("build", "human_normalised", "varied_baseline", "_sep_json")),
    Target("studies/judge/stats.py", ("test_judge_stats.py",)),
    Target("studies/judge/requery.py", ("test_judge_stats.py",), ("tally",)),
    Target("studies/judge/overreliance.py", ("test_judge_stats.py",)),
    Target("studies/idc/curve.py", ("test_idc.py",), ("mean_se", "normalised", "rolls_back", "rollbacks", "transfer_gain",
                                                     "best_vs_final", "cost_usd", "apply_steps", "table_text"),
           select=IDC_RULES),  # idc's curve and report
    Target("studies/arena/ratings.py", ("test_arena.py",), select=ARENA_RULES),
    Target("studies/arena/report.py", ("test_arena.py",), ("arena_report", "team_score", "_team", "render_report"),
           select=ARENA_RULES),  # arena --report
    Target("studies/qa/evaluate.py", ("test_qa_summary.py",),  # qa eval's summary, qa table, verify's check
           ("summarise", "_share", "_group", "wilson", "table", "share", "summary_problem", "off")),
    Target("studies/batch/estimate.py", ("test_batch_estimate.py",)),
    Target("studies/batch/plan.py", ("test_batch_estimate.py",), ("_k", "plan_text")),  # batch --dry-run
    Target("engine/accounting.py", ("test_accounting.py",)),
    Target("store/changes.py", ("test_changes_rules.py", "test_changed_by_hand.py")),
)

BINOPS: dict[type, type] = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
                            ast.FloorDiv: ast.Div, ast.Mod: ast.Mult, ast.Pow: ast.Mult}
CMPOPS: dict[type, type] = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
                            ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot,
                            ast.IsNot: ast.Is}
SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
          ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.In: "in",
          ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not", ast.And: "and", ast.Or: "or"}
CALLS = {"min": "max", "max": "min", "sum": "max"}


@dataclass(frozen=True)
class Mutant:
    index: int  # the site's number in walk order
    line: int
    what: str  # the mutation, in words


def _skipped(tree: ast.AST) -> set[int]:
    """Nodes never mutated: docstrings, ``__all__``, type annotations, f-string format specs."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            out.update(id(n) for n in ast.walk(node.format_spec))
        for ann in ("annotation", "returns"):
            sub = getattr(node, ann, None)
            if isinstance(sub, ast.AST):
                out.update(id(n) for n in ast.walk(sub))
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            out.update(id(n) for n in ast.walk(node))
    return out


def _scopes(tree: ast.AST, functions: tuple[str, ...]) -> set[int] | None:
    """The ids of the nodes inside the named functions (None: every node)."""
    if not functions:
        return None
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in functions:
            inside.update(id(n) for n in ast.walk(node))
    return inside


def sites(tree: ast.AST, functions: tuple[str, ...] = ()) -> Iterator[tuple[ast.AST, str, int]]:
    """(node, the mutation in words, variant) for every mutation of ``tree``, in walk order."""
    skip, scope = _skipped(tree), _scopes(tree, functions)
    for node in ast.walk(tree):
        if id(node) in skip or (scope is not None and id(node) not in scope):
            continue
        if isinstance(node, ast.BinOp) and type(node.op) in BINOPS:
            yield node, f"{SYMBOL[type(node.op)]} -> {SYMBOL[BINOPS[type(node.op)]]}", 0
        elif isinstance(node, ast.AugAssign) and type(node.op) in (ast.Add, ast.Sub):
            yield node, f"{SYMBOL[type(node.op)]}= -> {SYMBOL[BINOPS[type(node.op)]]}=", 0
        elif isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in CMPOPS:
                    yield node, f"{SYMBOL[type(op)]} -> {SYMBOL[CMPOPS[type(op)]]}", i
        elif isinstance(node, ast.BoolOp):
            yield node, f"{SYMBOL[type(node.op)]} -> {'or' if isinstance(node.op, ast.And) else 'and'}", 0
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield node, "not x -> x", 0
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            yield node, f"{node.value} -> {not node.value}", 0
        elif isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
            yield node, f"{node.value!r} -> {node.value + 1!r}", 0
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in CALLS:
                yield node, f"{node.func.id}(...) -> {CALLS[node.func.id]}(...)", 0
            elif node.func.id == "abs" and len(node.args) == 1:
                yield node, "abs(x) -> x", 0


class _Apply(ast.NodeTransformer):
    def __init__(self, target: int, variant: int, functions: tuple[str, ...]) -> None:
        self.target, self.variant, self.functions = target, variant, functions

    def run(self, tree: ast.AST) -> ast.AST:
        for n, (node, _, variant) in enumerate(sites(tree, self.functions)):
            if n == self.target:
                return self._mutate(tree, node, variant)
        raise IndexError(self.target)

    @staticmethod
    def _mutate(tree: ast.AST, node: ast.AST, variant: int) -> ast.AST:
        if isinstance(node, ast.BinOp | ast.AugAssign):
            node.op = BINOPS[type(node.op)]()
        elif isinstance(node, ast.Compare):
            node.ops[variant] = CMPOPS[type(node.ops[variant])]()
        elif isinstance(node, ast.BoolOp):
            node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        elif isinstance(node, ast.UnaryOp):
            return _replace(tree, node, node.operand)
        elif isinstance(node, ast.Constant):
            node.value = (not node.value) if isinstance(node.value, bool) else node.value + 1
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "abs":
                return _replace(tree, node, node.args[0])
            node.func.id = CALLS[node.func.id]
        return tree


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> ast.AST:
    for parent in ast.walk(tree):
        for name, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, name, new)
                return tree
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if item is old:
                        value[i] = new
                        return tree
    raise LookupError("node not found")


def mutants(source: str, functions: tuple[str, ...] = ()) -> list[Mutant]:
    tree = ast.parse(source)
    return [Mutant(i, getattr(node, "lineno", 0), what) for i, (node, what, _) in enumerate(sites(tree, functions))]


def mutated(source: str, m: Mutant, functions: tuple[str, ...] = ()) -> str:
    tree = _Apply(m.index, 0, functions).run(ast.parse(source))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


# -- running -----------------------------------------------------------------------------------------------
def scratch_copy() -> Path:
    """A copy of what the tests need (code, tests, prompts, sample recordings, pyproject): mutants land here."""
    dest = Path(tempfile.mkdtemp(prefix="mutants-"))
    for name in ("workstation", "screens", "tests", "prompts", "recordings/sample", "recordings/qa-sample", "docs"):
        if (ROOT / name).exists():
            shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    for name in ("pyproject.toml",):
        shutil.copy2(ROOT / name, dest / name)
    return dest


def run_tests(tree: Path, tests: tuple[str, ...], timeout: float, select: str = "") -> tuple[bool, float]:
    """(passed, seconds) of the tests, in one process, stopping at the first failure."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:cacheprovider",
           *(["-k", select] if select else []), *[f"tests/{t}" for t in tests]]
    t0 = time.monotonic()
    try:
        done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, time.monotonic() - t0
    return done.returncode == 0, time.monotonic() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("only", nargs="*", help="run the modules whose path contains any of these")
    ap.add_argument("--list", action="store_true", help="list the mutations, run nothing")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds a mutant's tests may take (default 300)")
    a = ap.parse_args(argv)
    chosen = [t for t in TARGETS if not a.only or any(o in t.path for o in a.only)]
    if not chosen:
        print(f"no module matches {a.only}; the modules: {', '.join(t.path for t in TARGETS)}")
        return 2
    tree = None if a.list else scratch_copy()
    summary: list[tuple[str, int, int]] = []
    try:
        for t in chosen:
            source = (ROOT / "workstation" / t.path).read_text(encoding="utf-8")
            ms = mutants(source, t.functions)
            only = f" -k {t.select!r}" if t.select else ""
            print(f"\n{t.path}: {len(ms)} mutants; tests {', '.join(t.tests)}{only}", flush=True)
            if a.list:
                for m in ms:
                    print(f"  workstation/{t.path}:{m.line}: {m.what}")
                continue
            assert tree is not None
            target = tree / "workstation" / t.path
            ok, secs = run_tests(tree, t.tests, a.timeout, t.select)
            if not ok:
                print(f"  the tests fail before any mutation ({secs:.0f} s): skipped")
                continue
            print(f"  the tests pass unmutated in {secs:.1f} s", flush=True)
            survivors: list[Mutant] = []
            try:
                for m in ms:
                    target.write_text(mutated(source, m, t.functions), encoding="utf-8")
                    passed, _ = run_tests(tree, t.tests, a.timeout, t.select)
                    if passed:
                        survivors.append(m)
                        print(f"  SURVIVED workstation/{t.path}:{m.line}: {m.what}", flush=True)
            finally:
                target.write_text(source, encoding="utf-8")
            killed = len(ms) - len(survivors)
            summary.append((t.path, killed, len(ms)))
            print(f"  killed {killed} of {len(ms)} ({100 * killed / max(len(ms), 1):.0f}%)", flush=True)
    finally:
        if tree is not None:
            shutil.rmtree(tree, ignore_errors=True)
    if summary:
        print("\nkill rate per module")
        for path, killed, n in summary:
            print(f"  {path:<24} {killed:>4} / {n:<4} {100 * killed / max(n, 1):5.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
