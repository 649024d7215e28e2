"""Run directories for contrast tests: accuracy curves chosen so that every per-seed difference, mean,
interval and arm summary can be worked out by hand.

Seeds 1-3 of arm ``a`` (infoppo, γ = 0.99, λ = 1) evaluate 50, 60+s, 70+s, 80+2s at steps 0, 10, 20,
30; arm ``b`` (ppo, same γ and λ) 50, 55, 60+s, 70. So per seed s, a − b is 10+2s at the last eval,
(25+3s)/3 over the last 3, and 20/3 + 2s/3 in area over the step span (a: 65+s, b: 175/3 + s/3).
"""

from __future__ import annotations

import json
from pathlib import Path

EVAL_STEPS = (0, 10, 20, 30)


def curve_a(seed: int) -> list[float]:
    return [50.0, 60.0 + seed, 70.0 + seed, 80.0 + 2 * seed]


def curve_b(seed: int) -> list[float]:
    return [50.0, 55.0, 60.0 + seed, 70.0]


def write_contrast_run(
    run_dir: Path, method: str, gamma: float, lambd: float, seed: int, accuracies: list[float], info: bool
) -> Path:
    """A run whose manifest records its method, γ, λ and seed, evaluated at :data:`EVAL_STEPS`; its last
    step logs a response length of 100+seed, γ^T 0.3 (info) or 0.4, and Γ_info 0.5 when ``info``."""
    run_dir.mkdir(parents=True)
    flags = {"algo.advantage.gamma": gamma, "algo.advantage.lambd": lambd}
    manifest = {"config": {"method": method, "openrlhf_flags": flags}, "seed": seed, "status": "finished"}
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    rows = []
    for step, accuracy in zip(EVAL_STEPS, accuracies, strict=True):
        row = {"step": step, "eval_aime24": accuracy}
        if step:
            row |= {"response_length_mean": 100.0 + seed + step, "token_discount_mean": 0.3 if info else 0.4}
            row |= {"info_discount_mean": 0.5} if info else {}
        rows.append(row)
    rows[-1]["response_length_mean"] = 100.0 + seed
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return run_dir


def contrast_runs(root: Path) -> Path:
    """``root/runs``: arms a and b at seeds 1-3, a fourth seed of a alone, and infoppo at γ = 1 (seeds
    1-3, the same curve as b) that arm a's γ must tell apart."""
    runs = root / "runs"
    for seed in (1, 2, 3):
        write_contrast_run(runs / f"infoppo-g0.99-s{seed}", "infoppo", 0.99, 1.0, seed, curve_a(seed), True)
        write_contrast_run(runs / f"ppo-g0.99-s{seed}", "ppo", 0.99, 1.0, seed, curve_b(seed), False)
        write_contrast_run(runs / f"infoppo-g1-s{seed}", "infoppo", 1.0, 1.0, seed, curve_b(seed), True)
    write_contrast_run(runs / "infoppo-g0.99-s4", "infoppo", 0.99, 1.0, 4, curve_a(4), True)
    return runs


CONTRASTS_TOML = """\
preset = "tiny-cpu-long"          # the benchmark script's own keys: ignored

[[stages]]
name = "clock"
sweep = ["components"]

[[contrasts]]
name = "clock"
a = { method = "infoppo", gamma = 0.99, lambd = 1.0 }
b = { method = "ppo", gamma = 0.99, lambd = 1 }

[[contrasts]]
name = "discount"
bench = "aime24"
a = { method = "infoppo", gamma = 0.99 }
b = { method = "infoppo", gamma = 1.0 }
"""
