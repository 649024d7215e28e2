"""The run directory: how ``infoppo train`` names and lays out a run, and how every other command finds its
parts. Train, eval, sweep and report all go through this module, so the layout is written down once::

    runs/<preset>-<method>-seed<seed>/      a run (train's default name; --output-dir picks another)
      manifest.json     the resolved config, exact command, versions, commit, seed, status and times
      metrics.jsonl     one JSON object per training step (schema below)
      final/            the trained model (Hugging Face format) and its model card README.md
      ckpt/             DeepSpeed checkpoints, for --resume
      tensorboard/      OpenRLHF's TensorBoard logs
      eval/             `infoppo eval --model RUN/final` output: samples.jsonl, metrics.json,
                        eval_config.json, details/ (lighteval's per-sample details, parquet)

``metrics.jsonl`` schema: every line is one JSON object with an integer ``step`` (the training step,
counted from 1) and numbers only otherwise: the per-step diagnostics under the names listed in
``infoppo_cli.openrlhf_adapter.metrics_log.STEP_METRICS`` (``reward_mean``, ``rho_mean``,
``info_discount_mean``, ``clip_upper_mean``, ...), any other numeric entry of OpenRLHF's per-step status
under its own name, and on steps with in-training evaluation ``eval_<bench>_pass1`` (a fraction) and
``eval_<bench>`` (mean accuracy in percent). Lines are appended and fsynced by the trainer; after a
``--resume`` a step can appear twice, and the later line wins field by field. A torn last line (a crash
mid-write) is skipped; a line without ``step`` takes its line number as the step (and is counted, so a
reader can say so).
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infoppo_cli.atomic import atomic_write_json, atomic_write_text, iter_jsonl
from infoppo_cli.errors import UsageError

MANIFEST_FILE = "manifest.json"
METRICS_FILE = "metrics.jsonl"
FINAL_DIR = "final"
CKPT_DIR = "ckpt"
TENSORBOARD_DIR = "tensorboard"
EVAL_DIR = "eval"
MODEL_CARD_FILE = "README.md"
RUNS_ROOT = Path("runs")


def run_name(preset: str, method: str, seed: int) -> str:
    """The default name of a run: ``<preset>-<method>-seed<seed>``."""
    return f"{preset}-{method}-seed{seed}"


@dataclass(frozen=True)
class RunDir:
    """The paths of one run directory (nothing is created by building one)."""

    path: Path

    @classmethod
    def default(cls, preset: str, method: str, seed: int, root: str | os.PathLike[str] = RUNS_ROOT) -> RunDir:
        return cls(Path(root) / run_name(preset, method, seed))

    @property
    def manifest(self) -> Path:
        return self.path / MANIFEST_FILE

    @property
    def metrics(self) -> Path:
        return self.path / METRICS_FILE

    @property
    def final(self) -> Path:
        return self.path / FINAL_DIR

    @property
    def ckpt(self) -> Path:
        return self.path / CKPT_DIR

    @property
    def tensorboard(self) -> Path:
        return self.path / TENSORBOARD_DIR

    @property
    def eval(self) -> Path:
        return self.path / EVAL_DIR

    @property
    def model_card(self) -> Path:
        return self.final / MODEL_CARD_FILE

    def is_run(self) -> bool:
        """Whether ``infoppo train`` has started a run here (its manifest exists)."""
        return self.manifest.is_file()


def run_of_model(model: str | os.PathLike[str]) -> RunDir | None:
    """The run a model directory belongs to: ``RUN/final`` or a checkpoint one level deeper
    (``RUN/ckpt/<tag>``); ``None`` for a Hub id or a model outside any run."""
    path = Path(model).expanduser()
    if not path.is_dir():
        return None
    path = path.resolve()
    for candidate in (path.parent, path.parent.parent):
        run = RunDir(candidate)
        if run.is_run():
            return run
    return None


def read_manifest(run: RunDir | str | os.PathLike[str]) -> dict[str, Any] | None:
    """The run's manifest, ``None`` when it has none; an unreadable one is a :class:`UsageError`."""
    path = (run if isinstance(run, RunDir) else RunDir(Path(run))).manifest
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{path} is unreadable ({exc})") from exc
    if not isinstance(record, dict):
        raise UsageError(f"{path} is not a JSON object")
    return record


def write_manifest(run: RunDir, record: Mapping[str, Any]) -> None:
    """Write the manifest atomically (a reader sees the old one or the new one)."""
    atomic_write_json(run.manifest, dict(record))


def trained_response_length(model: str | os.PathLike[str]) -> int | None:
    """The response length (``rollout.max_new_tokens``) a model was trained with, when it belongs to a
    run: evaluation uses the same budget (the paper: max tokens = training length)."""
    run = run_of_model(model)
    if run is None:
        return None
    try:
        return int((read_manifest(run) or {})["config"]["openrlhf_flags"]["rollout.max_new_tokens"])
    except (UsageError, KeyError, TypeError, ValueError):
        return None


# --------------------------------------------------------------------------- metrics.jsonl


@dataclass
class MetricsLog:
    """A parsed ``metrics.jsonl``: one record per step, sorted by step (see the module's schema)."""

    records: list[dict[str, Any]]
    malformed_lines: list[int] = field(default_factory=list)
    """Line numbers that are not JSON objects (a torn last line after a crash, for one)."""
    stepless_lines: list[int] = field(default_factory=list)
    """Line numbers without an integer ``step``: their line number was used as the step."""


