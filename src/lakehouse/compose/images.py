"""Images that no registry serves on this machine, made once and kept.

Every step is tried only when the one before it fails:

- the base image (debian:bookworm-slim, FROM of our Dockerfiles): present, else pulled,
  else loaded from the image cache, else made with debootstrap. A debootstrapped base
  carries this machine's extra CA certificates and a pip.conf trusting them, so that
  builds behind a TLS-inspecting proxy reach PyPI and Maven Central with no change to
  the Dockerfiles;
- upstream images (LocalStack, MinIO, Postgres, Trino): present, else pulled, else
  loaded from the image cache, else a stand-in built from services/standins/<name>/
  under the exact upstream name. A stand-in's context is staged in the cache (the
  MinIO binary built from Go, the Trino tarball): only then, never before a pull.

Our own images (lakehouse/*) are not here: docker compose builds them from the
repository. Built stand-ins and the base are saved under <cache>/images/ so that a
fresh engine with the same cache loads instead of rebuilding.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lakehouse.compose.engine import Progress, run, succeeds
from lakehouse.core.config import REPO_ROOT, Settings

BASE_IMAGE = "debian:bookworm-slim"
HOST_CA_DIR = Path("/usr/local/share/ca-certificates")
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
INPUTS_LABEL = "lakehouse.inputs"


def image_id(name: str) -> str | None:
    result = subprocess.run(
        ["docker", "image", "inspect", "-f", "{{.Id}}", name], capture_output=True, text=True
    )
    return result.stdout.strip() if result.returncode == 0 else None


def image_label(name: str) -> str | None:
    template = f'{{{{index .Config.Labels "{INPUTS_LABEL}"}}}}'
    result = subprocess.run(
        ["docker", "image", "inspect", "-f", template, name],
        capture_output=True,
        text=True,
    )
    value = result.stdout.strip()
    return value if result.returncode == 0 and value and value != "<no value>" else None


def try_pull(name: str, progress: Progress) -> bool:
    if os.environ.get("LAKEHOUSE_STANDINS") == "1":  # build stand-ins even with a registry
        return False
    progress(f"  pulling {name}")
    timeout = float(os.environ.get("PULL_TIMEOUT", 300))
    return succeeds(["docker", "pull", "-q", name], timeout=timeout)


def _cache_file(settings: Settings, name: str, digest: str) -> Path:
    safe = name.replace("/", "_").replace(":", "_")
    return settings.cache_dir / "images" / f"{safe}-{digest}.tar"


def _save(name: str, path: Path) -> None:
    """`docker save` into the image cache, replacing older saves of the same image."""
    path.parent.mkdir(parents=True, exist_ok=True)
    stem = path.name.rsplit("-", 1)[0]
    for old in path.parent.glob(f"{stem}-*.tar"):
        if old != path:
            old.unlink()
    partial = path.with_suffix(".tmp")
    run(["docker", "save", "-o", str(partial), name], f"saving {name}")
    partial.rename(path)


def _load(path: Path, name: str, digest: str) -> bool:
    if not path.exists():
        return False
    run(["docker", "load", "-i", str(path)], f"loading {path}")
    return image_label(name) == digest


# --------------------------------------------------------------------------- base image


def _host_ca_files() -> list[Path]:
    return sorted(HOST_CA_DIR.glob("*.crt")) if HOST_CA_DIR.is_dir() else []


def base_digest() -> str:
    """What a debootstrapped base holds beyond Debian: this machine's extra CAs."""
    h = hashlib.sha256(b"bookworm minbase v2")
    for ca in _host_ca_files():
        h.update(ca.name.encode() + b"\0" + ca.read_bytes())
    return h.hexdigest()[:16]


def ensure_base_image(settings: Settings, progress: Progress) -> str:
    present = image_id(BASE_IMAGE)
    label = image_label(BASE_IMAGE)
    digest = base_digest()
    if present and (label is None or label == digest):
        return "present"  # pulled (no label), or made here with this machine's CAs
    if not present and try_pull(BASE_IMAGE, progress):
        return "pulled"
    cached = _cache_file(settings, BASE_IMAGE, digest)
    if _load(cached, BASE_IMAGE, digest):
        return "loaded from the image cache"
    _debootstrap(digest, progress)
    _save(BASE_IMAGE, cached)
    return "made with debootstrap"


def _debootstrap(digest: str, progress: Progress) -> None:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    if not shutil.which("debootstrap"):
        progress("  installing debootstrap (apt-get)")
        run(["apt-get", "install", "-y", "-qq", "debootstrap"], "installing debootstrap", env=env)
    progress(f"  making {BASE_IMAGE} with debootstrap (bookworm, minbase; ~2 min)")
    with tempfile.TemporaryDirectory(prefix="bookworm-") as tmp:
        root = Path(tmp)
        mirror = "http://deb.debian.org/debian"
        run(["debootstrap", "--variant=minbase", "bookworm", str(root), mirror], "debootstrap")
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for path in (root / junk).glob("*"):
                if path.is_file():
                    path.unlink()
        # This machine's extra CAs: update-ca-certificates (run when an image installs
        # ca-certificates) adds them to the system bundle and Java's keystore.
        ca_dir = root / "usr/local/share/ca-certificates"
        ca_dir.mkdir(parents=True, exist_ok=True)
        for ca in _host_ca_files():
            shutil.copy2(ca, ca_dir / ca.name)
        if HOST_CA_BUNDLE.exists():
            (root / "etc/ssl/certs").mkdir(parents=True, exist_ok=True)
            shutil.copy2(HOST_CA_BUNDLE, root / "etc/ssl/certs/ca-certificates.crt")
        (root / "etc/pip.conf").write_text("[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n")
        tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        changes = ["--change", f"LABEL {INPUTS_LABEL}={digest}", "--change", 'CMD ["bash"]']
        run(["docker", "import", *changes, "-", BASE_IMAGE], "docker import", stdin=tar.stdout)
        tar.wait()


