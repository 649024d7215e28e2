"""One declaration per input: options on settings fields, data files by schema models, one error style."""

from __future__ import annotations

import dataclasses
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, RootModel

from infoppo_cli.errors import UsageError
from infoppo_cli.schema import (
    SAMPLES_PER_PROBLEM,
    SEEDS,
    Limits,
    check_options,
    checked,
    command_line,
    declaration,
    file_problem,
    flags_of,
    identity_fields,
    option,
    read_toml,
)


class Inner(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    rate: float | None = None


class Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    size: int = Field(ge=1)
    kind: Literal["a", "b", "c"] = "a"
    inner: Inner = Field(default_factory=Inner)


class File(RootModel[dict[str, Entry]]):
    pass


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"x": {"size": 0}}, "f.toml: [x] size must be an integer >= 1, got 0"),
        ({"x": {"size": True}}, "f.toml: [x] size must be an integer, got true"),
        ({"x": {"size": "2"}}, "f.toml: [x] size must be an integer, got '2'"),
        ({"x": {"size": 1, "kind": "d"}}, "f.toml: [x] kind must be a, b or c, got 'd'"),
        ({"x": {}}, "f.toml: [x] size is missing"),
        ({"x": {"sise": 1}}, "f.toml: [x] sise is not a known key (known: size, kind, inner)"),
        ({"x": {"size": 1, "inner": {"rte": 1.0}}}, "f.toml: [x.inner] rte is not a known key (known: rate)"),
        ({"x": {"size": 1, "inner": {"rate": "1"}}}, "f.toml: [x.inner] rate must be a number, got '1'"),
        ({"x": 3}, "f.toml: x must be a table, got 3"),
    ],
)
def test_every_schema_problem_is_one_line_naming_file_table_and_key(document, message):
    with pytest.raises(UsageError) as caught:
        checked(File, document, "f.toml")
    assert str(caught.value) == message


def test_an_unknown_key_is_named_before_the_missing_key_it_may_misspell():
    with pytest.raises(UsageError, match=r"\[x\] sise is not a known key"):
        checked(File, {"x": {"sise": 1, "kind": "z"}}, "f.toml")


def test_file_problem_shows_the_value_once_and_top_level_keys_have_no_table():
    assert str(file_problem("p.toml", ("nodes",), "must be >= 1", 0)) == "p.toml: nodes must be >= 1, got 0"
    assert str(file_problem("p.toml", ("t", "k"), "takes 2 values, got 1", [0.2])) == (
        "p.toml: [t] k takes 2 values, got 1"
    )
    assert str(file_problem("p.toml", ("a", "b", "k"), "is missing")) == "p.toml: [a.b] k is missing"


def test_read_toml_refuses_missing_directories_and_bad_toml(tmp_path):
    with pytest.raises(UsageError, match=r"^methods file .*none.toml: no such file$"):
        read_toml(tmp_path / "none.toml", "methods file")
    with pytest.raises(UsageError, match="is not a file"):
        read_toml(tmp_path, "preset file")
    (tmp_path / "bad.toml").write_text("[x\n")
    with pytest.raises(UsageError, match=r"bad.toml: not valid TOML \("):
        read_toml(tmp_path / "bad.toml", "")
    (tmp_path / "good.toml").write_text("[x]\nsize = 2\n")
    assert read_toml(tmp_path / "good.toml", "") == {"x": {"size": 2}}


@pytest.mark.parametrize(
    "nesting", ["a = " + "[" * 100_000 + "]" * 100_000, "a = " + "{x=" * 5_000 + "1" + "}" * 5_000]
)
def test_read_toml_reads_every_data_file_by_the_same_rules(tmp_path, nesting):
    """A byte-order mark is read past and deep nesting is malformed TOML, for presets and methods files
    as for the benchmark registry (its reader is this one)."""
    (tmp_path / "bom.toml").write_bytes(b"\xef\xbb\xbf[x]\nsize = 2\n")
    assert read_toml(tmp_path / "bom.toml", "") == {"x": {"size": 2}}
    (tmp_path / "deep.toml").write_text(nesting + "\n")
    with pytest.raises(
        UsageError, match=r"^preset file .*deep.toml: not valid TOML \(nested too deeply to read\)$"
    ):
        read_toml(tmp_path / "deep.toml", "preset file")


