"""``infoppo inspect`` end to end: read, tokenize, compute entropies (resumably), build the clocks and
write every output atomically into the output directory."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

import pyarrow.parquet as pq
import torch

from infoppo_cli.atomic import atomic_write_json, atomic_write_text, atomic_writer
from infoppo_cli.data.templates import build_prompt  # the one prompt builder of training and eval
from infoppo_cli.errors import UsageError
from infoppo_cli.inspect import entropy as fwd
from infoppo_cli.inspect.clock import ClockSettings, clock, file_inputs
from infoppo_cli.inspect.figures import write_figure
from infoppo_cli.inspect.page import render_page
from infoppo_cli.inspect.responses import Item, read_items
from infoppo_cli.inspect.settings import InspectSettings
from infoppo_cli.inspect.store import EntropyStore, item_key
from infoppo_cli.inspect.token_text import token_decoder
from infoppo_cli.inspect.tokens import (
    Inspected,
    clock_drift,
    clock_summary,
    figure_min_count,
    token_stats,
    token_table,
    top_tokens,
)
from infoppo_cli.rundir.weights import weights_fingerprint

OUTPUTS = ("tokens.parquet", "top_tokens.csv", "entropy_tokens.png", "index.html", "summary.json")

Progress = Callable[[str, int, int], None]
"""``progress(model, responses_done, responses_total)``, called after every batch."""
Warn = Callable[[str], None]
"""``warn(message)``: something the outputs cannot show, said as soon as it is known."""


def default_out_dir(responses: str | Path) -> Path:
    """``inspect-<stem>/`` beside the responses file."""
    path = Path(responses)
    return path.parent / f"inspect-{path.stem}"


def rendered_prompts(tokenizer, items: Sequence[Item], template: str) -> list[fwd.Tokenized]:
    """Each item's ids: the prompt rendered as training renders it (template, then chat template)."""
    return [
        fwd.tokenize(tokenizer, build_prompt(tokenizer, item.prompt, template), item.response)
        for item in items
    ]


def entropies(
    policy: fwd.Policy,
    tokenized: Sequence[fwd.Tokenized],
    settings: InspectSettings,
    out: Path,
    progress: Progress,
) -> list[torch.Tensor]:
    """Every response's token entropies, computing only those the resume store does not hold yet; the
    weights are freed afterwards (before a --compare model loads)."""
    store = EntropyStore(out, fwd.policy_identity(policy.name))
    keys = [item_key(t) for t in tokenized]
    first: dict[str, int] = {}
    for index, key in enumerate(keys):
        first.setdefault(key, index)
    missing = [index for key, index in first.items() if key not in store.saved]
    done = len(first) - len(missing)
    progress(policy.name, done, len(first))
    for batch in fwd.batches([tokenized[i] for i in missing], settings.batch_tokens):
        rows = [missing[j] for j in batch]
        store.add([keys[i] for i in rows], fwd.response_entropies(policy, [tokenized[i] for i in rows]))
        done += len(rows)
        progress(policy.name, done, len(first))
    policy.release()
    return [store.saved[key] for key in keys]


def _check_same_tokenizer(settings: InspectSettings, tokenizer) -> None:
    """Refuse a --compare model with another vocabulary before any forward: drift is per token."""
    if (
        settings.compare is not None
        and fwd.load_tokenizer(settings.compare).get_vocab() != tokenizer.get_vocab()
    ):
        raise UsageError(
            f"--compare {settings.compare} has another tokenizer than {settings.model}; "
            "per-token drift needs the same tokens"
        )


def _clocks(values: list[torch.Tensor], settings: ClockSettings, policy: fwd.Policy):
    file = file_inputs(values, policy.config)
    return [clock(h, settings, file) for h in values]


