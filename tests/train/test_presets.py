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


HUB_PRESETS = [name for name in preset_names() if preset(name).model]  # tiny-cpu builds its own model


@pytest.mark.parametrize("name", HUB_PRESETS)
def test_each_preset_is_named_after_its_hub_model(name):
    organisation, model = preset(name).model.split("/")
    assert organisation and model.lower().removesuffix("-base") == name


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
        ('[m]\nsummary = "x"\nadvantage = "gae"\nclip = "fixed"\n', r"\[m\] token_mask is missing"),
        (
            '[m]\nsummary = "x"\nextends = "ppo"\nclip = "wide"\n',
            r"\[m\] clip must be fixed or adaptive, got 'wide'",
        ),
        ('[m]\nextends = "ppo"\n', r"\[m\] summary is missing"),
        ('[m]\nsummary = "x"\nextends = "nope"\n', r"\[m\] extends must name a method .*, got 'nope'"),
        ('[m]\nsummary = "x"\nextends = "n"\n[n]\nsummary = "y"\nextends = "m"\n', "cycle"),
        (
            '[m]\nsummary = "x"\nextends = "ppo"\ngama = 1\n',
            r"\[m\] gama is not a known key \(known: summary",
        ),
        (
            '[m]\nsummary = "x"\nextends = "ppo"\n[m.infotime]\nnorm = "row"\n',
            r"\[m.infotime\] norm must be global",
        ),
        (
            '[m]\nsummary = "x"\nextends = "ppo"\n[m.infotime]\ntop_entropy_frac = 2\n',
            r"top_entropy_frac must be in \(0",
        ),
        (
            '[m]\nsummary = "x"\nextends = "ppo"\n[m.infotime]\nfrac = 2\n',
            r"\[m.infotime\] frac is not a known key",
        ),
        ('[ppo]\nsummary = "x"\nextends = "dapo"\n', "bad.toml: ppo is already defined in presets/methods"),
        (
            '[m]\nsummary = "x"\nextends = "ppo"\n[m.openrlhf]\n"algo.advantage.estimator" = "rloo"\n',
            "estimator follows from 'advantage'; drop it",
        ),
        (
            '[m]\nsummary = "x"\nextends = "ppo"\nclip = "adaptive"\n',
            r"\[m.infotime\] eps_low_info is missing",
        ),
        ("m = 3\n", "bad.toml: m must be a table, got 3"),
        ("[m\n", "bad.toml: not valid TOML"),
    ],
)
def test_bad_methods_files_get_one_clear_error(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(UsageError, match=message):
        methods(str(path))


def test_methods_file_must_exist_and_be_toml(tmp_path):
    with pytest.raises(UsageError, match="methods file .*none.toml: no such file"):
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
        ({"model": '""'}, "model must be a non-empty string, got ''"),
        ({"actor_warmup_steps": "-1"}, "actor_warmup_steps must be an integer >= 0"),
    ],
)
def test_bad_preset_files_get_one_clear_error(tmp_path, changes, message):
    path = tmp_path / "bad.toml"
    path.write_text(_preset_text(**changes))
    with pytest.raises(UsageError, match=message):
        preset(str(path))


def test_preset_file_missing_or_lacking_keys(tmp_path):
    with pytest.raises(UsageError, match="preset file .*none.toml: no such file"):
        preset(str(tmp_path / "none.toml"))
    path = tmp_path / "short.toml"
    path.write_text('summary = "x"\nmodel = "m"\nextra = 1\n')
    with pytest.raises(UsageError, match="short.toml: extra is not a known key"):
        preset(str(path))  # an unknown key first: it is often the misspelling of a missing one
    path.write_text('summary = "x"\nmodel = "m"\n')
    with pytest.raises(UsageError, match="short.toml: max_response_tokens is missing"):
        preset(str(path))


