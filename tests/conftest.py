"""What the tests share: the fake provider's fixtures, registered here for every test file.

The helpers themselves live in ``tests/fake_provider.py`` (the local HTTP server that speaks
each SDK's wire format), ``tests/tui_helpers.py`` (Pilot helpers, recorded runs) and
``tests/agents_for_tests.py`` (scripted agents); test files import those by name.
"""

import os
import shutil
import tempfile

import pytest

from tests.cpu_load import cpu_load  # TUI_LOAD=N: N busy loops for the session (tests/cpu_load.py)
from tests.fake_provider import agent_cache, agents, fake, fake_server, frames, keys

__all__ = ["agent_cache", "agents", "fake", "fake_server", "frames", "keys"]
__all__ += ["cpu_load"]


# -- running in parallel (./test runs pytest-xdist with --dist loadgroup) --------------------------------------
# Each test file stays on one worker (its module fixtures are built once, its tests keep their order), and the
# two Ray files share one worker: a local ray.init() joins a cluster another worker has started
# (/tmp/ray/ray_current_cluster), so the two never run at the same time.
SHARED_WORKER = {"test_batch_ray.py": "ray", "test_batch_ray_cluster.py": "ray"}


# -- a home of the suite's own ---------------------------------------------------------------------------------------
# HOME and XDG_CACHE_HOME point into a temporary folder of this process (each xdist worker has its own) before any
# test module is imported, so nothing the suite runs (the ls index cache, a batch's stages, a library's cache) writes
# in the real home; subprocesses inherit them. Removed at the end.
_HOME: list[str] = []


def _own_home() -> None:
    home = tempfile.mkdtemp(prefix="workstation-test-home-")
    _HOME.append(home)
    os.environ["HOME"] = home
    os.environ["XDG_CACHE_HOME"] = os.path.join(home, ".cache")


def pytest_configure(config):
    config.addinivalue_line("markers", "xdist_group(name): tests of one group run on one xdist worker")
    _own_home()


def pytest_unconfigure(config):
    for home in _HOME:
        shutil.rmtree(home, ignore_errors=True)


# The files that take longest (pytest --durations), started first so that the workers end close together
# rather than one finishing a long file alone. Only the order changes; a file missing here just runs later.
LONGEST_FIRST = ["test_batch_ray_cluster.py", "test_batch_ray.py", "test_qa_gen.py", "test_batch.py",
                 "test_bad_input_corpus.py", "test_idc.py", "test_tui_home.py", "test_judge.py",
                 "test_batch_envpool.py", "test_export.py", "test_session.py", "test_batch_screen.py",
                 "test_tui_open.py", "test_batch_model_procs.py", "test_providers_cli.py", "test_tui_step_marks.py"]


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: each file keeps its own order
    for item in items:
        name = item.path.name
        item.add_marker(pytest.mark.xdist_group(SHARED_WORKER.get(name, name)))
