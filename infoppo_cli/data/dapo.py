"""DAPO-Math-17K → a clean OpenRLHF prompt file (``infoppo data prep dapo-math-17k``).

The published dataset holds 1,791,700 rows: about 17.4k distinct problems, each repeated ~100 times,
in verl's schema (``prompt`` = a one-message list, ``reward_model.ground_truth``, ``extra_info.index``).
Preparation streams the file in Arrow record batches, recovers each raw problem from DAPO's template,
keeps one row per problem (whitespace-normalised text), counts malformed rows and answer conflicts, and
writes JSONL rows ``{"id", "prompt", "label", "source", "lang", "problem"[, "source_index"]}``, where
``prompt`` is the problem in the chosen template and ``label`` the ground truth.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from infoppo_cli.atomic import atomic_write_text, atomic_writer, check_output_target
from infoppo_cli.data.rows import EMPTY_PROMPT, Bad, answer_text, prompt_text
from infoppo_cli.data.sources import Batch, Source, open_source
from infoppo_cli.data.templates import (
    DAPO_PREFIX,
    check_template,
    extract_dapo_problem,
    render_prompt,
    strip_baked_instruction,
)
from infoppo_cli.errors import UsageError
from infoppo_cli.grading import normalise_answer

DEFAULT_OUT = Path("data/dapo-math-17k.jsonl")
LANGS = ("all", "en", "zh")
MALFORMED_REASONS = (
    "invalid JSON",
    "missing prompt",
    "empty prompt",
    "missing ground truth",
    "empty ground truth",
    "wrong type",
)
# Han ideographs (CJK Unified, Extension A, Compatibility): what makes a DAPO prompt Chinese.
_CJK = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def detect_lang(text: str) -> str:
    """``"zh"`` if ``text`` contains a CJK ideograph, else ``"en"``."""
    return "zh" if _CJK.search(text) else "en"


def problem_key(problem: str) -> str:
    """The deduplication key: the problem with all whitespace runs collapsed to one space."""
    return " ".join(problem.split())


def problem_id(key: str) -> str:
    """A stable id for a problem, derived from its deduplication key."""
    return "dapo-" + hashlib.blake2b(key.encode("utf-8"), digest_size=6).hexdigest()


@dataclass
class PrepSummary:
    """What :func:`prepare_dapo` read, dropped and wrote."""

    source: str
    out: Path
    template: str
    lang: str
    rows_read: int = 0
    malformed: Counter[str] = field(default_factory=Counter)
    duplicates: int = 0
    unique_problems: int = 0
    unique_source_indices: int | None = None
    conflicts: dict[str, dict[str, Any]] = field(default_factory=dict)
    conflict_rows: int = 0
    untemplated: int = 0
    filtered_by_lang: int = 0
    written: int = 0
    langs: Counter[str] = field(default_factory=Counter)
    stopped_at_limit: bool = False
    conflicts_file: Path | None = None
    seconds: float = 0.0


# --- preparation --------------------------------------------------------------------------------------


def prepare_dapo(
    source: str | None = None,
    out: str | Path = DEFAULT_OUT,
    template: str = "dapo",
    lang: str = "all",
    limit: int | None = None,
    strict: bool = False,
    dataset: str = "dapo-math-17k",
    on_progress: Callable[[int, int | None], None] | None = None,
) -> PrepSummary:
    """Deduplicate DAPO-Math-17K from ``source`` and write the templated prompt file ``out`` atomically.

    Malformed rows are skipped and counted by reason (``strict``: the first one raises
    :class:`UsageError` with its 1-based row number). ``lang`` keeps ``all``, ``en`` or ``zh`` problems;
    ``limit`` stops after that many rows are written. ``on_progress(rows_read, total)`` follows the read.
    A problem seen again with a different answer keeps its first answer; conflicts are reported and
    listed in ``<out stem>.conflicts.jsonl``.
    """
    check_template(template)
    if lang not in LANGS:
        raise UsageError(f"unknown language {lang!r}; choose one of: {', '.join(LANGS)}")
    if limit is not None and limit < 1:
        raise UsageError(f"--limit must be a positive number of rows, not {limit}")
    _check_outputs(Path(out), source)
    started = time.monotonic()
    opened = open_source(source, dataset)
    summary = PrepSummary(source=opened.name, out=Path(out).expanduser(), template=template, lang=lang)
    with atomic_writer(summary.out) as handle:
        _Deduplicator(summary, handle, dataset, limit, strict).run(opened, on_progress)
        _refuse_nothing_written(summary)  # inside the writer: an error keeps the previous file
    summary.conflicts_file = _write_conflicts(summary)
    summary.seconds = time.monotonic() - started
    return summary


def _check_outputs(out: Path, source: str | None) -> None:
    """``--out`` and the conflicts list beside it must be writable files that are not the source."""
    inputs = [source] if source is not None and Path(source).expanduser().is_file() else []
    check_output_target(out, inputs=inputs)
    check_output_target(conflicts_path(out.expanduser()), inputs=inputs, option="--out (its conflicts list)")


def _refuse_nothing_written(summary: PrepSummary) -> None:
    """An output with no rows is an error, not a success: say why nothing could be written."""
    if summary.written:
        return
    if summary.rows_read == 0:
        raise UsageError(f"{summary.source}: no rows to prepare (the source is empty)")
    if sum(summary.malformed.values()) == summary.rows_read:
        reasons = ", ".join(f"{reason} {count:,}" for reason, count in summary.malformed.most_common())
        raise UsageError(f"{summary.source}: all {summary.rows_read:,} rows are malformed ({reasons})")
    raise UsageError(
        f"{summary.source}: none of its {summary.unique_problems:,} problems is in --lang {summary.lang}"
    )


class _Deduplicator:
    """Reads batches, keeps the first row of every problem and writes it as soon as it is seen."""

    def __init__(self, summary: PrepSummary, handle: IO[str], dataset: str, limit: int | None, strict: bool):
        self.summary = summary
        self.handle = handle
        self.dataset = dataset
        self.limit = limit
        self.strict = strict
        self.by_prompt: dict[str, tuple[str, str]] = {}  # exact prompt text -> (problem key, answer)
        self.answers: dict[str, str] = {}  # problem key -> first answer
        self.indices: set[Any] = set()
        self.saw_indices = False

    def run(self, source: Source, on_progress: Callable[[int, int | None], None] | None) -> None:
        for batch in source.batches:
            if self._take(batch, source.name):
                self.summary.stopped_at_limit = True
                break
            if on_progress is not None:
                on_progress(self.summary.rows_read, source.total)
        if self.saw_indices:
            self.summary.unique_source_indices = len(self.indices)
        self.summary.unique_problems = len(self.answers)

    def _take(self, batch: Batch, origin: str) -> bool:
        """Process one batch; ``True`` once ``limit`` rows are written."""
        summary = self.summary
        indices = batch.indices if batch.indices is not None else [None] * len(batch.prompts)
        if batch.indices is not None and any(index is not None for index in batch.indices):
            self.saw_indices = True
            self.indices.update(index for index in batch.indices if index is not None)
        for prompt, answer, index in zip(batch.prompts, batch.answers, indices, strict=True):
            summary.rows_read += 1
            if type(answer) is not str or not answer or answer[0].isspace() or answer[-1].isspace():
                answer = answer_text(answer) if not isinstance(answer, Bad) else answer
            known = self.by_prompt.get(prompt) if type(prompt) is str else None
            if known is None:
                text = prompt_text(prompt) if not isinstance(prompt, Bad) else prompt
                problem = None if isinstance(text, Bad) else extract_dapo_problem(text)
                if problem is None and not isinstance(text, Bad) and text.startswith(DAPO_PREFIX):
                    text = EMPTY_PROMPT  # DAPO's template around nothing
                bad = text if isinstance(text, Bad) else answer if isinstance(answer, Bad) else None
                if bad is not None:
                    self._malformed(bad.reason, origin)
                    continue
                known = self._new_prompt(text, problem, answer, index)
                if known is None:  # first sighting of this problem: written or filtered
                    if self.limit is not None and self.summary.written >= self.limit:
                        return True
                    continue
            elif isinstance(answer, Bad):
                self._malformed(answer.reason, origin)
                continue
            summary.duplicates += 1
            if answer != known[1]:
                self._conflict(known[0], answer)
        return False

    def _malformed(self, reason: str, origin: str) -> None:
        if self.strict:
            raise UsageError(
                f"{origin}: row {self.summary.rows_read} is malformed ({reason}); "
                "run without --strict to skip and count such rows"
            )
        self.summary.malformed[reason] += 1

    def _new_prompt(self, text: str, problem: str | None, answer: str, index: Any) -> tuple[str, str] | None:
        """Register a prompt text not seen before; ``None`` if its problem is new too."""
        templated = problem is not None
        problem = problem if templated else strip_baked_instruction(text)
        key = problem_key(problem)
        if key in self.answers:  # same problem, differently written prompt
            self.by_prompt[text] = (key, self.answers[key])
            return key, self.answers[key]
        self.summary.untemplated += not templated
        self.answers[key] = answer
        self.by_prompt[text] = (key, answer)
        self._emit(key, problem, answer, index)
        return None

    def _emit(self, key: str, problem: str, answer: str, index: Any) -> None:
        summary = self.summary
        lang = detect_lang(problem)
        summary.langs[lang] += 1
        if summary.lang != "all" and lang != summary.lang:
            summary.filtered_by_lang += 1
            return
        if self.limit is not None and summary.written >= self.limit:
            return
        row = {
            "id": problem_id(key),
            "prompt": render_prompt(problem, summary.template),
            "label": normalise_answer(answer),  # stored as the grader reads golds
            "source": self.dataset,
            "lang": lang,
            "problem": problem,
        }
        if index is not None:
            row["source_index"] = index
        self.handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        summary.written += 1

    def _conflict(self, key: str, answer: str) -> None:
        summary = self.summary
        summary.conflict_rows += 1
        entry = summary.conflicts.setdefault(
            key, {"id": problem_id(key), "problem": key, "kept": self.answers[key], "others": {}}
        )
        entry["others"][answer] = entry["others"].get(answer, 0) + 1


def conflicts_path(out: Path) -> Path:
    """Where the answer conflicts of ``out`` are listed: ``<stem>.conflicts.jsonl`` beside it."""
    return out.with_name(out.stem + ".conflicts.jsonl")


def _write_conflicts(summary: PrepSummary) -> Path | None:
    path = conflicts_path(summary.out)
    if not summary.conflicts:
        path.unlink(missing_ok=True)  # a list left by an earlier run would describe other data
        return None
    lines = [json.dumps(entry, ensure_ascii=False) for entry in summary.conflicts.values()]
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path
