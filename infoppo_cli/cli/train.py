"""``infoppo train`` and ``infoppo presets``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Group
from rich.table import Table

from infoppo_cli.cli.console import StageProgress, console, say
from infoppo_cli.cli.options import given_fields, settings_of, with_settings
from infoppo_cli.schema import dry_run_option, flag_of, methods_file_option, option
from infoppo_cli.train.request import PREPARE_DATA, TRACKING_FIELDS, TrainRequest

if TYPE_CHECKING:
    from infoppo_cli.train.plan import TrainPlan


def presets_table(preset_files: list[str] | None = None, methods_file: str | None = None) -> Group:
    """Every model preset and method (shipped, then the user's files) with where it comes from."""
    from infoppo_cli.openrlhf_adapter.device import DEVICES
    from infoppo_cli.train.methods import methods
    from infoppo_cli.train.presets import preset, preset_names

    table = Table(title="model presets (presets/*.toml; --preset NAME or --preset FILE.toml)")
    table.add_column("preset", no_wrap=True, style="bold")
    for column in ("model", "max response", "layout", "rollout", "ZeRO", "lr actor / critic", "source"):
        table.add_column(column)
    for name in [*preset_names(), *(preset_files or [])]:
        p = preset(name)
        lr = f"{p.openrlhf.get('actor.adam.lr')} / {p.openrlhf.get('critic.adam.lr')}"
        engines = p.nodes * p.gpus_per_node // p.vllm_tensor_parallel
        device = DEVICES[p.device]
        layout = device.describe_layout(p.nodes, p.gpus_per_node)
        rollout = device.describe_engines(engines, p.vllm_tensor_parallel)
        zero = str(p.openrlhf.get("ds.zero_stage", 2))
        model = p.model or f"built with its task ({p.task})"
        table.add_row(p.name, model, f"{p.max_response_tokens} tokens", layout, rollout, zero, lr, p.source)
    methods_table = Table(title="methods (presets/methods.toml; --methods-file FILE.toml adds more)")
    methods_table.add_column("method", no_wrap=True, style="bold")
    for column in ("advantage", "clip", "token mask", "defaults", "summary", "source"):
        methods_table.add_column(column)
    for m in methods(methods_file).values():
        defaults = {k.rsplit(".", 1)[-1]: v for k, v in m.openrlhf.items() if "gamma" in k or "lambd" in k}
        defaults.update(m.infotime)
        listed = ", ".join(f"{k}={v}" for k, v in defaults.items())
        methods_table.add_row(m.name, m.advantage, m.clip, m.token_mask, listed, m.summary, m.source)
    return Group(table, methods_table)


def plan_table(plan: TrainPlan) -> Table:
    """The resolved configuration a researcher checks before spending GPU hours."""
    from infoppo_cli.train.summary import summary_rows

    table = Table(title=f"infoppo train: {plan.preset.name} / {plan.method.name}", show_header=False)
    table.add_column("setting", style="bold")
    table.add_column("value")
    for name, value in summary_rows(plan):
        table.add_row(name, value)
    return table


@dataclass
class PresetsOptions:
    """``infoppo presets``' options."""

    preset_files: list[str] = option(
        None,
        "Also list this preset file (FILE.toml); repeatable.",
        "--preset",
        default_factory=list,
    )
    methods_file: str | None = methods_file_option()


@with_settings(PresetsOptions)
def presets_command(**options: Any) -> None:
    """List the model presets and training methods, with the file each comes from."""
    asked = settings_of(options, PresetsOptions)
    console.print(presets_table(asked.preset_files, asked.methods_file))


@dataclass
class TrainCommandOptions:
    """What ``infoppo train`` does with the request besides running it."""

    dry_run: bool = dry_run_option()
    verbose: bool = option(
        False,
        "Also show all of the run's output here (OpenRLHF's, Ray's); RUN/train.log always has it.",
        "--verbose",
    )
    list_presets: bool = option(False, "List presets and methods, then exit.", "--list-presets")
    replay: str | None = option(
        None,
        "Rebuild RUN's plan from RUN/manifest.json (with --set changes), show what differs, run it "
        "(into --output-dir, else a new RUN-replay beside RUN; with --resume, RUN itself).",
        "--replay",
    )


REPLAY_TAKES = ("overrides", "output_dir", "resume", "steps", *TRACKING_FIELDS)
"""The request options ``--replay`` takes; the plan's others come from the run's manifest."""


@with_settings(TrainRequest, TrainCommandOptions)
def train_command(**options: Any) -> None:
    """Train with InfoPPO (or a baseline) on OpenRLHF's Ray PPO trainer."""
    from infoppo_cli.errors import UsageError
    from infoppo_cli.train.plan import plan_training

    given = given_fields(options, TrainRequest)
    command = settings_of(options, TrainCommandOptions)
    dry_run, verbose = command.dry_run, command.verbose
    if command.list_presets:
        console.print(
            presets_table([given["preset"]] if "preset" in given else [], given.get("methods_file"))
        )
        return
    if command.replay:
        refused = [name for name in given if name not in REPLAY_TAKES]
        if refused:
            flag = flag_of(TrainRequest, refused[0], given[refused[0]])
            raise UsageError(f"--replay takes its plan from the run; use --set instead of {flag}")
        _replay(command.replay, given, dry_run, verbose)
        return
    if "preset" not in given:
        raise UsageError("--preset is required; see `infoppo presets` for the choices")
    request = TrainRequest(**given)
    with StageProgress("building the preset's task") as progress:
        plan = plan_training(request, strict_data=not dry_run, progress=progress)
    _launch_or_print(plan, dry_run, verbose=verbose)


def _launch_or_print(plan: TrainPlan, dry_run: bool, after_plan: Any = None, verbose: bool = False) -> None:
    """Check the output directory, show the plan (and ``after_plan``), then print the exact command
    (``--dry-run``: then every problem a launch would be refused for, each an ``error:`` line, exit 2)
    or run it."""
    from infoppo_cli.atomic import check_output_target
    from infoppo_cli.cli.invocation import typed_command
    from infoppo_cli.cli.problems import exit_on_problems
    from infoppo_cli.train.preflight import launch_problems
    from infoppo_cli.train.run import check_launch, invocation_text, run_training

    plan.typed_command = typed_command()
    check_output_target(plan.output_dir, kind="dir", inputs=[plan.data], option="--output-dir")
    if dry_run:
        problems = launch_problems(plan)
    else:
        checked = check_launch(plan)
    console.print(plan_table(plan))
    if after_plan is not None:
        console.print(after_plan)
    for warning in plan.warnings:
        say("warning", warning, to=console)
    if dry_run:
        if plan.data_to_prepare:
            say("note", f"{plan.data_to_prepare} does not exist yet: {PREPARE_DATA}", to=console)
        console.print("OpenRLHF invocation:", style="bold")
        print(invocation_text(plan))
        console.print(f"run configuration it reads ({plan.config_path}, written at launch):", style="bold")
        print(config_text(plan.infotime))
        exit_on_problems(problems)
        return
    from infoppo_cli.cli.train_progress import TrainDisplay

    with TrainDisplay(plan.length.rl_steps) as display:  # the run's full output goes to RUN/train.log
        code = run_training(plan, checked, display, verbose)
    _say_outcome(plan)
    if code:
        raise typer.Exit(code)


def config_text(settings: dict[str, Any]) -> str:
    """infoppo's settings of a run as its configuration file holds them, one per line."""
    import json

    return "\n".join(f"  {key} = {json.dumps(value)}" for key, value in settings.items())


def _say_outcome(plan: TrainPlan) -> None:
    """How far the run got and how its in-training eval moved (``train/outcome.py``)."""
    from infoppo_cli.rundir.manifest import read_manifest
    from infoppo_cli.train.outcome import outcome_lines

    record = read_manifest(plan.output_dir)
    status = (record.status if record else None) or "stopped"
    evaluation = plan.evaluation
    benches = list(evaluation.benches) if evaluation else []
    samples = evaluation.samples if evaluation else 0
    for line in outcome_lines(plan.output_dir, status, plan.length.rl_steps, benches, samples):
        console.print(line, highlight=False, soft_wrap=True, markup=False)


def _replay(run_dir: str, given: dict[str, Any], dry_run: bool, verbose: bool = False) -> None:
    """``--replay RUN``: the recorded plan rebuilt (its RL steps too, unless ``--steps`` changes
    them), the differences shown, then run like any plan."""
    from dataclasses import replace

    from infoppo_cli.errors import UsageError
    from infoppo_cli.train.plan import plan_training
    from infoppo_cli.train.replay import differences, read_recorded, replay_request

    recorded = read_recorded(run_dir)
    overrides, output_dir = given.get("overrides", []), given.get("output_dir")
    request = replay_request(recorded, overrides, output_dir, resume=given.get("resume", False))
    request = replace(request, **{name: given[name] for name in TRACKING_FIELDS if name in given})
    if "steps" in given:
        request = replace(request, steps=given["steps"])
    try:
        plan = plan_training(request, strict_data=not dry_run)
    except UsageError as exc:  # a recorded value that is refused now: not an option typed here
        raise UsageError(f"--replay {run_dir}: the recorded plan is refused now: {exc}") from None
    rows = differences(recorded, plan)
    table = Table(title=f"differences from {recorded.run_dir}")
    for column in ("what", "recorded", "now"):
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    same = f"no differences from {recorded.run_dir}: the same OpenRLHF command"
    _launch_or_print(plan, dry_run, table if rows else same, verbose)
