"""A stand-in for the ``infoppo`` program in sweep tests: it records its calls, writes what train and eval
would (manifest, metrics, final/, eval metrics) and can be told to sleep, hold, fail (with a given message
and last line) or reject.

Its ``manifest.json`` is train's own (``infoppo_cli.train.run.manifest`` of the plan its command line
gives, planned as ``train --dry-run`` plans): a sweep checks a run it resumes against it, as train does."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from infoppo_cli.atomic import atomic_write_text

STAND_IN = r"""
import json, os, sys, time
from pathlib import Path

config = json.loads(Path(__file__).with_suffix(".json").read_text())
args = sys.argv[1:]
with open(config["calls"], "a") as log:
    log.write(json.dumps(args) + "\n")

def opt(name):
    return args[args.index(name) + 1] if name in args else None

def train_manifest(status):  # what `infoppo train` writes for this command line, planned as its dry run
    from infoppo_cli.train.plan import plan_training
    from infoppo_cli.train.run import manifest

    sys.path.insert(0, config["support"])
    from train_command_line import request_of  # read by train's own parser

    plan = plan_training(request_of(args[1:]), strict_data=False)
    return manifest(plan, status)

def save_manifest(record, **changes):
    from infoppo_cli.rundir import RunDir, write_manifest

    write_manifest(RunDir(out), {**record, **changes})

if args[0] == "train":
    if config.get("reject"):  # train's parser: refused before anything is written
        print("error: no such option: --bogus", file=sys.stderr)
        sys.exit(2)
    out = Path(opt("--output-dir"))
    if "--resume" not in args and (out / "manifest.json").exists():
        print("error: already holds a run; pass --resume", file=sys.stderr)
        sys.exit(2)
    out.mkdir(parents=True, exist_ok=True)
    record = train_manifest("running")
    save_manifest(record)
    print(f"stand-in training {out.name}", flush=True)
    (out / "pid").write_text(str(os.getpid()))
    time.sleep(config.get("sleep", 0))
    while config.get("hold") and not Path(config["hold"]).exists():  # until the test releases it
        time.sleep(0.05)
    if any(token in out.name for token in config.get("fail", [])):
        save_manifest(record, status="failed", exit_code=1)
        print(config.get("fail_message", "stand-in failure"), file=sys.stderr, flush=True)
        print(config.get("fail_after", ""), flush=True)  # e.g. a Ray worker's last words
        sys.exit(1)
    with open(out / "metrics.jsonl", "w") as metrics:
        for step in (1, 2, 3):
            metrics.write(json.dumps({"step": step, "reward_mean": float(opt("--gamma") or 1) * step}) + "\n")
    (out / "final").mkdir(exist_ok=True)
    save_manifest(record, status="finished", exit_code=0)
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
        config["support"] = str(Path(__file__).parent)  # train_command_line: train's own parser
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
    """A prompt JSONL that `infoppo train` accepts as --data (it refuses data shorter than one RL step).
    Written once: a sweep resumed while the first one's jobs still start must not truncate the file they
    are reading."""
    if not path.exists():
        rows = (json.dumps({"prompt": f"What is {n}+1?", "label": str(n + 1)}) for n in range(PROMPTS))
        atomic_write_text(path, "".join(row + "\n" for row in rows))
    return path
