"""The launch process's output: all of it into the run's ``train.log``, a little of it on the terminal.

``infoppo train`` runs OpenRLHF in a child process (``openrlhf_adapter/launch.py``), which is Ray's
driver: Ray forwards every worker's standard output and error to it (``log_to_driver``), so the child's
two streams, read here through one pipe, hold everything the run prints (OpenRLHF's logging, its
argument dump, the workers' warnings, Ray's own lines). Each line is written to ``train.log`` without
colour codes; the trainer's progress events (``openrlhf_adapter/progress.py``) become the per-step and
per-eval lines (``progress.py``), which go to the log and to a :class:`Watcher` (the terminal).
The terminal also gets the lines infoppo's own code addresses to the user (``infoppo: ...``,
``infoppo reward: ...``) and, with ``--verbose``, every line.

Under a sweep (``infoppo sweep``) the command's standard output already is ``<run>/train.log``: the
child's lines are then written there once, through the watcher, and no second copy is opened.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections import deque
from pathlib import Path
from typing import Any, BinaryIO, Protocol, TextIO

from infoppo_cli.atomic import disk_full_message, is_disk_full
from infoppo_cli.openrlhf_adapter.flags import REDACTED, SECRET_FLAGS
from infoppo_cli.records import utc_timestamp
from infoppo_cli.train.progress import RunClock, log_line, parse_event

ADDRESSED = re.compile(r"\binfoppo(?: \w+)?: ")
"""A line infoppo's own code addresses to the user (``infoppo: interrupted ...``): shown on the terminal."""

TAIL_LINES = 25
"""The run's last lines of output shown when it fails."""
WORD = re.compile(r"[A-Za-z0-9]")
NO_SPACE = re.compile(r"\[Errno (?:28|122)\][^'\n]*?(?:: '(?P<path>[^']+)')?$|No space left on device")
"""A line of a write that found its device full (ENOSPC, or EDQUOT), with the path when it names one."""


class Watcher(Protocol):
    """Where the run's progress is shown (the terminal)."""

    def event(self, event: dict[str, Any], line: str | None, left: float | None) -> None:
        """A trainer event, the line it makes (``None`` for a phase's progress), the run's time left."""

    def output(self, line: str) -> None:
        """A line of the child's output to show as it is."""


class PrintWatcher:
    """A watcher for callers without a terminal display: lines on standard output."""

    def event(self, event: dict[str, Any], line: str | None, left: float | None) -> None:
        if line:
            print(line, flush=True)

    def output(self, line: str) -> None:
        print(line, flush=True)


def child_env(env: dict[str, str]) -> dict[str, str]:
    """The launch process's environment: Python unbuffered (lines arrive as they are printed), Ray's
    log deduplication off (it folds lines that differ only in their numbers, progress events included,
    into "[repeated Nx]"), and ``tqdm``'s bars off where OpenRLHF and its libraries leave the choice
    to it (the workers inherit this; on a cluster ``launch.ray_runtime_env`` passes it on): a bar's
    redrawings are noise in a log, and the progress they show is the trainer's events'."""
    return {**env, "PYTHONUNBUFFERED": "1", "RAY_DEDUP_LOGS": "0", "TQDM_DISABLE": "1"}


def secret_values(env: dict[str, str]) -> list[str]:
    """The secrets in the launch's environment (the wandb key, Ray's token), never to be logged."""
    names = (*SECRET_FLAGS.values(), "RAY_AUTH_TOKEN")
    return [env[name] for name in names if len(env.get(name) or "") >= 8]


def _same_file(stream: TextIO, path: Path) -> bool:
    try:
        return path.exists() and os.path.samestat(os.fstat(stream.fileno()), path.stat())
    except (OSError, ValueError, AttributeError):  # no file behind it (pytest's capture), or closed
        return False


