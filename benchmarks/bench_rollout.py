"""vLLM on the CPU, measured side by side in one run: engine start-up, an RL step by phase, the rollout's
generation against a bare ``vllm.LLM.generate`` of the same prompts, and eval throughput of
``--backend vllm`` against ``--backend hf``.

For each CPU task that is cached (``tiny-cpu``'s arithmetic; ``tiny-cpu-long``'s chain when built):

1. **start-up**: ``vllm.LLM`` on the task's model (bf16, eager, whole prefills, the engine core in this
   process), and its first ``generate`` (vLLM compiles its CPU sampler once per process);
2. **bare generation**: ``LLM.generate`` of one RL step's prompts (the task's first training prompts,
   chat-formatted, ``n_samples_per_prompt`` samples each, the preset's temperature and max tokens), the
   median of five calls: what vLLM itself takes for the rollout;
3. **RL step by phase**: ``infoppo train --preset P --steps S`` (no eval), the medians over steps 2..S of
   ``timing/generation`` (OpenRLHF's engines generating and grading through the sample generator),
   ``timing/make_experience`` (old-policy and critic forwards), ``timing/ppo_train`` and
   ``timing/broadcast`` (the weight sync), from the run's ``metrics.jsonl``; the rollout's overhead over
   vLLM is generation divided by the bare generation;
4. **eval throughput**: ``infoppo eval`` on the task's held-out set with each backend, generated tokens per
   second of generation (the command's wall time less its grading, as it reports).

Usage: python benchmarks/bench_rollout.py [--steps 8] [--samples 4] [--tasks arithmetic,chain]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRESETS = {"arithmetic": "tiny-cpu", "chain": "tiny-cpu-long"}
PHASES = ("timing/generation", "timing/make_experience", "timing/ppo_train", "timing/broadcast")


def cached(task: str):
    from infoppo_cli.tasks import cached_task
    from infoppo_cli.tasks.recipes import task_recipe

    return cached_task(task_recipe(task))


def preset_shape(preset: str) -> dict:
    from infoppo_cli.train.plan import TrainRequest, plan_training

    flags = plan_training(TrainRequest(preset, eval_bench="none"), strict_data=False).flags
    return {
        "prompts": int(flags["rollout.batch_size"]),
        "n": int(flags["rollout.n_samples_per_prompt"]),
        "max_tokens": int(flags["rollout.max_new_tokens"]),
        "temperature": float(flags.get("rollout.temperature", 1.0)),
        "max_len": int(flags["data.max_len"]),
    }


def bare_vllm(files, shape: dict) -> dict:
    """Start-up, first call and the median of five calls of ``LLM.generate`` on one step's prompts."""
    from infoppo_cli.data.templates import chat_prompt
    from infoppo_cli.eval.vllm_backend import vllm_engine_kwargs
    from infoppo_cli.openrlhf_adapter.cpu.rollout import engine_environment

    os.environ.update(engine_environment(max((os.cpu_count() or 2) - 1, 1)))
    import vllm
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(files.model_dir))
    rows = [json.loads(line) for line in files.train_file.read_text().splitlines()[: shape["prompts"]]]
    prompts = [chat_prompt(tokenizer, row["prompt"]) for row in rows]
    started = time.perf_counter()
    kwargs = vllm_engine_kwargs(str(files.model_dir), 1, 0, on_cpu=True)
    llm = vllm.LLM(**{**kwargs, "dtype": "bfloat16", "max_model_len": shape["max_len"]})  # as training's
    start_up = time.perf_counter() - started
    params = vllm.SamplingParams(
        n=shape["n"], temperature=shape["temperature"], max_tokens=shape["max_tokens"]
    )
    timings = []
    for _ in range(6):
        started = time.perf_counter()
        llm.generate(prompts, params, use_tqdm=False)
        timings.append(time.perf_counter() - started)
    return {
        "start_up_s": start_up,
        "first_generate_s": timings[0],
        "generate_s": statistics.median(timings[1:]),
    }


def train_phases(preset: str, steps: int, work: Path) -> dict:
    out = work / f"run-{preset}"
    command = [sys.executable, "-m", "infoppo_cli", "train", "--preset", preset, "--steps", str(steps)]
    command += ["--eval-bench", "none", "--output-dir", str(out)]
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    rows = [row for row in rows if row.get("step", 0) >= 2 and "timing/step_total" in row]
    phases = {name: statistics.median(row[name] for row in rows) for name in (*PHASES, "timing/step_total")}
    return {"wall_s": wall, **phases}


def eval_throughput(files, task: str, backend: str, samples: int, work: Path) -> dict:
    out = work / f"eval-{files.directory.name}-{backend}"
    command = [
        sys.executable,
        "-m",
        "infoppo_cli",
        "eval",
        "--model",
        str(files.model_dir),
        "--backend",
        backend,
    ]
    command += ["--bench", task, "--samples", str(samples), "--out", str(out)]
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    bench = json.loads((out / "metrics.json").read_text())["average"]
    tokens = bench["length_mean"] * bench["samples"]
    return {"wall_s": wall, "tokens": tokens, "tokens_per_s": tokens / wall, "mean@k": bench["mean@k"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--tasks", default="arithmetic,chain")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench_rollout_"))
    for task in args.tasks.split(","):
        files = cached(task)
        if files is None:
            print(f"== {task}: not built (run `infoppo train --preset {PRESETS[task]}` once); skipped")
            continue
        preset = PRESETS[task]
        shape = preset_shape(preset)
        print(f"== {preset} ({task}): {shape['prompts']} prompts x {shape['n']} samples")
        bare_run = [sys.executable, __file__, "--bare", task]
        bare = json.loads(
            subprocess.run(bare_run, check=True, capture_output=True, text=True).stdout.split()[-1]
        )
        print(f"vLLM start-up {bare['start_up_s']:.1f} s, first generate {bare['first_generate_s']:.2f} s")
        phases = train_phases(preset, args.steps, work)
        shown = ", ".join(
            f"{name.split('/')[1]} {phases[name]:.2f} s" for name in (*PHASES, "timing/step_total")
        )
        print(f"RL step (median of steps 2..{args.steps}): {shown}")
        generation, alone = phases["timing/generation"], bare["generate_s"]
        print(
            f"rollout generation {generation:.3f} s vs bare LLM.generate {alone:.3f} s: "
            f"{generation / alone:.2f}x (target <= 1.2x; the rollout also grades, in the reward function)"
        )
        ours = {
            backend: eval_throughput(files, task, backend, args.samples, work) for backend in ("vllm", "hf")
        }
        for backend, result in ours.items():
            print(
                f"eval {backend}: {result['tokens_per_s']:.0f} tokens/s ({result['wall_s']:.0f} s in all, "
                f"Mean@{args.samples} {result['mean@k']:.1f})"
            )
        ratio = ours["vllm"]["tokens_per_s"] / ours["hf"]["tokens_per_s"]
        print(f"eval vllm / hf: {ratio:.2f}x (whole commands, start-up and grading in)")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--bare":  # the bare vLLM arm, in a process of its own
        task = sys.argv[2]
        print(json.dumps(bare_vllm(cached(task), preset_shape(PRESETS[task])), separators=(",", ":")))
    else:
        main()
