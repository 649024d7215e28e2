"""Child processes that die with the infoppo process that owns them.

``infoppo train`` owns its launch process (``launch.py``), which drives the embedded Ray and the
trainer; ``infoppo sweep`` owns the ``infoppo train`` and ``infoppo eval`` processes it runs. Each
child starts in a session of its own (:func:`start_owned`): a Ctrl-C at the terminal reaches the owner
alone, which then stops the child deliberately, and the child's process group (its Ray included) can
be signalled as a whole without touching the user's shell. A child in its own session no longer dies
with its owner's terminal, so when the owner dies (by any signal, SIGKILL included) the child must
notice. It is told twice (:func:`watch_owner`), either way enough:

* the kernel's parent-death signal (Linux ``prctl(PR_SET_PDEATHSIG)``), when the owner is its parent;
* a lifeline: a pipe whose write end only the owner holds. A thread of the child blocks reading the
  other end, which reads end-of-file the moment the owner is gone (also through a wrapper process
  between them, and on any POSIX system).

What the child then does is its own. An ``infoppo`` command stops as on Ctrl-C (``infoppo train``
records its run ``interrupted``, ``infoppo eval`` shuts its Ray engines down). The launch process stops
its run at once (:func:`stop_run_on_owner_death`): every process of its group and below it (Ray's head
processes, agents and workers, the trainer), the embedded Ray's session folder; and it writes a last
line in ``train.log`` and the manifest's status.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import ctypes.util
import os
import select
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infoppo_cli.records import utc_timestamp
from infoppo_cli.rundir import RunDir, ended, read_manifest, write_manifest

OWNER_ENV = "INFOPPO_OWNER"
"""``PID:FD``: the owner's pid and the child's end of its lifeline (set by :func:`start_owned`)."""
PR_SET_PDEATHSIG = 1
KILLED_WITHIN_S = 1.0
"""How long the killed processes of a run are waited for."""
INTERRUPTED_EXIT = 128 + signal.SIGTERM


def start_owned(
    command: Sequence[str], env: dict[str, str] | None = None, pass_fds: Sequence[int] = (), **popen: Any
) -> subprocess.Popen[Any]:
    """``Popen(command)`` in a session of its own, with a lifeline to this process (see the module).
    The lifeline's write end is closed when the returned ``Popen`` is garbage collected."""
    child_end, own_end = os.pipe()  # both non-inheritable: only pass_fds hands one to the child
    environment = dict(os.environ if env is None else env)
    environment[OWNER_ENV] = f"{os.getpid()}:{child_end}"
    try:
        process = subprocess.Popen(
            list(command), env=environment, pass_fds=(child_end, *pass_fds), start_new_session=True, **popen
        )
    except BaseException:
        os.close(own_end)
        raise
    finally:
        os.close(child_end)
    weakref.finalize(process, os.close, own_end)
    return process


