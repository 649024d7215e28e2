"""`--preset FILE.toml` and `--methods-file FILE.toml`: a user's files in the shipped schemas."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from infoppo_cli.cli import app
from infoppo_cli.errors import UsageError

runner = CliRunner()
SHIPPED_4B = Path(__file__).parents[2] / "presets" / "qwen3-4b.toml"


def user_files(tmp_path: Path) -> tuple[Path, Path]:
    model = tmp_path / "my-model.toml"
    model.write_text(SHIPPED_4B.read_text().replace('"Qwen/Qwen3-4B-Base"', '"org/my-model"', 1))
    methods = tmp_path / "my-methods.toml"
    methods.write_text(
        '[wide-clip]\nsummary = "PPO with a wider fixed clip"\nextends = "ppo"\n'
        '[wide-clip.openrlhf]\n"actor.eps_clip_low_high" = [0.3, 0.4]\n'
    )
    return model, methods


def test_dry_run_with_a_user_preset_and_method(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    model, methods = user_files(tmp_path)
    args = ["train", "--dry-run", "--preset", str(model), "--methods-file", str(methods)]
    args += ["--method", "wide-clip", "--output-dir", str(tmp_path / "run"), "--eval-bench", "none"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "--actor.model_name_or_path org/my-model" in result.output
    assert "--actor.eps_clip_low_high 0.3 0.4" in result.output
    assert 'advantage = "gae"' in result.output and 'clip = "fixed"' in result.output
    assert str(methods) in result.output  # the plan names the method's source


def test_default_run_dir_is_named_after_the_preset_file(tmp_path, monkeypatch):
    model, _ = user_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    args = ["train", "--dry-run", "--preset", str(model), "--method", "ppo", "--eval-bench", "none"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "runs/my-model-ppo-seed42/ckpt" in result.output


def test_presets_lists_user_files_with_their_source(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    model, methods = user_files(tmp_path)
    result = runner.invoke(app, ["presets", "--preset", str(model), "--methods-file", str(methods)])
    assert result.exit_code == 0, result.output
    for text in ("my-model", "wide-clip", "info-gae", "info-clip", "presets/qwen3-4b.toml", "methods.toml"):
        assert text in result.output
    assert str(methods) in result.output and str(model) in result.output


def test_a_bad_user_file_is_one_clear_error(tmp_path):
    model, methods = user_files(tmp_path)
    model.write_text(model.read_text().replace("nodes = 1", "nodes = 0"))
    result = runner.invoke(app, ["train", "--dry-run", "--preset", str(model)])
    assert isinstance(result.exception, UsageError)
    assert "nodes must be an integer >= 1, got 0" in str(result.exception)
    methods.write_text('[x]\nsummary = "s"\nadvantage = "vtrace"\nclip = "fixed"\ntoken_mask = "all"\n')
    result = runner.invoke(app, ["presets", "--methods-file", str(methods)])
    assert isinstance(result.exception, UsageError)
    assert "[x] advantage must be gae, info_time_gae or group_norm, got 'vtrace'" in str(result.exception)


def test_presets_and_methods_declare_what_they_need(tmp_path):
    """A preset declares its RL steps and exactly one of a model and a task; a method its reward and
    optimizer, each from the known choices (the plan shows their values)."""
    model, methods = user_files(tmp_path)
    text = model.read_text()
    cases = {
        "steps is missing": text.replace("steps = 1050", ""),
        "model is missing (an HF id or path; or a task instead)": text.replace('model = "org/my-model"', ""),
        "task cannot be given with model": text.replace("[openrlhf]", 'task = "arithmetic"\n[openrlhf]', 1),
        "device must be cuda or cpu, got 'tpu'": text.replace("[openrlhf]", 'device = "tpu"\n[openrlhf]', 1),
    }
    for message, body in cases.items():
        broken = tmp_path / "broken.toml"
        broken.write_text(body)
        result = runner.invoke(app, ["train", "--dry-run", "--preset", str(broken)])
        assert isinstance(result.exception, UsageError), result.output
        assert message in str(result.exception)
    for body, message in [
        ('reward = "dapo"', "[x] reward must be binary or signed, got 'dapo'"),
        ('optimizer = "sgd"', "[x] optimizer must be openrlhf or verl, got 'sgd'"),
        (
            '[x.openrlhf]\n"actor.adam.betas" = [0.9, 0.9]',
            "[x.openrlhf] actor.adam.betas follows from 'optimizer'; drop it",
        ),
    ]:
        methods.write_text(f'[x]\nsummary = "s"\nextends = "ppo"\n{body}\n')
        result = runner.invoke(app, ["presets", "--methods-file", str(methods)])
        assert isinstance(result.exception, UsageError) and message in str(result.exception)
