"""OpenRLHF's training strategy on the CPU: DeepSpeed's CUDA engine replaced by torch's AdamW.

``DeepspeedStrategy`` wraps each trained model in a DeepSpeed engine (``deepspeed.initialize``) on a
CUDA device mesh. :class:`CpuStrategy` keeps the rest of upstream's strategy (its ``backward``,
``optimizer_step``, ``get_grad_norm``, ``save_model``, ``all_reduce`` and data loaders call the
engine through the same few methods) and puts :class:`CpuTrainEngine` where the DeepSpeed engine
was: the model in float32 (DeepSpeed's fp32 master weights, without a bf16 copy), torch's AdamW with
the run's lr, betas, eps and weight decay (upstream's parameter groups: bias and norm weights
undecayed), the same Hugging Face scheduler and warm-up, gradient clipping at ``max_norm``, and real
checkpoints (weights, optimizer, scheduler, client state) that ``--resume`` continues from.
"""

from __future__ import annotations

import math
import os
import shutil
from datetime import timedelta
from pathlib import Path

import torch
from openrlhf.utils.deepspeed import DeepspeedStrategy

from infoppo_cli.atomic import atomic_write_text, atomic_writer

CHECKPOINT_FILE = "engine.pt"


class CpuTrainEngine(torch.nn.Module):
    """A trained model with its optimizer and scheduler, answering the calls OpenRLHF makes on a
    DeepSpeed engine: ``forward``, ``backward``, ``step``, ``get_global_grad_norm``, ``module``,
    ``save_checkpoint`` and ``load_checkpoint``."""

    def __init__(self, module: torch.nn.Module, optimizer, scheduler, max_norm: float) -> None:
        super().__init__()
        self.module = module
        self.optimizer = optimizer
        self.lr_scheduler = scheduler
        self.max_norm = float(max_norm or 0.0)
        self._grad_norm: float | None = None

    def forward(self, *args, **kwargs):  # noqa: D102
        return self.module(*args, **kwargs)

    def backward(self, loss: torch.Tensor) -> None:
        loss.backward()

    def step(self) -> None:
        """Clip, step the optimizer and the scheduler, clear the gradients (one optimizer step)."""
        params = [p for p in self.module.parameters() if p.grad is not None]
        norm = torch.nn.utils.clip_grad_norm_(params, self.max_norm if self.max_norm > 0 else math.inf)
        self._grad_norm = float(norm)
        self.optimizer.step()
        self.lr_scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)

    def get_global_grad_norm(self) -> float | None:
        """The gradient norm before clipping, of the last optimizer step."""
        return self._grad_norm

    def save_checkpoint(self, save_dir: str, tag: str, client_state: dict | None = None) -> None:
        target = Path(save_dir) / tag
        target.mkdir(parents=True, exist_ok=True)
        state = {
            "module": self.module.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "lr_scheduler": self.lr_scheduler.state_dict(),
            "client_state": client_state or {},
        }
        with atomic_writer(target / CHECKPOINT_FILE, "wb") as handle:
            torch.save(state, handle)
        atomic_write_text(Path(save_dir) / "latest", tag)

    def load_checkpoint(self, load_dir: str, tag: str | None = None) -> tuple[str | None, dict]:
        """Restore weights, optimizer and scheduler from ``load_dir/tag`` (default: ``latest``)."""
        root = Path(load_dir)
        if tag is None:
            latest = root / "latest"
            if not latest.is_file():
                return None, {}
            tag = latest.read_text(encoding="utf-8").strip()
        path = root / tag / CHECKPOINT_FILE
        if not path.is_file():
            return None, {}
        state = torch.load(path, map_location="cpu", weights_only=False)
        self.module.load_state_dict(state["module"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.lr_scheduler.load_state_dict(state["lr_scheduler"])
        return str(path.parent), dict(state.get("client_state") or {})


class CpuStrategy(DeepspeedStrategy):
    """OpenRLHF's strategy in CPU processes (gloo, a CPU device mesh, :class:`CpuTrainEngine`)."""

    def setup_distributed(self, timeout: timedelta = timedelta(minutes=60)) -> None:
        import torch.distributed as dist
        import transformers
        from torch.distributed.device_mesh import init_device_mesh

        transformers.set_seed(self.seed)
        if not dist.is_initialized():
            dist.init_process_group("gloo", timeout=timeout)  # MASTER_ADDR/PORT, RANK: set by Ray's actor
        self.world_size = dist.get_world_size()
        dp = self.world_size // self.ring_attn_size // self.ds_tensor_parallel_size
        shape = (dp, self.ring_attn_size, self.ds_tensor_parallel_size)
        self.ds_device_mesh = init_device_mesh("cpu", shape, mesh_dim_names=("dp", "sp", "tp"))
        self.setup_ring_attn(self.ds_device_mesh)
        parallel = self.ring_attn_size * self.ds_tensor_parallel_size  # as upstream counts micro-batches
        self.accumulated_gradient = (
            self.train_batch_size * parallel // self.micro_train_batch_size // self.world_size
        )

    def _ds_init_train_model(self, model, cfg: dict):
        from openrlhf.models import Actor
        from openrlhf.utils.deepspeed.deepspeed_utils import get_optimizer_grouped_parameters
        from transformers.trainer import get_scheduler

        if cfg.get("optim", "adam") != "adam":
            raise ValueError(f"the CPU strategy trains with AdamW, not {cfg['optim']!r}")
        raw = model.model if isinstance(model, Actor) else model
        raw.float()
        adam = cfg["adam"]
        optimizer = torch.optim.AdamW(
            get_optimizer_grouped_parameters(raw, float(adam["weight_decay"])),  # upstream's grouping
            lr=float(adam["lr"]),
            betas=tuple(adam["betas"]),
            eps=float(adam["eps"]),
        )
        steps = int(cfg["scheduler_steps"])
        name = cfg.get("lr_scheduler", "cosine_with_min_lr")
        extra = {"min_lr_rate": cfg.get("min_lr_ratio", 0.1)} if "min_lr" in name else {}
        scheduler = get_scheduler(
            name,
            optimizer,
            num_warmup_steps=math.ceil(steps * cfg.get("lr_warmup_ratio", 0.03)),  # as upstream counts it
            num_training_steps=steps,
            scheduler_specific_kwargs=extra,
        )
        engine = CpuTrainEngine(raw, optimizer, scheduler, cfg.get("max_norm", 1.0))
        if isinstance(model, Actor):
            model.model = engine
        else:
            model = engine
        return model, optimizer, scheduler

    def _ds_init_eval_model(self, model):
        if model is not None:
            (model.model if hasattr(model, "model") else model).float()
        return model

    def save_ckpt(self, model, save_dir, tag=None, max_num=3, max_mem=1000, client_state=None, **kwargs):
        """Save ``model`` (a :class:`CpuTrainEngine`) as ``save_dir/tag``, keeping at most ``max_num``
        regular checkpoints (oldest removed first) and one ``best*`` checkpoint."""
        if self.is_rank_0():
            _make_room(Path(save_dir), tag or "", int(max_num))
        model.save_checkpoint(save_dir, tag=tag, client_state=client_state)
        metric = kwargs.get("metric_value")
        if self.is_rank_0() and tag is not None:
            self._write_ckpt_metric(os.path.join(save_dir, tag), metric, metric_key=kwargs.get("metric_key"))

    def load_ckpt(self, model, load_dir, tag=None, **kwargs):
        path, states = model.load_checkpoint(load_dir, tag)
        if path is None:
            self.print(f"Warning: no checkpoint found at {load_dir}, starting from the model's weights.")
        return path, states


def _make_room(root: Path, tag: str, max_num: int) -> None:
    if not root.is_dir():
        return
    entries = [entry for entry in root.iterdir() if entry.is_dir() and entry.name != tag]
    if tag.startswith("best"):
        doomed = [entry for entry in entries if entry.name.startswith("best")]
    else:
        regular = sorted(
            (e for e in entries if not e.name.startswith("best")), key=lambda e: e.stat().st_mtime
        )
        doomed = regular[: max(len(regular) - max(max_num, 1) + 1, 0)]
    for entry in doomed:
        shutil.rmtree(entry, ignore_errors=True)


def cpu_strategy(args) -> CpuStrategy:
    """The :class:`CpuStrategy` for ``args``, built as OpenRLHF's ``get_strategy`` builds its own."""
    return CpuStrategy(
        seed=getattr(args.train, "seed", 42),
        full_determinism=getattr(args.train, "full_determinism_enable", False),
        max_norm=getattr(args, "max_norm", 1.0),
        micro_train_batch_size=getattr(args.train, "micro_batch_size", 1),
        train_batch_size=getattr(args.train, "batch_size", 128),
        zero_stage=args.ds.zero_stage,
        args=args,
    )
