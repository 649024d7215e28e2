"""``final/README.md``: the model card of a trained run, a Hugging Face card (``huggingface_hub``'s
``ModelCard``): the metadata header (base model, tags, datasets, and ``model-index`` results once
evaluated), then method, preset, data, the results table and the training command."""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from infoppo_cli.atomic import atomic_write_text
from infoppo_cli.rundir.layout import RunDir
from infoppo_cli.rundir.manifest import Manifest, read_manifest
from infoppo_cli.rundir.weights import short, weights_fingerprint

TAGS = ("infoppo", "openrlhf", "reinforcement-learning", "math")

_TEMPLATE = """---
{{ card_data }}
---

# {{ name }}

`{{ base_model }}` trained with **{{ method }}** (infoppo preset `{{ preset }}`) on OpenRLHF.

- Base model: `{{ base_model }}`
- Method: `{{ method }}`; preset: `{{ preset }}`; seed: {{ seed }}
- Training data: `{{ data }}`
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

```bash
{{ command }}
```
"""


def _eval_results(metrics: Mapping[str, Any] | None) -> list[Any] | None:
    """Hugging Face's ``model-index`` results: one per benchmark, its mean@k in percent."""
    from huggingface_hub import EvalResult

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


def model_card(manifest: Manifest, metrics: Mapping[str, Any] | None, name: str) -> str:
    """The card's text (see the module)."""
    from huggingface_hub import ModelCard, ModelCardData

    base_model = str(manifest.model or manifest.flag("actor.model_name_or_path") or "")
    method = manifest.method or "?"
    data = str(manifest.flag("data.prompt_dataset") or "")
    hub_data = [data] if data and not Path(data).is_absolute() and data.count("/") == 1 else None
    evaluated = bool(metrics and metrics.get("benches"))
    card_data = ModelCardData(
        base_model=base_model,
        library_name="transformers",
        pipeline_tag="text-generation",
        tags=[*TAGS, method],
        datasets=hub_data,
        model_name=name if evaluated else None,  # the model-index's name, once there are results
        eval_results=_eval_results(metrics),
    )
    command = manifest.record.get("command")
    card = ModelCard.from_template(
        card_data,
        template_str=_TEMPLATE,
        name=name,
        base_model=base_model,
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
    if metrics is not None and metrics.get("weights_fingerprint") != weights_fingerprint(str(run.final)):
        metrics = None  # scores of other weights (before a --resume rewrote final/): not these
    atomic_write_text(run.model_card, model_card(manifest, metrics, run.path.resolve().name))
    return run.model_card


def _saved_eval_metrics(run: RunDir) -> dict[str, Any] | None:
    path = run.eval_metrics
    try:
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (OSError, ValueError):
        return None
