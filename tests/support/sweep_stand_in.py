"""A stand-in for the ``infoppo`` program in sweep tests: it records its calls, writes what train and eval
would (manifest, metrics, final/, eval metrics) and can be told to sleep, hold, fail (with a given message
and last line) or reject."""

from __future__ import annotations

import json
import sys
from pathlib import Path

STAND_IN = r"""
import json, os, sys, time
from pathlib import Path

config = json.loads(Path(__file__).with_suffix(".json").read_text())
args = sys.argv[1:]
with open(config["calls"], "a") as log:
    log.write(json.dumps(args) + "\n")

def opt(name):
    return args[args.index(name) + 1] if name in args else None

if args[0] == "train":
    out = Path(opt("--output-dir"))
    if "--resume" not in args and (out / "manifest.json").exists():
        print("error: already holds a run; pass --resume", file=sys.stderr)
        sys.exit(2)
    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").write_text(json.dumps({"config": {"method": opt("--method")}}))
    print(f"stand-in training {out.name}", flush=True)
    (out / "pid").write_text(str(os.getpid()))
    time.sleep(config.get("sleep", 0))
    while config.get("hold") and not Path(config["hold"]).exists():  # until the test releases it
        time.sleep(0.05)
    if config.get("reject"):
        print("error: no such option: --bogus", file=sys.stderr)
        sys.exit(2)
    if any(token in out.name for token in config.get("fail", [])):
        print(config.get("fail_message", "stand-in failure"), file=sys.stderr, flush=True)
        print(config.get("fail_after", ""), flush=True)  # e.g. a Ray worker's last words
        sys.exit(1)
    with open(out / "metrics.jsonl", "w") as metrics:
        for step in (1, 2, 3):
            metrics.write(json.dumps({"step": step, "reward_mean": float(opt("--gamma") or 1) * step}) + "\n")
    (out / "final").mkdir(exist_ok=True)
elif args[0] == "eval":
    if not Path(opt("--model")).is_dir():
        print("error: missing model", file=sys.stderr)
        sys.exit(2)
    out = Path(opt("--out"))
    out.mkdir(parents=True, exist_ok=True)
    scores = {bench: {"mean@k": 12.5} for bench in opt("--bench").split(",")}
    (out / "metrics.json").write_text(json.dumps({"benches": scores}))
    print("stand-in eval done", flush=True)
"""


class StandIn:
    """The stand-in script, its instructions and the log of its invocations."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.script = directory / "stand_in.py"
        self.script.write_text(STAND_IN)
        self.calls_path = directory / "calls.jsonl"
        self.configure()

    def configure(self, **config) -> None:
        config["calls"] = str(self.calls_path)
        self.script.with_suffix(".json").write_text(json.dumps(config))

    @property
    def executable(self) -> list[str]:
        return [sys.executable, str(self.script)]

    def calls(self) -> list[list[str]]:
        if not self.calls_path.exists():
            return []
        return [json.loads(line) for line in self.calls_path.read_text().splitlines()]


PROMPTS = 512
"""Prompts in the stand-in data: one RL step of every shipped preset and method (DAPO's is 512)."""


def write_prompts(path: Path) -> Path:
    """A prompt JSONL that `infoppo train` accepts as --data (it refuses data shorter than one RL step)."""
    rows = (json.dumps({"prompt": f"What is {n}+1?", "label": str(n + 1)}) for n in range(PROMPTS))
    path.write_text("".join(row + "\n" for row in rows))
    return path
