"""Helpers for tests of the CPU training path (``infoppo_cli/openrlhf_adapter/cpu``).

* :func:`cpu_preset` writes a ``--device cpu`` preset file around a local model, sized for seconds.
* :func:`run_args` turns a plan's launch command into the argument tree OpenRLHF's ``train()``
  receives: its own parser, ``hierarchize`` and the checks of ``train_ppo_ray``'s ``__main__`` block
  (executed from the installed file, statements up to the ``train(args)`` call).
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from types import SimpleNamespace

ENTRY_MODULE = "openrlhf.cli.train_ppo_ray"

CPU_PRESET = """
summary = "a tiny model on this machine's CPU, for tests"
model = "{model}"
device = "cpu"
max_response_tokens = {max_response}
max_prompt_tokens = {max_prompt}
actor_warmup_steps = 1
nodes = 1
gpus_per_node = 1
vllm_tensor_parallel = 1
steps = {steps}
eval_every = {eval_every}

[openrlhf]
"actor.adam.lr" = 1e-4
"critic.adam.lr" = 1e-4
"rollout.batch_size" = 4
"rollout.n_samples_per_prompt" = 4
"train.batch_size" = 8
"rollout.micro_batch_size" = 4
"train.micro_batch_size" = 4
"ds.attn_implementation" = "sdpa"
"ds.packing_samples" = false
"train.colocate_all" = false
"vllm.enable_sleep" = false
"ds.enable_sleep" = false
"ckpt.save_steps" = 1
"ckpt.max_num" = 2

[method_overrides.dapo]
"rollout.batch_size" = 4
"rollout.n_samples_per_prompt" = 4
"train.batch_size" = 8
"train.dynamic_batch_enable" = false
"ds.ring_attn_size" = 1
"reward.overlong_buffer_len" = 4
"""


def cpu_preset(
    directory: Path,
    model: Path,
    steps: int = 2,
    eval_every: int = 1,
    max_response: int = 12,
    max_prompt: int = 200,
) -> Path:
    """A preset file for a tiny ``--device cpu`` run of ``model``."""
    path = Path(directory) / "tiny-test.toml"
    text = CPU_PRESET.format(
        model=model, steps=steps, eval_every=eval_every, max_response=max_response, max_prompt=max_prompt
    )
    path.write_text(text)
    return path


def finalize_args(args: SimpleNamespace) -> SimpleNamespace:
    """Run the checks and derivations ``train_ppo_ray`` applies after ``hierarchize``."""
    spec = importlib.util.find_spec(ENTRY_MODULE)
    with open(spec.origin, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    guard = next(
        node for node in tree.body if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test)
    )
    start = next(i for i, node in enumerate(guard.body) if "hierarchize(" in ast.unparse(node)) + 1
    body = []
    for node in guard.body[start:]:
        if ast.unparse(node).startswith("train("):
            break
        body.append(node)
    code = compile(ast.Module(body=body, type_ignores=[]), spec.origin, "exec")
    exec(code, {"args": args, "print": lambda *a, **k: None})
    return args


def run_args(argv: list[str]) -> SimpleNamespace:
    """OpenRLHF's parsed, hierarchised and checked arguments for the launcher's ``argv`` (``--config
    RUN/config.json`` first: its settings become ``args.infotime``)."""
    from openrlhf.utils.config import hierarchize

    from infoppo_cli.openrlhf_adapter.flags import openrlhf_parser
    from infoppo_cli.openrlhf_adapter.settings import read_run_config

    settings, rest = read_run_config(argv[1]), argv[2:]
    args = finalize_args(hierarchize(openrlhf_parser().parse_args(rest)))
    args.infotime = settings.as_namespace()
    return args


def nudge_weights(worker) -> None:
    """Runs in an actor worker (``__ray_call__``): real DeepSpeed optimizer steps on a language-model loss
    until the weights have moved (the first warm-up step has learning rate 0)."""
    import torch

    engine = worker.actor.model
    before = engine.module.lm_head.weight.detach().clone()
    tokens = torch.randint(
        0, engine.module.config.vocab_size, (2, 8), generator=torch.Generator().manual_seed(0)
    )
    for _ in range(5 * worker.strategy.accumulated_gradient):
        engine.backward(engine(tokens, labels=tokens).loss)
        engine.step()
        if engine.is_gradient_accumulation_boundary() and not torch.equal(
            before, engine.module.lm_head.weight
        ):
            return
    raise AssertionError("five optimizer steps left the weights as they were")


def actor_logprobs(ids: list[int]):
    """A function for an actor worker (``__ray_call__``): the log-probabilities its model gives the
    tokens of ``ids`` after the first."""

    def run(worker) -> list[float]:
        import torch

        model = worker.actor.model.module
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits.float()[0, :-1]
        return logits.log_softmax(-1).gather(-1, torch.tensor(ids[1:])[:, None])[:, 0].tolist()

    return run


def sharpen_logits(worker) -> None:
    """Runs in an actor worker (``__ray_call__``): scale the model's final norm, hence its logits, four
    times over, a change of the weights that no kernel's rounding can hide."""
    import torch

    with torch.no_grad():
        worker.actor.model.module.model.norm.weight.mul_(4.0)
