"""Throughput of ``infoppo inspect`` on the CPU proxy, beside a plain transformers forward of the same tokens.

The CPU proxy is a random Qwen3 with Qwen3's real vocabulary size (151,936, so the output head and the
entropy dominate as they do on real models) but few, narrow layers, and the tests' small tokenizer.
In one run, on the same responses and batches:

1. plain forward: ``model(input_ids, attention_mask).logits`` (float32 logits of every position);
2. inspect forward: :func:`infoppo_cli.inspect.entropy.response_entropies` (decoder, then the output
   head and the chunked entropy on the response positions only); 1 and 2 interleaved, best of 3;
3. inspect end to end: ``run_inspect`` (read, tokenize, forward, clocks, every output file; the model
   load excluded), timed on a fresh output directory.

Usage: python benchmarks/bench_inspect.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

from inspect_fixtures import response_rows, write_jsonl  # noqa: E402
from tiny_model import _build_tokenizer  # noqa: E402

from infoppo_cli.inspect import entropy as fwd  # noqa: E402
from infoppo_cli.inspect.responses import read_items  # noqa: E402
from infoppo_cli.inspect.run import InspectSettings, rendered_prompts, run_inspect  # noqa: E402

QWEN3_VOCAB = 151_936
REPEATS = 3
BATCH_TOKENS = 4096  # the plain forward holds (tokens, vocab) float32 logits: 2.5 GB per batch


def build_proxy(directory: Path, layers: int, hidden: int) -> Path:
    from transformers import Qwen3Config, Qwen3ForCausalLM

    tokenizer = _build_tokenizer()
    config = Qwen3Config(
        vocab_size=QWEN3_VOCAB,
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=hidden // 4,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    Qwen3ForCausalLM(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter responses")
    args = parser.parse_args()
    count, words = (8, 200) if args.quick else (32, 600)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model_dir = build_proxy(root / "proxy", layers=2, hidden=256)
        responses = write_jsonl(root / "responses.jsonl", response_rows(count, max_words=words))
        policy = fwd.load_policy(str(model_dir), device="cpu")
        tokenized = rendered_prompts(policy.tokenizer, read_items(responses), "dapo")
        batches = [[tokenized[i] for i in b] for b in fwd.batches(tokenized, BATCH_TOKENS)]
        tokens = sum(len(t.response_ids) for t in tokenized)
        total = sum(len(t.prompt_ids) + len(t.response_ids) for t in tokenized)

        def plain() -> None:
            with torch.no_grad():
                for batch in batches:
                    ids, mask = fwd._padded(policy, batch)
                    policy.model(input_ids=ids, attention_mask=mask).logits.sum()

        plain()  # warm-up
        rounds = [
            (timed(plain), timed(lambda: [fwd.response_entropies(policy, batch) for batch in batches]))
            for _ in range(REPEATS)
        ]  # interleaved, best of each: a busy machine slows both alike
        plain_s, inspect_s = min(r[0] for r in rounds), min(r[1] for r in rounds)
        settings = InspectSettings(str(model_dir), str(responses), min_count=5, batch_tokens=BATCH_TOKENS)
        end_to_end_s = timed(lambda: run_inspect(settings, root / "out", lambda *_: None))
        load_s = timed(lambda: fwd.load_policy(str(model_dir), device="cpu"))

    print(
        f"CPU proxy: Qwen3, vocab {QWEN3_VOCAB}, 2 layers x 256; {count} responses, {tokens} response tokens"
    )
    print(
        f"({total} tokens with prompts), batches of <= {BATCH_TOKENS} padded tokens, "
        f"{torch.get_num_threads()} threads"
    )
    print(f"{'':28}{'seconds':>10}{'resp. tokens/s':>16}{'vs plain':>10}")
    rows = [
        ("plain transformers forward", plain_s),
        ("inspect forward (entropy)", inspect_s),
        ("inspect end to end", end_to_end_s - load_s),
    ]
    for name, seconds in rows:
        print(f"{name:28}{seconds:10.2f}{tokens / seconds:16.0f}{plain_s / seconds:10.2f}x")


if __name__ == "__main__":
    main()