class TrainOutput:
    """Reads the child's output line by line into ``log_path`` and ``watcher``."""

    def __init__(
        self,
        log_path: Path,
        watcher: Watcher | None = None,
        verbose: bool = False,
        secrets: list[str] | None = None,
        disk_needed: float | None = None,
    ) -> None:
        self.log_path = Path(log_path)
        self.disk_needed = disk_needed
        """The plan's peak disk use of the run (``checkpoints.run_disk_bytes``), for a full disk's line."""
        self.log_failure: OSError | None = None
        """Why ``train.log`` could not be written (a full disk): the run goes on, its last lines kept."""
        self.secrets = [secret for secret in secrets or [] if secret]
        self.watcher = watcher or PrintWatcher()
        self.verbose = verbose
        self.clock = RunClock()
        self.log: TextIO | None = None
        self.tail: deque[str] = deque(maxlen=TAIL_LINES)

    def __enter__(self) -> TrainOutput:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        if not _same_file(sys.stdout, self.log_path):
            # line-buffered: `tail -f train.log` follows the run
            self.log = open(self.log_path, "a", buffering=1, encoding="utf-8", errors="replace")  # noqa: SIM115
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.log is not None:
            try:
                self.log.close()
            except OSError as error:  # a line it still held could not be written
                self.log_failure = self.log_failure or error
            self.log = None

    @property
    def echo_all(self) -> bool:
        """Every line goes to the watcher: ``--verbose``, or standard output is the log itself."""
        return self.verbose or self.log is None

    def begin(self, command: list[str], resumed: bool) -> None:
        """The log's header for this launch (a resumed run's lines follow its earlier ones)."""
        what = "resumed" if resumed else "started"
        self.write(f"--- infoppo train {what} {utc_timestamp()}: {shlex.join(command)}")

    def end(self, code: int, status: str) -> None:
        """The log's footer. A failure is summed up in an ``error:`` line with the run's last words
        (what ``infoppo sweep`` records as the reason), after the last lines it printed."""
        self.write(f"--- infoppo train {status} {utc_timestamp()} (exit code {code})")
        if status != "failed":
            return
        full = self.full_disk()  # says it all in one line: no traceback on the terminal
        if not self.echo_all and full is None:
            self.watcher.output(f"the last lines of {self.log_path}:")
            for line in self.tail:
                self.watcher.output(f"  {line}")
        worded = [line.strip() for line in self.tail if WORD.search(line)]
        cause = f": {full}" if full else f": {worded[-1]}" if worded else ""
        self.watcher.output(f"error: training stopped with exit code {code}{cause}")

    def full_disk(self) -> str | None:
        """What a full disk did to the run, in one sentence (the path, the space the plan expects and the
        space free), or ``None`` when no write found its device full."""
        failure = (
            self.log_failure if self.log_failure is not None and is_disk_full(self.log_failure) else None
        )
        found, path = failure is not None, failure and (failure.filename or self.log_path)
        for line in self.tail:
            match = NO_SPACE.search(line)
            if match:
                found, path = True, match.group("path") or path
        if not found:
            return None
        text = disk_full_message(path or self.log_path.parent, self.disk_needed, "the run at its peak")
        return f"{text}; then continue it with --resume"

    def write(self, line: str) -> None:
        """One line into the log (onto standard output when that is the log)."""
        if self.log is not None:
            self._to_log(line)
        else:
            self.watcher.output(line)

    def _to_log(self, line: str) -> None:
        """One line into ``train.log``; once a write fails (a full disk) the log is left as it is and the
        run goes on (its last lines are kept for the error line)."""
        if self.log is None or self.log_failure is not None:
            return
        try:
            self.log.write(line + "\n")
        except OSError as exc:
            self.log_failure = exc

    def take(self, raw: bytes | str) -> None:
        """One line of the child's output."""
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
        line = log_line(text)
        if line is None:  # a progress bar's drawing, not finished
            return
        for secret in self.secrets:  # a library that prints its settings prints no key here
            line = line.replace(secret, REDACTED)
        event = parse_event(line)
        if event is not None:
            shown = self.clock.take(event)
            if shown and self.log is not None:  # else the watcher's line lands in the log (stdout)
                self._to_log(shown)
            self.watcher.event(event, shown, self.clock.left())
            return
        self.tail.append(line)
        self._to_log(line)
        if self.echo_all or ADDRESSED.search(line):
            self.watcher.output(line)

    def pump(self, process: subprocess.Popen[bytes]) -> int:
        """Read the child's output to its end; its exit code. A Ctrl-C reaches the child too (same
        process group): call again to read what it prints while it stops."""
        stream: BinaryIO | None = process.stdout
        if stream is not None:
            for raw in stream:
                self.take(raw)
        return process.wait()
