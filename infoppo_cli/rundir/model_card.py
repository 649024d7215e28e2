"""``final/README.md``: the model card of a trained run, a Hugging Face card (``huggingface_hub``'s
``ModelCard``): the metadata header (base model, tags, datasets, and ``model-index`` results once
evaluated), then the base model (a Hub id and its revision, or the task that built it), method, preset,
data, the weights' fingerprint, the results table, the ``infoppo`` command as typed with its
``--resume`` history, and the exact OpenRLHF launch."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from infoppo_cli.atomic import atomic_write_text
from infoppo_cli.rundir.base_model import base_name, describe_base, recorded_base
from infoppo_cli.rundir.eval_metrics import UnreadableEvalMetrics, read_eval_metrics
from infoppo_cli.rundir.layout import RunDir
from infoppo_cli.rundir.manifest import Manifest, read_manifest
from infoppo_cli.rundir.weights import short, weights_fingerprint

TAGS = ("infoppo", "openrlhf", "reinforcement-learning", "math")

_TEMPLATE = """---
{{ card_data }}
---

# {{ name }}

{{ base_name }} trained with **{{ method }}** (infoppo preset `{{ preset }}`) on OpenRLHF.

- Base model: {{ base_model }}
- Method: `{{ method }}`; preset: `{{ preset }}`; seed: {{ seed }}
- Training data: `{{ data }}`
- Weights: `{{ own_weights }}` (SHA-256 of this directory's weight files, first 12 hex digits)
- Status: {{ status }}; infoppo {{ version }}, commit {{ commit }}

## Results

{% if rows -%}
| Benchmark | Mean@{{ k }} (%) | ± SE | Pass@{{ k }} (%) | Mean length (tokens) |
|---|---:|---:|---:|---:|
{% for row in rows -%}
| {{ row | join(" | ") }} |
{% endfor %}
Scores are mean accuracy over the samples of each problem (`infoppo eval`), of the weights with fingerprint
`{{ weights }}` (SHA-256 of the weight files, first 12 hex digits).
{%- else -%}
Not evaluated yet: `infoppo eval --model RUN/final` fills this table.
{%- endif %}

## Training command

{% if typed -%}
```bash
{{ typed }}
```
{%- else -%}
Not recorded (the run was started before infoppo kept the command as typed); the exact launch is below.
{%- endif %}
{% if resumes %}
Resumed {{ resumes | length }} time(s):
{% for resume in resumes %}
- {{ resume }}
{%- endfor %}
{% endif %}
## Exact launch

The OpenRLHF process infoppo started (`manifest.json` holds every resolved setting):

```bash
{{ command }}
```
"""


def _eval_results(metrics: Mapping[str, Any] | None) -> list[Any] | None:
    """Hugging Face's ``model-index`` results: one per benchmark, its mean@k in percent."""
    from huggingface_hub import EvalResult  # lazy: heavy, kept off start-up

    benches = (metrics or {}).get("benches") or {}
    results = [
        EvalResult(
            task_type="text-generation",
            dataset_type=bench,
            dataset_name=bench,
            metric_type=f"mean@{row['k']}",
            metric_value=round(float(row["mean@k"]), 2),
        )
        for bench, row in benches.items()
    ]
    return results or None


def _table_rows(metrics: Mapping[str, Any]) -> list[list[str]]:
    rows = [*metrics.get("benches", {}).items(), ("Average", metrics.get("average"))]
    shown = []
    for name, row in rows:
        if not row:
            continue
        cells = [row.get("mean@k"), row.get("mean@k_se"), row.get("pass@k"), row.get("length_mean")]
        texts = ["-" if value is None else f"{value:.1f}" for value in cells[:3]]
        texts.append("-" if cells[3] is None else f"{cells[3]:.0f}")
        shown.append([name, *texts])
    return shown


def _resume_line(resume: Any) -> str:
    """One ``--resume`` of the run: when, the command typed, the settings it changed."""
    if not isinstance(resume, dict):
        return str(resume)
    line = str(resume.get("time") or "?")
    if resume.get("command"):
        line += f": `{resume['command']}`"
    changes = resume.get("overrides") or {}
    if isinstance(changes, dict) and changes:
        listed = ", ".join(
            f"{key} {values[0]} -> {values[1]}" if isinstance(values, list) and len(values) == 2 else key
            for key, values in changes.items()
        )
        line += f" (changed: {listed})"
    return line


def model_card(
    manifest: Manifest, metrics: Mapping[str, Any] | None, name: str, weights: str | None = None
) -> str:
    """The card's text (see the module); ``weights``: the fingerprint of the directory's weights."""
    from huggingface_hub import ModelCard, ModelCardData  # lazy: heavy, kept off start-up

    model = manifest.model or manifest.flag("actor.model_name_or_path")
    base = recorded_base(manifest.record, str(model) if model else None)
    method = manifest.method or "?"
    data = str(manifest.flag("data.prompt_dataset") or "")
    hub_data = [data] if data and not Path(data).is_absolute() and data.count("/") == 1 else None
    evaluated = bool(metrics and metrics.get("benches"))
    card_data = ModelCardData(
        base_model=base.get("hub_id"),  # the Hub's field names a Hub model, never a path
        library_name="transformers",
        pipeline_tag="text-generation",
        tags=[*TAGS, method],
        datasets=hub_data,
        model_name=name if evaluated else None,  # the model-index's name, once there are results
        eval_results=_eval_results(metrics),
    )
    command = manifest.record.get("command")
    typed = manifest.record.get("infoppo_command")
    resumes = manifest.record.get("resumes")
    card = ModelCard.from_template(
        card_data,
        template_str=_TEMPLATE,
        name=name,
        base_name=base_name(base),
        base_model=describe_base(base),
        method=method,
        preset=manifest.preset or "?",
        seed=manifest.record.get("seed"),
        data=data or "?",
        status=manifest.record.get("status", "?"),
        version=manifest.versions.get("infoppo", "?"),
        commit=manifest.git_commit or "?",
        k=(metrics or {}).get("average", {}).get("k", "k"),
        rows=_table_rows(metrics) if metrics and evaluated else [],
        weights=short((metrics or {}).get("weights_fingerprint")),
        own_weights=short(weights),
        typed=typed if isinstance(typed, str) else None,
        resumes=[_resume_line(resume) for resume in resumes] if isinstance(resumes, list) else [],
        command=shlex.join(command) if isinstance(command, list) else str(command or "?"),
    )
    return f"{card}\n"  # Jinja drops the template's last newline


def write_model_card(run: RunDir, metrics: Mapping[str, Any] | None = None) -> Path | None:
    """Write ``final/README.md`` from the manifest and the eval metrics (given, or read from
    ``RUN/eval/metrics.json`` when there); ``None`` when the run has no manifest or no ``final/``."""
    manifest = read_manifest(run)
    if manifest is None or not run.final.is_dir():
        return None
    if metrics is None:
        metrics = _saved_eval_metrics(run)
    weights = weights_fingerprint(str(run.final))
    if metrics is not None and metrics.get("weights_fingerprint") != weights:
        metrics = None  # scores of other weights (before a --resume rewrote final/): not these
    atomic_write_text(run.model_card, model_card(manifest, metrics, run.path.resolve().name, weights))
    return run.model_card


def _saved_eval_metrics(run: RunDir) -> dict[str, Any] | None:
    try:
        return read_eval_metrics(run.eval)
    except UnreadableEvalMetrics:
        return None
