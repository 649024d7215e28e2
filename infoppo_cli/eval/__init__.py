"""Evaluation: the benchmark registry, generation backends, the resumable sample store, statistics."""
