"""``infoppo report``: the paper's figures and a final-metrics table from run and sweep directories.

Inputs are run directories (``metrics.jsonl``, ``manifest.json``, ``eval/metrics.json``), eval output
directories (``metrics.json``) and sweep directories (``sweep.json``; their runs are ``OUT/RUN_NAME``).
Missing or malformed pieces become notes in the report, never a failure: a figure nobody has data for
is skipped and said so.

Figures (PNG, matplotlib's Agg renderer) mirror the paper's: accuracy on AIME24/AIME25 (and any other
``eval_<bench>``) vs step, response length, raw entropy, normalised entropy (mean ρ), mean Γ_info(0,T),
the mean upper and lower clip bound, and for sweeps final accuracy vs the swept value. Curves of one
grid point are averaged over seeds (min-max band); colour encodes the value, line style the time arm.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infoppo_cli.atomic import atomic_write_text, atomic_writer
from infoppo_cli.errors import UsageError

PANEL_INCHES = (6.4, 4.4)
"""Size of one subplot panel; a figure of n panels is n panels wide."""
DPI = 100

ARM_STYLES = {"info": "-", "token": "--"}
"""Line style per time arm: information time solid, token time dashed (other methods dotted)."""

PAPER_BENCHES = ("aime24", "aime25")
KIND_SYMBOLS = {"gamma": "γ", "lambda": "λ", "clip": "ε", "norm": "norm"}


@dataclass(frozen=True)
class Figure:
    """One PNG: its panels, each a metrics.jsonl key and the y-axis label."""

    file: str
    title: str
    panels: tuple[tuple[str, str], ...]


CURVE_FIGURES: tuple[Figure, ...] = (
    Figure("response_length.png", "Response length", (("response_length_mean", "mean response length"),)),
    Figure("entropy.png", "Raw entropy", (("entropy_mean", "mean token entropy (nats)"),)),
    Figure("normalized_entropy.png", "Normalised entropy", (("rho_mean", "mean ρ"),)),
    Figure("info_discount.png", "Information-time discount", (("info_discount_mean", "mean Γ_info(0,T)"),)),
    Figure(
        "clip_bounds.png",
        "Adaptive clip bounds",
        (("clip_upper_mean", "mean upper clip bound"), ("clip_lower_mean", "mean lower clip bound")),
    ),
)

TABLE_METRICS: tuple[tuple[str, str], ...] = (
    ("reward_mean", "reward"),
    ("response_length_mean", "length"),
    ("entropy_mean", "entropy"),
    ("rho_mean", "rho"),
    ("info_discount_mean", "Gamma_info"),
    ("clip_upper_mean", "clip_upper"),
    ("clip_lower_mean", "clip_lower"),
)
"""metrics.jsonl keys in the final-metrics table (last logged value) and their column names."""


# --------------------------------------------------------------------------- reading


@dataclass
class RunData:
    """Everything the report knows about one run."""

    name: str
    path: Path
    sweep: str | None = None
    kind: str | None = None
    value_label: str | None = None
    time: str | None = None
    method: str | None = None
    seed: int | None = None
    status: str | None = None
    steps: list[dict[str, float]] = field(default_factory=list)
    eval_benches: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def arm(self) -> str:
        """info / token for InfoPPO / PPO, else the method name (or '-')."""
        if self.time:
            return self.time
        return {"infoppo": "info", "ppo": "token"}.get(self.method or "", self.method or "-")

    def series(self, key: str) -> list[tuple[float, float]]:
        """(step, value) pairs of ``key`` in step order."""
        points = [(row["step"], row[key]) for row in self.steps if key in row]
        return sorted(points)

    def last(self, key: str) -> float | None:
        series = self.series(key)
        return series[-1][1] if series else None

    def final_accuracy(self, bench: str) -> tuple[float | None, str]:
        """Accuracy (percent) on ``bench`` and where it came from: the final eval's mean@k, else the
        last in-training ``eval_<bench>``."""
        score = self.eval_benches.get(bench, {}).get("mean@k")
        if _is_number(score):
            return float(score), "eval"
        last = self.last(f"eval_{bench}")
        return (last, "training") if last is not None else (None, "")


@dataclass
class ReportInputs:
    runs: list[RunData]
    sweep_kinds: dict[str, str]
    """Sweep directory name -> its kind, for the final-accuracy-vs-value plots."""
    notes: list[str]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def read_metrics_jsonl(path: Path, notes: list[str], label: str) -> list[dict[str, float]]:
    """The numeric fields of each step of a ``metrics.jsonl`` (read by the trainer's own reader:
    a step logged twice after a resume keeps its later values). Bad lines become notes."""
    from infoppo_cli.openrlhf_adapter.metrics_log import read_metrics_counting

    if not path.exists():
        notes.append(f"{label}: no metrics.jsonl")
        return []
    records, bad = read_metrics_counting(path)
    if bad:
        notes.append(f"{label}: skipped {bad} malformed line(s) of metrics.jsonl")
    if not records:
        notes.append(f"{label}: metrics.jsonl has no training steps")
    return [{key: float(value) for key, value in row.items() if _is_number(value)} for row in records]


def read_eval_metrics(path: Path, notes: list[str], label: str) -> dict[str, dict[str, Any]]:
    """``benches`` of an ``infoppo eval`` metrics.json ({} and a note when unreadable)."""
    try:
        benches = json.loads(path.read_text(encoding="utf-8"))["benches"]
        if not isinstance(benches, dict):
            raise TypeError("benches is not an object")
        return {name: body for name, body in benches.items() if isinstance(body, dict)}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        notes.append(f"{label}: cannot read {path.name} ({exc})")
        return {}


def _find_key(tree: Any, key: str) -> Any:
    """The first value of ``key`` anywhere in nested dicts (manifest layouts vary)."""
    if isinstance(tree, dict):
        if key in tree and isinstance(tree[key], (str, int, float)):
            return tree[key]
        for value in tree.values():
            found = _find_key(value, key)
            if found is not None:
                return found
    return None


def read_run(path: Path, notes: list[str], **known: Any) -> RunData:
    """One run directory (or an eval output directory)."""
    run = RunData(name=known.pop("name", path.name), path=path, **known)
    if (path / "metrics.json").exists() and not (path / "metrics.jsonl").exists():
        run.eval_benches = read_eval_metrics(path / "metrics.json", notes, run.name)
        return run
    manifest_path = path / "manifest.json"
    if manifest_path.exists() and (run.method is None or run.seed is None):
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            run.method = run.method or _find_key(manifest.get("config", {}), "method")
            seed = manifest.get("seed")
            run.seed = run.seed if run.seed is not None else (int(seed) if _is_number(seed) else None)
        except (OSError, ValueError, AttributeError) as exc:
            notes.append(f"{run.name}: cannot read manifest.json ({exc})")
    if run.status == "pending" and not (path / "metrics.jsonl").exists():
        notes.append(f"{run.name}: not started yet (status pending)")
    else:
        run.steps = read_metrics_jsonl(path / "metrics.jsonl", notes, run.name)
    if (path / "eval" / "metrics.json").exists():
        run.eval_benches = read_eval_metrics(path / "eval" / "metrics.json", notes, run.name)
    return run


def read_sweep(path: Path, notes: list[str]) -> tuple[str, list[RunData]]:
    """The runs of a sweep directory, labelled with their value, arm and seed."""
    try:
        sweep = json.loads((path / "sweep.json").read_text(encoding="utf-8"))
        kind, records = sweep["kind"], sweep["runs"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"cannot read {path / 'sweep.json'}: {exc}") from None
    runs = []
    for record in records:
        name = record.get("name", "?")
        run_dir = path / name
        if not run_dir.is_dir():  # a sweep copied without its runs; try where they were written
            run_dir = Path(record.get("output_dir", run_dir))
        known = {
            "name": name,
            "sweep": path.name,
            "kind": kind,
            "value_label": record.get("value_label"),
            "time": record.get("time"),
            "method": record.get("method"),
            "seed": record.get("seed"),
            "status": record.get("status"),
        }
        if not run_dir.is_dir():
            notes.append(f"{name}: run directory missing (status {known['status']})")
            runs.append(RunData(path=run_dir, **known))
            continue
        runs.append(read_run(run_dir, notes, **known))
    return kind, runs


def is_run_dir(path: Path) -> bool:
    names = ("metrics.jsonl", "manifest.json", "metrics.json", "eval/metrics.json")
    return any((path / name).exists() for name in names)


def read_inputs(dirs: Sequence[Path]) -> ReportInputs:
    """Read every directory; a missing or unrecognisable one is a :class:`UsageError`."""
    if not dirs:
        raise UsageError("give at least one run or sweep directory")
    runs: list[RunData] = []
    kinds: dict[str, str] = {}
    notes: list[str] = []
    for directory in dirs:
        directory = Path(directory)
        if not directory.is_dir():
            raise UsageError(f"no such directory: {directory}")
        if (directory / "sweep.json").exists():
            kind, sweep_runs = read_sweep(directory, notes)
            kinds[directory.name] = kind
            runs += sweep_runs
        elif is_run_dir(directory):
            runs.append(read_run(directory, notes))
        else:
            raise UsageError(
                f"{directory} is neither a run directory (metrics.jsonl, manifest.json, eval/metrics.json) "
                "nor a sweep directory (sweep.json)"
            )
    return ReportInputs(runs=runs, sweep_kinds=kinds, notes=notes)


# --------------------------------------------------------------------------- curves


@dataclass
class Curve:
    """One line in a figure: a grid point (seeds averaged) or a single run."""

    label: str
    style: str
    color_key: str
    steps: list[float]
    mean: list[float]
    low: list[float]
    high: list[float]


def _group_key(run: RunData) -> tuple[str, ...]:
    if run.sweep is None:
        return ("", run.name)
    return (run.sweep, run.value_label or run.name, run.arm)


def _group_label(run: RunData, seeds: int) -> str:
    if run.sweep is None or run.kind is None:
        return run.name
    symbol = KIND_SYMBOLS.get(run.kind, run.kind)
    label = f"{symbol}={run.value_label} {run.arm}"
    return f"{label} ({seeds} seeds)" if seeds > 1 else label


def build_curves(runs: Sequence[RunData], key: str) -> list[Curve]:
    """Curves of ``key``, one per grid point (mean over its seeds at their common steps)."""
    groups: dict[tuple[str, ...], list[RunData]] = {}
    for run in runs:
        if run.series(key):
            groups.setdefault(_group_key(run), []).append(run)
    curves = []
    for members in groups.values():
        per_seed = [dict(run.series(key)) for run in members]
        common = sorted(set.intersection(*(set(series) for series in per_seed)))
        if not common:  # seeds logged at different steps: fall back to the longest run
            longest = max(per_seed, key=len)
            per_seed, common = [longest], sorted(longest)
        values = [[series[step] for series in per_seed] for step in common]
        head = members[0]
        curves.append(
            Curve(
                label=_group_label(head, len(members)),
                style=ARM_STYLES.get(head.arm, ":"),
                color_key=f"{head.sweep}:{head.value_label}" if head.sweep else head.name,
                steps=common,
                mean=[sum(v) / len(v) for v in values],
                low=[min(v) for v in values],
                high=[max(v) for v in values],
            )
        )
    return curves


# --------------------------------------------------------------------------- drawing


def _new_figure(panels: int, title: str) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure as MplFigure

    figure = MplFigure(figsize=(PANEL_INCHES[0] * panels, PANEL_INCHES[1]), dpi=DPI, layout="constrained")
    figure.suptitle(title)
    return figure


def _colors(keys: Iterable[str]) -> dict[str, Any]:
    import matplotlib

    ordered = list(dict.fromkeys(keys))
    palette = matplotlib.colormaps["tab10" if len(ordered) <= 10 else "viridis"]
    count = max(len(ordered) - 1, 1)
    return {key: palette(i if len(ordered) <= 10 else i / count) for i, key in enumerate(ordered)}


def _save(figure: Any, path: Path) -> None:
    with atomic_writer(path, "wb") as handle:
        figure.savefig(handle, format="png", dpi=DPI)


def draw_curve_figure(path: Path, title: str, panels: Sequence[tuple[str, str, list[Curve]]]) -> None:
    """A figure with one panel per (metric key, y label, curves), step on the x axis."""
    from matplotlib.ticker import MaxNLocator

    figure = _new_figure(len(panels), title)
    colors = _colors(curve.color_key for _, _, curves in panels for curve in curves)
    axes = figure.subplots(1, len(panels), squeeze=False)[0]
    for ax, (_, ylabel, curves) in zip(axes, panels, strict=True):
        for curve in curves:
            color = colors[curve.color_key]
            ax.plot(curve.steps, curve.mean, curve.style, color=color, label=curve.label, linewidth=1.6)
            if curve.low != curve.high:
                ax.fill_between(curve.steps, curve.low, curve.high, color=color, alpha=0.15, linewidth=0)
        ax.set_xlabel("training step")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        if curves:
            ax.legend(fontsize="small")
        else:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
    _save(figure, path)


def draw_final_accuracy(path: Path, kind: str, runs: Sequence[RunData], benches: Sequence[str]) -> bool:
    """Final accuracy vs the swept value, one line per time arm and one panel per bench; False when no
    run of the sweep has an accuracy."""
    labels = list(dict.fromkeys(run.value_label for run in runs if run.value_label))
    arms = list(dict.fromkeys(run.arm for run in runs))
    panels = []
    for bench in benches:
        lines = {}
        for arm in arms:
            points = []
            for index, label in enumerate(labels):
                scores = [
                    run.final_accuracy(bench)[0] for run in runs if (run.value_label, run.arm) == (label, arm)
                ]
                scores = [score for score in scores if score is not None]
                if scores:
                    points.append((index, sum(scores) / len(scores)))
            if points:
                lines[arm] = points
        panels.append((bench, lines))
    if not any(lines for _, lines in panels):
        return False
    figure = _new_figure(len(panels), f"Final accuracy vs {KIND_SYMBOLS.get(kind, kind)} ({kind} sweep)")
    axes = figure.subplots(1, len(panels), squeeze=False)[0]
    colors = _colors(arms)
    for ax, (bench, lines) in zip(axes, panels, strict=True):
        for arm, points in lines.items():
            xs, ys = zip(*points, strict=True)
            ax.plot(xs, ys, ARM_STYLES.get(arm, ":"), marker="o", color=colors[arm], label=arm)
        ax.set_xticks(range(len(labels)), labels)
        ax.set_xlabel(KIND_SYMBOLS.get(kind, kind))
        ax.set_ylabel(f"{bench} accuracy (%)")
        ax.grid(alpha=0.3)
        if lines:
            ax.legend(fontsize="small")
    _save(figure, path)
    return True


# --------------------------------------------------------------------------- table


def eval_benches_of(runs: Sequence[RunData]) -> list[str]:
    """Benchmarks with any accuracy, the paper's two first.

    metrics.jsonl holds OpenRLHF's own eval keys too (``eval_<ds>_pass1`` as a fraction,
    ``eval_<ds>_truncated_rate``, ``eval_num_samples`` ...); ``eval_<X>`` counts as an accuracy in percent
    when X is a registry benchmark or OpenRLHF logged ``eval_<X>_pass1`` beside it.
    """
    from infoppo_cli.eval.benchmarks import BENCH_NAMES

    logged = {
        key[len("eval_") :] for run in runs for row in run.steps for key in row if key.startswith("eval_")
    }
    found = {bench for run in runs for bench in run.eval_benches}
    found |= {name for name in logged if name in BENCH_NAMES or f"{name}_pass1" in logged}
    return [*(b for b in PAPER_BENCHES if b in found), *sorted(found - set(PAPER_BENCHES))]


def table_rows(runs: Sequence[RunData], benches: Sequence[str]) -> tuple[list[str], list[list[Any]]]:
    """Column names and one row per run: identity, last step, last logged metrics, final accuracies."""
    columns = ["run", "sweep", "value", "arm", "seed", "status", "steps"]
    columns += [name for _, name in TABLE_METRICS] + list(benches) + ["accuracy_from"]
    rows = []
    for run in runs:
        accuracies = [run.final_accuracy(bench) for bench in benches]
        sources = sorted({source for _, source in accuracies if source})
        rows.append(
            [
                run.name,
                run.sweep,
                run.value_label,
                run.arm,
                run.seed,
                run.status,
                int(run.steps[-1]["step"]) if run.steps else None,
                *(run.last(key) for key, _ in TABLE_METRICS),
                *(score for score, _ in accuracies),
                "+".join(sources) or None,
            ]
        )
    return columns, rows


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def table_csv(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """CSV with full-precision numbers and empty cells for missing values."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(
            ["" if value is None else repr(value) if isinstance(value, float) else value for value in row]
        )
    return buffer.getvalue()