def read_metrics_log(path: str | os.PathLike[str]) -> MetricsLog:
    """Read a ``metrics.jsonl``; for a repeated step, later lines win field by field."""
    by_step: dict[int, dict[str, Any]] = {}
    log = MetricsLog(records=[])
    for line in iter_jsonl(path):
        if line.record is None:
            log.malformed_lines.append(line.number)
            continue
        record = line.record
        step = record.get("step")
        if isinstance(step, bool) or not isinstance(step, int):
            log.stepless_lines.append(line.number)
            record = {**record, "step": line.number}
        by_step[record["step"]] = {**by_step.get(record["step"], {}), **record}
    log.records = [by_step[step] for step in sorted(by_step)]
    return log


def read_metrics(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The step records of a ``metrics.jsonl`` (see :func:`read_metrics_log`)."""
    return read_metrics_log(path).records


# --------------------------------------------------------------------------- model card


def _yaml_list(name: str, values: list[str]) -> list[str]:
    return [f"{name}:", *(f"  - {json.dumps(value)}" for value in values)] if values else []


def _model_index(name: str, metrics: Mapping[str, Any]) -> list[str]:
    """Hugging Face's ``model-index`` block: one result per benchmark, its mean@k in percent."""
    lines = ["model-index:", f"  - name: {json.dumps(name)}", "    results:"]
    for bench, row in metrics.get("benches", {}).items():
        lines += [
            "      - task:",
            "          type: text-generation",
            "        dataset:",
            f"          name: {json.dumps(bench)}",
            f"          type: {json.dumps(bench)}",
            "        metrics:",
            f"          - type: {json.dumps('mean@' + str(row['k']))}",
            f"            value: {round(float(row['mean@k']), 2)}",
        ]
    return lines


def _results_table(metrics: Mapping[str, Any]) -> list[str]:
    k = metrics.get("average", {}).get("k", "k")
    rows = [*metrics.get("benches", {}).items(), ("Average", metrics.get("average"))]
    table = [
        f"| Benchmark | Mean@{k} (%) | ± SE | Pass@{k} (%) | Mean length (tokens) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, row in rows:
        if not row:
            continue
        cells = [row.get("mean@k"), row.get("mean@k_se"), row.get("pass@k"), row.get("length_mean")]
        shown = ["-" if value is None else f"{value:.1f}" for value in cells[:3]]
        shown.append("-" if cells[3] is None else f"{cells[3]:.0f}")
        table.append(f"| {name} | " + " | ".join(shown) + " |")
    return table


def model_card(manifest: Mapping[str, Any], metrics: Mapping[str, Any] | None, name: str) -> str:
    """The ``final/README.md`` of a run: Hugging Face's metadata header (base model, tags, datasets,
    and ``model-index`` once evaluated), then method, preset, data, the results table and the command."""
    config = manifest.get("config", {})
    flags = config.get("openrlhf_flags", {})
    base_model = str(config.get("model") or flags.get("actor.model_name_or_path") or "")
    method, preset = str(config.get("method", "?")), str(config.get("preset", "?"))
    data = str(flags.get("data.prompt_dataset", ""))
    version = manifest.get("versions", {}).get("infoppo", "?")
    commit = manifest.get("git_commit") or "?"
    hub_data = [data] if data and not Path(data).is_absolute() and data.count("/") == 1 else []
    header = ["---", f"base_model: {json.dumps(base_model)}", "library_name: transformers"]
    header += ["pipeline_tag: text-generation"]
    header += _yaml_list("tags", ["infoppo", "openrlhf", "reinforcement-learning", "math", method])
    header += _yaml_list("datasets", hub_data)
    if metrics and metrics.get("benches"):
        header += _model_index(name, metrics)
    body = [
        "---",
        "",
        f"# {name}",
        "",
        f"`{base_model}` trained with **{method}** (infoppo preset `{preset}`) on OpenRLHF.",
        "",
        f"- Base model: `{base_model}`",
        f"- Method: `{method}`; preset: `{preset}`; seed: {manifest.get('seed')}",
        f"- Training data: `{data or '?'}`",
        f"- Status: {manifest.get('status', '?')}; infoppo {version}, commit {commit}",
        "",
        "## Results",
        "",
    ]
    if metrics and metrics.get("benches"):
        body += _results_table(metrics)
        body += ["", "Scores are mean accuracy over the samples of each problem (`infoppo eval`)."]
    else:
        body.append("Not evaluated yet: `infoppo eval --model RUN/final` fills this table.")
    command = manifest.get("command")
    body += ["", "## Training command", "", "```bash"]
    body.append(shlex.join(command) if isinstance(command, list) else str(command or "?"))
    body += ["```", ""]
    return "\n".join(header + body)


def write_model_card(run: RunDir, metrics: Mapping[str, Any] | None = None) -> Path | None:
    """Write ``final/README.md`` from the manifest and the eval metrics (given, or read from
    ``RUN/eval/metrics.json`` when there); ``None`` when the run has no manifest or no ``final/``."""
    manifest = read_manifest(run)
    if manifest is None or not run.final.is_dir():
        return None
    if metrics is None:
        metrics = _saved_eval_metrics(run)
    atomic_write_text(run.model_card, model_card(manifest, metrics, run.path.resolve().name))
    return run.model_card


def _saved_eval_metrics(run: RunDir) -> dict[str, Any] | None:
    path = run.eval / "metrics.json"
    try:
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (OSError, ValueError):
        return None
