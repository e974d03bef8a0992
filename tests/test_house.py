"""docs/house.md states the same layers, in the same order, as the import contract that lint-imports checks."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _contract_layers() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (house,) = [c for c in contracts if c["name"].startswith("Layers:")]
    return [" ".join(layer.split()) for layer in house["layers"]]


def _documented_layers() -> list[str]:
    text = (ROOT / "docs" / "house.md").read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^    (\w+) +(\S.*)$", section, flags=re.M)
    assert rows and rows[0] == ("layer", "packages"), "docs/house.md's layer table lost its heading row"
    return [" ".join(packages.split()) for _, packages in rows[1:]]


def test_the_docs_state_the_contract_s_layers_in_order() -> None:
    assert _documented_layers() == _contract_layers()


def test_no_layer_is_optional_and_every_package_has_one() -> None:
    layers = _contract_layers()
    assert not any("(" in layer for layer in layers)
    named = {name for layer in layers for name in re.split(r"\s*[:|]\s*", layer)}
    packages = {f"workstation.{p.stem}" for p in (ROOT / "workstation").iterdir()
                if (p.is_dir() and (p / "__init__.py").exists()) or (p.suffix == ".py" and p.stem not in
                                                                       ("__init__", "__main__"))}
    packages.add("screens")
    assert packages - named == set(), "a package of workstation/ stands in no layer of the contract"


def test_no_module_uses_an_import_path_from_before_the_folders() -> None:
    from workstation.base.moved import new_name

    old = []
    for folder in ("workstation", "screens", "tests", "bench", "atari_workstation"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == "moved.py" or path.name == "test_house.py":
                continue
            for name in re.findall(r"\bworkstation(?:\.\w+)+", path.read_text(encoding="utf-8")):
                if new_name(name) is not None:
                    old.append(f"{path.relative_to(ROOT)}: {name} (now {new_name(name)})")
    assert old == []


def test_an_old_import_path_gives_the_module_at_its_new_place() -> None:
    import importlib

    import workstation.engine.turn_engine as engine
    import workstation.studies.analysis.stats as stats

    assert importlib.import_module("workstation.turn.engine") is engine
    assert importlib.import_module("workstation.analysis.stats") is stats
    assert importlib.import_module("workstation.session_command").__name__ == "workstation.commands.session"
    assert importlib.import_module("workstation.errors").UserError is importlib.import_module(
        "workstation.base.errors").UserError
    try:
        importlib.import_module("workstation.turn.no_such_module")
    except ModuleNotFoundError:
        pass
    else:
        raise AssertionError("an old path that never existed must not import")


def test_no_module_of_the_house_imports_itself_back_through_others() -> None:
    """No import circle between the modules of workstation/ and screens/, counting every import: lazy ones inside
    functions and those under TYPE_CHECKING too (the layers contract sees only arrows between layers)."""
    import grimp

    graph = grimp.build_graph("workstation", "screens", cache_dir=None)
    modules = sorted(graph.modules)
    edges = {m: sorted(d for d in graph.find_modules_directly_imported_by(m) if d in graph.modules) for m in modules}
    state: dict[str, int] = {}  # 1: on the path, 2: done
    circles: list[list[str]] = []

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for d in edges[m]:
            if state.get(d) == 1 and m != d and not _is_package_face(d, m):
                circles.append([*path[path.index(d):], m, d] if d in path else [m, d])
            elif d not in state:
                visit(d, [*path, d])
        state[m] = 2

    for m in modules:
        if m not in state:
            visit(m, [m])
    assert circles == [], circles[:3]


def _is_package_face(importer: str, imported: str) -> bool:
    """A package's __init__ handing on a name of its own submodule (``workstation.run.agents`` re-exporting
    ``parse_agent``) is not a circle of two modules."""
    return imported.startswith(importer + ".") or importer.startswith(imported + ".")
