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
   second of generation (the command's wall time less its grading, as it reports);
5. **TRL's round, side by side**: Hugging Face TRL 1.16's single-process ``GRPOTrainer`` at the same shape
   (the same model, prompts, 16 prompts x 8 responses and 4 optimizer steps per round, the preset's
   temperature, response length and learning rate, no reference model, infoppo's grader as its reward),
   the median seconds of its rounds 2..S, against our DAPO's RL step (dynamic filtering off, as TRL has
   none) and InfoPPO's. TRL is installed for this script only (``pip install --target .bench-deps``).

Usage: python benchmarks/bench_rollout.py [--steps 8] [--samples 4] [--tasks arithmetic,chain] [--no-trl]
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
TRL = "trl==1.16.0"
TRL_DIR = ROOT / ".bench-deps" / "trl-1.16.0"
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


def step_prompts(files, count: int) -> tuple[object, list[str]]:
    """The task's tokenizer and its first ``count`` training prompts, chat-formatted as training sends them:
    one RL step's prompts."""
    from transformers import AutoTokenizer

    from infoppo_cli.data.templates import chat_prompt

    tokenizer = AutoTokenizer.from_pretrained(str(files.model_dir))
    rows = [json.loads(line) for line in files.train_file.read_text().splitlines()[:count]]
    return tokenizer, [chat_prompt(tokenizer, row["prompt"]) for row in rows]


def bare_vllm(files, shape: dict) -> dict:
    """Start-up, first call and the median of five calls of ``LLM.generate`` on one step's prompts."""
    from infoppo_cli.eval.vllm_backend import vllm_engine_kwargs
    from infoppo_cli.openrlhf_adapter.cpu.rollout import engine_environment
    from infoppo_cli.openrlhf_adapter.cpu.torch_device import cpu_threads

    os.environ.update(engine_environment(cpu_threads()))
    import vllm

    _, prompts = step_prompts(files, shape["prompts"])
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


def train_phases(preset: str, steps: int, work: Path, method: str = "infoppo", *more: str) -> dict:
    out = work / f"run-{preset}-{method}"
    command = [sys.executable, "-m", "infoppo_cli", "train", "--preset", preset, "--steps", str(steps)]
    command += ["--method", method, "--eval-bench", "none", "--output-dir", str(out), *more]
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


def trl_rounds(files, shape: dict, preset: str, rounds: int) -> dict:
    """TRL's ``GRPOTrainer`` at the preset's shape: the median seconds of rounds 2..``rounds`` (one
    generation of 128 responses and 4 optimizer steps each)."""
    sys.path.insert(0, str(TRL_DIR))
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from infoppo_cli.grading import GradingPool
    from infoppo_cli.train.plan import TrainRequest, plan_training

    torch.set_num_threads(os.cpu_count() or 1)
    flags = plan_training(TrainRequest(preset, method="dapo", eval_bench="none"), strict_data=False).flags
    tokenizer = AutoTokenizer.from_pretrained(str(files.model_dir))
    rows = [json.loads(line) for line in files.train_file.read_text().splitlines()]
    dataset = Dataset.from_list(
        [{"prompt": [{"role": "user", "content": row["prompt"]}], "label": row["label"]} for row in rows]
    )
    pool = GradingPool(workers=1)

    def reward(prompts, completions, label, **kwargs):
        texts = [c[-1]["content"] if isinstance(c, list) else c for c in completions]
        return [1.0 if v.correct else 0.0 for v in pool.grade(list(zip(texts, label, strict=True)))]

    class Clock(TrainerCallback):
        def __init__(self) -> None:
            self.marks: list[float] = []

        def on_step_begin(self, args, state, control, **kwargs):
            if state.global_step % 4 == 0:
                self.marks.append(time.perf_counter())

    clock = Clock()
    config = GRPOConfig(
        output_dir=tempfile.mkdtemp(prefix="bench_trl_"),
        per_device_train_batch_size=32,
        steps_per_generation=4,
        num_generations=shape["n"],
        max_completion_length=shape["max_tokens"],
        temperature=shape["temperature"],
        learning_rate=float(flags["actor.adam.lr"]),
        beta=0.0,
        max_steps=4 * rounds + 1,
        logging_steps=1000,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        bf16=True,
        seed=42,
        disable_tqdm=True,
    )
    model = AutoModelForCausalLM.from_pretrained(str(files.model_dir), dtype=torch.bfloat16)
    trainer = GRPOTrainer(
        model=model, reward_funcs=[reward], args=config, train_dataset=dataset, processing_class=tokenizer
    )
    trainer.add_callback(clock)
    trainer.train()
    pool.close()
    times = [b - a for a, b in zip(clock.marks, clock.marks[1:], strict=False)]
    return {"round_s": statistics.median(times[1:]), "rounds": len(times)}


def ensure_trl() -> bool:
    """TRL 1.16 for this script, in ``.bench-deps`` (its requirements are infoppo's already)."""
    if (TRL_DIR / "trl").is_dir():
        return True
    command = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(TRL_DIR), TRL]
    return subprocess.run(command, check=False).returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--tasks", default="arithmetic,chain")
    parser.add_argument("--no-trl", action="store_true", help="skip TRL's side-by-side round")
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
        if args.no_trl or not ensure_trl():
            continue
        dapo = train_phases(preset, args.steps, work, "dapo", "--set", "algo.dynamic_filtering_enable=false")
        trl_run = [sys.executable, __file__, "--trl", task, str(args.steps)]
        done = subprocess.run(trl_run, check=True, capture_output=True, text=True)
        trl = json.loads(done.stdout.split()[-1])
        ours = {
            "InfoPPO": phases["timing/step_total"],
            "DAPO (no dynamic filtering)": dapo["timing/step_total"],
        }
        print(f"TRL 1.16 GRPOTrainer round (median of rounds 2..{trl['rounds']}): {trl['round_s']:.2f} s")
        for name, seconds in ours.items():
            print(f"our {name} step {seconds:.2f} s: {seconds / trl['round_s']:.2f}x TRL's round")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--trl":  # TRL's arm, in a process of its own
        task, rounds = sys.argv[2], int(sys.argv[3])
        found = trl_rounds(cached(task), preset_shape(PRESETS[task]), PRESETS[task], rounds)
        print(json.dumps(found, separators=(",", ":")))
    elif len(sys.argv) == 3 and sys.argv[1] == "--bare":  # the bare vLLM arm, in a process of its own
        task = sys.argv[2]
        print(json.dumps(bare_vllm(cached(task), preset_shape(PRESETS[task])), separators=(",", ":")))
    else:
        main()
