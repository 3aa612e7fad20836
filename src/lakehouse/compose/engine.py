"""A Docker engine and the Compose v2 CLI, prepared only where the normal path fails.

- `docker info` answers: use that engine, whatever it is (Docker Desktop, a system
  service, rootless).
- It does not answer but an engine is installed and managed (Docker Desktop, systemd):
  never start one behind its manager's back; say "start Docker" instead.
- No engine at all, or an unmanaged one (a root shell in a container, like our CI
  machines): install Debian's docker.io if dockerd is missing, start dockerd in the
  background (PID file in the cache, so that `stop_engine` stops only what this started).
- `docker compose version` fails (Debian bookworm packages only the v1 Python
  `docker-compose`): build the real Compose v2 plugin from the Go module proxy into the
  cache and link it into ~/.docker/cli-plugins.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from lakehouse.compose import ComposeError
from lakehouse.core.config import Settings
from lakehouse.local.supervisor import log_tail

Progress = Callable[[str], None]
COMPOSE_MODULE = "github.com/docker/compose/v2"


def run(
    cmd: Sequence[str], what: str, capture: bool = True, **kw: object
) -> subprocess.CompletedProcess[str]:
    """Run a command; on failure raise a ComposeError naming `what` with its output's tail."""
    result = subprocess.run(  # type: ignore[call-overload]
        list(cmd), text=True, capture_output=capture, check=False, **kw
    )
    if result.returncode != 0:
        detail = (result.stderr or result.stdout or "")[-3000:] if capture else ""
        raise ComposeError(f"{what} failed (exit {result.returncode}): {' '.join(cmd)}\n{detail}")
    return result


def succeeds(cmd: Sequence[str], timeout: float = 30) -> bool:
    try:
        return subprocess.run(list(cmd), capture_output=True, timeout=timeout).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def engine_answers() -> bool:
    return shutil.which("docker") is not None and succeeds(["docker", "info"], timeout=20)


def _engine_dir(settings: Settings) -> Path:
    return settings.cache_dir / "docker-engine"


def _managed_engine() -> str | None:
    """What manages this machine's engine, if something does (then we must not start one)."""
    if platform.system() != "Linux":
        return "Docker Desktop"
    if Path("/run/systemd/system").is_dir():
        return "systemd (`sudo systemctl start docker`)"
    if Path.home().joinpath(".docker", "desktop").is_dir():
        return "Docker Desktop"
    return None


def ensure_engine(settings: Settings, progress: Progress, timeout_s: float = 90) -> bool:
    """An engine that answers. Returns True if this call started dockerd."""
    if engine_answers():
        return False
    manager = _managed_engine()
    if manager and shutil.which("docker"):
        raise ComposeError(
            f"Docker is installed but its engine does not answer (`docker info` fails): "
            f"start Docker ({manager}) and run this again"
        )
    if manager:
        raise ComposeError(
            "no Docker found: install Docker Desktop or Docker Engine "
            "(https://docs.docker.com/get-docker/), start it, and run this again"
        )
    is_root = os.geteuid() == 0
    if not shutil.which("dockerd") or not shutil.which("docker"):
        if not is_root or not shutil.which("apt-get"):
            raise ComposeError(
                "no Docker engine: install Docker Engine (https://docs.docker.com/engine/install/)"
            )
        progress("Installing Debian's docker.io (apt-get), no Docker engine is installed")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        run(["apt-get", "update", "-qq"], "apt-get update", env=env)
        run(["apt-get", "install", "-y", "-qq", "docker.io"], "installing docker.io", env=env)
    if not is_root:
        raise ComposeError("no Docker engine answers, and starting dockerd needs root")
    return _start_dockerd(settings, progress, timeout_s)


