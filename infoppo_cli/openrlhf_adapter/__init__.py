"""The only place infoppo touches OpenRLHF 0.11.2 internals.

How InfoPPO reaches OpenRLHF's Ray PPO trainer, without copying any of its code:

* ``launch`` is the process entry point. It starts (or joins) Ray, rebinds the Ray actor classes
  that OpenRLHF's ``train()`` instantiates (``PolicyModelActor``, ``CriticModelActor``, ``PPOTrainer``)
  to the subclasses in ``actors``, attaches infoppo's settings to OpenRLHF's parsed arguments as
  ``args.infotime``, and runs OpenRLHF's real ``train_ppo_ray`` command line; with ``--address``
  it first checks that every node sees the run's files (``cluster``).
* In the trainer process, ``experience_maker.InfoExperienceMaker`` turns the old policy's entropy
  into rho, once per rollout batch, and computes information-time GAE and the entropy and rho
  diagnostics every method logs; ``step_metrics`` records the rollout before dynamic filtering;
  ``metrics_log`` writes ``metrics.jsonl``. ``device`` answers what differs between a GPU and a CPU
  run (the vLLM build, what Ray and its workers get, the plan's words).
* In each actor worker, ``old_policy`` returns the old policy's entropy from the same forward pass
  as its log-probs, and ``policy_loss`` applies adaptive clipping (or DAPO-FT's entropy mask).
* ``experience_fields`` declares the per-token fields that carry entropy and rho between them.
* ``ports`` reserves each model worker group's rendezvous port, so that another process on the
  machine cannot take it before DeepSpeed binds it.
* ``checkpoints`` rotates the per-step HF checkpoint copies and estimates disk use; ``flags``
  renders and checks OpenRLHF's flags and keeps secrets (a wandb key) out of them.

The maths lives in ``infoppo_cli.infotime``; nothing here re-implements it.
"""
