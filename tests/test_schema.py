"""One declaration per input: options on settings fields, data files by schema models, one error style."""

from __future__ import annotations

import dataclasses
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, RootModel

from infoppo_cli.errors import UsageError
from infoppo_cli.schema import checked, file_problem, flags_of, identity_fields, option, read_toml


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
