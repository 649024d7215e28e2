"""What a ``--device cpu`` run replaces because it cannot run on a CPU: GPU placement, CUDA calls, the
NCCL weight sync, flash-attn's CUDA kernels.

Everything else is what a GPU run executes: the plan, ``launch``, OpenRLHF's ``train()``,
``PPOTrainer`` and ``DeepspeedStrategy``, DeepSpeed's engine (on its CPU accelerator), OpenRLHF's vLLM
engines (vLLM's CPU build), infoppo's experience maker, loss, reward, metrics, eval and checkpoints.
Every rebinding is a row of ``openrlhf_adapter.patches.PATCHES``.

* ``rollout``: upstream's ``create_vllm_engines`` and ``RolloutRayActor`` placed on CPU bundles, with
  vLLM's CPU settings in the engine's process.
* ``weight_sync``: upstream's broadcast of the trained weights to the engines over a gloo group, the
  engine receiving on the CPU; the checksum each side takes of the weights.
* ``strategy``: DeepSpeed's CPU accelerator, and the strategy's device mesh built on the CPU.
* ``workers``: the actor and critic workers and their group, placed on CPUs; the actor checks every
  engine's weights after each sync.
* ``torch_device``: OpenRLHF's own ``torch.cuda`` calls and its replay buffer's device, answered on
  the CPU in the workers.
* ``stand_ins``: flash-attn's CUDA extension (an empty module) and its Triton kernels (blocked), which
  OpenRLHF imports and a CPU machine cannot build or run.
"""
