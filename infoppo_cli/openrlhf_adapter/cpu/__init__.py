"""The two parts a ``--device cpu`` run puts where a GPU run has vLLM and DeepSpeed's CUDA engine.

Everything else is what a GPU run executes: the plan, ``launch``, OpenRLHF's ``train()`` and
``PPOTrainer``, infoppo's experience maker, loss, reward, metrics, eval and checkpoints.

* ``rollout``: :class:`CpuRolloutEngine`, a Ray actor with the interface OpenRLHF's sample generator
  and weight sync call on a vLLM engine, generating with transformers; it receives the actor's
  weights after every RL step through Ray's object store (instead of NCCL).
* ``strategy``: :class:`CpuStrategy`, OpenRLHF's strategy with DeepSpeed's CUDA engine replaced by
  torch's AdamW and the same scheduler, saving and loading real checkpoints.
* ``workers``: the actor and critic workers and their group, placed on CPUs, with OpenRLHF's few
  direct ``torch.cuda`` calls pointed at the CPU (``torch_device``).
* ``stand_ins``: vLLM cannot be installed on a CPU machine, yet OpenRLHF imports it at module level;
  ``install`` registers a module under its name that holds what those imports read and refuses to
  build an engine.
"""
