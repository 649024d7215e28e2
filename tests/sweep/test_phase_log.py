"""A phase's log: the sweep's own lines around the output, and the line that says why a phase failed."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from infoppo_cli.sweep import phase_log
from infoppo_cli.sweep.phase_log import failure_reason, plain

RED, RESET = "\x1b[1;31m", "\x1b[0m"


def write_log(path: Path, *attempts: tuple[list[str], int | None]) -> Path:
    """A log of attempts as the launchers write them: header, output lines, footer (None: no footer)."""
    with open(path, "w", encoding="utf-8") as log:
        for number, (lines, code) in enumerate(attempts, 1):
            log.write(phase_log.header("gamma-0.999-info-seed1", "train", number, ["infoppo", "train"]))
            log.write(phase_log.note("SLURM job 123; submitit logs in /x/slurm/123"))
            log.write("".join(f"{line}\n" for line in lines))
            if code is not None:
                log.write(phase_log.footer(code))
    return path


def test_the_phase_s_own_error_line_is_found_without_its_colour_codes(tmp_path: Path) -> None:
    output = [
        "Usage stats collection is disabled.",
        f"{RED}error:{RESET} data file data/x.jsonl not found; check the path",
        f"\x1b[36m(raylet)\x1b[0m {RED}some worker noise{RESET}",
    ]
    log = write_log(tmp_path / "train.log", (output, 1))
    found = "error: data file data/x.jsonl not found; check the path"
    assert failure_reason(log, "killed by signal 9") == found  # the phase's own line comes first


def test_only_the_last_attempt_counts(tmp_path: Path) -> None:
    log = write_log(
        tmp_path / "train.log",
        (["error: the first attempt's problem"], 1),
        (["Traceback", "OSError: disk full"], 1),
    )
    assert failure_reason(log, "killed by signal 9") == "killed by signal 9"  # no error line in it
    assert failure_reason(log, None) == "OSError: disk full"


def test_what_follows_the_exit_code_is_not_the_phase_s(tmp_path: Path) -> None:
    log = write_log(tmp_path / "train.log", (["step 3 of 10", "Killed"], 137))
    with open(log, "a", encoding="utf-8") as handle:
        handle.write("\x1b[32mStopped all 7 Ray processes.\x1b[0m\n")  # the job's `ray stop`
    assert failure_reason(log, None) == "Killed"


def test_the_last_words_skip_rules_boxes_and_the_sweep_s_own_lines(tmp_path: Path) -> None:
    log = write_log(
        tmp_path / "train.log", (["RuntimeError: CUDA out of memory", "╰──────────╯", "----"], None)
    )
    assert failure_reason(log, None) == "RuntimeError: CUDA out of memory"
    empty = write_log(tmp_path / "empty.log", ([], 1))
    assert failure_reason(empty, None) is None  # not the header, $ line or job note


def test_the_reason_prefers_the_error_line_then_the_launcher_then_the_last_words(tmp_path: Path) -> None:
    with_error = write_log(tmp_path / "a.log", (["error: no such option: --bogus", "bye"], 2))
    without = write_log(tmp_path / "b.log", (["bye"], 1))
    assert failure_reason(with_error, "killed by signal 9") == "error: no such option: --bogus"
    assert failure_reason(without, "killed by signal 9") == "killed by signal 9"
    assert failure_reason(without, None) == "bye"
    assert failure_reason(tmp_path / "missing.log", None) is None


def test_a_long_log_is_read_from_its_end_and_a_long_line_is_shortened(tmp_path: Path) -> None:
    filler = ["x" * 100] * (phase_log.TAIL_BYTES // 100 + 10)
    log = write_log(tmp_path / "train.log", ([*filler, "error: " + "y" * 1000], 1))
    line = failure_reason(log, None)
    assert line is not None and line.startswith("error: yyy") and len(line) == phase_log.MAX_REASON


@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x1b"), max_size=60)
)
def test_plain_text_survives_colouring(text: str) -> None:
    coloured = f"{RED}{text}{RESET}\x1b[2K"
    assert plain(coloured) == plain(text)
