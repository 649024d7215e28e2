"""Presets and methods are data files with the paper's settings."""

from __future__ import annotations

import pytest

from infoppo_cli.errors import UsageError
from infoppo_cli.train.presets import method, methods, preset, preset_names


@pytest.mark.parametrize("name", ["qwen3-4b", "qwen3-8b", "qwen3-14b", "llama-3.2-3b-instruct"])
def test_presets_carry_the_paper_settings(name):
    p = preset(name)
    assert p.openrlhf["actor.adam.lr"] == 1e-6 and p.openrlhf["critic.adam.lr"] == 2e-6
    assert p.actor_warmup_steps == 10
    assert p.max_response_tokens == (12288 if name == "qwen3-14b" else 10240)
    assert p.nodes * p.gpus_per_node % p.vllm_tensor_parallel == 0
    assert "overlong_buffer_len" in str(p.method_overrides["dapo"])


def test_models():
    assert preset("qwen3-14b").model == "Qwen/Qwen3-14B-Base"
    assert preset("llama-3.2-3b-instruct").model == "meta-llama/Llama-3.2-3B-Instruct"


def test_methods():
    assert list(methods()) == ["infoppo", "ppo", "dapo", "dapo-ft"]
    info = method("infoppo")
    assert info.openrlhf["algo.advantage.gamma"] == 0.999 and info.openrlhf["algo.advantage.lambd"] == 0.99
    assert info.infotime == {"eps_low_info": 10.0, "eps_high_info": 20.0, "norm": "batch"}
    assert method("ppo").openrlhf["actor.eps_clip_low_high"] == [0.2, 0.28]
    assert method("ppo").uses_critic and not method("dapo").uses_critic
    assert method("dapo-ft").infotime["top_entropy_frac"] == 0.2


def test_unknown_names_list_the_choices():
    with pytest.raises(
        UsageError, match="choose one of: llama-3.2-3b-instruct, qwen3-14b, qwen3-4b, qwen3-8b"
    ):
        preset("qwen2")
    with pytest.raises(UsageError, match="choose one of: infoppo, ppo, dapo, dapo-ft"):
        method("reinforce")
    assert "methods" not in preset_names()