def too_long(policy: fwd.Policy, tokenized: Sequence[fwd.Tokenized]) -> str | None:
    """A warning when some responses (with their prompts) pass the model's
    ``max_position_embeddings``: their later entropies come from positions it was not built for."""
    limit = policy.max_positions
    if limit is None:
        return None
    lengths = [len(t.prompt_ids) + len(t.response_ids) for t in tokenized]
    over = [n for n in lengths if n > limit]
    if not over:
        return None
    return (
        f"{len(over)} of {len(lengths)} responses (prompt included, up to {max(over):,} tokens) are longer "
        f"than {policy.name}'s max_position_embeddings ({limit:,}); their entropies past that position "
        "come from positions the model was not built for"
    )


class Warnings(list):
    """The warnings of one inspection: kept for summary.json, and passed on to ``warn`` at once."""

    def __init__(self, warn: Warn | None) -> None:
        super().__init__()
        self.warn = warn

    def add(self, message: str | None) -> None:
        if message is None:
            return
        self.append(message)
        if self.warn is not None:
            self.warn(message)


def run_inspect(
    settings: InspectSettings, out: Path, progress: Progress, warn: Warn | None = None
) -> dict[str, object]:
    """Inspect ``settings.responses`` and write the outputs into ``out``; returns the summary (its
    ``warnings`` were also given to ``warn`` as they came up)."""
    warnings = Warnings(warn)
    items = read_items(settings.responses, settings.max_responses)
    policy = fwd.load_policy(settings.model)
    _check_same_tokenizer(settings, policy.tokenizer)
    tokenized = rendered_prompts(policy.tokenizer, items, settings.template)
    warnings.add(too_long(policy, tokenized))
    clocks = _clocks(entropies(policy, tokenized, settings, out, progress), settings.clock, policy)
    compared = [None] * len(items)
    if settings.compare is not None:
        other = fwd.load_policy(settings.compare)
        if other.max_positions != policy.max_positions:
            warnings.add(too_long(other, tokenized))
        values = entropies(other, tokenized, settings, out, progress)
        compared = _clocks(values, settings.clock, other)
    decode = token_decoder(policy.tokenizer)
    inspected = [
        Inspected(item.id, decode(t.response_ids), c, item.correct, d)
        for item, t, c, d in zip(items, tokenized, clocks, compared, strict=True)
    ]
    return write_outputs(inspected, settings, out, warnings)


def write_outputs(
    inspected: list[Inspected], settings: InspectSettings, out: Path, warnings: Warnings | None = None
) -> dict[str, object]:
    """tokens.parquet, top_tokens.csv, entropy_tokens.png, summary.json and index.html, each atomically."""
    warnings = warnings if warnings is not None else Warnings(None)
    out.mkdir(parents=True, exist_ok=True)
    table = token_table(inspected)
    with atomic_writer(out / "tokens.parquet", "wb") as handle:
        pq.write_table(table, handle)
    stats = token_stats(table)
    min_count, note = figure_min_count(stats, settings.top, settings.min_count)
    warnings.add(note)
    ranking = top_tokens(stats, settings.top, min_count)
    atomic_write_text(out / "top_tokens.csv", _csv(ranking.to_pylist()))
    figure = write_figure(ranking, out / "entropy_tokens.png", min_count)
    summary = {
        "model": settings.model,
        "weights_fingerprint": weights_fingerprint(settings.model),
        "responses_file": str(settings.responses),
        "responses": len(inspected),
        "settings": {
            **asdict(settings.clock),
            "template": settings.template,
            "min_count": min_count,
            "top": settings.top,
        },
        **clock_summary([r.clock for r in inspected]),
        "top_tokens": {"listed": ranking.num_rows, "figure": figure},
        "warnings": list(warnings),
    }
    if settings.compare is not None:
        summary["compare"] = {
            "model": settings.compare,
            "weights_fingerprint": weights_fingerprint(settings.compare),
            **clock_summary([r.compared for r in inspected]),
            "clock_drift": clock_drift(inspected),
        }
    atomic_write_json(out / "summary.json", summary)
    atomic_write_text(out / "index.html", render_page(inspected, summary))
    return summary


def _csv(rows: list[dict[str, object]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(
        buffer, fieldnames=["list", "rank", "token", "count", "mean_entropy", "mean_rho"], lineterminator="\n"
    )
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()
