"""The CPU strategy: DeepSpeed's engine calls answered by torch's AdamW, real checkpoints."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch

from infoppo_cli.openrlhf_adapter.cpu.strategy import CpuStrategy, CpuTrainEngine, cpu_strategy


def _args(**train):
    return SimpleNamespace(
        train=SimpleNamespace(seed=1, micro_batch_size=2, batch_size=8, dynamic_batch_enable=False, **train),
        ds=SimpleNamespace(zero_stage=2, param_dtype="bf16", ring_attn_size=1, tensor_parallel_size=1),
    )


def _cfg(steps=40, warmup=0.25, **adam):
    adam = {"lr": 0.1, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.1, **adam}
    return {
        "optim": "adam",
        "adam": adam,
        "lr_scheduler": "constant_with_warmup",
        "lr_warmup_ratio": warmup,
        "max_norm": 1.0,
        "scheduler_steps": steps,
    }


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.norm = torch.nn.LayerNorm(4)

    def forward(self, x):
        return self.norm(self.linear(x))


def _train(engine, steps=3):
    for _ in range(steps):
        loss = engine(torch.ones(2, 4)).pow(2).sum() * 100
        engine.backward(loss)
        engine.step()


def test_the_optimizer_follows_the_run_settings():
    strategy = cpu_strategy(_args())
    model, optimizer, scheduler = strategy._ds_init_train_model(Tiny().to(torch.bfloat16), _cfg())
    assert isinstance(model, CpuTrainEngine) and next(model.parameters()).dtype == torch.float32
    assert isinstance(optimizer, torch.optim.AdamW) and optimizer.defaults["betas"] == (0.9, 0.999)
    decays = sorted(group["weight_decay"] for group in optimizer.param_groups)
    assert decays == [0.0, 0.1]  # biases and norm weights undecayed (upstream's grouping)
    # OpenRLHF's warm-up: ceil(scheduler_steps * ratio) optimizer steps, then constant
    warmup = math.ceil(40 * 0.25)
    lrs = []
    for _ in range(warmup + 2):
        lrs.append(scheduler.get_last_lr()[0])
        _train(model, 1)
    assert lrs[0] == 0.0 and lrs[warmup] == pytest.approx(0.1) and lrs[warmup + 1] == pytest.approx(0.1)


def test_gradients_are_clipped_and_the_norm_before_clipping_reported():
    model, _, _ = cpu_strategy(_args())._ds_init_train_model(Tiny(), _cfg(warmup=0.0))
    model.backward(model(torch.ones(2, 4)).pow(2).sum() * 1e4)
    grads = [p.grad.clone() for p in model.parameters()]
    model.step()
    norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    assert model.get_global_grad_norm() == pytest.approx(float(norm), rel=1e-5) and norm > 1.0
    assert all(p.grad is None for p in model.parameters())


def test_a_checkpoint_restores_weights_optimizer_and_schedule(tmp_path):
    strategy = cpu_strategy(_args())
    model, optimizer, scheduler = strategy._ds_init_train_model(Tiny(), _cfg())
    _train(model, 4)
    strategy.save_ckpt(model, str(tmp_path / "_actor"), "global_step4", client_state={"global_step": 4})
    saved = {k: v.clone() for k, v in model.module.state_dict().items()}
    _train(model, 2)  # moves on after the save

    fresh, fresh_optimizer, fresh_scheduler = strategy._ds_init_train_model(Tiny(), _cfg())
    path, states = strategy.load_ckpt(fresh, str(tmp_path / "_actor"))
    assert path.endswith("global_step4") and states == {"global_step": 4}
    for name, value in fresh.module.state_dict().items():
        assert torch.equal(value, saved[name])
    assert fresh_scheduler.last_epoch == 4 and fresh_optimizer.state_dict()["state"][0]["step"] == 4


def test_checkpoints_rotate_and_a_new_best_replaces_the_old(tmp_path):
    strategy = cpu_strategy(_args())
    model, _, _ = strategy._ds_init_train_model(Tiny(), _cfg())
    root = tmp_path / "_actor"
    for step in (1, 2, 3):
        strategy.save_ckpt(model, str(root), f"global_step{step}", max_num=2)
    strategy.save_ckpt(model, str(root), "best_global_step2", max_num=2, metric_value=0.5)
    strategy.save_ckpt(model, str(root), "best_global_step3", max_num=2, metric_value=0.7)
    kept = sorted(entry.name for entry in root.iterdir() if entry.is_dir())
    assert kept == ["best_global_step3", "global_step2", "global_step3"]
    assert (root / "latest").read_text() == "best_global_step3"


def test_nothing_to_load_starts_from_the_model(tmp_path):
    strategy = cpu_strategy(_args())
    model, _, _ = strategy._ds_init_train_model(Tiny(), _cfg())
    assert strategy.load_ckpt(model, str(tmp_path / "missing")) == (None, {})


def test_only_adam_is_offered():
    with pytest.raises(ValueError, match="AdamW"):
        cpu_strategy(_args())._ds_init_train_model(Tiny(), {**_cfg(), "optim": "muon"})


def test_the_strategy_is_openrlhfs():
    from openrlhf.utils.deepspeed import DeepspeedStrategy

    assert issubclass(CpuStrategy, DeepspeedStrategy)
