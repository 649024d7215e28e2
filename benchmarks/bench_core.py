"""Speed and memory of the information-time core, measured side by side in one run.

1. info-time GAE: the chunked scan vs the per-token reverse loop (OpenRLHF's way), float32,
   with the max abs error of both against a float64 loop.
2. token entropy: chunked vs naive over (1, T, V) float32 logits, time ratio and the peak extra
   resident memory each needs beyond the logits (each variant runs in a fresh process), and the
   max abs error of each against float64 beside its speed.
3. the current policy's entropy returned by a training forward (DAPO-FT's mask): OpenRLHF's
   formula on gradient-carrying logits vs infoppo's detached chunked entropy, peak extra RSS.

Usage: python benchmarks/bench_core.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time

import torch

from infoppo_cli.infotime import info_time_gae, info_time_gae_loop, token_entropy


def best_time(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bench_gae(batch: int, length: int, repeats: int) -> dict[str, float]:
    g = torch.Generator().manual_seed(0)
    rewards = torch.randn(batch, length, generator=g) * 0.01
    values = torch.randn(batch, length, generator=g)
    rho = torch.rand(batch, length, generator=g)
    mask = torch.ones(batch, length)
    args = (rewards, values, rho, mask, 0.999, 0.99)
    scan = best_time(lambda: info_time_gae(*args), repeats)
    loop = best_time(lambda: info_time_gae_loop(*args), max(1, repeats // 3))
    reference, _ = info_time_gae_loop(*(x.double() for x in args[:4]), 0.999, 0.99)
    scan_err = (info_time_gae(*args)[0].double() - reference).abs().max().item()
    loop_err = (info_time_gae_loop(*args)[0].double() - reference).abs().max().item()
    return {
        "scan_ms": scan * 1e3,
        "loop_ms": loop * 1e3,
        "speedup": loop / scan,
        "scan_err": scan_err,
        "loop_err": loop_err,
    }


def naive_entropy(logits: torch.Tensor) -> torch.Tensor:
    """Unchunked entropy the way OpenRLHF's compute_entropy writes it (without torch.compile)."""
    with torch.no_grad():
        probs = torch.softmax(logits, dim=-1)
        return torch.logsumexp(logits, dim=-1) - (probs * logits).sum(dim=-1)


ERROR_ROWS = 64  # positions compared with a float64 reference


def entropy_worker(variant: str, length: int, vocab: int) -> None:
    """Runs in a fresh process: prints time and peak RSS beyond the logits, as JSON."""
    torch.manual_seed(0)
    logits = torch.empty(1, length, vocab).normal_(0.0, 3.0)  # in place: no transient copy
    baseline_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    fn = (lambda: token_entropy(logits)) if variant == "chunked" else (lambda: naive_entropy(logits))
    start = time.perf_counter()
    out = fn()
    elapsed = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    check = float(out.sum())
    rows = logits[0, :ERROR_ROWS].double()  # float64 reference on a slice (its own memory is not counted)
    reference = -(torch.log_softmax(rows, -1).exp() * torch.log_softmax(rows, -1)).sum(-1)
    error = float((out[0, :ERROR_ROWS].double() - reference).abs().max())
    extra = (peak_kib - baseline_kib) / 1024
    print(json.dumps({"seconds": elapsed, "extra_mib": extra, "sum": check, "max_abs_err": error}))


def training_entropy_worker(variant: str, length: int, vocab: int) -> None:
    """Runs in a fresh process: the extra peak RSS of returning the current policy's entropy from a
    training forward whose logits need gradients, until the backward pass has run (as JSON)."""
    torch.manual_seed(0)
    logits = torch.empty(1, length, vocab).normal_(0.0, 3.0).requires_grad_(True)
    baseline_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    if variant == "upstream":  # OpenRLHF's formula on grad-carrying logits: autograd keeps softmax
        probs = torch.softmax(logits, dim=-1)
        entropy = torch.logsumexp(logits, dim=-1) - (probs * logits).sum(dim=-1)
        del probs
    else:  # infoppo with no entropy bonus: chunked and detached, nothing kept for backward
        entropy = token_entropy(logits.detach())
    loss = logits[..., 0].sum() + 0.0 * entropy.sum()  # entropy_coef 0: no gradient through it
    loss.backward()
    elapsed = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": elapsed, "extra_mib": (peak_kib - baseline_kib) / 1024}))


def run_entropy_worker(variant: str, length: int, vocab: int) -> dict[str, float]:
    flag = "--training-entropy-worker" if variant.startswith("train-") else "--entropy-worker"
    cmd = [sys.executable, __file__, flag, variant.removeprefix("train-"), str(length), str(vocab)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--entropy-worker", nargs=3, metavar=("VARIANT", "T", "V"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--training-entropy-worker", nargs=3, metavar=("VARIANT", "T", "V"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.training_entropy_worker:
        variant, length, vocab = args.training_entropy_worker
        training_entropy_worker(variant, int(length), int(vocab))
        return
    if args.entropy_worker:
        variant, length, vocab = args.entropy_worker
        entropy_worker(variant, int(length), int(vocab))
        return

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print("\ninfo-time GAE, float32, gamma=0.999 lambda=0.99: chunked scan vs per-token reverse loop")
    print(
        f"{'B':>4} {'T':>7} {'loop ms':>10} {'scan ms':>9} {'speed-up':>9} {'scan err':>10} {'loop err':>10}"
    )
    sizes = [(16, 1024)] if args.quick else [(16, 8192), (16, 32768)]
    for batch, length in sizes:
        r = bench_gae(batch, length, repeats=5)
        print(
            f"{batch:>4} {length:>7} {r['loop_ms']:>10.1f} {r['scan_ms']:>9.2f} {r['speedup']:>8.1f}x "
            f"{r['scan_err']:>10.2e} {r['loop_err']:>10.2e}"
        )

    length, vocab = (512, 151_936) if args.quick else (4096, 151_936)
    print(
        f"\ntoken entropy over (1, {length}, {vocab}) float32 logits ({length * vocab * 4 / 2**30:.2f} GiB)"
    )
    chunked = run_entropy_worker("chunked", length, vocab)
    naive = run_entropy_worker("naive", length, vocab)
    for name, r in (("naive", naive), ("chunked", chunked)):
        print(
            f"  {name:>8}: {r['seconds']:7.2f} s, peak extra RSS {r['extra_mib']:8.1f} MiB, "
            f"max |error| vs float64 {r['max_abs_err']:.1e} nats (first {ERROR_ROWS} positions)"
        )
    if not math.isclose(chunked["sum"], naive["sum"], rel_tol=1e-4):
        raise SystemExit(f"entropy mismatch: chunked {chunked['sum']} vs naive {naive['sum']}")
    print(
        f"  time ratio chunked/naive: {chunked['seconds'] / naive['seconds']:.2f}; "
        f"memory ratio naive/chunked: {naive['extra_mib'] / max(chunked['extra_mib'], 1e-3):.1f}x"
    )

    print(
        f"\ncurrent-policy entropy from a training forward (DAPO-FT's mask), (1, {length}, {vocab}) "
        "logits with gradients, through backward"
    )
    kept = run_entropy_worker("train-upstream", length, vocab)
    detached = run_entropy_worker("train-detached", length, vocab)
    for name, r in (("upstream", kept), ("detached", detached)):
        print(f"  {name:>8}: {r['seconds']:7.2f} s, peak extra RSS {r['extra_mib']:8.1f} MiB")
    print(f"  memory ratio upstream/detached: {kept['extra_mib'] / max(detached['extra_mib'], 1e-3):.1f}x")


if __name__ == "__main__":
    main()
