"""The raw per-step data behind a report as one CSV (``infoppo report --csv FILE``), and that CSV read
back as a report's input, alone or beside run and sweep directories.

The file opens with ``# `` comment lines: the infoppo version that wrote it, the commit each run was
trained at (its manifest's; ``unknown`` where none was recorded), each sweep's recorded command or each
run's own, and the comment lines of any CSV it was made from. Then a header and one row per run per
step: the run's identity (:data:`IDENTITY_COLUMNS`: γ and λ as the run trained with them), ``step``,
the per-step metrics the figures and tables read (:func:`metric_columns`), and the run's final eval
(``final_<bench>``, ``final_<bench>_se``, ``final_<bench>_k``, ``final_weights``) repeated on each of
its rows. A cell is blank where the step did not log that metric; a run with no step has one row with
a blank ``step``. Numbers keep full precision, non-finite ones as ``nan``/``inf``/``-inf``.

Read back, each run is rebuilt as the :class:`RunData` the directories give, so every figure and table
comes out the same. A file that is not such a CSV (a missing column, a cell that is not a number, a
run with one step twice, a run whose identity changes between its rows) is refused with one line
naming the file and line.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infoppo_cli import __version__
from infoppo_cli.errors import UsageError
from infoppo_cli.openrlhf_adapter.metrics_log import LEGACY_REWARD_MEAN_SUFFIX, REWARD_MEAN_SUFFIX
from infoppo_cli.report.axis import COUNT_KEYS
from infoppo_cli.report.figures import CURVE_FIGURES
from infoppo_cli.report.health import PER_STEP_KEYS
from infoppo_cli.report.runs import ReportInputs, RunData, check_dirs, finished_inputs, read_dir
from infoppo_cli.report.tables import TABLE_METRICS, csv_cell

IDENTITY_COLUMNS = (
    "run",
    "sweep",
    "kind",
    "method",
    "time",
    "value",
    "seed",
    "status",
    "gamma",
    "lambd",
    "model",
)
"""Who each row's run is; ``time`` is its sweep arm, ``value`` its grid point as the sweep labels it."""
STEP = "step"
PARAMETERS = ("gamma", "lambd")
"""The settings the CSV carries (as :func:`report.runs.method_settings` and sweeps name them)."""
EXTRA_STEP_METRICS = ("kl", "ppo_kl")
"""Per-step metrics no figure or table reads, kept for readers of the data: the KL to the reference and
between the PPO epochs' policies (and every :data:`TIMING` metric)."""
TIMING = "timing/"
"""The prefix of OpenRLHF's per-step wall times, each phase's (``timing/generation``,
``timing/make_experience``, ``timing/ppo_train``, ``timing/broadcast``) and ``timing/step_total``."""
FINAL = "final_"
FINAL_WEIGHTS = "final_weights"
COMMENT = "# "


def metric_columns(runs: Sequence[RunData], benches: Sequence[str]) -> list[str]:
    """The per-step columns of ``runs``' CSV: each benchmark's in-training accuracy and its mean reward
    (which marks ``eval_<bench>`` as an accuracy, :func:`tables.eval_benches_of`), then what the tables,
    figures, the responses axis and the health checks read, then :data:`EXTRA_STEP_METRICS` and every
    :data:`TIMING` metric; only those some step logged."""
    suffixes = ("", REWARD_MEAN_SUFFIX, LEGACY_REWARD_MEAN_SUFFIX)
    wanted = [f"eval_{bench}{suffix}" for bench in benches for suffix in suffixes]
    wanted += [key for key, _ in TABLE_METRICS]
    wanted += [key for spec in CURVE_FIGURES for key, _ in spec.panels]
    logged = {key for run in runs for row in run.steps for key in row}
    wanted += [
        *PER_STEP_KEYS,
        *COUNT_KEYS,
        *EXTRA_STEP_METRICS,
        *sorted(k for k in logged if k.startswith(TIMING)),
    ]
    return [key for key in dict.fromkeys(wanted) if key in logged and key != STEP]


FINAL_FIELDS = (("", "mean@k"), ("_se", "mean@k_se"), ("_k", "k"))
"""A final eval's column suffixes and the fields of its ``metrics.json`` entry they hold."""


def _final_columns(runs: Sequence[RunData], benches: Sequence[str]) -> list[tuple[str, Any]]:
    """``(column, read)`` of each final-eval column some run has a value in; ``read(run)`` its cell."""
    columns: list[tuple[str, Any]] = [
        (f"{FINAL}{bench}{end}", lambda run, bench=bench, key=key: run.eval_benches.get(bench, {}).get(key))
        for bench in benches
        for end, key in FINAL_FIELDS
    ]
    columns.append((FINAL_WEIGHTS, lambda run: run.weights))
    return [(column, read) for column, read in columns if any(read(run) is not None for run in runs)]


