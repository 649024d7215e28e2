"""Bad input never costs the user anything: every row runs one bad command line through the
real CLI (``infoppo_cli.cli.main``, in process) in a scratch workspace, and checks the exit code, one
``error:`` line naming the problem, no traceback, and a workspace left exactly as it was."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shlex
import stat
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from infoppo_cli.cli import main

GOOD_ROWS = [
    {"prompt": "What is 2+2?", "label": "4"},
    {"prompt": "What is 3+3?", "label": "6"},
    {"prompt": "求 $1+1$。", "label": "2"},
]


def _jsonl(rows) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def build_workspace(root: Path) -> None:
    """Inputs good and bad, outputs that must survive, and special files where outputs might go."""
    (root / "good.jsonl").write_text(_jsonl(GOOD_ROWS))
    (root / "prompts.jsonl").write_text(_jsonl(GOOD_ROWS * 22))  # 66 rows: more than one RL step (64)
    (root / "good.json").write_text(json.dumps(GOOD_ROWS))
    pq.write_table(pa.Table.from_pylist(GOOD_ROWS), root / "good.parquet")
    (root / "english.jsonl").write_text(_jsonl(GOOD_ROWS[:2]))
    (root / "empty.jsonl").write_bytes(b"")
    (root / "blank.jsonl").write_text("\n  \n\n")
    (root / "empty.json").write_text("[]")
    pq.write_table(
        pa.Table.from_pylist([], schema=pa.schema([("prompt", pa.string()), ("label", pa.string())])),
        root / "empty.parquet",
    )
    (root / "gzipped.jsonl").write_bytes(gzip.compress(_jsonl(GOOD_ROWS).encode()))
    (root / "nul.jsonl").write_bytes(b'{"prompt": "a\x00b", "label": "1"}\n' * 3)
    (root / "latin1.jsonl").write_bytes('{"prompt": "caf\xe9", "label": "1"}\n'.encode("latin-1") * 3)
    (root / "binary.json").write_bytes(bytes(range(256)))
    (root / "utf16.jsonl").write_bytes(_jsonl(GOOD_ROWS).encode("utf-16"))  # with its byte-order mark
    (root / "utf32.json").write_bytes(json.dumps(GOOD_ROWS).encode("utf-32"))
    (root / "parquet-named.jsonl").write_bytes((root / "good.parquet").read_bytes())
    (root / "text.parquet").write_text("not a parquet file\n")
    (root / "truncated.parquet").write_bytes((root / "good.parquet").read_bytes()[:-30])
    (root / "malformed.jsonl").write_text("{broken\nnot json\n[1, 2]\n")
    (root / "no-fields.jsonl").write_text(_jsonl([{"x": 1}, {"y": 2}]))
    (root / "no-labels.jsonl").write_text(_jsonl([{"prompt": "What is 1+1?"}, {"prompt": "And 2+2?"}]))
    (root / "blank-prompts.jsonl").write_text(
        _jsonl([{"prompt": "  ", "label": "1"}, {"prompt": "", "label": "2"}])
    )
    (root / "numbers.jsonl").write_text("1\n2\n3\n")
    (root / "object.json").write_text('{"prompt": "What is 2+2?", "label": "4"}')
    (root / "broken.json").write_text('[{"prompt": "x", ')
    pq.write_table(pa.table({"text": ["a"], "score": [1]}), root / "other-columns.parquet")
    (root / "rows.csv").write_text("prompt,label\nWhat is 2+2?,4\n")
    (root / "noext").write_text(_jsonl(GOOD_ROWS))
    (root / "a.conflicts.jsonl").write_text(_jsonl(GOOD_ROWS))
    (root / "kept.jsonl").write_text('{"previous": "output"}\n')
    (root / "adir").mkdir()
    (root / "adir" / "inside.txt").write_text("keep me\n")
    (root / "afile.txt").write_text("a plain file\n")
    os.mkfifo(root / "fifo")
    os.link(root / "good.jsonl", root / "hardlink.jsonl")
    (root / "symlink.jsonl").symlink_to(root / "good.jsonl")
    (root / "devnull").symlink_to("/dev/null")
    (root / "runs" / "r1").mkdir(parents=True)
    (root / "runs" / "r1" / "metrics.jsonl").write_text('{"step": 1, "accuracy": 0.5}\n')
    (root / "emptydir").mkdir()
    for name, text in BAD_SWEEP_STATES.items():  # --- sweep: a sweep.json of the wrong shape per directory
        (root / "sweeps" / name).mkdir(parents=True)
        (root / "sweeps" / name / "sweep.json").write_text(text)
    (root / "sweeps" / "dir-state" / "sweep.json").mkdir(parents=True)
    build_train_inputs(root)  # --- train/grade: preset, methods and manifest files of the wrong kind


SHIPPED_4B = Path(__file__).parents[2] / "presets" / "qwen3-4b.toml"
GOOD_MANIFEST = {
    "config": {
        "request": {"preset": "qwen3-4b", "method": "ppo", "seed": 3, "overrides": []},
        "openrlhf_flags": {"ckpt.path": "/tmp/x/ckpt", "train.seed": 3, "data.prompt_dataset": "good.jsonl"},
    },
    "command": ["python", "-m", "infoppo_cli.openrlhf_adapter.launch"],
    "versions": {},
    "git_commit": None,
}
BAD_MANIFESTS = {
    "m-list": [],
    "m-empty-request": {**GOOD_MANIFEST, "config": {**GOOD_MANIFEST["config"], "request": {}}},
    "m-seed-text": {"request": {"seed": "abc"}},
    "m-overrides-text": {"request": {"overrides": "rollout.batch_size=8"}},
    "m-bad-override": {"request": {"overrides": ["rollout.batch_size=8.5"]}},
    "m-no-ckpt": {"openrlhf_flags": {"train.seed": 3}},
    "m-command-text": "command",
}


def _manifest(change) -> object:
    """GOOD_MANIFEST with one part of ``config`` changed (a dict), or a whole other document."""
    if not isinstance(change, dict) or "config" in change:
        return {**GOOD_MANIFEST, "command": "python"} if change == "command" else change
    config = {key: {**value, **change.get(key, {})} for key, value in GOOD_MANIFEST["config"].items()}
    if "openrlhf_flags" in change:
        config["openrlhf_flags"] = change["openrlhf_flags"]
    return {**GOOD_MANIFEST, "config": config}


def build_train_inputs(root: Path) -> None:
    shipped = SHIPPED_4B.read_text()
    (root / "typo-preset.toml").write_text(shipped.replace('"rollout.batch_size"', '"rollout.batch_sise"'))
    (root / "float-preset.toml").write_text(
        shipped.replace('"rollout.batch_size" = 64', '"rollout.batch_size" = 32.5')
    )
    (root / "endless-preset.toml").write_text(shipped.replace("steps = 1050", "steps = 1000000000000"))
    (root / "inf-methods.toml").write_text(
        '[mine]\nsummary = "PPO"\nextends = "ppo"\n[mine.openrlhf]\n"actor.adam.lr" = inf\n'
    )
    (root / "unknown-key-preset.toml").write_text(shipped.replace("nodes = 1", "nodes = 1\ngpus = 8", 1))
    (root / "no-eps-methods.toml").write_text('[wide]\nsummary = "x"\nextends = "ppo"\nclip = "adaptive"\n')
    (root / "licence-benches.toml").write_text(
        '[mine]\ntitle = "x"\nhf_id = "a/b"\nsplit = "test"\nproblem_column = "q"\nanswer_column = "a"\n'
        'size = 2\nlicence = "x"\n'
    )
    for name, change in BAD_MANIFESTS.items():
        (root / "runs" / name).mkdir(parents=True)
        (root / "runs" / name / "manifest.json").write_text(json.dumps(_manifest(change)))


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under ``root``: its kind, permissions and (for files) a hash of its bytes."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            info = path.lstat()
            digest = None
            if stat.S_ISREG(info.st_mode):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            elif stat.S_ISLNK(info.st_mode):
                digest = os.readlink(path)
            state[str(path.relative_to(root))] = (
                stat.S_IFMT(info.st_mode),
                stat.S_IMODE(info.st_mode),
                digest,
            )
    return state


def row(args: str, code: int, fragment: str, *marks, id: str | None = None):
    return pytest.param(args, code, fragment, marks=marks, id=id or args)


PREP = "data prep dapo-math-17k --source good.jsonl"
TRAIN = "train --preset qwen3-4b --data prompts.jsonl --dry-run"
SWEEP = "sweep gamma --dry-run --data good.jsonl"


def _sweep_state(run: dict | None = None, **fields) -> str:
    """A sweep.json as `infoppo sweep` writes it (one run), with ``fields`` and ``run`` changed."""
    phase = {"name": "train", "request": {"preset": "qwen3-4b"}, "status": "done"}
    record = {
        "name": "gamma-0.999-info-seed1", "kind": "gamma", "value": 0.999, "value_label": "0.999",
        "time": "info", "method": "infoppo", "seed": 1, "parameters": {}, "output_dir": "/x/r",
        "phases": [phase], "status": "done", **(run or {}),
    }  # fmt: skip
    document = {
        "schema": 2, "kind": "gamma", "preset": "qwen3-4b", "sweep_id": "ab12cd34", "created": "t",
        "updated": "t", "command": [], "settings": {}, "versions": {}, "runs": [record], **fields,
    }  # fmt: skip
    return json.dumps(document)


BAD_SWEEP_STATES = {
    "list": "[]",
    "old-schema": _sweep_state(schema=0),
    "runs-object": _sweep_state(runs={}),
    "seed-text": _sweep_state(run={"seed": "1"}),
    "phase-status": _sweep_state(run={"phases": [{"name": "train", "request": {"a": 1}, "status": "ok"}]}),
    "no-train": _sweep_state(run={"phases": []}),
}
INSPECT = "inspect --model missing-model --responses good.jsonl"
EVAL = "eval --backend hf --model missing-model --bench amc23=good.jsonl"
EVAL_M = "eval --backend hf --model m/x --out evals/x"
EVAL_ADIR = "eval --backend hf --model adir --bench mine=good.jsonl"

ROWS = [
    # --- the entry point and Typer's own parsing: one `error:` line, exit 2 ---
    row("trian", 2, "No such command 'trian'"),
    row("--bogus", 2, "No such option: --bogus"),
    row("data clean", 2, "No such command 'clean'"),
    row("data prep", 2, "Missing argument"),
    row("data prep gsm8k", 2, "unknown dataset 'gsm8k'"),
    row("data prep dapo-math-17k --limit abc", 2, "Invalid value for '--limit'"),
    row("data prep dapo-math-17k --limit 1.5", 2, "Invalid value for '--limit'"),
    row("data prep dapo-math-17k --bogus", 2, "No such option: --bogus"),
    row("data prep dapo-math-17k --strict=yes", 2, "--strict"),
    row("data prep dapo-math-17k --out", 2, "--out"),
    row("data prep dapo-math-17k extra-argument", 2, "unexpected extra argument"),
    row("presets --bogus", 2, "No such option: --bogus"),
    row("presets extra", 2, "unexpected extra argument"),
    row("benches --bogus", 2, "No such option: --bogus"),
    row("report", 2, "Missing argument"),
    row("report runs/r1 --bogus", 2, "No such option: --bogus"),
    row("sweep", 2, "Missing argument"),
    row("sweep gamma --seeds x --dry-run", 2, "Invalid value for '--seeds'"),
    row("sweep gamma --max-parallel x --dry-run", 2, "Invalid value for '--max-parallel'"),
    row("train --seed abc", 2, "Invalid value for '--seed'"),
    row("train --gamma high", 2, "Invalid value for '--gamma'"),
    row("train --lambd x", 2, "Invalid value for '--lambda' / '--lambd'"),
    row("train --nodes two", 2, "Invalid value for '--nodes'"),
    row("train --gpus-per-node 1.5", 2, "Invalid value for '--gpus-per-node'"),
    row("train --norm foo", 2, "Invalid value for '--norm'"),
    row("train --eps-low-info x", 2, "Invalid value for '--eps-low-info'"),
    row("train --bogus", 2, "No such option: --bogus"),
    row("train positional", 2, "unexpected extra argument"),
    row("eval --samples many", 2, "Invalid value for '--samples'"),
    row("eval --temperature hot", 2, "Invalid value for '--temperature'"),
    row("eval --top-p x", 2, "Invalid value for '--top-p'"),
    row("eval --max-tokens x", 2, "Invalid value for '--max-tokens'"),
    row("eval --seed x", 2, "Invalid value for '--seed'"),
    row("eval --workers x", 2, "Invalid value for '--workers'"),
    row("eval --batch-size x", 2, "Invalid value for '--batch-size'"),
    row("eval --grade-timeout x", 2, "Invalid value for '--grade-timeout'"),
    row("eval --tensor-parallel x", 2, "Invalid value for '--tensor-parallel'"),
    row("eval --bogus", 2, "No such option: --bogus"),
    row("eval positional", 2, "unexpected extra argument"),
    # --- data prep: the options ---
    row(f"{PREP} --template chatml", 2, "unknown template 'chatml'"),
    row(f"{PREP} --lang fr", 2, "unknown language 'fr'"),
    row(f"{PREP} --lang EN", 2, "unknown language 'EN'"),
    row(f"{PREP} --limit 0", 2, "--limit must be a positive"),
    row(f"{PREP} --limit -5", 2, "--limit must be a positive"),
    row(f"{PREP} --lang zh --limit 0", 2, "--limit must be a positive"),
    # --- data prep: the source ---
    row("data prep dapo-math-17k --source missing.parquet", 2, "no such file: missing.parquet"),
    row("data prep dapo-math-17k --source missing.jsonl", 2, "no such file: missing.jsonl"),
    row("data prep dapo-math-17k --source missing.json", 2, "no such file: missing.json"),
    row("data prep dapo-math-17k --source ./missing", 2, "no such file: ./missing"),
    row("data prep dapo-math-17k --source adir", 2, "is a directory"),
    row("data prep dapo-math-17k --source emptydir", 2, "is a directory"),
    row("data prep dapo-math-17k --source fifo", 2, "--source fifo is not a regular file"),
    row("data prep dapo-math-17k --source empty.jsonl", 2, "no rows to prepare (the source is empty)"),
    row("data prep dapo-math-17k --source blank.jsonl", 2, "no rows to prepare (the source is empty)"),
    row("data prep dapo-math-17k --source empty.json", 2, "no rows to prepare (the source is empty)"),
    row("data prep dapo-math-17k --source empty.parquet", 2, "no rows to prepare (the source is empty)"),
    row("data prep dapo-math-17k --source gzipped.jsonl", 2, "not UTF-8 JSON text: it is gzip-compressed"),
    row("data prep dapo-math-17k --source nul.jsonl", 2, "a binary file, not UTF-8 JSON text"),
    row("data prep dapo-math-17k --source latin1.jsonl", 2, "is not UTF-8; Latin-1 or another encoding?"),
    row("data prep dapo-math-17k --source binary.json", 2, "a binary file, not UTF-8 JSON text"),
    row("data prep dapo-math-17k --source parquet-named.jsonl", 2, "it is parquet; name it .parquet"),
    row("data prep dapo-math-17k --source utf16.jsonl", 2, "UTF-16 text (it starts with a UTF-16 byte-order"),
    row("data prep dapo-math-17k --source utf32.json", 2, "the file is UTF-32 text"),
    row("data prep dapo-math-17k --source text.parquet", 2, "not a readable parquet file"),
    row("data prep dapo-math-17k --source truncated.parquet", 2, "not a readable parquet file"),
    row("data prep dapo-math-17k --source other-columns.parquet", 2, "no prompt/problem/question column"),
    row(
        "data prep dapo-math-17k --source malformed.jsonl",
        2,
        "all 3 rows are malformed (invalid JSON 2, wrong type 1)",
    ),
    row("data prep dapo-math-17k --source no-fields.jsonl", 2, "all 2 rows are malformed (missing prompt 2)"),
    row(
        "data prep dapo-math-17k --source no-labels.jsonl",
        2,
        "all 2 rows are malformed (missing ground truth 2)",
    ),
    row("data prep dapo-math-17k --source blank-prompts.jsonl", 2, "all 2 rows are malformed"),
    row("data prep dapo-math-17k --source numbers.jsonl", 2, "all 3 rows are malformed (wrong type 3)"),
    row("data prep dapo-math-17k --source malformed.jsonl --strict", 2, "row 1 is malformed (invalid JSON)"),
    row("data prep dapo-math-17k --source object.json", 2, "expected a JSON list of row objects"),
    row("data prep dapo-math-17k --source broken.json", 2, "not a readable JSON file"),
    row("data prep dapo-math-17k --source rows.csv", 2, "unsupported file type .csv"),
    row("data prep dapo-math-17k --source noext", 2, "unsupported file type (none)"),
    row(
        "data prep dapo-math-17k --source english.jsonl --lang zh",
        2,
        "none of its 2 problems is in --lang zh",
    ),
    row("data prep dapo-math-17k --source not/a/hub/id", 2, "no such file: not/a/hub/id"),
    row("data prep dapo-math-17k --source 'has space/x y'", 2, "no such file"),
    # --- data prep: the output ---
    row(f"{PREP} --out fifo", 2, "is a FIFO (named pipe), not a regular file"),
    row(f"{PREP} -o fifo", 2, "is a FIFO (named pipe), not a regular file"),
    row(f"{PREP} --out /dev/null", 2, "is a character device, not a regular file"),
    row(f"{PREP} --out devnull", 2, "is a character device, not a regular file"),
    row(f"{PREP} --out adir", 2, "is a directory; give a file path"),
    row(f"{PREP} --out .", 2, "is a directory; give a file path"),
    row(f"{PREP} --out afile.txt/out.jsonl", 2, "afile.txt is a file, so no directory can be made there"),
    row(
        f"{PREP} --out afile.txt/deeper/out.jsonl",
        2,
        "afile.txt is a file, so no directory can be made there",
    ),
    row(f"{PREP} --out good.jsonl", 2, "is the command's own input"),
    row(f"{PREP} --out ./good.jsonl", 2, "is the command's own input"),
    row(f"{PREP} --out adir/../good.jsonl", 2, "is the command's own input"),
    row(f"{PREP} --out hardlink.jsonl", 2, "is the command's own input"),
    row(f"{PREP} --out symlink.jsonl", 2, "is the command's own input"),
    row("data prep dapo-math-17k --source good.parquet --out good.parquet", 2, "is the command's own input"),
    row("data prep dapo-math-17k --source a.conflicts.jsonl --out a.jsonl", 2, "conflicts list"),
    row(f"{PREP} --out /sys/infoppo/out.jsonl", 2, "cannot write in /sys"),
    row(f"{PREP} --out /proc/out.jsonl", 2, "cannot write in /proc"),
    row(f"{PREP} --out kept.jsonl --template chatml", 2, "unknown template"),
    row("data prep dapo-math-17k --source malformed.jsonl --out kept.jsonl", 2, "all 3 rows are malformed"),
    row("data prep dapo-math-17k --source empty.jsonl --out kept.jsonl", 2, "the source is empty"),
    row(
        "data prep dapo-math-17k --source no-fields.jsonl --out kept.jsonl --strict", 2, "row 1 is malformed"
    ),
    # --- train: the output directory ---
    row(f"{TRAIN} --output-dir fifo", 2, "fifo is a FIFO (named pipe), not a regular directory"),
    row(f"{TRAIN} --output-dir afile.txt", 2, "afile.txt is a file; give a directory"),
    row(f"{TRAIN} --output-dir /dev/null", 2, "is a character device"),
    row(f"{TRAIN} --output-dir afile.txt/run", 2, "is a file, so no directory can be made there"),
    row(f"{TRAIN} --output-dir /sys/infoppo-run", 2, "cannot write in /sys"),
    row("train --dry-run", 2, "--preset is required"),
    row("train --preset nope --dry-run", 2, "unknown preset 'nope'"),
    row("train --preset qwen3-4b --method nope --dry-run", 2, "unknown method 'nope'"),
    row(f"{TRAIN} --gamma 1.5", 2, "--gamma must be in (0.0, 1.0], got 1.5"),
    row(f"{TRAIN} --gamma 0", 2, "--gamma must be in (0.0, 1.0], got 0.0"),
    row(f"{TRAIN} --lambd 1.5", 2, "--lambda must be in [0.0, 1.0], got 1.5"),
    row(f"{TRAIN} --lambda -0.1", 2, "--lambda must be in [0.0, 1.0], got -0.1"),
    row(f"{TRAIN} --eps-low-info -1", 2, "--eps-low-info must be a finite number >= 0, got -1.0"),
    row(f"{TRAIN} --eps-high-info -1", 2, "--eps-high-info must be a finite number >= 0, got -1.0"),
    row(f"{TRAIN} --nodes 0", 2, "--nodes must be >= 1, got 0"),
    row(f"{TRAIN} --gpus-per-node 0", 2, "--gpus-per-node must be >= 1, got 0"),
    row(f"{TRAIN} --set nonsense", 2, "--set expects KEY=VALUE"),
    row(f"{TRAIN} --set no.such.flag=1", 2, "OpenRLHF 0.11.2 has no flag --no.such.flag"),
    row("train --preset qwen3-4b --data missing.jsonl", 2, "data file missing.jsonl not found"),
    row("train --preset qwen3-4b --preset-typo", 2, "No such option"),
    row(f"{TRAIN} --seed -1", 2, "--seed must be >= 0, got -1"),
    # --- one set of limits, the same in train, eval and sweep; zero and empty text are no values ---
    row(f"{TRAIN} --seed 4294967296", 2, "--seed must be at most 4,294,967,295, got 4,294,967,296"),
    row(f"{TRAIN} --set train.seed=4294967296", 2, "--set train.seed must be at most 4,294,967,295"),
    row(f"{TRAIN} --steps 0", 2, "--steps must be >= 1, got 0"),
    row(f"{TRAIN} --steps 1000000000000", 2, "--steps must be at most 1,000,000, got 1,000,000,000,000"),
    row(f"{TRAIN} --eval-every 0", 2, "--eval-every must be >= 1, got 0"),
    row(f"{TRAIN} --eval-samples 0", 2, "--eval-samples must be >= 1, got 0"),
    row(f"{TRAIN} --eval-samples 100000000", 2, "--eval-samples must be at most 100,000, got 100,000,000"),
    row(f"{TRAIN} --set eval.n_samples_per_prompt=100001", 2, "must be 1 to 100,000, got 100001"),
    row(f"{TRAIN} --set ckpt.save_steps=0", 2, "--ckpt.save_steps must be -1 (never) or >= 1, got 0"),
    row(f"{TRAIN} --set eval.steps=0", 2, "--eval.steps must be -1 (never) or >= 1, got 0"),
    row(f"{TRAIN} --output-dir ''", 2, "--output-dir is empty; give a value, or leave the option out"),
    row(f"{TRAIN} --model ' '", 2, "--model is empty"),
    row(f"{TRAIN} --eval-bench ''", 2, "--eval-bench is empty"),
    row(
        "train --preset endless-preset.toml --data good.jsonl --dry-run",
        2,
        "preset file endless-preset.toml: steps must be at most 1,000,000, got 1000000000000",
    ),
    row("train --preset qwen3-4b --data adir --dry-run", 2, "adir is a directory"),
    row("train --preset qwen3-4b --data empty.jsonl --dry-run", 2, "empty.jsonl is empty"),
    row("train --preset qwen3-4b --data rows.csv --dry-run", 2, "rows.csv must be a .jsonl or .parquet file"),
    row("train --preset qwen3-4b --data no-labels.jsonl --dry-run", 2, "lacks the column 'label'"),
    row(f"{TRAIN} --model ./no-such-model", 2, "model path ./no-such-model does not exist"),
    row(f"{TRAIN} --set actor.adam.lr=0", 2, "--actor.adam.lr must be > 0, got 0"),
    row(f"{TRAIN} --set actor.adam.lr=-1e-6", 2, "--actor.adam.lr must be > 0, got -1e-6"),
    row(
        f"{TRAIN} --set rollout.n_samples_per_prompt=0",
        2,
        "n_samples_per_prompt must be >= 1, got 0",
    ),
    row(f"{TRAIN} --seed 1 --set train.seed=2", 2, "disagree"),
    # --- train: values of the wrong type or that no run can mean, refused before they cost anything ---
    row(
        f"{TRAIN} --set rollout.batch_size=32.5",
        2,
        "--set rollout.batch_size=32.5: rollout.batch_size takes an integer",
    ),
    row(f"{TRAIN} --set train.micro_batch_size=1.5", 2, "train.micro_batch_size takes an integer"),
    row(f"{TRAIN} --set train.max_epochs=abc", 2, "train.max_epochs takes an integer"),
    row(f"{TRAIN} --set actor.adam.lr=fast", 2, "actor.adam.lr takes a number"),
    row(f"{TRAIN} --set actor.eps_clip_low_high=0.2", 2, "actor.eps_clip_low_high takes 2 values, got 1"),
    row(f"{TRAIN} --set ds.packing_samples=maybe", 2, "ds.packing_samples is a switch"),
    row(f"{TRAIN} --set algo.advantage.estimator=ppo2", 2, "algo.advantage.estimator must be one of gae"),
    row(f"{TRAIN} --set actor.adam.lr=inf", 2, "actor.adam.lr must be a finite number"),
    row(f"{TRAIN} --set critic.adam.lr=nan", 2, "critic.adam.lr must be a finite number"),
    row(f"{TRAIN} --set algo.advantage.gamma=-inf", 2, "algo.advantage.gamma must be a finite number"),
    row(f"{TRAIN} --set rollout.temperature=-1", 2, "--rollout.temperature must be > 0, got -1"),
    row(f"{TRAIN} --set rollout.temperature=0", 2, "--rollout.temperature must be > 0, got 0"),
    row(f"{TRAIN} --set eval.temperature=-1", 2, "--eval.temperature must be >= 0, got -1"),
    row(f"{TRAIN} --set rollout.top_p=0", 2, "--rollout.top_p must be in (0, 1], got 0"),
    row(f"{TRAIN} --set rollout.top_p=1.5", 2, "--rollout.top_p must be in (0, 1], got 1.5"),
    row(f"{TRAIN} --set critic.adam.lr=-2e-6", 2, "--critic.adam.lr must be > 0, got -2e-6"),
    row(f"{TRAIN} --set actor.lr_warmup_ratio=1.5", 2, "--actor.lr_warmup_ratio must be in [0, 1], got 1.5"),
    row(
        f"{TRAIN} --set algo.advantage.gamma=1.5",
        2,
        "--algo.advantage.gamma (--gamma) must be in (0.0, 1.0], got 1.5",
    ),
    row(f"{TRAIN} --set actor.adam.betas=0.9,1", 2, "--actor.adam.betas must be in [0, 1), got 0.9 1"),
    row(f"{TRAIN} --set actor.dual_clip=1", 2, "--actor.dual_clip must be > 1, got 1"),
    row(f"{TRAIN} --set ds.zero_stage=4", 2, "--ds.zero_stage must be 0, 1, 2 or 3, got 4"),
    row(f"{TRAIN} --set train.batch_size=0", 2, "--train.batch_size must be >= 1, got 0"),
    row(f"{TRAIN} --set reward.clip_range=1,-1", 2, "--reward.clip_range takes LOW HIGH with LOW < HIGH"),
    row(
        f"{TRAIN} --set rollout.batch_size=32 --set rollout.batch_size=64",
        2,
        "--set rollout.batch_size is given twice (32 and 64); give it once",
    ),
    row(f"{TRAIN} --set rollout.max_new_tokens=20000", 2, "raise data.max_len with it (--set data.max_len=N"),
    row(
        "train --preset typo-preset.toml --data good.jsonl --dry-run",
        2,
        "preset file typo-preset.toml: [openrlhf] rollout.batch_sise is not a flag of OpenRLHF 0.11.2 "
        "(did you mean --rollout.batch_size?)",
    ),
    row(
        "train --preset float-preset.toml --data good.jsonl --dry-run",
        2,
        "preset file float-preset.toml: [openrlhf] rollout.batch_size takes an integer, got 32.5",
    ),
    row(
        f"{TRAIN} --methods-file inf-methods.toml --method mine",
        2,
        "methods file inf-methods.toml: [mine.openrlhf] actor.adam.lr must be a finite number, got inf",
    ),
    # --- options and data files declared once: schema checks of preset, methods and benchmark files ---
    row(
        "train --preset unknown-key-preset.toml --data good.jsonl --dry-run",
        2,
        "preset file unknown-key-preset.toml: gpus is not a known key (known: summary, model, task",
    ),
    row(
        f"{TRAIN} --methods-file no-eps-methods.toml --method wide",
        2,
        "methods file no-eps-methods.toml: [wide.infotime] eps_low_info is missing",
    ),
    row(
        f"{TRAIN} --eval-bench mine --benches-file licence-benches.toml",
        2,
        "[mine] licence is not a known key",
    ),
    row("presets --methods-file no-eps-methods.toml", 2, "[wide.infotime] eps_low_info is missing"),
    row(
        "train --replay runs/m-list --gamma 0.9",
        2,
        "--replay takes its plan from the run; use --set instead of --gamma",
    ),
    row("train --replay runs/m-list --no-eval-before", 2, "use --set instead of --no-eval-before"),
    row("sweep lambda --dry-run --data good.jsonl --lambda 0.9", 2, "--lambda is set by the lambda sweep"),
    row("sweep gamma --dry-run --data good.jsonl --replay runs/x", 2, "No such option: --replay"),
    row(f"{SWEEP} --launcher cloud", 2, "Invalid value for '--launcher'"),
    row(f"{SWEEP} --gamma-typo 1", 2, "No such option: --gamma-typo"),
    row(f"{SWEEP} --steps 0", 2, "--steps must be >= 1, got 0"),  # the runs' TrainRequest is checked
    row(  # the components sweep's first arm is ppo (the gamma sweep's token arm, info-clip, uses rho)
        "sweep components --dry-run --data good.jsonl --norm batch",
        2,
        "--norm only applies to a method that uses rho, not ppo",
    ),
    row("grade 'Answer: 4' --gold 4 --workers 0", 2, "--workers must be >= 1, got 0"),
    # --- train --replay: a manifest that parses but has the wrong shape names the file and the field ---
    row(
        "train --replay runs/m-list --dry-run",
        2,
        "runs/m-list/manifest.json is not an infoppo train manifest: it is not a JSON object",
    ),
    row(
        "train --replay runs/m-empty-request --dry-run",
        2,
        "config.request is missing, empty or not an object",
    ),
    row(
        "train --replay runs/m-seed-text --dry-run",
        2,
        'infoppo train manifest: config.request.seed = "abc" is not an integer or null',
    ),
    row(
        "train --replay runs/m-overrides-text --dry-run",
        2,
        'config.request.overrides = "rollout.batch_size=8" is not a list of strings',
    ),
    row(
        "train --replay runs/m-bad-override --dry-run",
        2,
        "config.request.overrides holds 'rollout.batch_size=8.5', which infoppo now refuses",
    ),
    row("train --replay runs/m-no-ckpt --dry-run", 2, "config.openrlhf_flags.ckpt.path is missing"),
    row("train --replay runs/m-command-text --dry-run", 2, "command is missing or not a list of strings"),
    row("train --replay runs/m-seed-text/manifest.json --dry-run", 2, "config.request.seed"),
    # --- rundir: --resume reads the same manifest with the same one-line error as --replay ---
    row(
        f"{TRAIN} --resume --eval-bench none --output-dir runs/m-list",
        2,
        "m-list/manifest.json is not an infoppo train manifest: it is not a JSON object",
    ),
    row(
        f"{TRAIN} --resume --eval-bench none --output-dir runs/m-empty-request",
        2,
        "train manifest: config.infotime is missing, empty or not an object",
    ),
    # --- grade: an empty gold answer is bad input (a wrong answer exits 1: tests/cli/test_grade.py) ---
    row("grade 'Answer: 4' --gold ''", 2, "--gold is empty; give the gold answer to grade against"),
    row("grade 'Answer: 4' --gold '   '", 2, "--gold is empty"),
    row("grade --gold 4", 2, "give a RESPONSE and its --gold answer"),
    row("grade 'Answer: 4' --gold 4 --workers 2000", 2, "--workers must be at most 1,024"),  # eval's limit
    row("grade 'Answer: 4' --gold 4 --only wrong", 2, "--only applies to --file"),
    # --- eval: the output directory, the model, benchmarks and sampling options ---
    row(f"{EVAL} --out fifo", 2, "--out fifo is a FIFO"),
    row(f"{EVAL} --out afile.txt", 2, "--out afile.txt is a file; give a directory"),
    row(f"{EVAL} --out /dev/null", 2, "is a character device"),
    row(f"{EVAL} --out afile.txt/x", 2, "is a file, so no directory can be made there"),
    row(f"{EVAL} --out /sys/infoppo-eval", 2, "cannot write in /sys"),
    row("eval", 2, "no model to evaluate: no run under runs/ has a final/ model"),
    row("eval --bench amc23", 2, "pass --model PATH_OR_HF_ID"),
    row(f"{EVAL} --out evals/x --temperature -1", 2, "--temperature must be >= 0"),
    row(f"{EVAL} --out evals/x --top-p 0", 2, "--top-p must be in (0, 1]"),
    row(f"{EVAL} --out evals/x --top-p 1.5", 2, "--top-p must be in (0, 1]"),
    row(f"{EVAL} --out evals/x --max-tokens 0", 2, "--max-tokens must be >= 1"),
    row(f"{EVAL} --out evals/x --backend foo", 2, "unknown backend 'foo'"),
    row("eval --backend hf --model m --bench nope --out evals/x", 2, "unknown benchmark 'nope'"),
    row("eval --backend hf --model m --bench , --out evals/x", 2, "no benchmark given"),
    row(
        "eval --backend hf --model afile.txt --bench amc23 --out evals/x",
        2,
        "not a Hugging Face model directory",
    ),
    row(
        "eval --backend hf --model adir --bench amc23 --out evals/x", 2, "not a Hugging Face model directory"
    ),
    row(
        "eval --backend hf --model emptydir --bench amc23 --out evals/x",
        2,
        "not a Hugging Face model directory",
    ),
    row(
        "eval --backend hf --model ./gone --bench amc23 --out evals/x", 2, "--model ./gone: no such directory"
    ),
    row("eval --backend hf --model m --bench amc23=good.jsonl --out evals/x", 2, "--model m"),
    row(f"{EVAL} --out evals/x --samples 0", 2, "--samples must be >= 1, got 0"),
    # --- eval: --bench NAME=FILE and --benches-file, values that cannot be meant, the output inside an
    # input, a Hub load without network (the session is offline: HF_HUB_OFFLINE=1) ---
    row(f"{EVAL_M} --bench aime24=missing.jsonl", 2, "--bench aime24=missing.jsonl: no such file"),
    row(f"{EVAL_M} --bench mine=noext", 2, "--bench mine=noext: unsupported file type (none)"),
    row(f"{EVAL_M} --bench mine=adir", 2, "--bench mine=adir: unsupported file type (none)"),
    row(f"{EVAL_M} --bench 'My Bench=good.jsonl'", 2, "a benchmark name is lowercase letters"),
    row(f"{EVAL_M} --bench all=good.jsonl", 2, "'all' is a word of the selection syntax"),
    row(f"{EVAL_M} --bench =good.jsonl", 2, "give the benchmark's name before '='"),
    row(f"{EVAL_M} --bench mine=", 2, "give a file after '='"),
    row(f"{EVAL_M} --bench mine=good.jsonl,mine=english.jsonl", 2, "mine is given twice, with different"),
    row(f"{EVAL_M} --bench aime24,aime99=", 2, "give a file after '='"),
    row(f"{EVAL_M} --bench mine=empty.jsonl", 2, "empty.jsonl: the file holds no rows"),
    row(f"{EVAL_M} --bench mine=no-labels.jsonl", 2, "no answer column found"),
    row(f"{EVAL_M} --bench mine=malformed.jsonl", 2, "malformed.jsonl:1: not valid JSON"),
    row(f"{EVAL_M} --bench mine=rows.csv", 2, "cannot load the tokenizer of m/x: not in the local"),
    row(f"{EVAL_M} --bench aime25", 2, "cannot load aime25 (opencompass/AIME2025 [AIME2025-I]): not in"),
    row(f"{EVAL_M} --benches-file missing.toml", 2, "missing.toml: no such file"),
    row(f"{EVAL_M} --benches-file afile.txt", 2, "afile.txt: not valid TOML"),
    row(f"{EVAL_M} --benches-file good.json", 2, "good.json: not valid TOML"),
    row(f"{EVAL_M} --benches-file emptydir", 2, "emptydir is not a file"),
    row("eval --list-benches --benches-file missing.toml", 2, "missing.toml: no such file"),
    row("benches --benches-file missing.toml", 2, "missing.toml: no such file"),
    row(f"{EVAL_M} --temperature inf", 2, "--temperature must be >= 0 and finite, got inf"),
    row(f"{EVAL_M} --temperature nan", 2, "--temperature must be >= 0 and finite, got nan"),
    row(f"{EVAL_M} --temperature -inf", 2, "--temperature must be >= 0 and finite, got -inf"),
    row(f"{EVAL_M} --top-p nan", 2, "--top-p must be in (0, 1], got nan"),
    row(f"{EVAL_M} --top-p -0.5", 2, "--top-p must be in (0, 1], got -0.5"),
    row(f"{EVAL_M} --samples 1000000000", 2, "--samples must be at most 100,000, got 1,000,000,000"),
    row(f"{EVAL_M} --max-tokens 10000000000", 2, "--max-tokens must be at most 1,048,576"),
    row(f"{EVAL_M} --workers 1000000", 2, "--workers must be at most 1,024"),
    row(f"{EVAL_M} --engines 0", 2, "--engines must be >= 1, got 0"),
    row(f"{EVAL_M} --batch-size 0", 2, "--batch-size must be >= 1, got 0"),
    row(f"{EVAL_M} --seed 4294967296", 2, "--seed must be at most 4,294,967,295, got 4,294,967,296"),
    row(f"{EVAL_M} --seed -1", 2, "--seed must be >= 0, got -1"),
    row(f"{EVAL_M} --template ''", 2, "--template is empty"),
    row("eval --backend hf --model '' --out evals/x", 2, "--model is empty"),
    row(f"{EVAL_M} --grade-timeout inf", 2, "--grade-timeout must be > 0 and at most 86400 seconds"),
    row(f"{EVAL_M} --grade-timeout 0", 2, "--grade-timeout must be > 0"),
    row(f"{EVAL_M} --grade-timeout nan", 2, "--grade-timeout must be > 0"),
    row(f"{EVAL_ADIR} --out adir", 2, "--out adir is the command's own input"),
    row(f"{EVAL_ADIR} --out adir/evals", 2, "--out adir/evals is inside the command's own input /"),
    row(f"{EVAL_ADIR} --out ./adir/x/y", 2, "--out adir/x/y is inside the command's own input /"),
    row("eval --responses good.jsonl --bench mine=good.jsonl --out good.jsonl", 2, "is a file; give a dir"),
    row(f"{TRAIN} --eval-bench mine=missing.jsonl", 2, "--eval-bench mine=missing.jsonl: no such file"),
    row(f"{TRAIN} --eval-bench 'My Set=good.jsonl'", 2, "a benchmark name is lowercase letters"),
    row(f"{TRAIN} --eval-bench aime24,olymp", 2, "unknown benchmark 'olymp'; choose from: amc23"),
    row(f"{TRAIN} --benches-file missing.toml", 2, "missing.toml: no such file"),
    row(f"{TRAIN} --benches-file afile.txt", 2, "afile.txt: not valid TOML"),
    # --- inspect: the output inside the model's directory (eval's rule) ---
    row("inspect --model adir --responses good.jsonl --out adir", 2, "--out adir is the command's own input"),
    row("inspect --model adir --responses good.jsonl --out adir/inspect", 2, "is inside the command's own"),
    row("inspect --model m --compare adir --responses good.jsonl --out adir/i", 2, "own input adir"),
    # --- sweep: the output directory ---
    row(f"{SWEEP} --out fifo", 2, "fifo is a FIFO (named pipe), not a regular directory"),
    row(f"{SWEEP} --out afile.txt", 2, "afile.txt is a file; give a directory"),
    row(f"{SWEEP} --out /dev/null", 2, "is a character device"),
    row(f"{SWEEP} --out afile.txt/s", 2, "is a file, so no directory can be made there"),
    row(f"{SWEEP} --out /sys/infoppo-sweep", 2, "cannot write in /sys"),
    row("sweep nope --dry-run", 2, "unknown sweep kind 'nope'"),
    row(f"{SWEEP} --preset nope", 2, "unknown preset 'nope'"),
    row(f"{SWEEP} --seeds 0", 2, "--seeds must be >= 1, got 0"),
    row(f"{SWEEP} --steps 1000000000000", 2, "--steps must be at most 1,000,000"),  # train's limits
    row(f"{SWEEP} --eval-samples 100000000", 2, "--eval-samples must be at most 100,000"),
    row(f"{SWEEP} --eval-every 0", 2, "--eval-every must be >= 1, got 0"),
    row(f"{SWEEP} --max-parallel 0", 2, "--max-parallel must be >= 1"),
    row(f"{SWEEP} --max-parallel 2", 2, "--max-parallel needs --ray-dashboard"),
    row(f"{SWEEP} --time sometimes", 2, "unknown --time sometimes"),
    row(f"{SWEEP} --values abc", 2, "got 'abc'"),
    row(f"{SWEEP} --final-eval-bench nope", 2, "unknown benchmark 'nope'"),
    row(f"{SWEEP} --eval-bench nope", 2, "unknown benchmark 'nope'"),  # train's: the runs' in-training eval
    row(f"{SWEEP} --values ''", 2, "--values is empty"),
    row("sweep gamma --dry-run --data missing.jsonl", 2, "data file missing.jsonl not found"),
    row(f"{SWEEP} --set no.such.flag=1", 2, "OpenRLHF 0.11.2 has no flag --no.such.flag"),
    # --- sweep: a dry run before `data prep` previews; a real sweep without data, absurd grids and a
    # sweep.json of the wrong shape are refused before anything runs (SLURM: tests/sweep/test_slurm.py)
    row("sweep gamma --dry-run --eval-bench none", 0, ""),
    row("sweep gamma", 2, "data file data/dapo-math-17k.jsonl not found"),
    row(f"{SWEEP} --seeds 1000000", 2, "--seeds 1000000 asks for more than 100 seeds of every grid point"),
    row(f"{SWEEP} --seeds 101", 2, "--seeds 101 asks for more than 100 seeds"),
    row(
        f"{SWEEP} --values {','.join(f'0.9{n:03d}' for n in range(251))} --seeds 2",
        2,
        "the grid is 1004 training runs (251 value(s) x 2 arm(s) x 2 seed(s)), more than the 1000",
        id="sweep: a grid of 1004 runs",
    ),
    row(f"{SWEEP} --out sweeps/list", 2, "sweeps/list/sweep.json: it holds a list, not the object"),
    row("sweep gamma --data good.jsonl --out sweeps/list", 2, "sweeps/list/sweep.json: it holds a list"),
    row(f"{SWEEP} --out sweeps/old-schema", 2, "sweeps/old-schema/sweep.json: schema must be 2, got 0"),
    row(f"{SWEEP} --out sweeps/runs-object", 2, "sweep.json: runs must be a list, got an object"),
    row(f"{SWEEP} --out sweeps/seed-text", 2, "json: runs[0].seed must be an integer, got a string '1'"),
    row(f"{SWEEP} --out sweeps/phase-status", 2, "runs[0].phases[0].status must be one of pending, running"),
    row(f"{SWEEP} --out sweeps/no-train", 2, "sweep.json: runs[0].phases has no train phase"),
    row(f"{SWEEP} --out sweeps/dir-state", 2, "sweeps/dir-state/sweep.json: it is not a regular file"),
    # --- report: the output directory ---
    row("report missing-dir", 2, "no such directory: missing-dir"),
    row("report runs/r1 --out fifo", 2, "--out fifo is a FIFO"),
    row("report runs/r1 --out afile.txt", 2, "--out afile.txt is a file; give a directory"),
    row("report runs/r1 --out /dev/null", 2, "is a character device"),
    row("report runs/r1 --out afile.txt/r", 2, "is a file, so no directory can be made there"),
    row("report runs/r1 --out /sys/infoppo-report", 2, "cannot write in /sys"),
    row("report runs/r1 --out runs/r1", 2, "is the command's own input"),
    row("report emptydir --out emptydir/report", 2, "no runs found in emptydir"),
    # --- report: inputs that are not run directories (broken runs are data: tests/report/test_health.py) ---
    row("report good.jsonl", 2, "good.jsonl is a file; give run, sweep or eval output directories"),
    row("report adir", 2, "no runs found in adir"),
    row("report runs/r1 --format gif", 2, "unknown --format gif"),
    row("report runs/r1 --format ''", 2, "unknown --format ''"),
    row("report runs/r1 --format png,eps", 2, "unknown --format eps"),
    # --- report: --benches-file, checked before any directory is read or written ---
    row("report runs/r1 --benches-file missing.toml", 2, "missing.toml: no such file"),
    row("report runs/r1 --benches-file afile.txt", 2, "afile.txt: not valid TOML"),
    row("report runs/r1 --benches-file good.json", 2, "good.json: not valid TOML"),
    row("report runs/r1 --benches-file emptydir", 2, "emptydir is not a file"),
    # --- inspect: the required options, the output directory and the options' values ---
    row("inspect --responses good.jsonl", 2, "Missing option '--model'"),
    row("inspect --model m", 2, "Missing option '--responses'"),
    row(f"{INSPECT} --out fifo", 2, "--out fifo is a FIFO"),
    row(f"{INSPECT} --out afile.txt", 2, "--out afile.txt is a file; give a directory"),
    row(f"{INSPECT} --out /dev/null", 2, "is a character device"),
    row(f"{INSPECT} --out /sys/infoppo-inspect", 2, "cannot write in /sys"),
    row(f"{INSPECT} --out good.jsonl", 2, "is a file; give a directory"),
    row(f"{INSPECT} --gamma x", 2, "Invalid value for '--gamma'"),
    row(f"{INSPECT} --top many", 2, "Invalid value for '--top'"),
]


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    root = tmp_path / "ws"
    root.mkdir()
    build_workspace(root)
    monkeypatch.chdir(root)
    monkeypatch.setenv("COLUMNS", "250")
    return root


def run_main(args: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(args)
    captured = capsys.readouterr()
    code = exited.value.code
    return (code if isinstance(code, int) else 1), captured.out, captured.err


def test_the_table_has_at_least_150_rows():
    assert len(ROWS) >= 150


@pytest.mark.parametrize(("args", "code", "fragment"), ROWS)
def test_bad_input(args, code, fragment, workspace, capsys):
    before = snapshot(workspace)
    exit_code, out, err = run_main(shlex.split(args), capsys)
    assert "Traceback" not in out + err
    assert exit_code == code, err
    if code:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), err
        assert fragment in lines[0]
        assert "╭" not in err  # no box
    assert snapshot(workspace) == before


@pytest.mark.slow
def test_the_entry_point_in_a_real_process(tmp_path):
    """One real subprocess: the console entry point gives the same one line and exit code."""
    from cli_process import run_infoppo

    os.mkfifo(tmp_path / "fifo")
    done = run_infoppo("data", "prep", "dapo-math-17k", "--out", "fifo", cwd=tmp_path)
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        == "error: --out fifo is a FIFO (named pipe), not a regular file; infoppo will not write there"
    )
    done = run_infoppo("data", "prep", "dapo-math-17k", "--limit", "x", cwd=tmp_path)
    assert (
        done.returncode == 2
        and done.stderr.count("\n") == 1
        and done.stderr.startswith("error: Invalid value")
    )
