"""Make `docker compose up` work on a machine with no engine and no image registry.

    python3 tests/containers/harness.py engine-up     # start dockerd if none answers
    python3 tests/containers/harness.py engine-down   # stop it, only if engine-up started it
    python3 tests/containers/harness.py prepare       # engine, compose v2, base image, every image
    python3 tests/containers/harness.py images        # sizes of the stack's images

What `prepare` does, each step only when needed:
  * engine: `docker info` fails -> install Debian's docker.io (apt) if dockerd is
    missing, start `dockerd` in the background (PID file in the cache, so that
    engine-down stops only what it started);
  * compose v2: `docker compose version` fails (Debian bookworm ships only the v1
    Python `docker-compose` 1.29, which testcontainers cannot drive) -> build the
    real Compose v2 CLI plugin from the Go module proxy into the cache and link it
    into ~/.docker/cli-plugins;
  * base image debian:bookworm-slim missing -> debootstrap --variant=minbase and
    `docker import`;
  * upstream images (LocalStack, MinIO, Postgres, Trino) missing -> `docker pull`;
    if that fails (no registry), build a stand-in from services/standins/<name>/
    tagged with the exact upstream name;
  * our images (lakehouse/spark, lakehouse/hive-metastore, lakehouse/locust) ->
    build from services/<name>/Dockerfile.
  Build contexts are staged in build/docker/<name>/ (git-ignored) from the repo and
  the host cache (~/.cache/lakehouse: Trino tarball, MinIO binary, jars). Every built
  image is labelled with a hash of its inputs and saved as a tarball under
  ~/.cache/lakehouse/images/, so a second machine state (fresh engine, same cache)
  loads instead of rebuilding.

Stdlib only: it runs before any virtualenv exists.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("LAKEHOUSE_CACHE", Path.home() / ".cache" / "lakehouse"))
STAGE = REPO / "build" / "docker"
IMAGE_CACHE = CACHE / "images"
ENGINE_DIR = CACHE / "docker-engine"
DOCKERD_PID = ENGINE_DIR / "dockerd.pid"
DOCKERD_LOG = ENGINE_DIR / "dockerd.log"
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
COMPOSE_MODULE = "github.com/docker/compose/v2"
BASE_IMAGE = os.environ.get("DEBIAN_IMAGE", "debian:bookworm-slim")
ENV_FILES = (
    "versions.env",
    "services/common.env",
    "services/kinesis/kinesis.env",
    "services/minio/minio.env",
    "services/hive-metastore/metastore.env",
    "services/trino/trino.env",
)
# Pins the compose file defaults to (kept in one place for the harness too).
# Versions come from versions.env (one of ENV_FILES); only this tag is local.
DEFAULTS = {"LOCUST_IMAGE_TAG": "latest"}


class HarnessError(Exception):
    pass


def log(msg: str) -> None:
    print(f"[harness] {msg}", file=sys.stderr, flush=True)


def run(
    cmd: Sequence[str], check: bool = True, capture: bool = False, **kw: object
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(  # type: ignore[call-overload]
        list(cmd), text=True, capture_output=capture, check=False, **kw
    )
    if check and result.returncode != 0:
        detail = (result.stderr or result.stdout or "")[-3000:] if capture else ""
        raise HarnessError(f"command failed ({result.returncode}): {' '.join(cmd)}\n{detail}")
    return result


def ok(cmd: Sequence[str], timeout: float = 30) -> bool:
    try:
        return subprocess.run(list(cmd), capture_output=True, timeout=timeout).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def compose_version() -> str:
    return settings()["COMPOSE_V2_VERSION"]


def settings() -> dict[str, str]:
    """versions.env + services/*.env (+ compose defaults), the environment winning."""
    values = dict(DEFAULTS)
    for name in ENV_FILES:
        for raw in (REPO / name).read_text().splitlines():
            line = raw.strip()
            if line and not line.startswith("#") and "=" in line:
                key, _, value = line.partition("=")
                values[key.strip()] = value.strip()
    return {k: os.environ.get(k, v) for k, v in values.items()}


# --------------------------------------------------------------------------- engine


def engine_answers() -> bool:
    return ok(["docker", "info"], timeout=20)


def ensure_engine(timeout_s: float = 90) -> bool:
    """Start dockerd if no engine answers. Returns True if this call started it."""
    if shutil.which("docker") and engine_answers():
        return False
    if not shutil.which("dockerd") or not shutil.which("docker"):
        if os.geteuid() != 0:
            raise HarnessError("no Docker engine, and installing docker.io needs root")
        log("installing Debian's docker.io (apt-get)")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        run(["apt-get", "update", "-qq"], env=env)
        run(["apt-get", "install", "-y", "-qq", "docker.io"], env=env, capture=True)
    if os.geteuid() != 0:
        raise HarnessError("no Docker engine answers, and starting dockerd needs root")
    ENGINE_DIR.mkdir(parents=True, exist_ok=True)
    log(f"starting dockerd (log {DOCKERD_LOG})")
    with open(DOCKERD_LOG, "ab") as out:
        proc = subprocess.Popen(
            ["dockerd"], stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    DOCKERD_PID.write_text(str(proc.pid))
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise HarnessError(f"dockerd exited with {proc.returncode}:\n{tail(DOCKERD_LOG)}")
        if engine_answers():
            log(f"engine up (dockerd pid {proc.pid})")
            return True
        time.sleep(1)
    raise HarnessError(f"dockerd did not answer within {timeout_s:.0f}s:\n{tail(DOCKERD_LOG)}")


def stop_engine(timeout_s: float = 60) -> None:
    """Stop dockerd if ensure_engine started it (its PID file); anything else is left alone."""
    if not DOCKERD_PID.exists():
        return
    pid = int(DOCKERD_PID.read_text().strip() or 0)
    DOCKERD_PID.unlink()
    if pid <= 0 or not Path(f"/proc/{pid}").exists():
        return
    if "dockerd" not in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
        return
    log(f"stopping dockerd (pid {pid})")
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
        status = Path(f"/proc/{pid}/status")
        if status.exists() and "State:\tZ" in status.read_text():
            break
        time.sleep(0.5)
    else:
        if Path(f"/proc/{pid}").exists():
            os.kill(pid, signal.SIGKILL)


def tail(path: Path, lines: int = 30) -> str:
    if not path.exists():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


# --------------------------------------------------------------------------- compose v2


def ensure_compose() -> None:
    """`docker compose` (v2). Debian bookworm has only docker-compose 1.29 (v1): build
    the v2 plugin from the Go module proxy (a Go >= 1.24 toolchain is on our machines)."""
    if ok(["docker", "compose", "version"]):
        return
    plugin_dir = Path.home() / ".docker" / "cli-plugins"
    binary = CACHE / "bin" / f"docker-compose-{compose_version()}"
    if not binary.exists():
        build_compose(binary)
    plugin_dir.mkdir(parents=True, exist_ok=True)
    link = plugin_dir / "docker-compose"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(binary)
    if not ok(["docker", "compose", "version"]):
        raise HarnessError(f"{link} is installed but `docker compose version` fails")


def build_compose(binary: Path) -> None:
    fallback = Path("/usr/local/go/bin/go")
    go = shutil.which("go") or (str(fallback) if fallback.exists() else None)
    if not go:
        raise HarnessError(
            "`docker compose` (v2) is missing and no Go toolchain is there to build it; "
            "Debian bookworm packages only docker-compose 1.29 (v1)"
        )
    log(f"building Compose {compose_version()} from the Go module proxy (first run, ~5 min)")
    env = {
        **os.environ,
        "GOMODCACHE": str(CACHE / "go" / "mod"),
        "GOCACHE": str(CACHE / "go" / "build"),
        "GOPROXY": os.environ.get("GOPROXY", "https://proxy.golang.org"),
        "GOFLAGS": "-modcacherw -buildvcs=false",
        "CGO_ENABLED": "0",
    }
    info = run(
        [go, "mod", "download", "-json", f"{COMPOSE_MODULE}@{compose_version()}"],
        capture=True,
        env=env,
    )
    src = Path(json.loads(info.stdout)["Dir"])
    # Its go.mod has exclude directives, so `go install pkg@version` refuses it:
    # build inside a writable copy of the module instead.
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "compose"
        shutil.copytree(src, work)
        for p in work.rglob("*"):
            p.chmod(p.stat().st_mode | 0o200)
        ldflags = f"-s -w -X {COMPOSE_MODULE}/internal.Version={compose_version()}"
        binary.parent.mkdir(parents=True, exist_ok=True)
        tmp_out = binary.with_suffix(".tmp")
        run(
            ["nice", go, "build", "-trimpath", "-ldflags", ldflags, "-o", str(tmp_out), "./cmd"],
            cwd=work,
            env=env,
        )
        tmp_out.rename(binary)


def compose_command(project: str | None = None) -> list[str]:
    cmd = ["docker", "compose", "-f", str(REPO / "docker-compose.yml")]
    for name in ENV_FILES:
        cmd += ["--env-file", str(REPO / name)]
    if project:
        cmd += ["-p", project]
    return cmd


# --------------------------------------------------------------------------- images


@dataclass
class Image:
    name: str  # repository:tag, exactly as docker-compose.yml names it
    dockerfile_dir: Path
    stage: Callable[[Path, dict[str, str]], None]
    build_args: dict[str, str] = field(default_factory=dict)
    upstream: bool = False  # official image: pull first, stand-in if that fails
    depends_on: str | None = None  # an image used as BASE_IMAGE


def _place(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.exists() or dst.is_symlink():
        dst.unlink()
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _copy_tree(src: Path, dst: Path) -> None:
    shutil.copytree(
        src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "target", "build")
    )


def _ca(ctx: Path) -> None:
    if HOST_CA.exists():
        shutil.copy2(HOST_CA, ctx / "ca.crt")
    else:
        (ctx / "ca.crt").write_text("")


def stage_localstack(ctx: Path, s: dict[str, str]) -> None:
    _ca(ctx)


def stage_minio(ctx: Path, s: dict[str, str]) -> None:
    version = s["MINIO_VERSION"]
    candidates = [CACHE / "bin" / f"minio-{version}", CACHE / "minio" / version / "minio"]
    binary = next((c for c in candidates if c.exists()), None)
    if binary is None:
        binary = candidates[0]
        log(f"building MinIO {version} (services/minio/build.sh, Go module proxy)")
        run(["bash", str(REPO / "services/minio/build.sh"), version, str(binary)])
    _place(binary, ctx / "minio")


def stage_postgres(ctx: Path, s: dict[str, str]) -> None:
    pass


def stage_trino(ctx: Path, s: dict[str, str]) -> None:
    _ca(ctx)
    (ctx / "downloads").mkdir()
    tarball = CACHE / "downloads" / f"trino-server-{s['TRINO_VERSION']}.tar.gz"
    if tarball.exists():
        _place(tarball, ctx / "downloads" / tarball.name)
    else:
        (ctx / "downloads" / ".keep").write_text("")


def _kinesis_source_jar() -> Path | None:
    jar = CACHE / "build" / "lakehouse-kinesis-source.jar"
    src = REPO / "spark" / "kinesis-source"
    newest = max(p.stat().st_mtime for p in src.rglob("*") if p.is_file())
    return jar if jar.exists() and jar.stat().st_mtime >= newest else None


def _stage_project(ctx: Path) -> None:
    """The project's Python package sources and its lock file, which the image installs."""
    project = ctx / "project"
    for name in ("pyproject.toml", "requirements.lock"):
        _place(REPO / name, project / name)
    for package in (
        "src/lakehouse",
        "src/lakehouse_tables",
        "spark/lakehouse_job",
        "locust/loadgen",
    ):
        _copy_tree(REPO / package, project / package)
    _place(REPO / "locust" / "locustfile.py", project / "locust" / "locustfile.py")


def stage_spark(ctx: Path, s: dict[str, str]) -> None:
    _ca(ctx)
    shutil.copy2(REPO / "services" / "spark" / "entrypoint.sh", ctx / "entrypoint.sh")
    shutil.copy2(REPO / "versions.env", ctx / "versions.env")
    _stage_project(ctx)
    _copy_tree(REPO / "spark" / "kinesis-source", ctx / "spark" / "kinesis-source")
    jars = ctx / "jars"
    jars.mkdir()
    scala = s["SCALA_BINARY_VERSION"]
    for name in (
        f"hudi-spark3.5-bundle_{scala}-{s['HUDI_VERSION']}.jar",
        f"hadoop-aws-{s['HADOOP_AWS_VERSION']}.jar",
        f"aws-java-sdk-bundle-{s['AWS_SDK_BUNDLE_VERSION']}.jar",
    ):
        if (CACHE / "jars" / name).exists():
            _place(CACHE / "jars" / name, jars / name)
    source_jar = _kinesis_source_jar()
    if source_jar:
        _place(source_jar, jars / source_jar.name)
    (jars / ".keep").write_text("")


def stage_metastore(ctx: Path, s: dict[str, str]) -> None:
    pass


def stage_locust(ctx: Path, s: dict[str, str]) -> None:
    _ca(ctx)
    _stage_project(ctx)


def images(s: dict[str, str]) -> list[Image]:
    standins = REPO / "services" / "standins"
    spark = f"lakehouse/spark:{s['PYSPARK_VERSION']}"
    base = {"BASE_IMAGE": BASE_IMAGE}
    return [
        Image(
            f"localstack/localstack:{s['LOCALSTACK_VERSION']}",
            standins / "localstack",
            stage_localstack,
            {**base, "LOCALSTACK_VERSION": s["LOCALSTACK_VERSION"]},
            upstream=True,
        ),
        Image(
            f"quay.io/minio/minio:{s['MINIO_VERSION']}",
            standins / "minio",
            stage_minio,
            {**base, "MINIO_VERSION": s["MINIO_VERSION"]},
            upstream=True,
        ),
        Image(
            f"postgres:{s['POSTGRES_IMAGE_TAG']}",
            standins / "postgres",
            stage_postgres,
            base,
            upstream=True,
        ),
        Image(
            f"trinodb/trino:{s['TRINO_VERSION']}",
            standins / "trino",
            stage_trino,
            {**base, "TRINO_VERSION": s["TRINO_VERSION"]},
            upstream=True,
        ),
        Image(
            spark,
            REPO / "services" / "spark",
            stage_spark,
            {
                **base,
                **{
                    k: s[k]
                    for k in (
                        "PYSPARK_VERSION",
                        "SCALA_BINARY_VERSION",
                        "HUDI_VERSION",
                        "HADOOP_AWS_VERSION",
                        "AWS_SDK_BUNDLE_VERSION",
                    )
                },
            },
        ),
        Image(
            f"lakehouse/hive-metastore:{s['HIVE_METASTORE_VERSION']}",
            REPO / "services" / "hive-metastore",
            stage_metastore,
            {"BASE_IMAGE": spark},
            depends_on=spark,
        ),
        Image(
            f"lakehouse/locust:{s['LOCUST_IMAGE_TAG']}",
            REPO / "services" / "locust",
            stage_locust,
            base,
        ),
    ]


def image_id(name: str) -> str | None:
    r = run(["docker", "image", "inspect", "-f", "{{.Id}}", name], check=False, capture=True)
    return r.stdout.strip() if r.returncode == 0 else None


def image_label(name: str) -> str | None:
    r = run(
        ["docker", "image", "inspect", "-f", '{{index .Config.Labels "lakehouse.inputs"}}', name],
        check=False,
        capture=True,
    )
    value = r.stdout.strip()
    return value if r.returncode == 0 and value and value != "<no value>" else None


def context_hash(ctx: Path, image: Image) -> str:
    """Files (big ones by name, size and mtime), build args and the base image's id."""
    h = hashlib.sha256()
    for p in sorted(ctx.rglob("*")):
        if not p.is_file():
            continue
        rel = p.relative_to(ctx).as_posix()
        st = p.stat()
        h.update(rel.encode() + b"\0")
        if st.st_size > 32 * 1024 * 1024:
            h.update(f"{st.st_size}:{int(st.st_mtime)}".encode())
        else:
            h.update(p.read_bytes())
        h.update(b"\0")
    h.update(json.dumps(image.build_args, sort_keys=True).encode())
    base = image.build_args.get("BASE_IMAGE")
    if base:
        h.update((image_id(base) or base).encode())
    return h.hexdigest()[:16]


def cache_file(name: str, digest: str) -> Path:
    safe = name.replace("/", "_").replace(":", "_")
    return IMAGE_CACHE / f"{safe}-{digest}.tar"


def ensure_base_image() -> None:
    if image_id(BASE_IMAGE):
        return
    cached = cache_file(BASE_IMAGE, "debootstrap")
    if cached.exists():
        log(f"loading {BASE_IMAGE} from {cached}")
        run(["docker", "load", "-i", str(cached)], capture=True)
        return
    if not shutil.which("debootstrap"):
        log("installing debootstrap (apt-get)")
        run(["apt-get", "install", "-y", "-qq", "debootstrap"], capture=True,
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})  # fmt: skip
    log(f"building {BASE_IMAGE} with debootstrap (bookworm, minbase)")
    with tempfile.TemporaryDirectory(prefix="bookworm-") as root:
        run(["debootstrap", "--variant=minbase", "bookworm", root, "http://deb.debian.org/debian"],
            capture=True)  # fmt: skip
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for p in (Path(root) / junk).glob("*"):
                if p.is_file():
                    p.unlink()
        tar = subprocess.Popen(["tar", "-C", root, "-c", "."], stdout=subprocess.PIPE)
        run(["docker", "import", "-", BASE_IMAGE], stdin=tar.stdout, capture=True)
        tar.wait()
    save(BASE_IMAGE, cached)


def save(name: str, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    safe = path.name.rsplit("-", 1)[0]
    for old in path.parent.glob(f"{safe}-*.tar"):
        if old != path:
            old.unlink()
    tmp = path.with_suffix(".tmp")
    run(["docker", "save", "-o", str(tmp), name])
    tmp.rename(path)


def try_pull(name: str) -> bool:
    if os.environ.get("LAKEHOUSE_STANDINS") == "1":
        return False
    log(f"pulling {name}")
    return ok(["docker", "pull", "-q", name], timeout=float(os.environ.get("PULL_TIMEOUT", 120)))


def ensure_image(image: Image, s: dict[str, str]) -> str:
    """Make `image.name` present; returns how (present, pulled, loaded, built)."""
    present = image_id(image.name)
    if image.upstream and present and image_label(image.name) is None:
        return "present (not built here)"
    ctx = STAGE / image.dockerfile_dir.name
    if ctx.exists():
        shutil.rmtree(ctx)
    ctx.mkdir(parents=True)
    for p in image.dockerfile_dir.iterdir():
        if p.is_file() and not p.name.endswith((".env", ".xml", ".conf")):
            shutil.copy2(p, ctx / p.name)
    image.stage(ctx, s)
    digest = context_hash(ctx, image)
    if present and image_label(image.name) == digest:
        return "present"
    if image.upstream and not present and try_pull(image.name):
        return "pulled"
    cached = cache_file(image.name, digest)
    if cached.exists():
        run(["docker", "load", "-i", str(cached)], capture=True)
        if image_label(image.name) == digest:
            return "loaded from cache"
    cmd = ["docker", "build", "-t", image.name, "--label", f"lakehouse.inputs={digest}"]
    for k, v in image.build_args.items():
        cmd += ["--build-arg", f"{k}={v}"]
    started = time.monotonic()
    log(f"building {image.name} (context {ctx.relative_to(REPO)})")
    run([*cmd, str(ctx)], env={**os.environ, "DOCKER_BUILDKIT": "0"})
    took = time.monotonic() - started
    save(image.name, cached)
    return f"built in {took:.0f}s"


def prepare(only: Sequence[str] = ()) -> dict[str, str]:
    ensure_engine()
    ensure_compose()
    ensure_base_image()
    s = settings()
    report = {}
    for image in images(s):
        if only and not any(o in image.name for o in only):
            continue
        started = time.monotonic()
        how = ensure_image(image, s)
        report[image.name] = how
        log(f"{image.name}: {how} ({time.monotonic() - started:.0f}s)")
    return report


def image_sizes() -> dict[str, int]:
    s = settings()
    sizes = {}
    for image in [BASE_IMAGE, *(i.name for i in images(s))]:
        r = run(["docker", "image", "inspect", "-f", "{{.Size}}", image], check=False, capture=True)
        if r.returncode == 0:
            sizes[image] = int(r.stdout.strip())
    return sizes


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["compose"]:  # docker compose with the env files: compose ARGS...
        os.execvp("docker", [*compose_command(), *argv[1:]])
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("command", choices=["engine-up", "engine-down", "prepare", "images"])
    p.add_argument("--only", action="append", default=[], help="prepare: images matching this")
    args = p.parse_args(argv)
    try:
        if args.command == "engine-up":
            ensure_engine()
            ensure_compose()
        elif args.command == "engine-down":
            stop_engine()
        elif args.command == "prepare":
            prepare(args.only)
        elif args.command == "images":
            for name, size in image_sizes().items():
                print(f"{name:<55} {size / 1e6:8.0f} MB")
    except HarnessError as error:
        print(f"[harness] ERROR: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
