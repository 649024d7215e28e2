"""Does OpenRLHF's way of awaiting a rollout request cost the CPU rollout its overhead over vLLM? Its engine
actor awaits each sample's request as a stream (``RequestOutputKind.CUMULATIVE``, vLLM's default: one
``RequestOutput`` per generated token); a request that only returns its final output (``FINAL_ONLY``) would be
the change to make if it did.

One process, one ``vllm.AsyncLLMEngine`` built as OpenRLHF's engine actor builds it (the engine core in a
process of its own) on ``tiny-cpu-long``'s cached model, the CPU engine's environment; one RL step's prompts
(the task's first 16 training prompts, chat-formatted, 8 samples each as 128 separate requests, as
OpenRLHF's executor sends them), temperature 1.0, at most 200 tokens. After one warm-up step, the two kinds
alternate ``--rounds`` times; it prints each step's seconds and generated tokens, and each kind's median.

Usage: python benchmarks/bench_vllm_output_kind.py [--rounds 6]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from copy import deepcopy

from bench_rollout import cached, step_prompts


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    if args.rounds < 1:
        raise SystemExit(f"--rounds must be >= 1, got {args.rounds}")
    files = cached("chain")
    if files is None:
        raise SystemExit("tiny-cpu-long's task is not built: run `infoppo train --preset tiny-cpu-long` once")

    from infoppo_cli.openrlhf_adapter.cpu.rollout import engine_environment

    os.environ.update(engine_environment(1))
    import vllm
    from vllm.sampling_params import RequestOutputKind
    from vllm.utils import random_uuid

    from infoppo_cli.eval.vllm_backend import vllm_engine_kwargs

    tokenizer, texts = step_prompts(files, 16)
    prompts = [tokenizer(text, add_special_tokens=False)["input_ids"] for text in texts]
    kwargs = {**vllm_engine_kwargs(str(files.model_dir), 1, 0, on_cpu=True), "dtype": "bfloat16"}
    engine = vllm.AsyncLLMEngine.from_engine_args(vllm.AsyncEngineArgs(**kwargs, max_model_len=256))

    async def request(prompt: list[int], params) -> object:
        final = None
        async for output in engine.generate(vllm.TokensPrompt(prompt_token_ids=prompt), deepcopy(params),
                                            request_id=random_uuid()):  # fmt: skip
            final = output
        return final

    async def step(kind: RequestOutputKind) -> tuple[float, int]:
        params = vllm.SamplingParams(temperature=1.0, max_tokens=200, output_kind=kind)
        started = time.perf_counter()
        outputs = await asyncio.gather(*(request(prompt, params) for prompt in prompts for _ in range(8)))
        return time.perf_counter() - started, sum(len(output.outputs[0].token_ids) for output in outputs)

    async def compare() -> None:
        await step(RequestOutputKind.FINAL_ONLY)
        kinds = (RequestOutputKind.CUMULATIVE, RequestOutputKind.FINAL_ONLY)
        found: dict[str, list[tuple[float, int]]] = {kind.name: [] for kind in kinds}
        for _ in range(args.rounds):
            for kind in kinds:
                found[kind.name].append(await step(kind))
        for name, steps in found.items():
            cells = ", ".join(f"{seconds:.2f} s / {tokens} tokens" for seconds, tokens in steps)
            print(f"{name}: {cells}; median {statistics.median(s for s, _ in steps):.2f} s", flush=True)

    asyncio.run(compare())


if __name__ == "__main__":
    main()
