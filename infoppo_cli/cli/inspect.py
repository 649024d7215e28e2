"""``infoppo inspect``: the information clock of a model on real responses (thin layer over
``infoppo_cli.inspect``; the progress bar and the summary table are rendered here)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.table import Table

from infoppo_cli.atomic import check_output_target, refuse_inside_inputs
from infoppo_cli.cli.options import given_fields, settings_of, with_settings
from infoppo_cli.inspect.settings import ClockSettings, InspectSettings, method_clock
from infoppo_cli.schema import option


@dataclass
class InspectOptions:
    """Where ``infoppo inspect`` writes."""

    out: Path | None = option(
        None, "Output directory (default: inspect-<file stem> beside the responses file).", "--out", "-o"
    )


@with_settings(InspectSettings, ClockSettings, InspectOptions)
def inspect_command(**options: Any) -> None:
    """See the information clock of a model on real responses: per-token entropy, rho, Gamma_info and clip
    bounds (tokens.parquet, index.html), InfoPPO's Figure 2 tokens, and the drift against --compare."""
    from infoppo_cli.cli.console import StageProgress, say
    from infoppo_cli.inspect.responses import eval_template
    from infoppo_cli.inspect.run import default_out_dir, run_inspect

    out = settings_of(options, InspectOptions).out
    asked = given_fields(options, InspectSettings)
    responses = Path(asked["responses"])
    asked["responses"] = str(responses)
    if "template" not in asked:
        asked["template"] = (eval_template(responses) if responses.is_file() else None) or "dapo"
    clock = method_clock(**given_fields(options, ClockSettings))
    settings = InspectSettings(**asked, clock=clock)
    target = check_output_target(out or default_out_dir(responses), kind="dir", inputs=[responses])
    refuse_inside_inputs(
        target, [settings.model, settings.compare, responses], "--out" if out else "the output directory"
    )
    with StageProgress("entropy") as progress:
        summary = run_inspect(settings, target, progress, warn=lambda message: say("warning", message))
    print_summary(summary, target)


def _num(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def print_summary(summary: dict[str, Any], out: Path) -> None:
    """A short table of the clock (and of the compared model's), then where the files are."""
    from infoppo_cli.cli.console import console
    from infoppo_cli.inspect.clock import discount_text

    table = Table(title=f"Information clock on {summary['responses']} responses")
    columns = (
        "model",
        "tokens",
        "mean H",
        "p50 H",
        "p90 H",
        "mean ρ",
        "ρ > 0.5",
        "mean Γ_info(0,T)",
        "mean γ^T",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "model" else "right")
    rows = [summary] + ([summary["compare"]] if "compare" in summary else [])
    for row in rows:
        table.add_row(
            str(row["model"]),
            str(row["tokens"]),
            _num(row["entropy"]["mean"]),
            _num(row["entropy"]["p50"]),
            _num(row["entropy"]["p90"]),
            _num(row["rho"]["mean"]),
            "-" if row["rho_above_half"] is None else f"{100 * row['rho_above_half']:.1f}%",
            discount_text(row["gamma_info_T_mean"]),
            discount_text(row.get("gamma_token_T_mean")),
        )
    console.print(table)
    if "compare" in summary:
        drift = summary["compare"]["clock_drift"]
        console.print(
            f"clock drift: mean ΔH {_num(drift['entropy_diff']['mean'], 4)} nats, "
            f"mean |ΔH| {_num(drift['entropy_abs_diff_mean'], 4)}, "
            f"mean |Δρ| {_num(drift['rho_abs_diff_mean'], 4)}",
            highlight=False,
        )
    console.print(
        f"page: {out / 'index.html'}   tokens: {out / 'tokens.parquet'}   summary: {out / 'summary.json'}",
        highlight=False,
    )
