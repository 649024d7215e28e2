"""The run directory: how ``infoppo train`` names and lays out a run, and how every other command finds
its parts. Train, eval, sweep and report all go through this package, so the layout, the manifest and
the metrics file are each written down once::

    runs/<preset>-<method>-seed<seed>/      a run (train's default name; --output-dir picks another)
      manifest.json       the resolved config, exact command, versions, commit, seed, status and times
                          (rundir.manifest: built there, one reader, one writer)
      metrics.jsonl       one JSON object per training step (rundir.metrics: the schema, its one
                          writer and its one reader)
      train.log           everything the training run printed (OpenRLHF's and Ray's output included)
      eval-prompts.jsonl  the in-training evaluation's prompts
      final/              the trained model (Hugging Face format) and its model card README.md
                          (rundir.model_card)
      ckpt/               DeepSpeed checkpoints, for --resume
      tensorboard/        OpenRLHF's TensorBoard logs
      eval/               `infoppo eval --model RUN/final` output: samples.jsonl, metrics.json (the
                          scores: rundir.eval_metrics, their schema, one writer, one reader),
                          eval_config.json, details/ (lighteval's per-sample details, parquet)
"""

from infoppo_cli.rundir.eval_metrics import (
    UnreadableEvalMetrics,
    eval_metrics_path,
    read_eval_metrics,
    write_eval_metrics,
)
from infoppo_cli.rundir.layout import (
    CKPT_DIR,
    DEFAULT_RUN_DIR_TEXT,
    EVAL_DIR,
    EVAL_METRICS_FILE,
    EVAL_PROMPTS_FILE,
    FINAL_DIR,
    MANIFEST_FILE,
    METRICS_FILE,
    MODEL_CARD_FILE,
    RUNS_ROOT,
    TENSORBOARD_DIR,
    TRAIN_LOG_FILE,
    RunDir,
    run_name,
    run_of_model,
)
from infoppo_cli.rundir.manifest import (
    Manifest,
    ended,
    launch_fields,
    manifest_path,
    new_manifest,
    read_manifest,
    restore_manifest,
    trained_response_length,
    write_manifest,
)
from infoppo_cli.rundir.metrics import (
    MetricsLog,
    MetricsWriter,
    metric_number,
    metric_series,
    metrics_line,
    read_metrics,
    read_metrics_log,
)
from infoppo_cli.rundir.model_card import model_card, write_model_card

__all__ = [
    "CKPT_DIR",
    "DEFAULT_RUN_DIR_TEXT",
    "EVAL_DIR",
    "EVAL_METRICS_FILE",
    "EVAL_PROMPTS_FILE",
    "FINAL_DIR",
    "MANIFEST_FILE",
    "METRICS_FILE",
    "MODEL_CARD_FILE",
    "RUNS_ROOT",
    "TENSORBOARD_DIR",
    "TRAIN_LOG_FILE",
    "Manifest",
    "MetricsLog",
    "MetricsWriter",
    "RunDir",
    "UnreadableEvalMetrics",
    "ended",
    "eval_metrics_path",
    "launch_fields",
    "manifest_path",
    "metric_number",
    "metric_series",
    "metrics_line",
    "model_card",
    "new_manifest",
    "read_eval_metrics",
    "read_manifest",
    "read_metrics",
    "read_metrics_log",
    "restore_manifest",
    "run_name",
    "run_of_model",
    "trained_response_length",
    "write_eval_metrics",
    "write_manifest",
    "write_model_card",
]
