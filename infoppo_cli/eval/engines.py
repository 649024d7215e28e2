"""Data-parallel generation: N engines as Ray actors, sharing out the missing samples.

The missing (problem, sample) pairs are cut into work units of about one backend batch each. Every
engine keeps :data:`UNITS_IN_FLIGHT` units queued, so it starts the next as soon as one is done while
the driver grades and stores the finished one (grading overlaps generation). Results come back to the
driver only, which is the single writer of ``samples.jsonl``. When an engine dies (its actor process
is killed, its node is lost) the units it held go back to the queue for the engines left; a unit's
samples are stored only once all of them are back, so nothing is lost or written twice, and because
every sample has its own seed the re-run unit draws the very same samples.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from infoppo_cli.errors import EnvironmentProblem
from infoppo_cli.eval import backends
from infoppo_cli.eval.generation import VLLM_CHUNK_PROMPTS, Completion, GenerationRequest, SamplingSettings
from infoppo_cli.openrlhf_adapter.local_ray import LocalRay

log = logging.getLogger(__name__)

UNITS_IN_FLIGHT = 2
"""Work units queued per engine: one generating, one ready to start."""


def default_engines(tensor_parallel: int, gpus: int | None = None) -> int:
    """Visible GPUs divided by the tensor-parallel size, at least 1 (one CPU engine without GPUs)."""
    if gpus is None:
        import torch  # lazy: heavy, kept off grading-only eval

        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return max(1, gpus // tensor_parallel)


def shard(requests: Sequence[GenerationRequest], unit_samples: int) -> list[list[GenerationRequest]]:
    """Cut ``requests`` into work units of at most ``unit_samples`` samples (a request's samples may be
    split across units; each keeps the run seed, so every sample's seed is unchanged)."""
    units: list[list[GenerationRequest]] = []
    current: list[GenerationRequest] = []
    room = unit_samples
    for request in requests:
        indices = list(request.sample_indices)
        while indices:
            taken, indices = indices[:room], indices[room:]
            current.append(GenerationRequest(request.key, request.prompt, tuple(taken), request.seed))
            room -= len(taken)
            if room == 0:
                units.append(current)
                current, room = [], unit_samples
    if current:
        units.append(current)
    return units


@dataclass(frozen=True)
class EngineSpec:
    """How to build one engine (what ``backends.load_backend`` takes)."""

    backend: str
    model: str
    tensor_parallel: int = 1
    seed: int = 0
    batch_size: int = 32


class GenerationEngine:
    """One backend, loaded once, behind a Ray actor (``ray.remote(GenerationEngine)``)."""

    def __init__(self, spec: EngineSpec) -> None:
        self.backend = backends.load_backend(
            spec.backend,
            spec.model,
            tensor_parallel=spec.tensor_parallel,
            seed=spec.seed,
            batch_size=spec.batch_size,
        )

    def generate(self, requests: list[GenerationRequest], sampling: SamplingSettings) -> list[Completion]:
        return [c for batch in self.backend.generate(requests, sampling) for c in batch]

    def pid(self) -> int:
        return os.getpid()


def unit_samples(spec: EngineSpec, samples: int) -> int:
    """Samples per work unit: one ``generate()`` batch for transformers, one prompt chunk for vLLM."""
    return spec.batch_size if spec.backend == "hf" else VLLM_CHUNK_PROMPTS * samples


def actor_options(spec: EngineSpec, gpus_available: bool) -> dict[str, Any]:
    """Ray resources of one engine. With GPUs, a vLLM engine asks for its whole tensor-parallel group:
    Ray then makes exactly those GPUs visible to the actor, and vLLM's own multiprocessing executor
    spreads the group over them (one node per engine, as ``vllm.LLM`` offline runs); a transformers
    engine takes one GPU. Without GPUs an engine is one CPU."""
    if not gpus_available:
        return {"num_cpus": 1, "num_gpus": 0}
    return {"num_cpus": 1, "num_gpus": spec.tensor_parallel if spec.backend == "vllm" else 1}


@contextlib.contextmanager
def engine_ray(address: str | None) -> Iterator[None]:
    """Ray for the engines while the block runs: a Ray this process already runs, as it is; else the
    cluster at ``address``; else the embedded Ray ``infoppo train`` starts (``local_ray``:
    token-authenticated, on loopback only, its session folder private and removed at the end). A Ray
    started here is shut down at the end, and meanwhile SIGTERM stops the eval as Ctrl-C does (what is
    done is kept): Ray's core otherwise answers it by aborting the process with a C++ stack dump."""
    running = "ray" in sys.modules and sys.modules["ray"].is_initialized()
    local = None
    if not running and address is None:
        local = LocalRay(run_dir=None)
        local.prepare_environment()  # before Ray is imported: it reads some of these at import
    import ray  # lazy: only for Ray engines, after prepare_environment

    on_sigterm = signal.getsignal(signal.SIGTERM)  # Ray's core replaces it with one of its own
    if not running:
        options: dict[str, Any] = {"address": address, "include_dashboard": False, "log_to_driver": False}
        if local is not None:
            options.update(local.init_options())
        ray.init(**options)
    interrupts = not running and threading.current_thread() is threading.main_thread()
    if interrupts:
        signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        if interrupts:
            signal.signal(signal.SIGTERM, on_sigterm if on_sigterm is not None else signal.SIG_DFL)
        if not running:
            ray.shutdown()
        if local is not None:
            local.close()


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def start_engines(spec: EngineSpec, count: int) -> list[Any]:
    """Start ``count`` engine actors on the running Ray (``engine_ray``)."""
    import ray  # lazy: only for Ray engines

    gpus_available = ray.cluster_resources().get("GPU", 0) > 0
    remote = ray.remote(GenerationEngine).options(**actor_options(spec, gpus_available))
    return [remote.remote(spec) for _ in range(count)]


class EnginePool:
    """Dispatches work units to engine actors and yields each unit's completions as it finishes."""

    def __init__(self, engines: Sequence[Any]) -> None:
        self.engines = list(engines)
        self.lost = 0

    def run(
        self, units: Sequence[list[GenerationRequest]], sampling: SamplingSettings
    ) -> Iterator[list[Completion]]:
        import ray  # lazy: only for Ray engines
        from ray.exceptions import RayActorError  # lazy: only for Ray engines

        queue = deque(units)
        in_flight: dict[Any, tuple[Any, list[GenerationRequest]]] = {}
        alive = list(self.engines)
        while queue or in_flight:
            for engine in alive:
                while queue and sum(e is engine for e, _ in in_flight.values()) < UNITS_IN_FLIGHT:
                    unit = queue.popleft()
                    in_flight[engine.generate.remote(unit, sampling)] = (engine, unit)
            if not in_flight:
                raise EnvironmentProblem(
                    "every generation engine died; the samples finished so far are saved, so rerunning "
                    "the same command resumes"
                )
            (ready,), _ = ray.wait(list(in_flight), num_returns=1)
            engine, unit = in_flight.pop(ready)
            try:
                completions = ray.get(ready)
            except RayActorError:
                if engine in alive:
                    alive.remove(engine)
                    self.lost += 1
                    log.warning("a generation engine died; its work goes back to the %d left", len(alive))
                queue.appendleft(unit)
                continue
            yield completions

    def shutdown(self) -> None:
        import ray  # lazy: only for Ray engines

        for engine in self.engines:
            ray.kill(engine)
