"""The pinned OpenRLHF version is enforced with a clear message."""

from __future__ import annotations

import pytest

from infoppo_cli import resources as versions
from infoppo_cli.errors import EnvironmentProblem


def test_the_installed_stack_is_the_pinned_one():
    versions.require_openrlhf()
    stack = versions.stack_versions()
    assert stack["openrlhf"] == versions.OPENRLHF_VERSION and stack["math-verify"] == "0.9.0"
    assert stack["torch"].startswith("2.13.0")


@pytest.mark.parametrize("found, shown", [("0.11.1", "version 0.11.1"), (None, "not installed")])
def test_another_version_is_refused(found, shown, monkeypatch):
    monkeypatch.setattr(versions, "installed_version", lambda name: found)
    with pytest.raises(EnvironmentProblem, match=f"infoppo needs openrlhf==0.11.2, found {shown}"):
        versions.require_openrlhf()
