"""The CPU actor worker and OpenRLHF's own vLLM engine on vLLM's CPU build: the weight sync reaches the
engine (it generates with the new weights, and its loaded checksum is the actor's), a sync that does not
land stops the run, and a resumed worker starts from the saved weights. Real Ray workers, OpenRLHF's
worker and engine code, real vLLM, the product's CPU parts."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from cpu_training import actor_logprobs, cpu_preset, nudge_weights, run_args, sharpen_logits
from tiny_model import build_tiny_model

from infoppo_cli.train.plan import TrainRequest, plan_training

pytestmark = pytest.mark.slow

PROBE = "What is 12 + 30? Answer: 42"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny"), sharpen=4.0)


def _args(tmp_path, model_dir, resume=False):
    data = tmp_path / "train.jsonl"
    data.write_text(
        "".join(json.dumps({"prompt": f"What is {i} + 1?", "label": str(i + 1)}) + "\n" for i in range(8))
    )
    preset = cpu_preset(tmp_path, model_dir)
    request = TrainRequest(str(preset), data=str(data), output_dir=str(tmp_path / "run"), eval_bench="none")
    request.resume = resume
    plan = plan_training(request)
    plan.write_config()  # as the launch does
    return run_args(plan.command()[3:])


def _start(ray, args, model_dir, monkeypatch):
    """Upstream's create_vllm_engines (placed on CPUs as a CPU run's driver places them) and the CPU
    actor group, set up together as upstream's train() sets them up (the sync group included)."""
    import openrlhf.trainer.ray.vllm_engine as vllm_engine
    from openrlhf.utils import get_strategy

    from infoppo_cli.openrlhf_adapter.cpu.rollout import place_engines_on_cpus
    from infoppo_cli.openrlhf_adapter.cpu.workers import CpuActorGroup, CpuPolicyModelActor

    for name in ("placement_group", "RolloutRayActor"):  # upstream's names again after the test
        monkeypatch.setattr(vllm_engine, name, getattr(vllm_engine, name))
    place_engines_on_cpus()
    engines = vllm_engine.create_vllm_engines(
        1,
        1,
        str(model_dir),
        0,
        False,
        False,
        True,
        256,
        gpu_memory_utilization=args.vllm.gpu_memory_utilization,
        remote_rm_url=args.reward.remote_url,
    )
    group = CpuActorGroup(1, 1, CpuPolicyModelActor)
    ray.get(group.async_init_model_from_pretrained(get_strategy(args), str(model_dir), 10, engines))
    return group._actor_handlers[0], engines[0]


def _probe_ids(model_dir) -> list[int]:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(model_dir)).encode(PROBE)


def _engine_logprobs(ray, engine, ids) -> list[float]:
    """The engine's log-probabilities of the probe's tokens (vLLM's prompt log-probs)."""
    from vllm import SamplingParams

    output = ray.get(engine.generate.remote(ids, SamplingParams(max_tokens=1, prompt_logprobs=0)))
    return [entry[token].logprob for token, entry in zip(ids[1:], output.prompt_logprobs[1:], strict=True)]


def _distance(a, b) -> float:
    return max(abs(x - y) for x, y in zip(a, b, strict=True))


def test_the_engine_generates_with_the_actors_weights_after_each_sync(
    local_ray, tmp_path, model_dir, monkeypatch
):
    actor, engine = _start(local_ray, _args(tmp_path, model_dir), model_dir, monkeypatch)
    ids = _probe_ids(model_dir)
    base = local_ray.get(actor.__ray_call__.remote(actor_logprobs(ids)))
    assert local_ray.get(engine.loaded_checksum.remote()) is None  # no sync yet
    assert _distance(_engine_logprobs(local_ray, engine, ids), base) < 0.1  # the same checkpoint

    base_checksum = local_ray.get(actor.parameter_checksum.remote())
    local_ray.get(actor.__ray_call__.remote(sharpen_logits))
    trained = local_ray.get(actor.__ray_call__.remote(actor_logprobs(ids)))
    assert _distance(trained, base) > 1.0
    assert _distance(_engine_logprobs(local_ray, engine, ids), base) < 0.1  # stale until the sync

    local_ray.get(actor.broadcast_to_vllm.remote())  # upstream's sync, over gloo; checked inside
    after = _engine_logprobs(local_ray, engine, ids)
    assert _distance(after, trained) < 0.1 < 1.0 < _distance(after, base)
    checksum = local_ray.get(actor.parameter_checksum.remote())
    assert local_ray.get(engine.loaded_checksum.remote()) == pytest.approx(checksum, rel=1e-12)
    assert checksum != pytest.approx(base_checksum, rel=1e-6)

    local_ray.get(actor.__ray_call__.remote(nudge_weights))  # real DeepSpeed optimizer steps
    local_ray.get(actor.broadcast_to_vllm.remote())
    assert local_ray.get(engine.loaded_checksum.remote()) == pytest.approx(
        local_ray.get(actor.parameter_checksum.remote()), rel=1e-12
    )
    for handle in (actor, engine):
        local_ray.kill(handle)


