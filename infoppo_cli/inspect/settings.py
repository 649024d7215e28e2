"""What one ``infoppo inspect`` run is asked to do, declared once.

Each field carries its command-line declaration (``infoppo_cli.schema.option``), from which
``infoppo_cli.cli.options`` builds ``infoppo inspect``'s options. The clock's gamma, epsilons and
normalisation are the ``infoppo`` method's (``presets/methods.toml``) unless given: nothing here
repeats an InfoPPO default. This module stays light (no torch): the command line imports it.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import Any, Literal

from infoppo_cli.components import SETTINGS
from infoppo_cli.data.templates import check_template
from infoppo_cli.errors import UsageError
from infoppo_cli.schema import option

METHOD = "infoppo"
"""The method whose clock ``infoppo inspect`` shows unless told otherwise."""
PAPER_MIN_COUNT = 100
"""InfoPPO's Figure 2 ranks tokens seen more than 100 times."""
_METHODS = f"the {METHOD} method's, see `infoppo presets`"


def _clock_option(name: str) -> Any:
    """The option of the method setting ``name`` (``components.SETTINGS``), the method's by default."""
    setting = SETTINGS[name]
    cli_type = Literal[setting.choices] if setting.choices else None
    return option(MISSING, setting.help, *setting.options, default_text=_METHODS, cli_type=cli_type)


@dataclass(frozen=True)
class ClockSettings:
    """How entropies become the clock: ``norm`` mode, ``gamma`` and the adaptive clip's epsilons, each
    the method setting of its name (``norm`` batch: over the file)."""

    norm: str = _clock_option("norm")
    gamma: float = _clock_option("gamma")
    eps_low_info: float = _clock_option("eps_low_info")
    eps_high_info: float = _clock_option("eps_high_info")

    def __post_init__(self) -> None:
        for field in fields(self):
            setting = SETTINGS[field.name]
            try:
                setting.check(getattr(self, field.name), setting.options[0])
            except ValueError as exc:
                raise UsageError(str(exc)) from None


def method_clock(**given: Any) -> ClockSettings:
    """The ``infoppo`` method's clock (its gamma, epsilons and normalisation, as its runs train with
    them), with the ``given`` values in their place."""
    from infoppo_cli.train.methods import method  # lazy: pydantic, kept off start-up

    chosen = method(METHOD)
    settings = {
        field.name: chosen.flag(SETTINGS[field.name].openrlhf or "")
        if SETTINGS[field.name].openrlhf
        else chosen.infotime[field.name]
        for field in fields(ClockSettings)
    }
    return ClockSettings(**{**settings, **given})


@dataclass(frozen=True)
class InspectSettings:
    """Everything ``infoppo inspect`` was asked to do."""

    model: str = option(MISSING, "Model directory or Hugging Face id.", required=True)
    responses: str = option(
        MISSING,
        "An `infoppo eval` samples.jsonl, or any JSONL with prompt and response (and id).",
        required=True,
        cli_type=Path,
    )
    compare: str | None = option(
        None, "A second model (same tokenizer): its clock and per-token drift.", default_text=""
    )
    template: str = option(
        "dapo", "Prompt template: dapo, boxed or raw.", default_text="the eval run's, else dapo"
    )
    clock: ClockSettings | None = None
    """``None``: the ``infoppo`` method's (:func:`method_clock`)."""
    min_count: int | None = option(
        None,
        "Figure 2: count tokens seen at least this often.",
        default_text=f"{PAPER_MIN_COUNT}, InfoPPO's, lowered on a small file, which is then said",
    )
    """Figure 2's threshold; None: InfoPPO's 100, lowered on a small file (``figure_min_count``)."""
    top: int = option(100, "Figure 2: tokens listed at each end.")
    max_responses: int | None = option(None, "Inspect only the first N responses.", default_text="all")
    batch_tokens: int = 8192

    def __post_init__(self) -> None:
        check_template(self.template)
        for name in ("min_count", "top", "max_responses", "batch_tokens"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise UsageError(f"--{name.replace('_', '-')} must be >= 1, got {value}")
        if self.clock is None:
            object.__setattr__(self, "clock", method_clock())
