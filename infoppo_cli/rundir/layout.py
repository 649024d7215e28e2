"""Where everything of a run lives: the run's default name and the paths of its parts."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

MANIFEST_FILE = "manifest.json"
METRICS_FILE = "metrics.jsonl"
TRAIN_LOG_FILE = "train.log"
EVAL_PROMPTS_FILE = "eval-prompts.jsonl"
FINAL_DIR = "final"
CKPT_DIR = "ckpt"
TENSORBOARD_DIR = "tensorboard"
EVAL_DIR = "eval"
EVAL_METRICS_FILE = "metrics.json"
"""What ``infoppo eval`` writes in its output directory (``RUN/eval`` for a run's model) with the scores."""
MODEL_CARD_FILE = "README.md"
RUNS_ROOT = Path("runs")
DEFAULT_RUN_DIR_TEXT = f"{RUNS_ROOT}/PRESET-METHOD-seedN"
"""How help texts write the default run directory."""


def run_name(preset: str, method: str, seed: int) -> str:
    """The default name of a run: ``<preset>-<method>-seed<seed>``."""
    return f"{preset}-{method}-seed{seed}"


@dataclass(frozen=True)
class RunDir:
    """The paths of one run directory (nothing is created by building one)."""

    path: Path

    @classmethod
    def default(cls, preset: str, method: str, seed: int, root: str | os.PathLike[str] = RUNS_ROOT) -> RunDir:
        return cls(Path(root) / run_name(preset, method, seed))

    @property
    def manifest(self) -> Path:
        return self.path / MANIFEST_FILE

    @property
    def metrics(self) -> Path:
        return self.path / METRICS_FILE

    @property
    def train_log(self) -> Path:
        """Everything a training run printed, OpenRLHF's and Ray's workers' output included."""
        return self.path / TRAIN_LOG_FILE

    @property
    def eval_prompts(self) -> Path:
        """The in-training evaluation's prompts, written by ``infoppo train``."""
        return self.path / EVAL_PROMPTS_FILE

    @property
    def final(self) -> Path:
        return self.path / FINAL_DIR

    @property
    def ckpt(self) -> Path:
        return self.path / CKPT_DIR

    @property
    def tensorboard(self) -> Path:
        return self.path / TENSORBOARD_DIR

    @property
    def eval(self) -> Path:
        return self.path / EVAL_DIR

    @property
    def eval_metrics(self) -> Path:
        return self.eval / EVAL_METRICS_FILE

    @property
    def model_card(self) -> Path:
        return self.final / MODEL_CARD_FILE

    def is_run(self) -> bool:
        """Whether ``infoppo train`` has started a run here (its manifest exists)."""
        return self.manifest.is_file()


def run_of_model(model: str | os.PathLike[str]) -> RunDir | None:
    """The run a model directory belongs to: ``RUN/final`` or a checkpoint one level deeper
    (``RUN/ckpt/<tag>``); ``None`` for a Hub id or a model outside any run."""
    path = Path(model).expanduser()
    if not path.is_dir():
        return None
    path = path.resolve()
    for candidate in (path.parent, path.parent.parent):
        run = RunDir(candidate)
        if run.is_run():
            return run
    return None
