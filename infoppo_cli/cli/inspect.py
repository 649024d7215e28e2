"""``infoppo inspect``: the information clock of a model on real responses (thin layer over
``infoppo_cli.inspect``; the progress bar and the summary table are rendered here)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

_DEFAULT = "default: the infoppo method's value in methods.toml"


def _given(flag: str, help_text: str) -> Any:
    """An option without a shown default (``None`` when not given)."""
    return typer.Option(flag, help=help_text, show_default=False)


def inspect_command(
    model: Annotated[str, _given("--model", "Model directory or Hugging Face id.")],
    responses: Annotated[
        Path,
        _given(
            "--responses", "An `infoppo eval` samples.jsonl, or any JSONL with prompt and response (and id)."
        ),
    ],
    compare: Annotated[
        str | None, _given("--compare", "A second model (same tokenizer): its clock and per-token drift.")
    ] = None,
    template: Annotated[
        str | None,
        _given("--template", "Prompt template: dapo, boxed or raw (default: the eval run's, else dapo)."),
    ] = None,
    norm: Annotated[
        str | None,
        _given("--norm", f"rho normalisation: batch (over the file), global or sentence ({_DEFAULT})."),
    ] = None,
    gamma: Annotated[float | None, _given("--gamma", f"Discount gamma ({_DEFAULT}).")] = None,
    eps_low_info: Annotated[
        float | None, _given("--eps-low-info", f"Adaptive clip epsilon_low ({_DEFAULT}).")
    ] = None,
    eps_high_info: Annotated[
        float | None, _given("--eps-high-info", f"Adaptive clip epsilon_high ({_DEFAULT}).")
    ] = None,
    min_count: Annotated[
        int, typer.Option("--min-count", help="Figure 2: count tokens seen at least this often.")
    ] = 100,
    top: Annotated[int, typer.Option("--top", help="Figure 2: tokens listed at each end.")] = 100,
    max_responses: Annotated[
        int | None,
        typer.Option("--max-responses", help="Inspect only the first N responses.", show_default=False),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Output directory (default: inspect-<file stem> beside the responses file).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """See the information clock of a model on real responses: per-token entropy, rho, Gamma_info and clip
    bounds (tokens.parquet, index.html), the paper's Figure 2 tokens, and the drift against --compare."""
    from infoppo_cli.atomic import check_output_target
    from infoppo_cli.inspect.clock import ClockSettings, method_defaults
    from infoppo_cli.inspect.responses import eval_template
    from infoppo_cli.inspect.run import InspectSettings, default_out_dir, run_inspect

    given = {"norm": norm, "gamma": gamma, "eps_low": eps_low_info, "eps_high": eps_high_info}
    clock = ClockSettings(**{**method_defaults(), **{k: v for k, v in given.items() if v is not None}})
    template = template or (eval_template(responses) if responses.is_file() else None) or "dapo"
    settings = InspectSettings(model, str(responses), compare, template, clock, min_count, top, max_responses)
    target = check_output_target(out or default_out_dir(responses), kind="dir", inputs=[responses])
    with _ProgressBar() as progress:
        summary = run_inspect(settings, target, progress)
    print_summary(summary, target)


class _ProgressBar:
    """The library's ``progress(model, done, total)`` callback as one Rich task per model."""

    def __enter__(self):
        from infoppo_cli.cli.console import progress_bar

        self.bar = progress_bar()
        self.bar.__enter__()
        self.tasks: dict[str, Any] = {}
        return self.update

    def update(self, model: str, done: int, total: int) -> None:
        if model not in self.tasks:
            self.tasks[model] = self.bar.add_task(f"entropy · {model}", total=total)
        self.bar.update(self.tasks[model], completed=done, total=total)

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(*exc)


def _num(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def print_summary(summary: dict[str, Any], out: Path) -> None:
    """A short table of the clock (and of the compared model's), then where the files are."""
    from rich.table import Table

    from infoppo_cli.cli.console import console

    table = Table(title=f"Information clock on {summary['responses']} responses")
    for column in ("model", "tokens", "mean H", "p50 H", "p90 H", "mean ρ", "ρ > 0.5", "mean Γ_info(0,T)"):
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
            _num(row["gamma_info_T_mean"], 4),
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