def _identity_cells(run: RunData) -> list[Any]:
    return [
        *(run.name, run.sweep, run.kind, run.method, run.time, run.value_label, run.seed, run.status),
        *(run.trained(name) for name in PARAMETERS),
        run.model,
    ]


def _step_text(step: float) -> Any:
    return int(step) if math.isfinite(step) and step == int(step) else csv_cell(step)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def provenance_lines(inputs: ReportInputs) -> list[str]:
    """The comment lines (without ``# ``): version, commits, commands, and the CSV inputs' own lines."""
    lines = [
        f"infoppo {__version__} report --csv: the per-step metrics behind the report, one row per run per "
        "step; a blank cell: not logged at that step"
    ]
    from_dirs = [run for run in inputs.runs if run.data_file is None]
    by_commit: dict[str, list[str]] = {}
    for run in from_dirs:
        by_commit.setdefault(run.commit or "unknown", []).append(
            f"{run.sweep}/{run.name}" if run.sweep else run.name
        )
    for commit, names in by_commit.items():
        shown = f"all {len(names)} runs" if len(by_commit) == 1 else ", ".join(names)
        lines.append(f"trained at commit {commit}: {shown}")
    for sweep in dict.fromkeys(run.sweep for run in from_dirs if run.sweep):
        lines.append(f"sweep {sweep}: {_one_line(inputs.sweep_commands.get(sweep, 'command unknown'))}")
    for run in from_dirs:
        if run.sweep is None:
            lines.append(f"run {run.name}: {_one_line(run.command or 'command unknown')}")
    for path, comments in inputs.data_comments.items():
        lines += [f"from {path}:", *(f"  {comment}" for comment in comments)]
    return lines


def data_csv_text(inputs: ReportInputs, benches: Sequence[str]) -> str:
    """The CSV of ``inputs``' runs (see the module); ``benches``: the report's benchmarks."""
    runs = inputs.runs
    metrics = metric_columns(runs, benches)
    finals = _final_columns(runs, benches)
    buffer = io.StringIO()
    buffer.writelines(f"{COMMENT}{line}\n" for line in provenance_lines(inputs))
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*IDENTITY_COLUMNS, STEP, *metrics, *(column for column, _ in finals)])
    for run in runs:
        identity = [csv_cell(value) for value in _identity_cells(run)]
        final = [csv_cell(read(run)) for _, read in finals]
        for row in run.steps or [None]:
            step = "" if row is None else _step_text(row[STEP])
            values = [csv_cell(None if row is None else row.get(key)) for key in metrics]
            writer.writerow([*identity, step, *values, *final])
    return buffer.getvalue()


# -- reading -----------------------------------------------------------------------------------------


def is_data_csv(path: str | Path) -> bool:
    """A report input that is a CSV file (``infoppo report --csv``'s) rather than a directory."""
    return Path(path).suffix.lower() == ".csv" and not Path(path).is_dir()


def check_inputs(paths: Sequence[Path]) -> None:
    """Refuse, before any work, no input at all, a missing CSV, or a missing or wrong directory."""
    if not paths:
        raise UsageError("give at least one run or sweep directory, or a CSV written by infoppo report --csv")
    for path in map(Path, paths):
        if is_data_csv(path) and not path.is_file():
            raise UsageError(f"no such file: {path}")
    dirs = [path for path in paths if not is_data_csv(path)]
    if dirs:
        check_dirs(dirs)


def read_report_inputs(paths: Sequence[Path]) -> ReportInputs:
    """Read every input, CSV files (:func:`read_data_csv`) and directories
    (:func:`report.runs.read_dir`) alike, in the order given."""
    check_inputs(paths)
    inputs = ReportInputs(runs=[], sweep_kinds={}, notes=[])
    for path in map(Path, paths):
        if is_data_csv(path):
            read_data_csv(path, inputs)
        else:
            read_dir(path, inputs)
    return finished_inputs(inputs, paths)


@dataclass
class _Rebuilt:
    """One run being read back: its first row's run-level cells and line, and its steps so far."""

    run: RunData
    cells: dict[str, str]
    line: int
    steps: dict[float | None, int] = field(default_factory=dict)
    """Step -> the line it is on (``None``: the blank step of a run without steps)."""


def _fail(path: Path, line: int, why: str) -> UsageError:
    return UsageError(f"{path} line {line}: {why}")


