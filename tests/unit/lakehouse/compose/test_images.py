"""lakehouse.compose.images: each preparation step only when the one before fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakehouse.compose import images
from lakehouse.core.config import load_settings

pytestmark = pytest.mark.unit


@pytest.fixture
def docker(monkeypatch, tmp_path: Path):
    """A fake image store: names -> label (None: an upstream image, no label)."""
    monkeypatch.setenv("LAKEHOUSE_CACHE", str(tmp_path))
    store: dict[str, str | None] = {}
    calls: list[str] = []
    monkeypatch.setattr(images, "image_id", lambda n: f"sha256:{n}" if n in store else None)
    monkeypatch.setattr(images, "image_label", lambda n: store.get(n))
    monkeypatch.setattr(images, "_recipe_digest", lambda s: "recipe")

    def pull(name: str, progress) -> bool:
        calls.append(f"pull {name}")
        return pulls_succeed[0]

    pulls_succeed = [True]
    monkeypatch.setattr(images, "try_pull", pull)

    def run(cmd, what, **kw):
        calls.append(what)
        if cmd[:2] == ["docker", "build"]:
            store[cmd[cmd.index("-t") + 1]] = "recipe"

    monkeypatch.setattr(images, "run", run)
    monkeypatch.setattr(images, "_save", lambda name, path: calls.append(f"save {name}"))
    return store, calls, pulls_succeed


def _minio(settings) -> images.StandIn:
    return next(s for s in images.standins(settings) if s.folder == "minio")


def test_minio_is_pulled_before_anything_is_built(docker, monkeypatch) -> None:
    _store, calls, _ = docker
    settings = load_settings()
    monkeypatch.setattr(images, "_stage_minio", lambda *a: pytest.fail("staged before a pull"))
    standin = _minio(settings)
    standin = images.StandIn(standin.folder, standin.image, standin.build_args, images._stage_minio)
    assert images.ensure_upstream_image(standin, settings, print) == "pulled"
    assert calls == [f"pull {standin.image}"]


def test_a_stand_in_is_built_only_when_the_pull_fails(docker) -> None:
    _store, calls, pulls_succeed = docker
    pulls_succeed[0] = False
    settings = load_settings()
    staged = []
    standin = _minio(settings)
    standin = images.StandIn(
        standin.folder, standin.image, standin.build_args, lambda *a: staged.append(1)
    )
    how = images.ensure_upstream_image(standin, settings, print)
    assert how.startswith("stand-in built") and staged == [1]
    assert calls[0] == f"pull {standin.image}" and f"save {standin.image}" in calls
    # Next time: present, nothing pulled or built.
    calls.clear()
    assert images.ensure_upstream_image(standin, settings, print) == "present (stand-in)"
    assert calls == []


def test_a_real_upstream_image_is_never_replaced(docker) -> None:
    store, calls, _ = docker
    settings = load_settings()
    standin = _minio(settings)
    store[standin.image] = None  # pulled: no label
    assert images.ensure_upstream_image(standin, settings, print) == "present"
    assert calls == []


def test_the_base_image_is_pulled_before_debootstrap(docker, monkeypatch) -> None:
    _store, _calls, pulls_succeed = docker
    monkeypatch.setattr(images, "_debootstrap", lambda *a: pytest.fail("debootstrapped"))
    assert images.ensure_base_image(load_settings(), print) == "pulled"
    pulls_succeed[0] = False
    made = []
    monkeypatch.setattr(images, "_debootstrap", lambda *a: made.append(a))
    assert images.ensure_base_image(load_settings(), print) == "made with debootstrap"
    assert made


def test_a_base_made_for_other_certificates_is_made_again(docker, monkeypatch) -> None:
    store, calls, _ = docker
    store[images.BASE_IMAGE] = "other-certificates"
    made = []
    monkeypatch.setattr(images, "_debootstrap", lambda *a: made.append(a))
    assert images.ensure_base_image(load_settings(), print) == "made with debootstrap"
    assert "pull debian:bookworm-slim" not in calls  # ours, so no upstream one to pull
