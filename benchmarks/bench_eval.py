"""Data-parallel evaluation on the CPU proxy: problems/s with 1 and with 2 generation engines, side by side.

The proxy is the tiny random Qwen3 of the tests (tests/support/tiny_model.py) on the transformers
backend, each engine a Ray actor with one CPU, grading in the driver (one worker). Both arms run in one
process under the same local Ray, on the same problems and seeds, and must produce identical samples
(seed per sample), which is checked. Engine start-up (model load) is timed separately from the
generation + grading that ``--engines`` spreads out.

Usage: python benchmarks/bench_eval.py [--problems 24] [--samples 4] [--max-tokens 48]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=24)
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args()

    import ray
    from tiny_model import build_tiny_model

    from infoppo_cli.eval.engines import EnginePool, EngineSpec, shard, start_engines
    from infoppo_cli.eval.generation import GenerationRequest, SamplingSettings
    from infoppo_cli.grading import GradingPool

    work = Path(tempfile.mkdtemp(prefix="bench_eval_"))
    model = str(build_tiny_model(work / "model"))
    sampling = SamplingSettings(temperature=1.0, max_tokens=args.max_tokens, seed=0)
    template = "<|im_start|>user\nWhat is {i} + {i}? Answer: \\boxed{{}}<|im_end|>\n<|im_start|>assistant\n"
    requests = [
        GenerationRequest(f"b/{i}", template.format(i=i), tuple(range(args.samples)), 0)
        for i in range(args.problems)
    ]
    spec = EngineSpec("hf", model, seed=0, batch_size=args.batch_size)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    results = {}
    with GradingPool(workers=1) as grader:
        for engines in (1, 2):
            start = time.perf_counter()
            actors = start_engines(spec, engines)
            ray.get([actor.pid.remote() for actor in actors])  # wait until every model is loaded
            loaded = time.perf_counter()
            pool = EnginePool(actors)
            texts = {}
            for batch in pool.run(shard(requests, args.batch_size), sampling):
                grader.grade([(c.text, str(2 * int(c.key[2:]))) for c in batch], lambda n: None)
                texts.update({(c.key, c.sample): c.text for c in batch})
            done = time.perf_counter()
            pool.shutdown()
            results[engines] = {"load_s": loaded - start, "run_s": done - loaded, "texts": texts}
    ray.shutdown()

    same = results[1]["texts"] == results[2]["texts"]
    print(
        f"{args.problems} problems x {args.samples} samples, <= {args.max_tokens} tokens, tiny Qwen3 on CPU"
    )
    print(f"{'engines':>8} {'load s':>8} {'gen+grade s':>12} {'problems/s':>11}")
    for engines, row in results.items():
        rate = args.problems / row["run_s"]
        print(f"{engines:>8} {row['load_s']:>8.2f} {row['run_s']:>12.2f} {rate:>11.2f}")
    speedup = results[1]["run_s"] / results[2]["run_s"]
    print(f"speed-up 2 vs 1 engine: {speedup:.2f}x; identical samples: {same}")
    print(json.dumps({"speedup": round(speedup, 3), "identical": same}))


if __name__ == "__main__":
    main()
