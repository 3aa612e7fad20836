"""The supervisor against real (tiny) processes: start, health, failure, stop."""

import socket
import sys
from pathlib import Path

import pytest

from lakehouse.local.supervisor import ServiceError, ServiceSpec, Supervisor, port_is_open
from tests.support.ports import free_port

pytestmark = pytest.mark.unit


def http_server_spec(port: int, timeout: float = 10) -> ServiceSpec:
    return ServiceSpec(
        name="web",
        command=[sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        env={},
        ports=(port,),
        url=f"http://127.0.0.1:{port}",
        health=lambda: port_is_open(port),
        start_timeout_s=timeout,
    )


@pytest.fixture
def supervisor(tmp_path: Path) -> Supervisor:
    return Supervisor(tmp_path / "run", tmp_path / "logs")


def test_start_status_stop_frees_the_port(supervisor: Supervisor) -> None:
    port = free_port()
    supervisor.start(http_server_spec(port), progress=lambda _: None)
    status = supervisor.status("web")
    assert status.state == "running" and status.pid and status.rss_mb and status.rss_mb > 1
    assert supervisor.stop("web") is True
    assert not port_is_open(port)
    assert supervisor.status("web").state == "stopped"
    assert supervisor.stop("web") is False  # nothing left to stop


def test_second_start_is_a_no_op(supervisor: Supervisor) -> None:
    port = free_port()
    spec = http_server_spec(port)
    supervisor.start(spec, progress=lambda _: None)
    pid = supervisor.status("web").pid
    messages: list[str] = []
    supervisor.start(spec, progress=messages.append)
    assert supervisor.status("web").pid == pid
    assert "already running" in messages[0]
    supervisor.stop("web")


def test_process_that_exits_fails_with_name_code_and_log_tail(supervisor: Supervisor) -> None:
    spec = ServiceSpec(
        name="broken",
        command=[sys.executable, "-c", "print('boom: bad config'); raise SystemExit(3)"],
        env={},
        ports=(),
        url="-",
        health=lambda: False,
        start_timeout_s=10,
    )
    with pytest.raises(ServiceError, match=r"broken exited with code 3(.|\n)*boom: bad config"):
        supervisor.start(spec, progress=lambda _: None)
    assert supervisor.status("broken").state == "stopped"


def test_timeout_names_service_probe_and_stops_it(supervisor: Supervisor) -> None:
    spec = ServiceSpec(
        name="sleepy",
        command=[sys.executable, "-c", "import time; print('still starting'); time.sleep(60)"],
        env={},
        ports=(),
        url="probe://never",
        health=lambda: False,
        start_timeout_s=1.5,
    )
    with pytest.raises(ServiceError, match=r"sleepy did not become healthy within 2s"):
        supervisor.start(spec, progress=lambda _: None)
    assert supervisor.status("sleepy").state == "stopped"


def test_busy_port_is_refused_with_a_hint(supervisor: Supervisor) -> None:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        with pytest.raises(ServiceError, match=f"port {port} is already in use"):
            supervisor.start(http_server_spec(port), progress=lambda _: None)


def test_stale_pid_file_of_a_dead_process_is_not_signalled(supervisor: Supervisor) -> None:
    port = free_port()
    supervisor.start(http_server_spec(port), progress=lambda _: None)
    record = supervisor.pid_file("web").read_text()
    supervisor.stop("web")
    supervisor.pid_file("web").write_text(record)  # PID file left behind by a crash
    assert supervisor.status("web").state == "dead"
    assert supervisor.stop("web") is False