def _number(path: Path, line: int, column: str, text: str) -> int | float:
    """An integer cell as an int (a seed, γ = 1 as written), any other number as a float."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise _fail(path, line, f"column {column} holds {text!r}, not a number") from None


def read_data_csv(path: Path, inputs: ReportInputs) -> None:
    """Add the runs of the CSV ``path`` to ``inputs`` (their sweeps' kinds, its comment lines too); a
    malformed file is a :class:`UsageError` naming the file and line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    comments = 0
    while comments < len(lines) and lines[comments].startswith("#"):
        comments += 1
    reader = csv.reader(lines[comments:])
    header = next(reader, None)
    if not header:
        raise UsageError(f"{path} has no header line: it is not a CSV written by infoppo report --csv")
    _check_header(path, comments + 1, header)
    rebuilt: dict[tuple[str, str], _Rebuilt] = {}
    for cells in reader:
        line = comments + reader.line_num
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header):
            raise _fail(path, line, f"{len(cells)} cells, the header has {len(header)}")
        _add_row(path, line, dict(zip(header, cells, strict=True)), rebuilt)
    if not rebuilt:
        raise UsageError(f"{path} holds no rows")
    for entry in rebuilt.values():
        run = entry.run
        run.steps.sort(key=lambda row: row[STEP])
        if run.sweep and run.kind:
            inputs.sweep_kinds.setdefault(run.sweep, run.kind)
        inputs.runs.append(run)
    inputs.data_comments[path] = [
        text.rstrip("\n").removeprefix("#").removeprefix(" ") for text in lines[:comments]
    ]


def _check_header(path: Path, line: int, header: Sequence[str]) -> None:
    missing = [column for column in (*IDENTITY_COLUMNS, STEP) if column not in header]
    if missing:
        raise _fail(
            path, line, f"missing column(s) {', '.join(missing)}: not a CSV written by infoppo report --csv"
        )
    repeated = sorted({column for column in header if header.count(column) > 1})
    if repeated:
        raise _fail(path, line, f"column(s) {', '.join(repeated)} appear twice")


def _run_level(column: str) -> bool:
    return column in IDENTITY_COLUMNS or column.startswith(FINAL)


def _add_row(path: Path, line: int, record: dict[str, str], rebuilt: dict[tuple[str, str], _Rebuilt]) -> None:
    name, sweep = record["run"].strip(), record["sweep"].strip()
    if not name:
        raise _fail(path, line, "the run cell is empty")
    cells = {column: text.strip() for column, text in record.items() if _run_level(column)}
    entry = rebuilt.get((sweep, name))
    if entry is None:
        entry = rebuilt[(sweep, name)] = _Rebuilt(_identity(path, line, cells), cells, line)
    else:
        changed = next((column for column in cells if cells[column] != entry.cells[column]), None)
        if changed is not None:
            raise _fail(
                path,
                line,
                f"run {name} has {changed} {cells[changed]!r} here and {entry.cells[changed]!r} on line "
                f"{entry.line}: a run's identity and final eval are the same on each of its rows",
            )
    text = record[STEP].strip()
    step = None if not text else float(_number(path, line, STEP, text))
    if step is not None and not math.isfinite(step):
        raise _fail(path, line, f"step {text!r} is not a finite number")
    if step in entry.steps or (entry.steps and (step is None or None in entry.steps)):
        where = (
            f"step {text}" if step is not None and step in entry.steps else "a blank step beside other rows"
        )
        first = entry.steps.get(step, next(iter(entry.steps.values())))
        raise _fail(path, line, f"run {name} has {where} (also line {first}): one row per run per step")
    entry.steps[step] = line
    if step is None:
        return
    row = {STEP: step}
    for column, cell in record.items():
        if not _run_level(column) and column != STEP and cell.strip():
            row[column] = float(_number(path, line, column, cell.strip()))
    entry.run.steps.append(row)


def _text(cells: dict[str, str], column: str) -> str | None:
    return cells[column] or None


def _identity(path: Path, line: int, cells: dict[str, str]) -> RunData:
    seed = cells["seed"]
    if seed and not seed.lstrip("-").isdigit():
        raise _fail(path, line, f"column seed holds {seed!r}, not an integer")
    run = RunData(
        name=cells["run"],
        path=path / cells["run"],
        sweep=_text(cells, "sweep"),
        kind=_text(cells, "kind"),
        value_label=_text(cells, "value"),
        time=_text(cells, "time"),
        method=_text(cells, "method"),
        seed=int(seed) if seed else None,
        status=_text(cells, "status"),
        model=_text(cells, "model"),
        parameters={name: _number(path, line, name, cells[name]) for name in PARAMETERS if cells[name]},
        data_file=path,
    )
    run.weights = cells.get(FINAL_WEIGHTS) or None
    for bench in _benches_of(cells):
        body: dict[str, Any] = {}
        for end, key in FINAL_FIELDS:
            text = cells.get(f"{FINAL}{bench}{end}", "")
            if text:
                body[key] = _number(path, line, f"{FINAL}{bench}{end}", text)
        if "mean@k" in body:
            run.eval_benches[bench] = body
    return run


def _benches_of(cells: Iterable[str]) -> list[str]:
    """The benchmarks of the ``final_<bench>`` columns (not their ``_se``/``_k`` companions)."""
    names = [column[len(FINAL) :] for column in cells if column.startswith(FINAL) and column != FINAL_WEIGHTS]
    companions = {f"{name}{end}" for name in names for end in ("_se", "_k")}
    return [name for name in names if name not in companions]