# --------------------------------------------------------------------------- stand-ins


@dataclass(frozen=True)
class StandIn:
    """An upstream image and how to build its stand-in from services/standins/<folder>."""

    folder: str
    image: str
    build_args: dict[str, str]
    stage: Callable[[Path, Settings, Progress], None]


def _stage_ca(context: Path) -> None:
    bundle = HOST_CA_BUNDLE.read_bytes() if HOST_CA_BUNDLE.exists() else b""
    (context / "ca.crt").write_bytes(bundle)


def _stage_nothing(context: Path, settings: Settings, progress: Progress) -> None:
    pass


def _stage_localstack(context: Path, settings: Settings, progress: Progress) -> None:
    _stage_ca(context)


def _stage_minio(context: Path, settings: Settings, progress: Progress) -> None:
    from lakehouse.local.installers import ensure_minio

    _place(ensure_minio(settings, progress), context / "minio")


def _stage_trino(context: Path, settings: Settings, progress: Progress) -> None:
    _stage_ca(context)
    downloads = context / "downloads"
    downloads.mkdir()
    tarball = settings.cache_dir / "downloads" / f"trino-server-{settings['TRINO_VERSION']}.tar.gz"
    if tarball.exists():
        _place(tarball, downloads / tarball.name)
    else:  # the Dockerfile downloads it
        (downloads / ".keep").write_text("")
    cli = context / "cli"
    cli.mkdir()
    from lakehouse.local.installers import ensure_trino_cli

    jar = ensure_trino_cli(settings, progress)
    _place(jar, cli / jar.name)


def _place(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def standins(settings: Settings) -> list[StandIn]:
    base = {"BASE_IMAGE": BASE_IMAGE}
    return [
        StandIn(
            "localstack",
            f"localstack/localstack:{settings['LOCALSTACK_VERSION']}",
            {**base, "LOCALSTACK_VERSION": settings["LOCALSTACK_VERSION"]},
            _stage_localstack,
        ),
        StandIn(
            "minio",
            f"quay.io/minio/minio:{settings['MINIO_VERSION']}",
            {**base, "MINIO_VERSION": settings["MINIO_VERSION"]},
            _stage_minio,
        ),
        StandIn("postgres", f"postgres:{settings['POSTGRES_IMAGE_TAG']}", base, _stage_nothing),
        StandIn(
            "trino",
            f"trinodb/trino:{settings['TRINO_VERSION']}",
            {**base, "TRINO_VERSION": settings["TRINO_VERSION"]},
            _stage_trino,
        ),
        StandIn(
            "prometheus",
            f"prom/prometheus:{settings['PROMETHEUS_IMAGE_TAG']}",
            {**base, "PROMETHEUS_VERSION": settings["PROMETHEUS_VERSION"]},
            _stage_nothing,
        ),
    ]


def _recipe_digest(standin: StandIn) -> str:
    """The stand-in's recipe (its folder, build args and base image), not its staged inputs."""
    h = hashlib.sha256()
    folder = REPO_ROOT / "services" / "standins" / standin.folder
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    h.update(json.dumps(standin.build_args, sort_keys=True).encode())
    h.update((image_id(BASE_IMAGE) or BASE_IMAGE).encode())
    return h.hexdigest()[:16]


def ensure_upstream_image(standin: StandIn, settings: Settings, progress: Progress) -> str:
    """The upstream image under its name: present, pulled, loaded, or a stand-in built."""
    label = image_label(standin.image)
    if image_id(standin.image) and label is None:
        return "present"  # the real image (stand-ins carry the label)
    digest = _recipe_digest(standin)
    if label == digest:
        return "present (stand-in)"
    if label is None and try_pull(standin.image, progress):
        return "pulled"
    if _load(_cache_file(settings, standin.image, digest), standin.image, digest):
        return "stand-in loaded from the image cache"
    started = time.monotonic()
    context = settings.cache_dir / "compose-build" / standin.folder
    if context.exists():
        shutil.rmtree(context)
    shutil.copytree(REPO_ROOT / "services" / "standins" / standin.folder, context)
    standin.stage(context, settings, progress)
    progress(f"  building a stand-in for {standin.image} (services/standins/{standin.folder})")
    cmd = ["docker", "build", "-q", "-t", standin.image, "--label", f"{INPUTS_LABEL}={digest}"]
    for key, value in standin.build_args.items():
        cmd += ["--build-arg", f"{key}={value}"]
    run([*cmd, str(context)], f"building the {standin.image} stand-in")
    shutil.rmtree(context)
    _save(standin.image, _cache_file(settings, standin.image, digest))
    return f"stand-in built in {time.monotonic() - started:.0f}s"


def image_sizes(names: list[str]) -> dict[str, int]:
    sizes = {}
    for name in names:
        result = subprocess.run(
            ["docker", "image", "inspect", "-f", "{{.Size}}", name], capture_output=True, text=True
        )
        if result.returncode == 0:
            sizes[name] = int(result.stdout.strip())
    return sizes
