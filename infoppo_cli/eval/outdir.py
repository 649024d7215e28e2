"""The output directory of an evaluation: where it may be, and what its ``eval_config.json`` records.

``eval_config.json`` holds the settings (what ``--resume`` continues), the prompt facts and, per
benchmark, its source (the Hub dataset or the local file its problems came from). Every benchmark
evaluated into a directory keeps its samples under its own name, so benchmarks are added and resumed
one by one: the sampling settings must agree across the directory, a benchmark's source only with its
own earlier samples. The file is written just before the first new samples are stored and again when
the run ends, so a refused or failed command leaves none behind.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from infoppo_cli.atomic import refuse_inside_inputs
from infoppo_cli.errors import UsageError
from infoppo_cli.eval.benchmarks import load_bench
from infoppo_cli.eval.registry import spec_for
from infoppo_cli.eval.sample_store import SAMPLES_FILE
from infoppo_cli.eval.settings import CONFIG_FILE, EvalSettings
from infoppo_cli.rundir import EVAL_METRICS_FILE

_SOURCE_KEYS = ("file", "hf_id", "configs", "split", "revision")
_WRITTEN = (SAMPLES_FILE, EVAL_METRICS_FILE, CONFIG_FILE)
"""The files an evaluation writes into its output directory (besides ``details/``)."""


def bench_source(name: str, file: str | None, benches_file: str | None = None) -> dict[str, Any]:
    """Where ``name``'s problems come from: its local file, or its Hub dataset (id, configs, split,
    revision)."""
    spec = spec_for(name, file, benches_file)
    if file is not None or not spec.on_hub:
        return {"file": file}
    hub = {"hf_id": spec.hf_id, "configs": list(spec.configs), "split": spec.split, "revision": spec.revision}
    return {"file": None, **hub}


def saved_sources(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Each saved benchmark's source; a configuration written before sources were recorded gives its
    benchmarks' files."""
    sources = config.get("sources")
    if isinstance(sources, dict):
        return {name: dict(source) for name, source in sources.items() if isinstance(source, dict)}
    settings = config["settings"]
    benches = list(settings.get("benches") or [])
    files = dict(settings.get("bench_files") or {})
    return {name: {"file": files.get(name)} for name in benches}


def check_sources(
    saved: Mapping[str, Mapping[str, Any]], current: Mapping[str, Mapping[str, Any]], stored: Iterable[str]
) -> None:
    """Refuse to add samples to a benchmark whose stored samples came from another source."""
    for name in stored:
        if name not in saved or name not in current:
            continue
        old, new = saved[name], current[name]
        changed = [key for key in _SOURCE_KEYS if key in old and key in new and old[key] != new[key]]
        if changed:
            raise UsageError(
                f"the output directory holds {name} samples made from {_shown(old)}, not {_shown(new)}: "
                f"pass another --out, or evaluate {name} from its saved source"
            )


def _shown(source: Mapping[str, Any]) -> str:
    if source.get("file"):
        return str(source["file"])
    configs = source.get("configs") or []
    shown = str(source.get("hf_id") or "the Hub") + (f" [{', '.join(configs)}]" if configs else "")
    return shown + (f" ({source['split']})" if source.get("split") else "")


def config_document(
    settings: EvalSettings,
    prompt: Mapping[str, Any],
    sources: Mapping[str, Any],
    carried: Mapping[str, str | None],
) -> dict[str, Any]:
    """What ``eval_config.json`` holds: these settings, with the benchmarks evaluated here earlier
    (``carried``: name -> file) listed first, so that ``--resume`` continues them all."""
    record = dataclasses.asdict(settings)
    record["benches"] = [*carried, *(name for name in settings.benches if name not in carried)]
    files = {name: file for name, file in carried.items() if file is not None}
    record["bench_files"] = {**files, **settings.bench_files}
    return {"settings": record, "prompt": dict(prompt), "sources": dict(sources)}


def check_out_dir(out_dir: str | Path, settings: EvalSettings, option: str = "--out") -> None:
    """Refuse an output directory that is, or is inside, the model's directory or an input's."""
    model = settings.model if settings.source == "generate" else None  # else only a label
    inputs = [model, settings.responses, settings.benches_file, *settings.bench_files.values()]
    refuse_inside_inputs(out_dir, inputs, option)
    written = {(Path(out_dir) / name).expanduser().resolve() for name in _WRITTEN}
    for given in inputs[1:]:
        if given is not None and Path(given).expanduser().resolve() in written:
            raise UsageError(
                f"{option} {out_dir} would write over the command's own input {given}; "
                "choose another output directory"
            )


def load_saved_bench(settings: Mapping[str, Any], bench: str) -> list[Any]:
    """The problems of ``bench`` as read by the evaluation whose saved ``settings`` these are (its local
    file, its ``--benches-file``, or the Hub)."""
    files = dict(settings.get("bench_files") or {})
    return load_bench(bench, files.get(bench), settings.get("benches_file"))