def table_markdown(columns: Sequence[str], rows: Sequence[Sequence[Any]], notes: Sequence[str]) -> str:
    """A Markdown table (4 significant digits, '-' for missing) followed by the report's notes."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(_cell(value) for value in row) + " |" for row in rows]
    if notes:
        lines += ["", "Notes (missing or partial metrics):", ""] + [f"- {note}" for note in notes]
    return "\n".join(lines) + "\n"


def rich_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Any:
    from rich.table import Table

    table = Table(title="Final metrics (last logged step; accuracy in %)")
    widest_name = max((len(str(row[0])) for row in rows), default=3)
    for column in columns:
        if column == "run":  # names identify runs: never elide them
            table.add_column(column, min_width=widest_name, no_wrap=True)
        else:
            table.add_column(column, justify="left" if column in ("sweep", "arm", "status") else "right")
    for row in rows:
        table.add_row(*(_cell(value) for value in row))
    return table


# --------------------------------------------------------------------------- the report


@dataclass
class Report:
    """What :func:`make_report` wrote."""

    out_dir: Path
    figures: list[Path]
    table_csv: Path
    table_md: Path
    columns: list[str]
    rows: list[list[Any]]
    notes: list[str]


def make_report(dirs: Sequence[Path], out_dir: Path, on_step: Any = None) -> Report:
    """Read ``dirs``, draw every figure that has data into ``out_dir`` and write the final-metrics table
    as ``final_metrics.csv`` and ``final_metrics.md``. ``on_step(description)`` is called per figure."""
    inputs = read_inputs(dirs)
    runs, notes = inputs.runs, list(inputs.notes)
    benches = eval_benches_of(runs)
    out_dir.mkdir(parents=True, exist_ok=True)
    figures: list[Path] = []

    def step(description: str) -> None:
        if on_step is not None:
            on_step(description)

    jobs: list[tuple[str, str, list[tuple[str, str]]]] = []
    if benches:
        panels = [(f"eval_{bench}", f"{bench} accuracy (%)") for bench in benches]
        jobs.append(("accuracy.png", "Accuracy", panels))
    else:
        notes.append("accuracy.png not written: no run has eval_<bench> metrics or eval/metrics.json")
    jobs += [(figure.file, figure.title, list(figure.panels)) for figure in CURVE_FIGURES]
    for file, title, panels in jobs:
        step(file)
        drawn = [(key, ylabel, build_curves(runs, key)) for key, ylabel in panels]
        if not any(curves for _, _, curves in drawn):
            notes.append(f"{file} not written: no run logged {', '.join(key for key, _ in panels)}")
            continue
        draw_curve_figure(out_dir / file, title, drawn)
        figures.append(out_dir / file)

    for sweep, kind in inputs.sweep_kinds.items():
        step(f"final_accuracy_{sweep}.png")
        members = [run for run in runs if run.sweep == sweep]
        path = out_dir / f"final_accuracy_{sweep}.png"
        if benches and draw_final_accuracy(path, kind, members, benches):
            figures.append(path)
        else:
            notes.append(f"{path.name} not written: no run of {sweep} has a final accuracy yet")

    columns, rows = table_rows(runs, benches)
    csv_path, md_path = out_dir / "final_metrics.csv", out_dir / "final_metrics.md"
    atomic_write_text(csv_path, table_csv(columns, rows))
    atomic_write_text(md_path, table_markdown(columns, rows, notes))
    return Report(out_dir, figures, csv_path, md_path, columns, rows, notes)