def test_an_engine_that_did_not_load_the_weights_stops_the_run():
    """The check after every sync: an engine whose loaded checksum is not the actor's is an error."""
    from infoppo_cli.openrlhf_adapter.cpu.workers import WeightSyncError, check_engines_hold

    class Engine:
        def __init__(self, checksum):
            self.loaded_checksum = type("Method", (), {"remote": staticmethod(lambda: checksum)})

    import ray

    real_get = ray.get
    try:
        ray.get = lambda refs: refs
        check_engines_hold((1.0, 2.0), [Engine((1.0, 2.0))], "after the weight sync")
        with pytest.raises(WeightSyncError, match="engine 1 does not hold the trained weights after the"):
            check_engines_hold((1.0, 2.0), [Engine((1.0, 2.0)), Engine((1.0, 2.5))], "after the weight sync")
        with pytest.raises(WeightSyncError, match="engine 0 .* before the eval of step 3"):
            check_engines_hold((1.0, 2.0), [Engine(None)], "before the eval of step 3")  # never synced
    finally:
        ray.get = real_get


@pytest.mark.parametrize("step", [0, 4])
def test_the_cpu_trainer_checks_the_engines_before_the_eval_of_a_trained_step(step, monkeypatch):
    """A resumed run evaluated its interrupted step before any weight sync, so from the base model's
    weights, and recorded that as the step's accuracy (seen: 52.6% at step 30 of a run at 88% at step 25).
    On a CPU run the eval of a trained step now first asks the actor whether the engines hold its weights."""
    from infoppo_cli.openrlhf_adapter.actors import InfoPPOTrainer
    from infoppo_cli.openrlhf_adapter.cpu.workers import CpuInfoPPOTrainer

    asked = []
    trainer = object.__new__(CpuInfoPPOTrainer.__ray_actor_class__)
    trainer.actor_model_group = SimpleNamespace(
        async_run_method=lambda method_name, **kwargs: asked.append((method_name, kwargs)) or []
    )
    monkeypatch.setattr(
        InfoPPOTrainer.__ray_actor_class__, "evaluate", lambda self, step, **kw: asked.append(step)
    )
    trainer.evaluate(step)
    checked = [("check_engines", {"when": f"before the eval of step {step}"})] if step else []
    assert asked == [*checked, step]


def test_a_resumed_actor_starts_from_the_saved_weights(local_ray, tmp_path, model_dir, monkeypatch):
    actor, engine = _start(local_ray, _args(tmp_path, model_dir), model_dir, monkeypatch)
    base = local_ray.get(actor.parameter_checksum.remote())
    local_ray.get(actor.__ray_call__.remote(nudge_weights))
    saved = local_ray.get(actor.parameter_checksum.remote())
    local_ray.get(actor.save_checkpoint.remote("global_step1", {"global_step": 1}))
    for handle in (actor, engine):
        local_ray.kill(handle)

    resumed, engine = _start(local_ray, _args(tmp_path, model_dir, resume=True), model_dir, monkeypatch)
    assert local_ray.get(resumed.parameter_checksum.remote()) == saved != base
    assert local_ray.get(resumed.get_checkpoint_states.remote())["global_step"] == 1
    for handle in (resumed, engine):
        local_ray.kill(handle)
