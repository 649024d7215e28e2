"""Shared test set-up: import stand-ins first, then CPU-only defaults."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

# Hypothesis's default deadline, 200 ms per example, fails examples that a loaded machine slows (a suite
# under pytest-xdist beside a training run took 568 ms for a first example that imports lazily and 8 ms
# for the next): a deadline that still catches an example gone slow by orders of magnitude.
settings.register_profile("infoppo", deadline=2000)
settings.load_profile("infoppo")

TESTS_DIR = Path(__file__).resolve().parent
SUPPORT_DIR = TESTS_DIR / "support"
sys.path.insert(0, str(SUPPORT_DIR))

# Before anything imports huggingface_hub, which reads its offline switch once, at import (the console
# module imports it): set later, a run of one test file went to the network, where a whole suite under
# pytest-xdist did not (its workers inherit the variables from the controller).
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

# flash-attn's CUDA kernels cannot be installed on a CPU machine; OpenRLHF imports them at module level.
# The product's import stand-in (what a CPU run installs) is registered before anything imports
# OpenRLHF.
from infoppo_cli.openrlhf_adapter.cpu import stand_ins  # noqa: E402

stand_ins.install()

# A test that sizes tables sets $COLUMNS itself. Rich fixes a console's width from $COLUMNS when the
# console is made, so the consoles are made here, without the tests' own terminal's (pytest-xdist's
# workers export 80) or a test's monkeypatched value: they follow $COLUMNS as each test sets it.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)
import infoppo_cli.cli.console  # noqa: E402, F401
from infoppo_cli.openrlhf_adapter import lifeline  # noqa: E402

# The tests stop their commands with Ctrl-C's SIGINT, as a user at a terminal does. A suite started in the
# background of a script (`make test &`) would pass SIGINT on ignored to every command a test starts.
lifeline.listen_to_sigint()


def _has_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _has_cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def local_ray():
    """An embedded local Ray on CPU whose workers get the same import stand-ins as this process."""
    import ray

    repo = str(TESTS_DIR.parent)
    python_path = os.pathsep.join(filter(None, [str(SUPPORT_DIR), repo, os.environ.get("PYTHONPATH")]))
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={
            "env_vars": {"PYTHONPATH": python_path, "RAY_USAGE_STATS_ENABLED": "0"},
            "worker_process_setup_hook": "infoppo_cli.openrlhf_adapter.cpu.stand_ins.install",
        },
    )
    yield ray
    ray.shutdown()


@pytest.fixture(scope="session")
def task_cache(request):
    """The default synthetic task (the tiny-cpu preset's) in the tests' own cache, which
    ``INFOPPO_CACHE`` points this process and its children at.

    The cache outlives the session (in pytest's cache directory, or a directory of this user's under
    the system's temporary one under ``-p no:cacheprovider``), so the build (about two minutes of CPU)
    happens once per recipe, not once per session; ``ensure_task`` rebuilds a copy that does not
    verify, and locks out a second session building the same task at the same time."""
    from infoppo_cli.tasks import ensure_task

    pytest_cache = getattr(request.config, "cache", None)
    if pytest_cache is not None:
        root = pytest_cache.mkdir("infoppo-cache")
    else:
        root = Path(tempfile.gettempdir()) / f"infoppo-test-cache-{os.getuid()}"
    saved = os.environ.get("INFOPPO_CACHE")
    os.environ["INFOPPO_CACHE"] = str(root)
    yield ensure_task()
    if saved is None:
        os.environ.pop("INFOPPO_CACHE", None)
    else:
        os.environ["INFOPPO_CACHE"] = saved


@pytest.fixture(scope="session")
def chain_task(task_cache):
    """The tiny-cpu-long preset's long-horizon task, in the same cache as ``task_cache`` (its build
    takes about 15 minutes of one CPU core, once per recipe)."""
    from infoppo_cli.tasks import ensure_task
    from infoppo_cli.tasks.recipes import task_recipe

    return ensure_task(task_recipe("chain"))


@pytest.fixture(scope="session")
def shortcut_task(task_cache):
    """The tiny-cpu-shortcut preset's task (the chain task's problems, answered long or short), in the
    same cache (its build takes about 15 minutes of one CPU core, once per recipe)."""
    from infoppo_cli.tasks import ensure_task
    from infoppo_cli.tasks.recipes import task_recipe

    return ensure_task(task_recipe("chain-shortcut"))


@pytest.fixture(scope="session")
def _session_grading_workers():
    """Hands out one set of two warm grading workers for the whole session; see
    ``shared_grading_workers``."""
    from infoppo_cli.grading.workers import Workers

    class KeptWorkers(Workers):
        def close(self) -> None:  # a GradingPool closing: the session keeps them running
            pass

        def close_for_good(self) -> None:
            super().close()

    made: list[KeptWorkers] = []

    def workers_for(count, context, initializer=None):
        if not made or not made[-1].alive:
            made.append(KeptWorkers(2, context, initializer))
        return made[-1]

    yield workers_for
    for workers in made:
        workers.close_for_good()


@pytest.fixture
def shared_grading_workers(monkeypatch, _session_grading_workers):
    """Every grading pool the test starts in this process (``infoppo eval``, ``inspect``, ``grade``
    run in-process) grades on the same two worker processes, started once per session, instead of
    starting its own (about a second each). Deadlines stay each pool's own: they go with each task."""
    from infoppo_cli.grading import pool

    monkeypatch.setattr(pool, "Workers", _session_grading_workers)
