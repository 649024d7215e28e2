"""Presets and methods are data files with the paper's settings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from infoppo_cli.errors import UsageError
from infoppo_cli.train.methods import method, methods
from infoppo_cli.train.presets import preset, preset_names


@pytest.mark.parametrize("name", ["qwen3-4b", "qwen3-8b", "qwen3-14b", "llama-3.2-3b-instruct"])
def test_presets_carry_the_paper_settings(name):
    p = preset(name)
    assert p.openrlhf["actor.adam.lr"] == 1e-6 and p.openrlhf["critic.adam.lr"] == 2e-6
    assert p.actor_warmup_steps == 10
    assert p.max_response_tokens == (12288 if name == "qwen3-14b" else 10240)
    assert p.nodes * p.gpus_per_node % p.vllm_tensor_parallel == 0
    assert "dapo" not in p.method_overrides  # DAPO's own recipe (methods.toml), unscaled


def test_models():
    assert preset("qwen3-14b").model == "Qwen/Qwen3-14B-Base"
    assert preset("llama-3.2-3b-instruct").model == "meta-llama/Llama-3.2-3B-Instruct"


def test_methods():
    assert list(methods()) == ["infoppo", "ppo", "dapo", "dapo-ft", "info-gae", "info-clip"]
    info = method("infoppo")
    assert info.openrlhf["algo.advantage.gamma"] == 0.999 and info.openrlhf["algo.advantage.lambd"] == 0.99
    assert info.infotime == {"eps_low_info": 10.0, "eps_high_info": 20.0, "norm": "batch"}
    assert method("ppo").openrlhf["actor.eps_clip_low_high"] == [0.2, 0.28]
    assert method("ppo").uses_critic and not method("dapo").uses_critic
    assert method("dapo-ft").infotime["top_entropy_frac"] == 0.2


COMPONENTS = {
    "infoppo": ("info_time_gae", "adaptive", "all"),
    "ppo": ("gae", "fixed", "all"),
    "dapo": ("group_norm", "fixed", "all"),
    "dapo-ft": ("group_norm", "fixed", "top_entropy"),
    "info-gae": ("info_time_gae", "fixed", "all"),
    "info-clip": ("gae", "adaptive", "all"),
}


@pytest.mark.parametrize("name", list(COMPONENTS))
def test_methods_are_built_from_components(name):
    m = method(name)
    assert (m.advantage, m.clip, m.token_mask) == COMPONENTS[name]
    estimator = "group_norm" if m.advantage == "group_norm" else "gae"
    assert next(iter(m.all_openrlhf().items())) == ("algo.advantage.estimator", estimator)


def test_extends_inherits_parts_flags_and_settings():
    dapo, ft = method("dapo"), method("dapo-ft")
    assert ft.openrlhf == {**dapo.openrlhf, "actor.entropy_coef": 0.0} and ft.advantage == dapo.advantage
    clip = method("info-clip")
    assert clip.openrlhf == method("infoppo").openrlhf and clip.infotime == method("infoppo").infotime
    gae = method("info-gae")
    assert gae.openrlhf["actor.eps_clip_low_high"] == [0.2, 0.28]
    assert (gae.openrlhf["algo.advantage.gamma"], gae.openrlhf["algo.advantage.lambd"]) == (0.999, 0.99)


def test_a_user_methods_file_extends_the_shipped_ones(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(
        '[ft-half]\nsummary = "x"\nextends = "dapo-ft"\n[ft-half.infotime]\ntop_entropy_frac = 0.5\n'
    )
    mine = method("ft-half", str(path))
    assert mine.token_mask == "top_entropy" and mine.infotime["top_entropy_frac"] == 0.5
    assert mine.source == str(path) and method("ppo").source == "presets/methods.toml"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[m]\nsummary = "x"\nadvantage = "gae"\nclip = "fixed"\n', "lacks the key 'token_mask'"),
        (
            '[m]\nsummary = "x"\nextends = "ppo"\nclip = "wide"\n',
            "clip = 'wide'; choose one of: fixed, adaptive",
        ),
        ('[m]\nextends = "ppo"\n', "lacks the key 'summary'"),
        ('[m]\nsummary = "x"\nextends = "nope"\n', "extends unknown method 'nope'"),
        ('[m]\nsummary = "x"\nextends = "n"\n[n]\nsummary = "y"\nextends = "m"\n', "cycle"),
        ('[m]\nsummary = "x"\nextends = "ppo"\ngama = 1\n', "unknown key 'gama'"),
        ('[m]\nsummary = "x"\nextends = "ppo"\n[m.infotime]\nnorm = "row"\n', "unknown norm 'row'"),
        ('[m]\nsummary = "x"\nextends = "ppo"\n[m.infotime]\ntop_entropy_frac = 2\n', "top_frac must be"),
        ('[m]\nsummary = "x"\nextends = "ppo"\n[m.infotime]\nfrac = 2\n', "unknown infotime setting 'frac'"),
        ('[ppo]\nsummary = "x"\nextends = "dapo"\n', "'ppo' in .* is already defined in presets/methods"),
        ('[m]\nsummary = "x"\nextends = "ppo"\n[m.openrlhf]\n"algo.advantage.estimator" = "rloo"\n', "drop"),
        ("[m\n", "is not valid TOML"),
    ],
)
def test_bad_methods_files_get_one_clear_error(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(UsageError, match=message):
        methods(str(path))


def test_methods_file_must_exist_and_be_toml(tmp_path):
    with pytest.raises(UsageError, match="not found"):
        methods(str(tmp_path / "none.toml"))
    with pytest.raises(UsageError, match="must be a .toml file"):
        methods(str(tmp_path / "mine.yaml"))


def _preset_text(**changes) -> str:
    base = (Path(__file__).parents[2] / "presets" / "qwen3-4b.toml").read_text()
    for key, value in changes.items():
        base = re.sub(rf"^{key} = .*$", f"{key} = {value}", base, flags=re.M)
    return base


def test_a_user_preset_file_is_told_by_its_suffix(tmp_path):
    path = tmp_path / "my-model.toml"
    path.write_text(_preset_text(model='"./my-model"'))
    mine = preset(str(path))
    assert mine.name == "my-model" and mine.model == "./my-model" and mine.source == str(path)
    assert mine.openrlhf == preset("qwen3-4b").openrlhf
    assert preset("qwen3-4b").source == "presets/qwen3-4b.toml"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"nodes": "0"}, "nodes must be an integer >= 1, got 0"),
        ({"max_response_tokens": '"long"'}, "max_response_tokens must be an integer"),
        ({"model": '""'}, "model must be a non-empty string"),
        ({"actor_warmup_steps": "-1"}, "actor_warmup_steps must be an integer >= 0"),
    ],
)
def test_bad_preset_files_get_one_clear_error(tmp_path, changes, message):
    path = tmp_path / "bad.toml"
    path.write_text(_preset_text(**changes))
    with pytest.raises(UsageError, match=message):
        preset(str(path))


def test_preset_file_missing_or_lacking_keys(tmp_path):
    with pytest.raises(UsageError, match="preset file .*none.toml not found"):
        preset(str(tmp_path / "none.toml"))
    path = tmp_path / "short.toml"
    path.write_text('summary = "x"\nmodel = "m"\nextra = 1\n')
    with pytest.raises(UsageError, match="lacks the key 'max_response_tokens'"):
        preset(str(path))


def test_unknown_names_list_the_choices():
    with pytest.raises(
        UsageError, match="choose one of: llama-3.2-3b-instruct, qwen3-14b, qwen3-4b, qwen3-8b"
    ):
        preset("qwen2")
    with pytest.raises(UsageError, match="choose one of: infoppo, ppo, dapo, dapo-ft, info-gae, info-clip"):
        method("reinforce")
    assert "methods" not in preset_names()
