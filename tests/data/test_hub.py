"""The Hub without network: one quick probe, then the cache only, and one line saying how to go on.

The network is made unreachable deterministically: ``HF_ENDPOINT`` points at a local port nobody
listens on (connection refused at once), whatever the machine's own network state.
"""

from __future__ import annotations

import logging
import os
import socket
from pathlib import Path

import pytest
from cli_process import run_infoppo
from tiny_model import build_tiny_model

from infoppo_cli.data import hub
from infoppo_cli.errors import UsageError


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def hub_down(monkeypatch, tmp_path):
    """Online mode, an endpoint that refuses connections, an empty cache; all restored afterwards."""
    import datasets.config
    from huggingface_hub import constants

    endpoint = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "datasets")
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(hub, "_unreachable", None)
    return endpoint


def test_probe_tells_a_refused_endpoint_at_once(hub_down):
    reason = hub.probe(hub_down, timeout=2.0)
    assert reason is not None and reason.startswith("ConnectError")


def test_an_unreachable_hub_switches_to_the_cache_once(hub_down, monkeypatch):
    from huggingface_hub import constants

    calls = []
    monkeypatch.setattr(hub, "probe", lambda endpoint: calls.append(endpoint) or "ConnectError: refused")
    first = hub.hub_unavailable()
    assert first == f"{hub_down} does not answer: ConnectError: refused"
    assert hub.hub_unavailable() == first and calls == [hub_down]  # probed once per process
    assert constants.is_offline_mode() and os.environ["HF_HUB_OFFLINE"] == "1"


def test_a_reachable_hub_is_left_alone(hub_down, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(hub, "probe", lambda endpoint: None)
    assert hub.hub_unavailable() is None and not constants.is_offline_mode()
    error = hub.hub_error("the model org/m", OSError("org/m is not a valid model\nmore"), "pass --model DIR")
    assert str(error) == "cannot load the model org/m: org/m is not a valid model; pass --model DIR"


def test_offline_mode_set_by_the_user_is_respected_without_a_probe(monkeypatch):
    monkeypatch.setattr(hub, "_unreachable", None)
    monkeypatch.setattr(hub, "probe", lambda endpoint: pytest.fail("no probe in offline mode"))
    assert hub.hub_unavailable() == "HF_HUB_OFFLINE is set"  # the test session runs offline


def test_a_hub_benchmark_fails_in_one_line_without_retries(hub_down, caplog):
    from infoppo_cli.eval.benchmarks import load_bench

    caplog.set_level(logging.WARNING)
    with pytest.raises(UsageError) as caught:
        load_bench("aime25")
    message = str(caught.value)
    assert message.startswith("cannot load aime25 (opencompass/AIME2025 [AIME2025-I]): not in the local")
    assert f"{hub_down} does not answer" in message and "aime25=FILE" in message
    assert "HF_HUB_OFFLINE=1" in message and "\n" not in message
    assert "Retrying" not in caplog.text


def test_a_hub_tokenizer_fails_in_one_line_without_retries(hub_down, caplog):
    from infoppo_cli.eval.generation import load_tokenizer

    caplog.set_level(logging.WARNING)
    with pytest.raises(
        UsageError, match="cannot load the tokenizer of org/model: not in the local"
    ) as caught:
        load_tokenizer("org/model")
    assert "pass --model DIR" in str(caught.value) and "Retrying" not in caplog.text


def test_a_hub_model_for_inspect_fails_in_one_line(hub_down, caplog):
    from infoppo_cli.inspect.entropy import load_policy

    caplog.set_level(logging.WARNING)
    with pytest.raises(UsageError, match="cannot load the model org/model: not in the local"):
        load_policy("org/model")
    assert "Retrying" not in caplog.text


def _cache_config(cache: Path, model: str) -> None:
    """Put ``model``'s config.json in a Hub cache laid out as huggingface_hub lays it out."""
    repo = cache / ("models--" + model.replace("/", "--"))
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("0" * 40)
    snapshot = repo / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")


def test_train_model_check_refuses_an_uncached_hub_model_only_when_the_hub_is_down(
    hub_down, tmp_path, monkeypatch
):
    from infoppo_cli.train.validate import check_model

    with pytest.raises(UsageError) as caught:
        check_model("Qwen/Qwen3-4B-Base")
    message = str(caught.value)
    assert message.startswith("model Qwen/Qwen3-4B-Base is not in the local Hugging Face cache")
    assert "does not answer" in message and "--model DIR" in message
    _cache_config(tmp_path / "hub", "Qwen/Qwen3-4B-Base")
    check_model("Qwen/Qwen3-4B-Base")  # cached: trains from the cache
    check_model(str(tmp_path))  # a local directory is never a Hub question


def test_train_model_check_leaves_a_reachable_hub_and_user_offline_mode_alone(hub_down, monkeypatch):
    """An uncached Hub model (the cache is empty) passes when the user chose offline mode (no probe:
    the load will tell) and when the Hub answered; the same check refuses it once the Hub is down."""
    from huggingface_hub import constants

    from infoppo_cli.train.validate import check_model

    def no_probe(*args, **kwargs):
        pytest.fail("the Hub was probed")

    monkeypatch.setattr(hub, "probe", no_probe)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)  # the user's offline mode
    assert not hub.cached_model("Qwen/Qwen3-4B-Base")
    check_model("Qwen/Qwen3-4B-Base")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hub, "_unreachable", "")  # probed earlier in this process: the Hub answered
    check_model("Qwen/Qwen3-4B-Base")
    monkeypatch.setattr(hub, "_unreachable", f"{hub_down} does not answer: ConnectError")
    with pytest.raises(UsageError, match="not in the local Hugging Face cache"):
        check_model("Qwen/Qwen3-4B-Base")


