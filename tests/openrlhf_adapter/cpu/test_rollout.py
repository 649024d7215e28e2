"""The environment a CPU rollout engine's process gets before vLLM starts in it."""

from __future__ import annotations

from infoppo_cli.openrlhf_adapter.cpu.rollout import KV_CACHE_GIB, engine_environment


def test_an_engine_gets_its_threads_its_kv_cache_and_no_usage_report(monkeypatch):
    for name in ("VLLM_CPU_KVCACHE_SPACE", "VLLM_CPU_OMP_THREADS_BIND", "VLLM_NO_USAGE_STATS"):
        monkeypatch.delenv(name, raising=False)
    assert engine_environment(3) == {
        "VLLM_NO_USAGE_STATS": "1",
        "VLLM_CPU_KVCACHE_SPACE": str(KV_CACHE_GIB),
        "VLLM_CPU_OMP_THREADS_BIND": "nobind",
        "OMP_NUM_THREADS": "3",
        "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
    }
    assert engine_environment(0)["OMP_NUM_THREADS"] == "1"


def test_what_the_user_set_is_kept(monkeypatch):
    monkeypatch.setenv("VLLM_NO_USAGE_STATS", "0")
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "4")
    monkeypatch.setenv("VLLM_CPU_OMP_THREADS_BIND", "0-1")
    found = engine_environment(2)
    assert (found["VLLM_NO_USAGE_STATS"], found["VLLM_CPU_KVCACHE_SPACE"]) == ("0", "4")
    assert found["VLLM_CPU_OMP_THREADS_BIND"] == "0-1"
