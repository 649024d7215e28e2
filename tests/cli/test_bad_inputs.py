"""Bad input never costs the user anything (issue 13): every row runs one bad command line through the
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
TRAIN = "train --preset qwen3-4b --data good.jsonl --dry-run"
SWEEP = "sweep gamma --dry-run --data good.jsonl"
INSPECT = "inspect --model missing-model --responses good.jsonl"
EVAL = "eval --backend hf --model missing-model --bench amc23 --data-file good.jsonl"

ROWS = [
    # --- the entry point and Typer's own parsing: one `error:` line, exit 2 (§3) ---
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
    row("train --lambd x", 2, "Invalid value for '--lambd'"),
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
    # --- data prep: the options (§2) ---
    row(f"{PREP} --template chatml", 2, "unknown template 'chatml'"),
    row(f"{PREP} --lang fr", 2, "unknown language 'fr'"),
    row(f"{PREP} --lang EN", 2, "unknown language 'EN'"),
    row(f"{PREP} --limit 0", 2, "--limit must be a positive"),
    row(f"{PREP} --limit -5", 2, "--limit must be a positive"),
    row(f"{PREP} --lang zh --limit 0", 2, "--limit must be a positive"),
    # --- data prep: the source (§2) ---
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
    row("data prep dapo-math-17k --source gzipped.jsonl", 2, "a binary file, not UTF-8 JSON text"),
    row("data prep dapo-math-17k --source nul.jsonl", 2, "a binary file, not UTF-8 JSON text"),
    row("data prep dapo-math-17k --source latin1.jsonl", 2, "a binary file, not UTF-8 JSON text"),
    row("data prep dapo-math-17k --source binary.json", 2, "a binary file, not UTF-8 JSON text"),
    row("data prep dapo-math-17k --source parquet-named.jsonl", 2, "a binary file, not UTF-8 JSON text"),
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
    # --- data prep: the output (§1) ---
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
    # --- train (§1 output; §2 validation is H3a's) ---
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
    row(f"{TRAIN} --lambd 1.5", 2, "--lambd must be in [0.0, 1.0], got 1.5"),
    row(f"{TRAIN} --lambd -0.1", 2, "--lambd must be in [0.0, 1.0], got -0.1"),
    row(f"{TRAIN} --eps-low-info -1", 2, "eps_low must be a finite number >= 0"),
    row(f"{TRAIN} --eps-high-info -1", 2, "eps_high must be a finite number >= 0"),
    row(f"{TRAIN} --nodes 0", 2, "--nodes must be >= 1, got 0"),
    row(f"{TRAIN} --gpus-per-node 0", 2, "--gpus-per-node must be >= 1, got 0"),
    row(f"{TRAIN} --set nonsense", 2, "--set expects KEY=VALUE"),
    row(f"{TRAIN} --set no.such.flag=1", 2, "OpenRLHF 0.11.2 has no flag --no.such.flag"),
    row("train --preset qwen3-4b --data missing.jsonl", 2, "data file missing.jsonl not found"),
    row("train --preset qwen3-4b --preset-typo", 2, "No such option"),
    row(f"{TRAIN} --seed -1", 2, "--seed must be >= 0, got -1"),
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
    # --- eval (§1 output; the rest is H4's validation as it stands) ---
    row(f"{EVAL} --out fifo", 2, "--out fifo is a FIFO"),
    row(f"{EVAL} --out afile.txt", 2, "--out afile.txt is a file; give a directory"),
    row(f"{EVAL} --out /dev/null", 2, "is a character device"),
    row(f"{EVAL} --out afile.txt/x", 2, "is a file, so no directory can be made there"),
    row(f"{EVAL} --out /sys/infoppo-eval", 2, "cannot write in /sys"),
    row("eval", 2, "--model is required"),
    row("eval --bench amc23", 2, "--model is required"),
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
    row("eval --backend hf --model m --bench amc23 --data-file good.jsonl --out evals/x", 2, "--model m"),
    row(f"{EVAL} --out evals/x --samples 0", 2, "--samples must be >= 1, got 0"),
    # --- sweep (§1 output; §2 validation is H5's) ---
    row(f"{SWEEP} --out fifo", 2, "fifo is a FIFO (named pipe), not a regular directory"),
    row(f"{SWEEP} --out afile.txt", 2, "afile.txt is a file; give a directory"),
    row(f"{SWEEP} --out /dev/null", 2, "is a character device"),
    row(f"{SWEEP} --out afile.txt/s", 2, "is a file, so no directory can be made there"),
    row(f"{SWEEP} --out /sys/infoppo-sweep", 2, "cannot write in /sys"),
    row("sweep nope --dry-run", 2, "unknown sweep kind 'nope'"),
    row(f"{SWEEP} --preset nope", 2, "unknown preset 'nope'"),
    row(f"{SWEEP} --seeds 0", 2, "--seeds must be >= 1, got 0"),
    row(f"{SWEEP} --max-parallel 0", 2, "--max-parallel must be >= 1"),
    row(f"{SWEEP} --max-parallel 2", 2, "--max-parallel needs --address"),
    row(f"{SWEEP} --time sometimes", 2, "unknown --time sometimes"),
    row(f"{SWEEP} --values abc", 2, "got 'abc'"),
    row(f"{SWEEP} --eval-bench nope", 2, "unknown benchmark 'nope'"),
    row(f"{SWEEP} --values ''", 2, "--values is empty"),
    row("sweep gamma --dry-run --data missing.jsonl", 2, "data file missing.jsonl not found"),
    row(f"{SWEEP} --set no.such.flag=1", 2, "OpenRLHF 0.11.2 has no flag --no.such.flag"),
    # --- report (§1 output; §2 is H5's) ---
    row("report missing-dir", 2, "no such directory: missing-dir"),
    row("report runs/r1 --out fifo", 2, "--out fifo is a FIFO"),
    row("report runs/r1 --out afile.txt", 2, "--out afile.txt is a file; give a directory"),
    row("report runs/r1 --out /dev/null", 2, "is a character device"),
    row("report runs/r1 --out afile.txt/r", 2, "is a file, so no directory can be made there"),
    row("report runs/r1 --out /sys/infoppo-report", 2, "cannot write in /sys"),
    row("report runs/r1 --out runs/r1", 2, "is the command's own input"),
    row("report emptydir --out emptydir/report", 2, "no runs found in emptydir"),
    # --- inspect (§1 output; the rest is H2's validation as it stands) ---
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