@dataclass(frozen=True)
class Owner:
    """The process that owns this one, and this one's end of the lifeline to it."""

    pid: int
    lifeline: int

    def gone(self) -> bool:
        """Whether the owner has died: its end of the lifeline is closed (nothing is ever written to
        it, so the pipe reads as ready only at end-of-file)."""
        try:
            ready, _, _ = select.select([self.lifeline], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(ready)


def watch_owner(on_death: Callable[[], object] | None = None, signum: int = signal.SIGINT) -> Owner | None:
    """In a process :func:`start_owned` started: once its owner is gone, ``signum`` to this process
    (the parent-death signal) and ``on_death`` (by default ``signum`` again: SIGINT stops an
    ``infoppo`` command as Ctrl-C does, through its clean-up). The owner, or ``None`` for a process
    nobody owns. The variable is taken out of the environment, so this process's own children do
    not inherit it."""
    value = os.environ.pop(OWNER_ENV, "")
    owner_text, _, fd_text = value.partition(":")
    if not (owner_text.isdigit() and fd_text.isdigit()):
        return None
    owner = Owner(int(owner_text), int(fd_text))
    try:
        os.set_inheritable(owner.lifeline, False)
    except OSError:
        return None  # the pipe did not come with the variable (a copied environment): nothing to watch
    listen_to_sigint()  # its owner stops it with SIGINT
    armed = os.getppid() == owner.pid and _parent_death_signal(signum)
    if on_death is None and armed:
        if os.getppid() != owner.pid:  # it died before the signal was armed
            os.kill(os.getpid(), signum)
        return owner  # the kernel sends the signal: the lifeline would send it a second time
    action = on_death or (lambda: os.kill(os.getpid(), signum))
    watch = threading.Thread(
        target=_wait_for_end, args=(owner.lifeline, action), name="infoppo-owner", daemon=True
    )
    watch.start()
    return owner


def listen_to_sigint() -> None:
    """Take SIGINT (Ctrl-C) again if this process inherited it ignored: a shell starts a background job
    (``infoppo train ... &`` in a script, ``nohup ... &``) so, and every process below it inherits that.
    An owned process is stopped by its owner with SIGINT; ignoring it, the run would train on after its
    owner was killed and told it to stop."""
    in_main = threading.current_thread() is threading.main_thread()
    if in_main and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _wait_for_end(lifeline: int, on_death: Callable[[], object]) -> None:
    """Block until the lifeline reads end-of-file (nothing is ever written to it), then act: in a
    thread that is no daemon, so that a main thread that ends meanwhile (Ray's own SIGTERM handler
    exits) leaves the process alive until the action is done."""
    while True:
        try:
            if not os.read(lifeline, 1):
                break
        except InterruptedError:
            continue
        except OSError:
            break
    threading.Thread(target=on_death, name="infoppo-owner-gone").start()


def _parent_death_signal(signum: int) -> bool:
    """Ask the kernel for ``signum`` when the parent dies (Linux only); whether it was set."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _process_table() -> dict[int, tuple[int, int]]:
    """``pid -> (parent pid, process group)`` of every process ``/proc`` shows (empty without it)."""
    table = {}
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                stat = Path(f"/proc/{name}/stat").read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[-1].split()  # after the command name, which may hold spaces
            if len(fields) > 2 and fields[0] != "Z":
                table[int(name)] = (int(fields[1]), int(fields[2]))
    return table


def run_processes(root: int | None = None) -> set[int]:
    """The processes of ``root``'s run (this process by default): those of its process group when it
    leads one, and every descendant (a process that left the group, too), ``root`` itself excluded."""
    root = os.getpid() if root is None else root
    table = _process_table()
    group = os.getpgid(root) if root in table else None
    found = {pid for pid, (_, pgid) in table.items() if group == root and pgid == group}
    parents = {root}
    while True:
        children = {pid for pid, (ppid, _) in table.items() if ppid in parents and pid not in found}
        if not children:
            break
        found |= children
        parents = children
    return found - {root}


def stop_processes(pids: set[int], while_frozen: Callable[[], object] = lambda: None) -> set[int]:
    """Freeze ``pids`` (SIGSTOP: nothing writes, nothing notices a peer die), call ``while_frozen``,
    then SIGKILL them; those still there a second later."""
    for signum in (signal.SIGSTOP, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signum)
        if signum == signal.SIGSTOP:
            with contextlib.suppress(Exception):
                while_frozen()
    deadline = time.monotonic() + KILLED_WITHIN_S
    while True:
        _reap_children()
        pids = {pid for pid in pids if _exists(pid)}
        if not pids or time.monotonic() > deadline:
            return pids
        time.sleep(0.05)


def _reap_children() -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def _exists(pid: int) -> bool:
    """Alive and not a zombie (a dead process not yet reaped by a parent that is not this one)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        try:
            os.kill(pid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True  # no /proc: alive by the kill test
    return stat.rsplit(")", 1)[-1].split()[:1] != ["Z"]


def stop_run_on_owner_death(run_dir: Path | None, cleanup: Callable[[], object]) -> Owner | None:
    """In the launch process (``launch.main``): when the infoppo process that owns it dies, stop the
    run at once (see the module) and exit; ``cleanup`` removes the embedded Ray's session folder. So
    does SIGTERM until Ray starts; ``ray.init`` then installs its own handler, which exits through
    ``launch.main``'s shutdown of Ray. The owner, or ``None`` when nobody owns this process (a
    Ray job's entrypoint, a command typed by hand: SIGTERM keeps its default)."""
    stopping = threading.Lock()
    watched: list[Owner] = []

    def stop(wait: bool = False) -> None:
        if not stopping.acquire(blocking=wait):
            return  # another path is stopping it
        owner = watched[0] if watched else None
        if owner is None or owner.gone():
            _silence_output()  # its pipe is gone: a write there would raise
            if run_dir is not None:  # else the owner records how the run ended
                who = f" (pid {owner.pid})" if owner else ""
                _record_interruption(run_dir, f"its infoppo process{who} died")
        # Ray's processes are frozen before the session folder goes: once its raylet dies, Ray's
        # core worker in this process ends the process at once, whatever is left to do
        stop_processes(run_processes(), cleanup)
        if not _process_table() and os.getpgrp() == os.getpid():  # no /proc: the group, this one last
            os.killpg(0, signal.SIGKILL)
        os._exit(INTERRUPTED_EXIT)

    owner = watch_owner(stop, signal.SIGTERM)
    if owner is None:
        return None
    watched.append(owner)
    if threading.current_thread() is threading.main_thread():  # the parent-death signal, or a stop
        signal.signal(signal.SIGTERM, lambda signum, frame: stop())
    # a main thread that ends first (Ray's SIGTERM handler exits) must not leave the run behind
    atexit.register(lambda: owner.gone() and stop(wait=True))
    return owner


def _silence_output() -> None:
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.close(null)


def _record_interruption(run_dir: Path, reason: str) -> None:
    """A last line in the run's ``train.log`` and ``interrupted`` in its manifest, where the owner
    would have written them."""
    run = RunDir(run_dir)
    with contextlib.suppress(OSError), open(run.train_log, "a", encoding="utf-8") as log:
        log.write(f"--- infoppo train interrupted {utc_timestamp()}: {reason}; training and Ray stopped\n")
    with contextlib.suppress(Exception):
        manifest = read_manifest(run)
        if manifest is not None and manifest.status == "running":
            write_manifest(run, ended(manifest.record, "interrupted", INTERRUPTED_EXIT))
