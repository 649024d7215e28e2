"""The run directory's names and paths, and which run a model belongs to."""

from __future__ import annotations

from infoppo_cli.rundir import DEFAULT_RUN_DIR_TEXT, RunDir, run_of_model, write_manifest


def test_default_layout():
    run = RunDir.default("qwen3-4b", "infoppo", 3)
    assert run.path.as_posix() == "runs/qwen3-4b-infoppo-seed3"
    parts = (run.manifest, run.metrics, run.eval_prompts, run.final, run.ckpt, run.tensorboard, run.eval)
    assert [p.name for p in parts] == [
        "manifest.json",
        "metrics.jsonl",
        "eval-prompts.jsonl",
        "final",
        "ckpt",
        "tensorboard",
        "eval",
    ]
    assert run.model_card.as_posix().endswith("final/README.md")
    assert run.eval_metrics.as_posix().endswith("eval/metrics.json")
    assert DEFAULT_RUN_DIR_TEXT == "runs/PRESET-METHOD-seedN"


def test_a_model_belongs_to_the_run_whose_manifest_is_above_it(tmp_path):
    run = RunDir(tmp_path / "run")
    (run.ckpt / "global_step5_hf").mkdir(parents=True)
    run.final.mkdir()
    assert run_of_model(run.final) is None and not run.is_run()  # no manifest yet: not a run
    write_manifest(run, {"config": {}})
    assert run.is_run()
    assert run_of_model(run.final).path == run.path.resolve()
    assert run_of_model(run.ckpt / "global_step5_hf").path == run.path.resolve()
    assert run_of_model("Qwen/Qwen3-4B-Base") is None
    assert run_of_model(tmp_path / "elsewhere") is None
