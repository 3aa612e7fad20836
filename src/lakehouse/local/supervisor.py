"""Start, watch and stop host processes; remember them in PID files.

A PID file records the process's start time as well as its PID, so `down`
never signals an unrelated process that happens to reuse the PID.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HealthCheck = Callable[[], bool]


class ServiceError(Exception):
    """A service failed to start or stop; the message says which and why."""


@dataclass(frozen=True)
class ServiceSpec:
    name: str
    command: list[str]
    env: dict[str, str]
    ports: tuple[int, ...]
    url: str
    health: HealthCheck
    cwd: Path | None = None
    start_timeout_s: float = 60.0


@dataclass
class ServiceStatus:
    name: str
    state: str  # running | stopped | dead (PID file left by a process that died)
    pid: int | None = None
    ports: tuple[int, ...] = ()
    url: str = ""
    log: str = ""
    rss_mb: float | None = None


def port_is_open(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def log_tail(path: Path, lines: int = 30) -> str:
    """The last lines of the latest start's part of a log."""
    if not path.exists():
        return f"(no log at {path})"
    text = path.read_text(errors="replace").split("\n===== ")[-1].splitlines()
    return "\n".join(text[-lines:])


def _process_start_ticks(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] == "Z" and not _threads_alive(pid):
        return None  # it has exited and only waits to be reaped
    # Field 22 (starttime) counted after the ")" that closes the command name.
    return int(fields[19])


def _threads_alive(pid: int) -> bool:
    """A process whose main thread has exited can still run (and hold its ports) in its
    other threads, as a JVM does while it shuts down."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return False
    for task in tasks:
        try:
            state = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            return True
    return False


def rss_mb_of_tree(pid: int) -> float:
    """Resident memory of a process and all its descendants, in MiB."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    total_kb, todo = 0, [pid]
    while todo:
        current = todo.pop()
        todo.extend(children.get(current, []))
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kb += int(line.split()[1])
        except OSError:
            continue
    return total_kb / 1024


class Supervisor:
    def __init__(self, run_dir: Path, logs_dir: Path) -> None:
        self.run_dir = run_dir
        self.logs_dir = logs_dir

    def pid_file(self, name: str) -> Path:
        return self.run_dir / f"{name}.pid.json"

    def log_file(self, name: str) -> Path:
        return self.logs_dir / f"{name}.log"

    def _read_pid_file(self, name: str) -> dict | None:
        path = self.pid_file(name)
        if not path.exists():
            return None
        return json.loads(path.read_text())

    def _alive(self, record: dict) -> bool:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(record["pid"], os.WNOHANG)  # reap it if it is our own exited child
        return _process_start_ticks(record["pid"]) == record["start_ticks"]

    def is_running(self, name: str) -> bool:
        record = self._read_pid_file(name)
        return record is not None and self._alive(record)

    def start(self, spec: ServiceSpec, progress: Callable[[str], None] = print) -> None:
        """Start a service and wait until its health check passes."""
        if self.is_running(spec.name):
            progress(f"  {spec.name}: already running")
            return
        busy = [p for p in spec.ports if port_is_open(p)]
        if busy:
            raise ServiceError(
                f"{spec.name}: port {busy[0]} is already in use by another process. "
                f"Stop that process (e.g. `ss -ltnp 'sport = :{busy[0]}'` shows it) "
                "or change the port in services/*.env."
            )
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        log_path = self.log_file(spec.name)
        with open(log_path, "ab") as log:
            log.write(
                f"\n===== {time.strftime('%Y-%m-%d %H:%M:%S')} starting {spec.name}\n".encode()
            )
            log.flush()
            process = subprocess.Popen(
                spec.command,
                cwd=spec.cwd,
                env=spec.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # own process group: down stops its children too
            )
        record = {
            "pid": process.pid,
            "start_ticks": _process_start_ticks(process.pid),
            "ports": list(spec.ports),
            "url": spec.url,
            "log": str(log_path),
            "command": spec.command,
        }
        self.pid_file(spec.name).write_text(json.dumps(record, indent=2))
        progress(f"  {spec.name}: started (pid {process.pid}), waiting for it to be healthy...")
        self._wait_healthy(spec, process, log_path)

    def _wait_healthy(self, spec: ServiceSpec, process: subprocess.Popen, log: Path) -> None:
        started = time.monotonic()
        deadline = started + spec.start_timeout_s
        while time.monotonic() < deadline:
            code = process.poll()
            if code is not None:
                self.pid_file(spec.name).unlink(missing_ok=True)
                raise ServiceError(
                    f"{spec.name} exited with code {code} during start-up. "
                    f"Last lines of {log}:\n{log_tail(log)}"
                )
            try:
                if spec.health():
                    return
            except Exception:  # a health probe failing is the normal "not yet"
                pass
            time.sleep(0.5)
        self.stop(spec.name)
        raise ServiceError(
            f"{spec.name} did not become healthy within {spec.start_timeout_s:.0f}s "
            f"(probe: {spec.url}). Last lines of {log}:\n{log_tail(log)}"
        )

    def stop(self, name: str, timeout_s: float = 20.0) -> bool:
        """Stop a service this supervisor started; True if something was stopped."""
        record = self._read_pid_file(name)
        if record is None:
            return False
        path = self.pid_file(name)
        if not self._alive(record):
            path.unlink(missing_ok=True)
            return False
        pid = record["pid"]
        self._signal_group(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self._alive(record):
            time.sleep(0.2)
        if self._alive(record):
            self._signal_group(pid, signal.SIGKILL)
            time.sleep(0.5)
        # Children that outlived their leader still hold ports; sweep the group.
        self._signal_group(pid, signal.SIGKILL)
        path.unlink(missing_ok=True)
        return True

    @staticmethod
    def _signal_group(pid: int, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)

    def status(self, name: str) -> ServiceStatus:
        record = self._read_pid_file(name)
        if record is None:
            return ServiceStatus(name, "stopped", log=str(self.log_file(name)))
        ports = tuple(record["ports"])
        if not self._alive(record):
            return ServiceStatus(name, "dead", record["pid"], ports, record["url"], record["log"])
        return ServiceStatus(
            name,
            "running",
            record["pid"],
            ports,
            record["url"],
            record["log"],
            rss_mb=rss_mb_of_tree(record["pid"]),
        )