def test_unknown_names_list_the_choices():
    with pytest.raises(
        UsageError, match="choose one of: llama-3.2-3b-instruct, qwen3-14b, qwen3-4b, qwen3-8b"
    ):
        preset("qwen2")
    with pytest.raises(UsageError, match="choose one of: infoppo, ppo, dapo, dapo-ft, info-gae, info-clip"):
        method("reinforce")
    assert "methods" not in preset_names()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            '"rollout.batch_sise" = 64',
            "rollout.batch_sise is not a flag of OpenRLHF",
        ),
        ('"rollout.batch_sise" = 64', r"did you mean --rollout.batch_size\?"),
        ('"rollout.batch_size" = 32.5', "rollout.batch_size takes an integer, got 32.5"),
        ('"rollout.batch_size" = "many"', "rollout.batch_size takes an integer, got 'many'"),
        ('"actor.adam.lr" = inf', "actor.adam.lr must be a finite number, got inf"),
        ('"actor.adam.lr" = nan', "actor.adam.lr must be a finite number"),
        ('"ds.packing_samples" = "yes"', "ds.packing_samples is a switch: give true or false, got 'yes'"),
        ('"actor.eps_clip_low_high" = [0.2]', "takes 2 values, got 1"),
        ('"rollout.temperature" = true', "rollout.temperature takes a number, got true"),
    ],
)
def test_preset_flags_are_openrlhf_s_and_hold_values_it_takes(tmp_path, line, message):
    key = line.split(" = ")[0]
    kept = [row for row in _preset_text().splitlines() if not row.startswith(key)]
    path = tmp_path / "bad.toml"
    path.write_text("\n".join(kept).replace("[openrlhf]", f"[openrlhf]\n{line}", 1))
    with pytest.raises(UsageError, match=rf"^preset file {re.escape(str(path))}: \[openrlhf\] .*{message}"):
        preset(str(path))


def test_method_override_and_methods_file_flags_are_checked_too(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(_preset_text() + '\n[method_overrides.ppo]\n"train.batch_size" = 1.5\n')
    with pytest.raises(
        UsageError, match=r"\[method_overrides.ppo\] train.batch_size takes an integer, got 1.5"
    ):
        preset(str(path))
    methods_file = tmp_path / "m.toml"
    methods_file.write_text(
        '[mine]\nsummary = "x"\nextends = "ppo"\n[mine.openrlhf]\n"actor.adam.lr" = -inf\n'
    )
    with pytest.raises(
        UsageError, match=r"m.toml: \[mine.openrlhf\] actor.adam.lr must be a finite number, got -inf"
    ):
        methods(str(methods_file))


def test_the_long_task_preset_carries_its_ablation_grids():
    long = preset("tiny-cpu-long")
    assert long.task == "chain" and long.device == "cpu"
    assert long.sweeps["gamma"].values == (1.0, 0.999, 0.99, 0.98)
    assert long.sweeps["gamma"].held == {"--lambd": 1.0}
    assert long.sweeps["lambda"].values == (1.0, 0.99, 0.95)
    assert long.sweeps["lambda"].held == {"--gamma": 1.0}
    assert preset("qwen3-4b").sweeps == {}  # the paper's grids (sweep/kinds.py)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("[sweeps.gamma]\nvalues = [1.0, 1.5]\n", r"\[sweeps\.gamma\] values must lie in \(0, 1\]"),
        ("[sweeps.gamma]\nvalues = [0.99]\ngamma = 0.9\n", "is what the gamma sweep varies"),
        ("[sweeps.clip]\nvalues = [1.0]\n", "sweeps"),
        ("[sweeps.lambda]\nvalues = []\n", "values"),
        ("[sweeps.lambda]\nvalues = [0.9]\nkappa = 1.0\n", "kappa"),
    ],
)
def test_bad_sweep_grids_in_a_preset_get_one_clear_error(tmp_path, table, message):
    path = tmp_path / "bad.toml"
    path.write_text(_preset_text() + "\n" + table)
    with pytest.raises(UsageError, match=message):
        preset(str(path))
