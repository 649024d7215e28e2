"""The rendezvous port: outside the ranges others draw from, free, and never handed out twice."""

from __future__ import annotations

import random
import socket
import subprocess
import sys
import textwrap

import pytest

from infoppo_cli.openrlhf_adapter import ports
from infoppo_cli.openrlhf_adapter.actors import InfoCriticModelActor, InfoPolicyModelActor


def test_the_ephemeral_range_is_read_from_the_kernel(tmp_path):
    source = tmp_path / "ip_local_port_range"
    source.write_text("40000\t50000\n")
    assert ports.ephemeral_ports(source) == range(40000, 50001)
    assert ports.ephemeral_ports(tmp_path / "missing") == ports.LINUX_EPHEMERAL_PORTS
    source.write_text("garbage\n")
    assert ports.ephemeral_ports(source) == ports.LINUX_EPHEMERAL_PORTS


@pytest.mark.parametrize(
    ("ephemeral", "expected"),
    [
        (range(32768, 61000), range(20000, 32768)),
        (range(1024, 65536), None),
        (range(1024, 40000), range(40000, 65536)),
        (range(15000, 30000), range(30000, 65536)),
    ],
)
def test_candidates_avoid_the_ephemeral_range_and_rays_worker_ports(ephemeral, expected):
    if expected is None:
        with pytest.raises(RuntimeError, match="no port outside the ephemeral range"):
            ports.candidate_ports(ephemeral)
        return
    candidates = ports.candidate_ports(ephemeral)
    assert candidates == expected
    assert not set(candidates) & set(ephemeral)
    assert not set(candidates) & set(ports.RAY_WORKER_PORTS)


def test_a_reserved_port_is_free_and_outside_the_kernels_range(tmp_path):
    port = ports.reserve_port(directory=tmp_path)
    assert port in ports.candidate_ports(ports.ephemeral_ports())
    with socket.socket() as server:  # the rendezvous can bind it
        server.bind(("", port))


def test_a_port_something_listens_on_is_skipped(tmp_path, monkeypatch):
    with socket.socket() as busy:
        busy.bind(("", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        assert not ports.bindable(taken)
        free = next(port for port in range(20000, 65536) if port != taken and ports.bindable(port))
        offers = iter([taken, free])  # the busy port is offered first

        class Offer(random.Random):
            def choice(self, seq):
                return next(offers)

        monkeypatch.setattr(ports, "ephemeral_ports", lambda: range(1, 2))  # every port a candidate
        assert ports.reserve_port(rng=Offer(), directory=tmp_path) == free


HOLDER = textwrap.dedent(
    """
    import random, sys
    from pathlib import Path
    from infoppo_cli.openrlhf_adapter import ports

    class Always(random.Random):
        def choice(self, seq):
            return int(sys.argv[2])

    ports.ATTEMPTS = 3
    try:
        print(ports.reserve_port(rng=Always(), directory=Path(sys.argv[1])))
    except RuntimeError as error:
        print("refused:", error)
    """
)


def test_no_two_processes_are_handed_the_same_port(tmp_path):
    port = ports.reserve_port(directory=tmp_path)
    other = subprocess.run(
        [sys.executable, "-c", HOLDER, str(tmp_path), str(port)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert other.stdout.startswith("refused: infoppo: no free rendezvous port"), other.stdout + other.stderr


def test_a_port_is_handed_out_again_once_its_holder_has_exited(tmp_path):
    port = next(port for port in ports.candidate_ports(ports.ephemeral_ports()) if ports.bindable(port))
    for _ in range(2):
        holder = subprocess.run(
            [sys.executable, "-c", HOLDER, str(tmp_path), str(port)],
            capture_output=True,
            text=True,
            check=True,
        )
        assert holder.stdout.strip() == str(port), holder.stdout + holder.stderr


@pytest.mark.parametrize("worker", [InfoPolicyModelActor, InfoCriticModelActor])
def test_the_model_workers_reserve_their_rendezvous_port(worker, monkeypatch):
    monkeypatch.setattr("infoppo_cli.openrlhf_adapter.actors.reserve_port", lambda: 24680)
    assert worker.__ray_actor_class__._get_free_port() == 24680
