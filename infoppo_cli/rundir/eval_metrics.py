"""``metrics.json``: the scores ``infoppo eval`` writes in its output directory (``RUN/eval`` for a run's
model); its schema, its one writer and its one reader.

Schema: one JSON object (``eval/outputs.py`` computes it):

* ``benches``: per benchmark, its statistics under ``eval/statistics.py``'s ``METRIC_KEYS`` (``k``,
  ``mean@k`` in percent, ``mean@k_se``, ``pass@k``, ``maj@k``, ``length_mean``, rates, counts);
* ``average``: the same statistics over the benchmarks;
* ``settings``: the evaluation's settings (``source``, ``model``, ``samples``, ``temperature``, ...) and,
  under ``data``, each benchmark's data;
* ``versions``, ``model``, ``weights_fingerprint`` (of the weights scored, ``rundir/weights.py``),
  ``created``, and ``per_problem``: per benchmark, each problem's accuracy.

Written atomically as standard JSON (:func:`infoppo_cli.records.text.json_file_text`: a non-finite number
is ``null``). The reader's one policy: no file is ``None``; a file that cannot be read, or that is not an
object with a ``benches`` object, is :class:`UnreadableEvalMetrics`, whose text says why.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from infoppo_cli.atomic import atomic_write_text
from infoppo_cli.records.text import json_file_text, loads
from infoppo_cli.rundir.layout import EVAL_METRICS_FILE


class UnreadableEvalMetrics(ValueError):
    """A ``metrics.json`` that is there but holds no scores: its text says why."""


def eval_metrics_path(out_dir: str | os.PathLike[str]) -> Path:
    """The ``metrics.json`` of an eval output directory."""
    return Path(out_dir) / EVAL_METRICS_FILE


def write_eval_metrics(out_dir: str | os.PathLike[str], document: Mapping[str, Any]) -> Path:
    """Write the scores of ``out_dir`` atomically (a reader sees the old file or the new one)."""
    path = eval_metrics_path(out_dir)
    atomic_write_text(path, json_file_text(dict(document)))
    return path


def read_eval_metrics(out_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The scores of ``out_dir``: ``None`` when it has none; :class:`UnreadableEvalMetrics` when its file
    cannot be read or holds no ``benches`` object."""
    path = eval_metrics_path(out_dir)
    if not path.exists():
        return None
    try:
        document = loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UnreadableEvalMetrics(str(exc)) from None
    if not isinstance(document, dict) or not isinstance(document.get("benches"), dict):
        raise UnreadableEvalMetrics("no 'benches' object")
    return document
