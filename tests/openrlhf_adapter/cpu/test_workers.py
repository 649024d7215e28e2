"""The CPU actor worker: the rollout engine gets its weights after a sync; a resumed worker starts
from the saved weights. Real Ray workers, OpenRLHF's worker code, the product's CPU parts."""

from __future__ import annotations

import json

import pytest
from cpu_training import cpu_preset, nudge_weights, run_args
from tiny_model import build_tiny_model

from infoppo_cli.train.plan import TrainRequest, plan_training

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny"))


def _args(tmp_path, model_dir, resume=False):
    data = tmp_path / "train.jsonl"
    data.write_text(
        "".join(json.dumps({"prompt": f"What is {i} + 1?", "label": str(i + 1)}) + "\n" for i in range(8))
    )
    preset = cpu_preset(tmp_path, model_dir)
    request = TrainRequest(str(preset), data=str(data), output_dir=str(tmp_path / "run"), eval_bench="none")
    request.resume = resume
    return run_args(plan_training(request).command()[3:])


def _start(ray, args, model_dir):
    from openrlhf.utils import get_strategy

    from infoppo_cli.openrlhf_adapter.cpu.rollout import create_cpu_engines
    from infoppo_cli.openrlhf_adapter.cpu.workers import CpuActorGroup, CpuPolicyModelActor

    engines = create_cpu_engines(
        1, 1, str(model_dir), 0, False, False, True, 256, remote_rm_url=args.reward.remote_url
    )
    group = CpuActorGroup(1, 1, CpuPolicyModelActor)
    ray.get(group.async_init_model_from_pretrained(get_strategy(args), str(model_dir), 10, engines))
    return group._actor_handlers[0], engines[0]


def test_the_rollout_engine_gets_the_actors_weights_after_a_sync(local_ray, tmp_path, model_dir):
    actor, engine = _start(local_ray, _args(tmp_path, model_dir), model_dir)
    start = local_ray.get(engine.weights_digest.remote())
    assert local_ray.get(actor.weights_digest.remote()) == start  # both from the same checkpoint
    local_ray.get(actor.__ray_call__.remote(nudge_weights))
    trained = local_ray.get(actor.weights_digest.remote())
    assert trained != start and local_ray.get(engine.weights_digest.remote()) == start
    local_ray.get(actor.broadcast_to_vllm.remote())
    assert local_ray.get(engine.weights_digest.remote()) == trained
    for handle in (actor, engine):
        local_ray.kill(handle)


def test_a_resumed_actor_starts_from_the_saved_weights(local_ray, tmp_path, model_dir):
    actor, engine = _start(local_ray, _args(tmp_path, model_dir), model_dir)
    base = local_ray.get(actor.weights_digest.remote())
    local_ray.get(actor.__ray_call__.remote(nudge_weights))
    saved = local_ray.get(actor.weights_digest.remote())
    local_ray.get(actor.save_checkpoint.remote("global_step1", {"global_step": 1}))
    for handle in (actor, engine):
        local_ray.kill(handle)

    resumed, engine = _start(local_ray, _args(tmp_path, model_dir, resume=True), model_dir)
    assert local_ray.get(resumed.weights_digest.remote()) == saved != base
    assert local_ray.get(resumed.get_checkpoint_states.remote())["global_step"] == 1
    for handle in (resumed, engine):
        local_ray.kill(handle)
