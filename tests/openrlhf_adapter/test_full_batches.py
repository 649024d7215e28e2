"""Every RL step trains a full batch: a short one at the end of a pass is completed from the next."""

from __future__ import annotations

from types import SimpleNamespace

from infoppo_cli.openrlhf_adapter.full_batches import FullBatches


def _generator(draws):
    """A sample generator whose ``generate_samples`` returns ``draws`` in turn (samples, exhausted)."""
    queue = list(draws)

    def generate_samples(**kwargs):
        samples, exhausted = queue.pop(0)
        return samples, None, len(samples), exhausted

    return SimpleNamespace(generate_samples=generate_samples)


def test_a_short_batch_is_held_and_completed_from_the_next_pass():
    # batches of 4 responses; a pass over the data yields 4 + 2, the next pass 4 + 2 again
    generator = _generator(
        [(list("abcd"), False), (list("ef"), True), (list("ghij"), False), (list("kl"), True)]
    )
    FullBatches(generator, batch_responses=4)
    got = [generator.generate_samples() for _ in range(4)]
    trained = [samples for samples, *_ in got if samples]
    assert trained == [list("abcd"), list("efgh"), list("ijkl")]  # never a batch of 2
    assert got[1] == ([], None, 2, True)  # upstream's loop ends the pass and starts the next one


def test_data_smaller_than_a_batch_still_trains():
    generator = _generator([(list("abc"), True), (list("abc"), True), (list("abc"), True)])
    FullBatches(generator, batch_responses=4)
    got = [generator.generate_samples()[0] for _ in range(3)]
    assert got == [[], list("abca"), list("bcab")]
    assert generator.generate_samples.held == ["c"]
