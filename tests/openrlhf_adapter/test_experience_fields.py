"""The entropy/rho fields survive OpenRLHF's real batching, splitting, pickling and un-padding."""

from __future__ import annotations

import dataclasses
import pickle

import torch
from openrlhf_fixtures import rollout_experiences

from infoppo_cli.openrlhf_adapter.experience_fields import INFO_RHO, OLD_ENTROPY, ensure_experience_fields


def test_fields_are_declared_step_tensors():
    from openrlhf.trainer.ppo_utils.experience import Experience

    ensure_experience_fields()
    ensure_experience_fields()  # idempotent
    names = [f.name for f in dataclasses.fields(Experience)]
    assert names.count(OLD_ENTROPY) == 1 and names.count(INFO_RHO) == 1
    assert Experience.is_step_tensor_field(OLD_ENTROPY) and Experience.is_step_tensor_field(INFO_RHO)
    assert Experience().info_rho is None  # default


def test_field_survives_concat_pickle_split_unpad_make():
    from openrlhf.trainer.ppo_utils.experience import (
        Experience,
        make_experience_batch,
        remove_padding_in_sequences,
        split_experience_batch,
    )

    ensure_experience_fields()
    experiences = rollout_experiences(n_experiences=2, batch=2, width=7)
    for exp in experiences:
        exp.info_rho = torch.rand_like(exp.values) * exp.action_mask
    # trainer process: micro-batches are concatenated, then shipped to the actor worker by pickle
    merged = Experience.concat_experiences(experiences, pad_token_id=0)
    shipped = pickle.loads(pickle.dumps(merged))
    # actor worker: NaiveReplayBuffer.append splits and un-pads, the DataLoader collates
    items = remove_padding_in_sequences(split_experience_batch(shipped))
    assert all(item.info_rho is not None for item in items)
    batch = make_experience_batch(items)
    expected = torch.cat([e.info_rho for e in experiences])
    assert batch.info_rho.shape == batch.action_mask.shape
    width = int(torch.cat([e.response_length for e in experiences]).max())
    assert batch.info_rho.shape[1] == width  # un-padded, then re-padded to the longest response
    assert torch.equal(batch.info_rho, expected[:, :width])
    assert torch.equal(batch.old_entropy, torch.cat([e.old_entropy for e in experiences])[:, :width])
