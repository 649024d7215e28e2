"""A user's own benchmark registry file (``--benches-file``), as the report tests give it."""

MINE_TOML = """
[mine]
title = "My own set"
hf_id = "me/mine"
split = "test"
problem_column = "problem"
answer_column = "answer"
size = 12
license = "CC0-1.0"
"""