def _start_dockerd(settings: Settings, progress: Progress, timeout_s: float) -> bool:
    engine_dir = _engine_dir(settings)
    engine_dir.mkdir(parents=True, exist_ok=True)
    log = engine_dir / "dockerd.log"
    progress(f"Starting dockerd (no engine runs and nothing manages one; log {log})")
    with open(log, "ab") as out:
        process = subprocess.Popen(
            ["dockerd"], stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    (engine_dir / "dockerd.pid").write_text(str(process.pid))
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ComposeError(f"dockerd exited with {process.returncode}:\n{log_tail(log)}")
        if engine_answers():
            progress(f"  engine up (dockerd pid {process.pid})")
            return True
        time.sleep(1)
    raise ComposeError(f"dockerd did not answer within {timeout_s:.0f}s:\n{log_tail(log)}")


def stop_engine(settings: Settings, progress: Progress, timeout_s: float = 60) -> None:
    """Stop dockerd if ensure_engine started it (its PID file); any other engine is left alone."""
    pid_file = _engine_dir(settings) / "dockerd.pid"
    if not pid_file.exists():
        return
    pid = int(pid_file.read_text().strip() or 0)
    pid_file.unlink()
    cmdline = Path(f"/proc/{pid}/cmdline")
    if pid <= 0 or not cmdline.exists() or b"dockerd" not in cmdline.read_bytes():
        return
    progress(f"Stopping dockerd (pid {pid})")
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    status = Path(f"/proc/{pid}/status")
    while time.monotonic() < deadline and status.exists():
        if "State:\tZ" in status.read_text():
            return
        time.sleep(0.5)
    if status.exists():
        os.kill(pid, signal.SIGKILL)


def ensure_compose(settings: Settings, progress: Progress) -> None:
    """`docker compose` v2, built from the Go module proxy into the cache where missing."""
    if succeeds(["docker", "compose", "version"]):
        return
    version = settings["COMPOSE_V2_VERSION"]
    binary = settings.cache_dir / "bin" / f"docker-compose-{version}"
    if not binary.exists():
        _build_compose(settings, version, binary, progress)
    plugin_dir = Path.home() / ".docker" / "cli-plugins"
    plugin_dir.mkdir(parents=True, exist_ok=True)
    link = plugin_dir / "docker-compose"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(binary)
    if not succeeds(["docker", "compose", "version"]):
        raise ComposeError(f"{link} is installed but `docker compose version` fails")


def _build_compose(settings: Settings, version: str, binary: Path, progress: Progress) -> None:
    fallback = Path("/usr/local/go/bin/go")
    go = shutil.which("go") or (str(fallback) if fallback.exists() else None)
    if not go:
        raise ComposeError(
            "`docker compose` (v2) is missing: install the Docker Compose plugin "
            "(https://docs.docker.com/compose/install/linux/), or a Go toolchain to build it"
        )
    progress(f"Building Docker Compose {version} from the Go module proxy (first run, ~5 min)")
    cache = settings.cache_dir
    env = {
        **os.environ,
        "GOMODCACHE": str(cache / "go" / "mod"),
        "GOCACHE": str(cache / "go" / "build"),
        "GOPROXY": os.environ.get("GOPROXY", "https://proxy.golang.org"),
        "GOFLAGS": "-modcacherw -buildvcs=false",
        "CGO_ENABLED": "0",
    }
    info = run([go, "mod", "download", "-json", f"{COMPOSE_MODULE}@{version}"], "go mod", env=env)
    source = Path(json.loads(info.stdout)["Dir"])
    # Its go.mod has exclude directives, so `go install pkg@version` refuses it:
    # build inside a writable copy of the module instead.
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "compose"
        shutil.copytree(source, work)
        for path in work.rglob("*"):
            path.chmod(path.stat().st_mode | 0o200)
        ldflags = f"-s -w -X {COMPOSE_MODULE}/internal.Version={version}"
        binary.parent.mkdir(parents=True, exist_ok=True)
        partial = binary.with_suffix(".tmp")
        build = ["nice", go, "build", "-trimpath", "-ldflags", ldflags, "-o", str(partial), "./cmd"]
        run(build, "building Docker Compose", cwd=work, env=env)
        partial.rename(binary)
