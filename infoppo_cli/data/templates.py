"""Prompt templates for math problems: DAPO's exact instruction, a ``\\boxed{}`` variant, or none."""

from __future__ import annotations

import re
from typing import Any

from infoppo_cli.errors import UsageError

TEMPLATES = ("dapo", "boxed", "raw")
"""Template names accepted by :func:`render_prompt` (and ``--template``)."""

# DAPO-Math-17K's instruction, character for character (``$Answer`` is literal text, not a placeholder).
DAPO_PREFIX = (
    "Solve the following math problem step by step. The last line of your response should be of the form "
    "Answer: $Answer (without quotes) where $Answer is the answer to the problem.\n\n"
)
DAPO_SUFFIX = '\n\nRemember to put your answer on its own line after "Answer:".'

# infoppo's own \boxed{} variant; only used when asked for explicitly (``--template boxed``).
BOXED_PREFIX = "Solve the following math problem step by step. Put your final answer within \\boxed{}.\n\n"
BOXED_SUFFIX = "\n\nRemember to put your final answer within \\boxed{}."

_FRAMES = {"dapo": (DAPO_PREFIX, DAPO_SUFFIX), "boxed": (BOXED_PREFIX, BOXED_SUFFIX), "raw": ("", "")}


def check_template(template: str) -> str:
    """Return ``template`` if it is known; otherwise raise :class:`UsageError` listing the choices."""
    if template not in _FRAMES:
        raise UsageError(f"unknown template {template!r}; choose one of: {', '.join(TEMPLATES)}")
    return template


def render_prompt(problem: str, template: str = "dapo") -> str:
    """Wrap a raw problem statement in the named template (``dapo``, ``boxed`` or ``raw``)."""
    prefix, suffix = _FRAMES[check_template(template)]
    return f"{prefix}{problem}{suffix}"


def extract_dapo_problem(prompt_text: str) -> str | None:
    """Recover the raw problem from a prompt written with DAPO's template, or ``None`` if it is not one.

    The prompt must start with DAPO's instruction; its closing reminder is removed when present.
    """
    if not prompt_text.startswith(DAPO_PREFIX):
        return None
    problem = prompt_text[len(DAPO_PREFIX) :]
    if problem.endswith(DAPO_SUFFIX):
        problem = problem[: -len(DAPO_SUFFIX)]
    problem = problem.strip()
    return problem or None


# Instructions that verl's data-preparation scripts bake into a prompt (examples/data_preprocess/
# math_dataset.py, gsm8k.py) and the common R1-style one; our template brings its own, so one of these
# left in would give a prompt two instructions.
_BAKED_INSTRUCTION = re.compile(
    r"\s*(?:Let's think step by step and output the final answer (?:within \\boxed\{\}|after \"####\")\.?"
    r"|Please reason step by step, and put your final answer within \\boxed\{\}\.?)\s*$",
    re.IGNORECASE,
)


def strip_baked_instruction(problem: str) -> str:
    """``problem`` without a trailing instruction that verl-layout data carries, before our template."""
    return _BAKED_INSTRUCTION.sub("", problem).strip()


def chat_prompt(tokenizer: Any, text: str) -> str:
    """Wrap ``text`` as one user turn with the tokenizer's chat template, as OpenRLHF's
    ``--data.apply_chat_template`` does; the raw text when the tokenizer has no template."""
    if not getattr(tokenizer, "chat_template", None):
        return text
    messages = [{"role": "user", "content": text}]
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def build_prompt(tokenizer: Any, problem: str, template: str) -> str:
    """The training prompt for ``problem``: ``templates.render_prompt`` inside the chat template."""
    return chat_prompt(tokenizer, render_prompt(problem, template))