def test_train_counting_hub_prompts_fails_in_one_line(hub_down, caplog):
    from infoppo_cli.train.schedule import count_prompts

    caplog.set_level(logging.WARNING)
    with pytest.raises(UsageError) as caught:
        count_prompts("open-r1/DAPO-Math-17k-Processed")
    message = str(caught.value)
    assert "not cached, and the Hub cannot be used" in message and "does not answer" in message
    assert "Retrying" not in caplog.text


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("eval", "--bench", "aime25", "--model", "org/model", "--backend", "hf"), "cannot load aime25"),
        (("inspect", "--model", "org/model", "--responses", "r.jsonl"), "cannot load the model org/model"),
        (("data", "prep", "dapo-math-17k"), "cannot load BytedTsinghua-SIA/DAPO-Math-17k"),
    ],
)
def test_the_commands_print_one_line_and_no_retry_noise(tmp_path, monkeypatch, args, fragment):
    (tmp_path / "r.jsonl").write_text('{"prompt": "1+1?", "response": "2"}\n')
    endpoint = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    done = run_infoppo(*args, "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {fragment}"), done.stderr
    assert endpoint in lines[0] and "Retrying" not in done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_cached_hub_model_still_evaluates_without_network(tmp_path, monkeypatch, tiny_model_dir):
    """The switch to the cache is what makes an unreachable Hub cheap, and it keeps cached models usable."""
    import shutil

    snapshot = tmp_path / "hf" / "hub" / "models--org--tiny" / "snapshots" / ("0" * 40)
    shutil.copytree(tiny_model_dir, snapshot)
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text("0" * 40)
    (tmp_path / "bench.jsonl").write_text('{"id": "p1", "problem": "2+3?", "answer": "5"}\n')
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    args = ["eval", "--model", "org/tiny", "--bench", "mine=bench.jsonl", "--backend", "hf", "--workers", "1"]
    done = run_infoppo(*args, "--samples", "1", "--max-tokens", "4", "--out", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Retrying" not in done.stderr and (tmp_path / "out" / "metrics.json").is_file()


def test_a_local_load_failure_is_one_line_and_other_errors_pass_through(tmp_path):
    with pytest.raises(UsageError) as caught, hub.loading(f"the model {tmp_path}", str(tmp_path)):
        raise OSError(f"no config.json in {tmp_path}\nmore detail")
    assert str(caught.value) == f"cannot load the model {tmp_path}: no config.json in {tmp_path}"
    with pytest.raises(KeyError), hub.loading("the model", str(tmp_path)):  # not a load error here
        raise KeyError("x")