@dataclasses.dataclass
class Limited:
    count: int | None = option(None, "A count.", limits=Limits(1, 10, "ten at most"))
    text: str | None = option(None, "A text.")
    seed: int = option(0, "A seed.", limits=SEEDS)
    free: int = option(-5, "No limits.")


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"count": 0}, "--count must be >= 1, got 0"),
        ({"count": 11}, "--count must be at most 10, got 11: ten at most"),
        ({"text": ""}, "--text is empty; give a value, or leave the option out for its default"),
        ({"text": "  "}, "--text is empty"),
        ({"seed": 2**32}, "--seed must be at most 4,294,967,295, got 4,294,967,296"),
        ({"seed": -1}, "--seed must be >= 0, got -1"),
    ],
)
def test_check_options_refuses_a_value_out_of_its_declared_limits_or_empty_text(values, message):
    with pytest.raises(UsageError) as refused:
        check_options(Limited(**values))
    assert str(refused.value).startswith(message)


def test_check_options_passes_values_within_and_options_not_given():
    for values in ({}, {"count": 1, "text": "x", "seed": 2**32 - 1, "free": -9}, {"count": 10}):
        check_options(Limited(**values))


def _limits(settings_cls: type, name: str) -> Limits:
    return declaration(next(f for f in dataclasses.fields(settings_cls) if f.name == name))["limits"]


def test_one_quantity_has_one_declaration_of_its_limits_in_every_command_and_file():
    from infoppo_cli.cli.grade import GradeOptions
    from infoppo_cli.eval.settings import EvalSettings
    from infoppo_cli.train.presets import PresetFile
    from infoppo_cli.train.request import RL_STEPS, TrainRequest

    assert _limits(TrainRequest, "seed") is _limits(EvalSettings, "seed") is SEEDS
    assert _limits(TrainRequest, "eval_samples") is _limits(EvalSettings, "samples") is SAMPLES_PER_PROBLEM
    assert _limits(TrainRequest, "steps") is _limits(TrainRequest, "eval_every") is RL_STEPS
    assert _limits(EvalSettings, "workers") == _limits(GradeOptions, "workers")
    for key, limits in (("steps", RL_STEPS), ("eval_every", RL_STEPS), ("eval_samples", SAMPLES_PER_PROBLEM)):
        bounds = {type(rule).__name__: rule for rule in PresetFile.model_fields[key].metadata}
        assert (bounds["Ge"].ge, bounds["Le"].le) == (limits.least, limits.most)


@dataclasses.dataclass
class Declared:
    name: str = option(dataclasses.MISSING, "Who.", required=True)
    lam: float | None = option(None, "Two spellings.", "--lambda", "--lam", identity=True)
    on: bool = option(True, "A switch.", "--on/--off")
    plain: int = 0


def test_declarations_give_flags_and_identity():
    fields = {field.name: field for field in dataclasses.fields(Declared)}
    assert flags_of(fields["name"]) == ("--name",) and flags_of(fields["on"]) == ("--on", "--off")
    assert flags_of(fields["lam"]) == ("--lambda", "--lam")
    assert identity_fields(Declared) == ("lam",)
    assert Declared("x").on is True  # the field's default is the dataclass's


def test_a_command_line_gives_a_settings_object_all_its_fields_and_a_pair_only_those_named():
    written = command_line(
        ("tool", "run"), Declared("x", lam=0.1, on=False), (Declared, {"lam": 2.0, "name": None})
    )
    assert written == ["tool", "run", "--name", "x", "--lambda", "0.1", "--off", "--lambda", "2.0"]
    assert command_line(("tool",), Declared("y")) == [
        "tool",
        "--name",
        "y",
    ]  # a switch at its default: left out
