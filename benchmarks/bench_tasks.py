"""The CPU task's figures, measured in one run: build time, model size, warm-start accuracy, speed.

1. build: wall time of a fresh build of the default task (into a temporary cache unless --cache is
   given and already holds it), and the model's parameter count;
2. held-out accuracy at temperature 1.0 (top-p 1, --samples per problem) and greedy, graded by
   infoppo's grader, in float32 and in bfloat16 (the dtype OpenRLHF's Actor loads by default);
3. mean response length in tokens and the share of responses that end with <|im_end|>;
4. time to sample 128 responses with Hugging Face generate (one batch, left padding), both dtypes;
5. OpenRLHF's Actor (sdpa, bf16) loads the directory and its log-probs match float32's.

Usage: python benchmarks/bench_tasks.py [--cache DIR] [--samples 4] [--threads N]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import torch

from infoppo_cli.data.templates import chat_prompt, render_prompt
from infoppo_cli.tasks import TaskRecipe, ensure_task
from infoppo_cli.tasks.arithmetic import split_problems
from infoppo_cli.tasks.sampling import heldout_accuracy, sample


def build(cache: Path | None) -> tuple[object, float]:
    started = time.monotonic()
    if cache is None:
        files = ensure_task(root=Path(tempfile.mkdtemp(prefix="infoppo-bench-tasks-")))
    else:
        files = ensure_task(root=cache)
    return files, time.monotonic() - started


def load(model_dir: Path, dtype: torch.dtype):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype).eval()
    return model, AutoTokenizer.from_pretrained(model_dir)


def accuracy_figures(model_dir: Path, heldout, samples: int) -> dict[str, dict[str, float]]:
    figures = {}
    for name, dtype in (("float32", torch.float32), ("bfloat16", torch.bfloat16)):
        model, tokenizer = load(model_dir, dtype)
        sampled = heldout_accuracy(model, tokenizer, heldout, 1.0, samples, seed=0)
        greedy = heldout_accuracy(model, tokenizer, heldout, 0.0)
        prompts = [render_prompt(problem.text) for problem in (heldout * 2)[:128]]
        sample(model, tokenizer, prompts[:8], seed=1)  # warm-up
        timed = sample(model, tokenizer, prompts, seed=1, batch_size=128)
        figures[name] = {
            "accuracy_t1": round(sampled.accuracy, 4),
            "accuracy_greedy": round(greedy.accuracy, 4),
            "responses_t1": sampled.responses,
            "mean_response_tokens": round(sampled.mean_tokens, 2),
            "finished_share": round(sampled.finished_share, 4),
            "seconds_for_128_responses": round(timed.seconds, 3),
        }
    return figures


def actor_check(model_dir: Path, heldout) -> dict[str, float]:
    """Log-probs of greedy responses under OpenRLHF's Actor (bf16, sdpa) against float32's."""
    from infoppo_cli.openrlhf_adapter.cpu import stand_ins

    stand_ins.install()  # flash-attn's CUDA extension, which OpenRLHF imports, on a CPU-only machine
    from openrlhf.models import Actor

    model, tokenizer = load(model_dir, torch.float32)
    texts = [chat_prompt(tokenizer, render_prompt(problem.text)) for problem in heldout[:32]]
    tokenizer.padding_side = "left"
    encoded = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    with torch.no_grad():
        sequences = model.generate(**encoded, max_new_tokens=12, do_sample=False)
        attention = (sequences != tokenizer.pad_token_id).long()
        response = sequences.shape[1] - encoded["input_ids"].shape[1]
        action_mask = attention[:, -response:]
        wrapped = Actor(model)
        wrapped.packing_samples = False  # set only when Actor loads a path itself
        reference = wrapped(sequences, action_mask, attention)
        actor = Actor(str(model_dir), attn_implementation="sdpa", param_dtype="bf16")
        dtype = next(actor.model.parameters()).dtype
        bf16 = actor(sequences, action_mask, attention)
    return {
        "actor_dtype": str(dtype),
        "max_abs_logprob_gap": round(float((bf16 - reference).abs().max()), 4),
        "mean_abs_logprob_gap": round(float((bf16 - reference).abs()[action_mask.bool()].mean()), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, help="a cache root to use (default: a fresh temporary one)")
    parser.add_argument("--samples", type=int, default=4, help="samples per held-out problem at T=1")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's choice)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    files, seconds = build(args.cache)
    _, heldout = split_problems(TaskRecipe().problems)
    report = {
        "build_wall_seconds": round(seconds, 1),
        "built_now": files.built_now,
        "recorded_build_seconds": files.build_seconds,
        "parameters": files.warm_start.get("parameters"),
        "torch_threads": torch.get_num_threads(),
        "heldout_problems": len(heldout),
        **accuracy_figures(files.model_dir, heldout, args.samples),
        "openrlhf_actor": actor_check(files.model_dir, heldout),
        "task_dir": str(files.directory),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
