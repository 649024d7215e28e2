"""A command line kept in a record: shell-quoted, and nothing that looks like a secret."""

from __future__ import annotations

import shlex

import pytest

from infoppo_cli.records.command import command_text, redact_command, secret_name

WANDB_KEY = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(
    ("argv", "kept"),
    [
        (["--set", "logger.wandb.key=s3cret"], ["--set", "logger.wandb.key=<redacted>"]),
        (["--set=logger.wandb.key=s3cret"], ["--set=logger.wandb.key=<redacted>"]),
        (["--hf-token", "abc"], ["--hf-token", "<redacted>"]),
        (["--api-key=abc"], ["--api-key=<redacted>"]),
        (["WANDB_API_KEY=abc"], ["WANDB_API_KEY=<redacted>"]),
        (["--note", WANDB_KEY], ["--note", "<redacted>"]),  # a wandb key's shape, wherever it stands
        (["--set", f"logger.wandb.org={WANDB_KEY}"], ["--set", "logger.wandb.org=<redacted>"]),
        (["--data", "hf_" + "a" * 30], ["--data", "<redacted>"]),
        (["--keep-ray-logs", "--steps", "3"], ["--keep-ray-logs", "--steps", "3"]),
        (
            ["--set", "rollout.batch_size=8", "--gamma", "0.99"],
            ["--set", "rollout.batch_size=8", "--gamma", "0.99"],
        ),
        (["--token-budget"], ["--token-budget"]),  # a switch: nothing after it to redact
    ],
)
def test_secrets_are_redacted_and_everything_else_kept(argv, kept):
    assert redact_command(argv) == kept


def test_the_text_is_shell_quoted_so_it_can_be_typed_again():
    argv = ["infoppo", "train", "--preset", "my presets/x.toml", "--set", "logger.wandb.key=k"]
    text = command_text(argv)
    assert text == "infoppo train --preset 'my presets/x.toml' --set 'logger.wandb.key=<redacted>'"
    assert shlex.split(text)[3] == "my presets/x.toml"


def test_secret_names_are_whole_words():
    assert secret_name("logger.wandb.key") and secret_name("--hf-token") and secret_name("HF_TOKEN")
    assert not secret_name("--keep-ray-logs") and not secret_name("--monkey") and not secret_name("--passes")
