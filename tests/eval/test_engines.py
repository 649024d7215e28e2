"""Data-parallel evaluation: engines as real Ray actors on CPU (``--backend hf --engines 2``)."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import psutil
import pytest
from cli_process import start_infoppo
from watched_run import LOOPBACK, Watched, command, observe, ray_servers, tree

from infoppo_cli.eval.engines import (
    EnginePool,
    EngineSpec,
    actor_options,
    default_engines,
    shard,
    start_engines,
)
from infoppo_cli.eval.generation import GenerationRequest, SamplingSettings
from infoppo_cli.eval.hf_backend import HFBackend
from infoppo_cli.eval.run import run_evaluation
from infoppo_cli.eval.sample_store import SampleStore
from infoppo_cli.eval.settings import EvalSettings

SAMPLING = SamplingSettings(temperature=1.0, max_tokens=6, seed=3)
ROWS = [{"id": f"q{i}", "problem": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(4)]


def _requests(n_problems: int, samples: int) -> list[GenerationRequest]:
    return [
        GenerationRequest(
            f"b/{i}",
            f"<|im_start|>user\n{i}+{i}?<|im_end|>\n<|im_start|>assistant\n",
            tuple(range(samples)),
            3,
        )
        for i in range(n_problems)
    ]


def test_shard_keeps_every_sample_once_in_units_of_the_given_size():
    units = shard(_requests(3, 5), unit_samples=4)
    pairs = [(r.key, s) for unit in units for r in unit for s in r.sample_indices]
    assert sorted(pairs) == sorted((f"b/{i}", s) for i in range(3) for s in range(5))
    assert [sum(len(r.sample_indices) for r in unit) for unit in units] == [4, 4, 4, 3]
    assert all(r.seed == 3 for unit in units for r in unit)


@pytest.mark.parametrize(("gpus", "tensor_parallel", "engines"), [(0, 1, 1), (8, 1, 8), (8, 2, 4), (3, 2, 1)])
def test_default_engines_are_visible_gpus_over_tensor_parallel(gpus, tensor_parallel, engines):
    assert default_engines(tensor_parallel, gpus=gpus) == engines


def test_engine_resources_follow_the_backend_and_the_tensor_parallel_group():
    assert actor_options(EngineSpec("vllm", "m", tensor_parallel=4), gpus_available=True)["num_gpus"] == 4
    assert actor_options(EngineSpec("hf", "m", tensor_parallel=4), gpus_available=True)["num_gpus"] == 1
    assert actor_options(EngineSpec("hf", "m"), gpus_available=False) == {"num_cpus": 1, "num_gpus": 0}


@pytest.mark.slow
def test_a_killed_engine_loses_and_duplicates_nothing(local_ray, tiny_model_dir):
    """Kill one of two engines after the first unit comes back: its units go to the other engine, every
    sample arrives exactly once, and each is the sample a single in-process engine draws (seed per sample)."""
    requests = _requests(3, 4)
    spec = EngineSpec("hf", str(tiny_model_dir), seed=3, batch_size=2)
    engines = start_engines(spec, 2)
    pool = EnginePool(engines)
    received = []
    try:
        for batch in pool.run(shard(requests, unit_samples=2), SAMPLING):
            if not received:
                local_ray.kill(engines[0])
            received.extend(batch)
    finally:
        pool.shutdown()
    keys = [(c.key, c.sample) for c in received]
    assert sorted(keys) == sorted((f"b/{i}", s) for i in range(3) for s in range(4))
    assert pool.lost == 1
    here = HFBackend(str(tiny_model_dir), batch_size=5)
    expected = {(c.key, c.sample): c.text for batch in here.generate(requests, SAMPLING) for c in batch}
    assert {(c.key, c.sample): c.text for c in received} == expected


@pytest.mark.slow
def test_eval_with_two_engines_matches_one_engine(local_ray, tiny_model_dir, tmp_path):
    bench = tmp_path / "bench.jsonl"
    bench.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")

    def evaluate(out, engines):
        settings = EvalSettings(
            model=str(tiny_model_dir),
            benches=("aime24",),
            bench_files={"aime24": str(bench)},
            backend="hf",
            samples=3,
            max_tokens=6,
            batch_size=4,
            workers=1,
            engines=engines,
        )
        metrics = run_evaluation(settings, out)
        return metrics, {r.key: r for r in SampleStore(out)}

    one_metrics, one = evaluate(tmp_path / "one", 1)
    two_metrics, two = evaluate(tmp_path / "two", 2)
    assert len(two) == 12 and two == one
    assert two_metrics["benches"] == one_metrics["benches"]
    lines = (tmp_path / "two" / "samples.jsonl").read_text().splitlines()
    assert len(lines) == 12  # one writer: every sample stored once


@pytest.mark.slow
def test_eval_on_ray_engines_runs_a_private_ray_and_a_sigterm_stops_it_as_ctrl_c_does(task_cache, tmp_path):
    """``infoppo eval --engines 2`` without ``--address`` started Ray with its defaults (no
    authentication, its servers on every interface, a session folder left in /tmp/ray), and Ray's core
    answered SIGTERM by aborting the eval (exit 134) with a C++ stack dump. Watched while it evaluates,
    it now runs the embedded Ray of ``infoppo train`` (``local_ray``); stopped by SIGTERM, it ends as
    Ctrl-C ends it: the samples done are kept, it says how to resume and exits 130, its Ray is shut down
    and its session folder removed (the same clean-up as at a normal end)."""
    before = set(Path("/tmp").glob("infoppo-ray-*"))
    out = tmp_path / "eval"
    args = ("--bench", "arithmetic", "--backend", "hf", "--engines", "2", "--samples", "64")
    process = start_infoppo("eval", "--model", str(task_cache.model_dir), *args, "--out", str(out))
    root = psutil.Process(process.pid)
    samples = out / "samples.jsonl"
    seen = Watched(out, "", "", -1)
    deadline = time.monotonic() + 300
    while process.poll() is None and (
        seen.stranger_refused is None or not samples.exists() or not samples.stat().st_size
    ):
        observe(seen, process, root, before)
        assert time.monotonic() < deadline, "no Ray server or no sample in 300 s"
        time.sleep(0.2)
    assert process.poll() is None, "the eval ended before it could be stopped"
    servers = ray_servers(seen.listening)
    assert any(name == "gcs_server" for name in servers.values()), seen.listening
    assert not {a: n for a, n in servers.items() if a[0].removeprefix("::ffff:") not in LOOPBACK}
    assert seen.stranger_refused is True, "a Ray client without the eval's token was let in"
    sessions = seen.sessions
    assert sessions and seen.session_modes == {0o700}, (sessions, seen.session_modes)
    ray_processes = [p for p in tree(root) if any(str(s) in command(p) for s in sessions)]
    assert ray_processes

    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=120)
    shown = stdout + stderr
    assert process.returncode == 130, shown[-3000:]
    assert "SIGTERM received" not in shown and "Traceback" not in shown, shown[-3000:]
    assert "samples are saved" in shown and "interrupted" in shown, shown[-3000:]
    assert samples.read_bytes().count(b"\n") > 0  # what was done is kept
    assert not any(session.exists() for session in sessions)
    psutil.wait_procs(ray_processes, timeout=30)
    assert not [p for p in ray_processes if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
