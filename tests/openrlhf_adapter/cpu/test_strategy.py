"""DeepSpeed on the CPU: OpenRLHF's own ``DeepspeedStrategy`` and DeepSpeed's engine, with only the
device mesh replaced, behave as on GPUs: optimizer and scheduler step once per accumulation boundary,
gradients are clipped at the model's ``max_norm``, checkpoints are DeepSpeed's and restore everything.

The engine runs in a child process (``torch.distributed`` over gloo is process-wide state)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow

SCRIPT = textwrap.dedent(
    """
    import json, os, socket, sys
    from types import SimpleNamespace
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK="0", WORLD_SIZE="1")
    os.environ["LOCAL_RANK"] = "0"
    from infoppo_cli.openrlhf_adapter.cpu.stand_ins import install
    install()
    from infoppo_cli.openrlhf_adapter.cpu.strategy import run_deepspeed_on_cpu
    run_deepspeed_on_cpu()
    import torch
    from openrlhf.utils.deepspeed import DeepspeedStrategy
    from transformers import Qwen3Config, Qwen3ForCausalLM
    from infoppo_cli.openrlhf_adapter.cpu.torch_device import run_cuda_calls_on_cpu
    run_cuda_calls_on_cpu()
    torch.set_num_threads(1)

    ckpt, max_norm = sys.argv[1], float(sys.argv[2])
    args = SimpleNamespace(
        local_rank=-1,
        train=SimpleNamespace(seed=1, micro_batch_size=2, batch_size=4, dynamic_batch_enable=False),
        ds=SimpleNamespace(zero_stage=2, param_dtype="bf16", ring_attn_size=1, tensor_parallel_size=1),
    )

    def build():
        strategy = DeepspeedStrategy(seed=1, micro_train_batch_size=2, train_batch_size=4, args=args)
        strategy.setup_distributed()
        torch.manual_seed(0)
        config = Qwen3Config(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                             num_attention_heads=2, num_key_value_heads=1, head_dim=16)
        cfg = {"optim": "adam", "adam": {"lr": 1e-2, "betas": (0.9, 0.95), "eps": 1e-8, "weight_decay": 0.0},
               "lr_scheduler": "constant_with_warmup", "lr_warmup_ratio": 0.5, "max_norm": max_norm,
               "scheduler_steps": 4}
        engine, optimizer, scheduler = strategy.prepare((Qwen3ForCausalLM(config), cfg))
        return strategy, engine, optimizer, scheduler

    strategy, engine, optimizer, scheduler = build()
    tokens = torch.randint(0, 64, (2, 12), generator=torch.Generator().manual_seed(3))
    report = {"engine": type(engine).__name__, "optimizer": type(optimizer).__name__,
              "mesh": strategy.ds_device_mesh.device_type, "accumulation": strategy.accumulated_gradient,
              "dtype": str(next(engine.parameters()).dtype), "steps": [], "lrs": [], "norms": []}
    for micro in range(6):
        before = engine.module.lm_head.weight.detach().clone()
        loss = engine(tokens, labels=tokens).loss * 100
        strategy.backward(loss, engine, optimizer)
        strategy.optimizer_step(optimizer, engine, scheduler)
        report["steps"].append(engine.global_steps)
        report["lrs"].append(scheduler.get_last_lr()[0])
        report["norms"].append(strategy.get_grad_norm(engine))
        moved = not torch.equal(before, engine.module.lm_head.weight.detach())
        report.setdefault("moved", []).append(moved)
    strategy.save_ckpt(engine, ckpt, tag="global_step3", client_state={"global_step": 3})
    saved = {k: v.clone() for k, v in engine.module.state_dict().items()}
    report["files"] = sorted(os.listdir(ckpt)) + sorted(os.listdir(os.path.join(ckpt, "global_step3")))
    strategy2, fresh, _, fresh_scheduler = build()
    path, states = strategy2.load_ckpt(fresh, ckpt)
    tag = os.path.basename(os.path.dirname(path))
    report["loaded"] = [tag, states.get("global_step"), fresh.global_steps,
                        fresh_scheduler.last_epoch]
    report["same_weights"] = all(torch.equal(v, saved[k]) for k, v in fresh.module.state_dict().items())
    print("REPORT" + json.dumps(report))
    """
)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    ckpt = tmp_path_factory.mktemp("ds") / "_actor"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(ckpt), "0.5"], capture_output=True, text=True, timeout=600
    )
    line = next((line for line in done.stdout.splitlines() if line.startswith("REPORT")), None)
    assert line, done.stdout[-2000:] + done.stderr[-4000:]
    return json.loads(line.removeprefix("REPORT"))


def test_it_is_deepspeeds_engine_on_a_cpu_device_mesh(report):
    assert report["engine"] == "DeepSpeedEngine" and report["optimizer"] == "DeepSpeedZeroOptimizer"
    assert report["mesh"] == "cpu" and report["dtype"] == "torch.bfloat16"


def test_the_optimizer_steps_once_per_accumulation_boundary(report):
    assert report["accumulation"] == 2  # train.batch_size 4 / micro-batch 2 / 1 worker
    assert report["steps"] == [0, 1, 1, 2, 2, 3]
    # weights change at boundaries only, from the second on (the first warm-up step's lr is 0)
    assert report["moved"] == [False, False, False, True, False, True]


def test_the_warm_up_counts_optimizer_steps(report):
    # ceil(4 x 0.5) = 2 warm-up optimizer steps: lr 0.005 after the first, 0.01 from the second on
    assert report["lrs"][1] == pytest.approx(0.005) and report["lrs"][3:] == [pytest.approx(0.01)] * 3


def test_the_gradient_norm_is_read_before_clipping(report):
    boundary_norms = report["norms"][1::2]
    assert all(norm > 0.5 for norm in boundary_norms)  # clipped at max_norm 0.5; reported unclipped


def test_checkpoints_are_deepspeeds_and_restore_weights_and_steps(report):
    files = report["files"]
    assert {"latest", "zero_to_fp32.py", "global_step3", "mp_rank_00_model_states.pt"} <= set(files)
    assert "bf16_zero_pp_rank_0_mp_rank_00_optim_states.pt" in files
    assert report["loaded"] == ["global_step3", 3, 3, 3] and report["same_weights"]


def test_only_the_device_mesh_is_replaced():
    """The strategy is upstream's class; the CPU run rebinds one name of its module (``patches``)."""
    import openrlhf.utils.deepspeed.deepspeed as strategy_module

    from infoppo_cli.openrlhf_adapter.cpu.strategy import cpu_device_mesh

    assert "init_device_mesh" in vars(strategy_module)
    assert cpu_device_mesh.__name__ == "cpu_device_mesh"
