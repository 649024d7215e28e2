"""Time to the error line of every command that reaches the Hugging Face Hub, without network.

Each command runs in a fresh process with an empty Hugging Face cache and ``HF_ENDPOINT`` pointing at
a local port nobody listens on (connection refused, the same on any machine), or with the machine's
own network (``--real-network``). With ``--before DIR`` (a copy of the package from before, e.g.
``git archive HEAD | tar -x -C DIR``) every command also runs on that copy, side by side. Printed per
command and arm: wall seconds, exit code, stderr lines, ``Retrying`` lines, and the last stderr line.

Usage: python benchmarks/bench_offline.py [--before DIR] [--real-network]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COMMANDS = {
    "eval: Hub benchmark": ["eval", "--bench", "aime25", "--model", "org/model", "--backend", "hf"],
    "eval: Hub tokenizer": [
        "eval", "--bench", "aime24", "--data-file", "{bench}", "--model", "org/model", "--backend", "hf",
    ],
    "inspect: Hub model": ["inspect", "--model", "org/model", "--responses", "{responses}"],
    "train: Hub data": [
        "train", "--preset", "qwen3-4b", "--model", "{model}", "--data", "org/dataset", "--dry-run",
        "--eval-bench", "none",
    ],
    "train: Hub model, local data": [
        "train", "--preset", "qwen3-4b", "--data", "{prompts}", "--dry-run", "--eval-bench", "none",
    ],
}  # fmt: skip


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def inputs(work: Path) -> dict[str, str]:
    bench = work / "bench.jsonl"
    bench.write_text(json.dumps({"id": "p1", "problem": "2+3?", "answer": "5"}) + "\n")
    responses = work / "responses.jsonl"
    responses.write_text(json.dumps({"prompt": "2+3?", "response": "5"}) + "\n")
    prompts = work / "prompts.jsonl"
    prompts.write_text(
        "".join(json.dumps({"prompt": f"{i}+1?", "label": str(i + 1)}) + "\n" for i in range(512))
    )
    model = work / "model"  # a local model directory: only the data is a Hub question
    model.mkdir(exist_ok=True)
    (model / "config.json").write_text("{}")
    return {"bench": str(bench), "responses": str(responses), "prompts": str(prompts), "model": str(model)}


def run(args: list[str], package: Path, work: Path, real_network: bool) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_OFFLINE")}
    env.update(PYTHONPATH=str(package), HF_HOME=str(work / "hf-home"), COLUMNS="200")
    if not real_network:
        env["HF_ENDPOINT"] = f"http://127.0.0.1:{closed_port()}"
    out = work / f"out-{time.monotonic_ns()}"
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "infoppo_cli", *args, *(["--out", str(out)] if args[0] != "train" else [])],
        capture_output=True, text=True, cwd=work, env=env, timeout=600,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return {
        "seconds": round(seconds, 1),
        "exit": done.returncode,
        "stderr_lines": len(lines),
        "retrying_lines": sum("Retrying in" in line for line in lines),
        "last": lines[-1][:160] if lines else "",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="a copy of the package from before, run side by side")
    parser.add_argument("--real-network", action="store_true", help="the machine's network, no closed port")
    args = parser.parse_args()
    arms = {"after": ROOT} | ({"before": args.before.resolve()} if args.before else {})
    work = Path(tempfile.mkdtemp(prefix="bench_offline_"))
    names = inputs(work)
    results = {}
    for label, command in COMMANDS.items():
        argv = [part.format(**names) for part in command]
        for arm, package in arms.items():
            result = run(argv, package, work, args.real_network)
            results[f"{label} [{arm}]"] = result
            print(f"{label:32s} {arm:6s} {result['seconds']:6.1f} s  exit {result['exit']}  "
                  f"stderr lines {result['stderr_lines']:2d}  Retrying {result['retrying_lines']:2d}  "
                  f"{result['last']}", flush=True)  # fmt: skip
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
