"""One ``[NAME]`` table of a benchmark registry file (``eval.registry``), as a pydantic model.

Kept apart from the registry so that importing the registry (as the command line does at start-up)
does not import pydantic.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class BenchTable(BaseModel):
    """One ``[NAME]`` table of a registry file, as written: unknown keys are refused."""

    model_config = ConfigDict(extra="forbid", strict=True)
    title: str
    hf_id: str = ""
    task: str = ""
    """Instead of ``hf_id``: a synthetic task built offline (``infoppo_cli/tasks``), its held-out set."""
    split: str
    problem_column: str
    answer_column: str
    size: int = Field(ge=1)
    license: str
    configs: list[Any] = Field(default_factory=list)
    revision: str = ""
    id_column: str = ""
    answer_format: str = ""
    notes: str = ""
    source: str = ""

    @field_validator("title", "split", "problem_column", "answer_column", "license")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("is empty")
        return value

    @field_validator("hf_id")
    @classmethod
    def _hub_id(cls, value: str) -> str:
        if value and (value.count("/") != 1 or not all(value.split("/"))):
            raise ValueError("must be a Hub dataset id ORG/NAME")
        return value

    @model_validator(mode="after")
    def _one_source(self) -> BenchTable:
        if bool(self.hf_id) == bool(self.task):
            raise ValueError("give exactly one of hf_id (a Hub dataset) and task (a built-in task)")
        return self

    @field_validator("configs")
    @classmethod
    def _config_names(cls, value: list[Any]) -> list[Any]:
        if not all(isinstance(config, str) and config for config in value):
            raise ValueError("must be a list of config names")
        return value
