"""What a ``--device cpu`` run replaces because it cannot run on a CPU: vLLM, CUDA calls, GPU placement.

Everything else is what a GPU run executes: the plan, ``launch``, OpenRLHF's ``train()``,
``PPOTrainer`` and ``DeepspeedStrategy``, DeepSpeed's engine (on its CPU accelerator), infoppo's
experience maker, loss, reward, metrics, eval and checkpoints. Every rebinding is a row of
``openrlhf_adapter.patches.PATCHES``.

* ``rollout``: :class:`CpuRolloutEngine`, a Ray actor with the interface OpenRLHF's sample generator
  and weight sync call on a vLLM engine, generating with transformers; it receives the actor's
  weights after every RL step through Ray's object store (instead of NCCL).
* ``strategy``: DeepSpeed's CPU accelerator, and the strategy's device mesh built on the CPU.
* ``workers``: the actor and critic workers and their group, placed on CPUs, the actor sending its
  weights to the rollout engines through Ray's object store.
* ``torch_device``: OpenRLHF's own ``torch.cuda`` calls and its replay buffer's device, answered on
  the CPU in the workers.
* ``stand_ins``: vLLM cannot be installed on a CPU machine, yet OpenRLHF imports it at module level;
  ``install`` registers a module under its name that holds what those imports read and refuses to
  build an engine.
"""
