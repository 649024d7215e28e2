"""The training reward file, loaded and called the way OpenRLHF 0.11.2 does it."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch
from run_config import run_config

import infoppo_cli
from infoppo_cli.data.templates import render_prompt
from infoppo_cli.openrlhf_adapter.settings import CONFIG_ENV

REWARD_FILE = Path(infoppo_cli.__file__).resolve().parent / "openrlhf_adapter" / "reward_func.py"
PROBLEM = "Find the largest possible real part of $z$."
PROMPT = f"<|im_start|>user\n{render_prompt(PROBLEM)}<|im_end|>\n<|im_start|>assistant\n"
PATHOLOGICAL = "Therefore \\boxed{9^{9^{9}}}"


def query(response: str, prompt: str = PROMPT) -> str:
    """What OpenRLHF passes as a query: prompt and response decoded together, special tokens kept."""
    return prompt + response + "<|im_end|>"


def load_by_path(name: str = "reward_func"):
    """Exactly SingleTurnAgentExecutor's loading code."""
    spec = importlib.util.spec_from_file_location(name, str(REWARD_FILE))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def call_in_thread(function, *args, **kwargs):
    """Call ``function`` on a non-main thread, as asyncio.to_thread does, with a stall guard."""
    box: dict = {}

    def run():
        try:
            box["result"] = function(*args, **kwargs)
        except BaseException as exc:  # surfaced below
            box["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=90)
    assert not thread.is_alive(), "reward_func stalled"
    if "error" in box:
        raise box["error"]
    return box["result"]


@pytest.fixture(scope="module")
def reward_module(tmp_path_factory):
    names = ("INFOPPO_REWARD_TIMEOUT", "INFOPPO_REWARD_WORKERS", CONFIG_ENV)
    saved = {key: os.environ.get(key) for key in names}
    os.environ["INFOPPO_REWARD_TIMEOUT"] = "2"
    os.environ["INFOPPO_REWARD_WORKERS"] = "2"
    os.environ[CONFIG_ENV] = run_config(tmp_path_factory.mktemp("run"), "infoppo")  # binary
    module = load_by_path()
    yield module
    if module._pool is not None:
        module._pool.close()
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def rewards_of(module, responses, labels):
    return call_in_thread(
        module.reward_func, [query(r) for r in responses], [PROMPT] * len(responses), labels
    )


def test_single_sample_correct_and_wrong(reward_module):
    out = rewards_of(reward_module, ["Let me think.\n\nAnswer: 540"], ["540"])
    assert torch.equal(out["rewards"], torch.tensor([1.0]))
    assert torch.equal(out["scores"], torch.tensor([1.0]))
    out = rewards_of(reward_module, ["... so \\boxed{541}"], ["540"])
    assert torch.equal(out["rewards"], torch.tensor([0.0]))


def test_a_batch_of_mixed_responses(reward_module):
    responses = [
        "Answer: 073",  # correct despite the leading zero
        "\\boxed{\\frac{1}{2}}",  # correct
        "I think it is 540",  # no anchored answer
        "We compute 5 + 3 and the result is \\boxed{",  # truncated mid-answer
        "Answer: 12",  # wrong
        PATHOLOGICAL,  # must time out, not hang
    ]
    labels = ["73", "0.5", "540", "8", "13", "540"]
    started = time.monotonic()
    out = rewards_of(reward_module, responses, labels)
    assert time.monotonic() - started < 30
    assert out["rewards"].tolist() == [1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    logs = out["extra_logs"]
    assert logs["accuracy"].tolist() == [1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    assert logs["answer_found"].tolist() == [1.0, 1.0, 0.0, 0.0, 1.0, 1.0]
    assert logs["grade_timeout"].tolist() == [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    assert logs["grade_error"].tolist() == [0.0] * 6


def test_the_prompt_s_own_answer_instruction_is_not_read_as_an_answer(reward_module):
    # DAPO's prompt contains 'Answer: $Answer' and 'after "Answer:".' - a bare response has no answer.
    out = rewards_of(reward_module, ["I am still thinking"], ["540"])
    assert out["extra_logs"]["answer_found"].tolist() == [0.0]


def test_query_whose_prefix_was_respelled_by_decoding(reward_module):
    bos_query = "<|begin_of_text|>" + query("Answer: 540")
    out = call_in_thread(reward_module.reward_func, [bos_query], [PROMPT], ["540"])
    assert out["rewards"].tolist() == [1.0]


def test_signed_rewards_keep_scores_binary(reward_module, monkeypatch, tmp_path):
    monkeypatch.setenv(CONFIG_ENV, run_config(tmp_path / "dapo", "dapo"))  # the method's reward: signed
    out = rewards_of(reward_module, ["Answer: 540", "Answer: 1"], ["540", "540"])
    assert out["rewards"].tolist() == [1.0, -1.0]
    assert out["scores"].tolist() == [1.0, 0.0]
    bogus = run_config(tmp_path / "bogus", "infoppo")
    Path(bogus).write_text(Path(bogus).read_text().replace('"binary"', '"bogus"'))
    monkeypatch.setenv(CONFIG_ENV, bogus)  # a reward on an unknown scale is an error
    with pytest.raises(ValueError, match="unknown reward 'bogus'; choose one of binary, signed"):
        rewards_of(reward_module, ["Answer: 1"], ["540"])
    with pytest.raises(ValueError, match="bogus"):
        load_by_path()  # where OpenRLHF loads the file, before any response is graded
    monkeypatch.delenv(CONFIG_ENV)  # no run configuration: no reward is assumed
    with pytest.raises(ValueError, match=f"{CONFIG_ENV} is not set"):
        rewards_of(reward_module, ["Answer: 1"], ["540"])


@pytest.mark.parametrize(
    ("queries", "prompts", "labels", "expected"),
    [
        ([], [], [], []),
        ([query("Answer: 5")], [PROMPT], [""], [0.0]),  # no label (--data.label_key unset)
        ([query("Answer: 5")], None, None, [0.0]),
        ([None], [None], [None], [0.0]),
        ([query("Answer: 5"), query("Answer: 6")], [PROMPT], ["5"], [1.0, 0.0]),  # ragged lists
        ([query("Answer: 5")], [PROMPT], [5], [1.0]),  # a non-string label
    ],
)
def test_malformed_input_never_raises(reward_module, queries, prompts, labels, expected):
    out = call_in_thread(reward_module.reward_func, queries, prompts, labels, extra="ignored")
    assert out["rewards"].tolist() == expected
    assert set(out) == {"rewards", "scores", "extra_logs"}


def test_grading_failure_scores_zero_instead_of_raising(reward_module, monkeypatch):
    def broken_pool():
        raise RuntimeError("no processes can be started")

    monkeypatch.setattr(reward_module, "grading_pool", broken_pool)
    out = rewards_of(reward_module, ["Answer: 540"], ["540"])
    assert out["rewards"].tolist() == [0.0] and out["extra_logs"]["grade_error"].tolist() == [1.0]


def test_a_grading_failure_costs_only_the_sample_that_caused_it(reward_module, monkeypatch):
    """A pool that fails on one pair scores that response as incorrect (counted as ``grade_error``);
    the others of the batch keep their verdicts."""
    real_pool = reward_module.grading_pool()

    class FailsOnSeven:
        def grade(self, pairs):
            if any(gold == "7" for _, gold in pairs):
                raise RuntimeError("worker died")
            return real_pool.grade(pairs)

    monkeypatch.setattr(reward_module, "grading_pool", FailsOnSeven)
    out = rewards_of(reward_module, ["Answer: 540", "Answer: 7", "Answer: 3"], ["540", "7", "4"])
    assert out["rewards"].tolist() == [1.0, 0.0, 0.0]
    assert out["extra_logs"]["grade_error"].tolist() == [0.0, 1.0, 0.0]
    assert out["extra_logs"]["answer_found"].tolist() == [1.0, 0.0, 1.0]


def test_concurrent_calls_are_graded_together_each_with_its_own_verdicts(reward_module, monkeypatch):
    """OpenRLHF calls the reward once per response from many threads: while one pool call grades,
    the callers that arrive wait for the next, which grades them all at once; each caller gets the
    verdicts of its own responses, and a batch that fails is graded again caller by caller."""
    real_pool = reward_module.grading_pool()
    calls: list[int] = []

    class Counting:
        def grade(self, pairs):
            calls.append(len(pairs))
            time.sleep(0.05)  # long enough for the other callers to queue up behind this call
            if any(gold == "7" for _, gold in pairs):
                raise RuntimeError("worker died")
            return real_pool.grade(pairs)

    monkeypatch.setattr(reward_module, "grading_pool", Counting)
    answers = [(str(n), str(n if n % 3 else n + 100)) for n in range(24)]  # every third one wrong
    answers[7] = ("7", "7")  # its caller's batch fails: only that caller scores an error
    results: dict[int, dict] = {}

    def call(index: int, answer: str, gold: str) -> None:
        results[index] = reward_module.reward_func([query(f"Answer: {answer}")], [PROMPT], [gold])

    threads = [threading.Thread(target=call, args=(i, *pair)) for i, pair in enumerate(answers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=90)
    assert len(results) == len(answers)
    for index, (answer, gold) in enumerate(answers):
        expected = 1.0 if answer == gold and index != 7 else 0.0
        assert results[index]["rewards"].tolist() == [expected], index
    assert results[7]["extra_logs"]["grade_error"].tolist() == [1.0]
    assert sum(results[i]["extra_logs"]["grade_error"].item() for i in results) == 1.0
    assert max(calls) > 1  # callers were graded together, not one pool call each
    assert len([n for n in calls if n > 1]) < len(answers)


def test_openrlhf_single_turn_executor_loads_and_calls_it(monkeypatch, tmp_path):
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    monkeypatch.setenv("INFOPPO_REWARD_TIMEOUT", "2")
    monkeypatch.setenv(CONFIG_ENV, run_config(tmp_path, "infoppo"))  # as the launcher sets it

    executor = SingleTurnAgentExecutor(remote_rm_url=str(REWARD_FILE))
    module = sys.modules.get(executor.reward_func.__module__)
    try:
        results = asyncio.run(
            executor._fetch_rewards_via_func(
                [query("Answer: 540"), query(PATHOLOGICAL)], [PROMPT, PROMPT], ["540", "540"]
            )
        )
    finally:
        pool = executor.reward_func.__globals__["_pool"]
        if pool is not None:
            pool.close()
    assert module is None or module.__file__ == str(REWARD_FILE)
    assert [r["rewards"].item() for r in results] == [1.0, 0.0]  # one call per sample, lists of length 1


def test_the_file_imports_where_infoppo_is_not_installed(tmp_path):
    # -S: no site-packages, so infoppo_cli is only reachable through the file's own fallback.
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('reward_func', {str(REWARD_FILE)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "print(module.grading.__name__, callable(module.reward_func))\n"
    )
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["infoppo_cli.grading", "True"]
