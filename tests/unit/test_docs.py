"""Docs that cannot drift: every repository path, `make` target and `lakehouse` command the
README and docs/*.md name exists, and the README stays a map (at most 300 lines).

Only code (inline `spans` and fenced blocks) and link targets are read, so prose may say
"make sure" or "the lakehouse database" freely.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from lakehouse.cli import build_parser

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
README_MAX_LINES = 300

# Targets the docs may name before the Makefile has them; remove a name once the Makefile
# defines it.
PLANNED_MAKE_TARGETS: set[str] = set()

_FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
_SPAN = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
# `make` at the start of a command: line start, after a backtick, `&&`, `;` or `(`.
_ENV = r"(?:[A-Z_][A-Z0-9_]*=\S*[ \t]+)*"  # VAR=value words before the command
_MAKE = re.compile(r"(?:^|[`(;]|&&)[ \t]*" + _ENV + r"make[ \t]+([a-z][\w-]*)", re.M)
_LAKEHOUSE = re.compile(
    r"(?:^|[`(;]|&&|\.venv/bin/)[ \t]*" + _ENV + r"lakehouse[ \t]+([a-z][\w-]*)", re.M
)
_PATH = re.compile(r"^[\w.-]+(?:/[\w.-]+)*/?$")


def _text(doc: Path) -> str:
    return doc.read_text(encoding="utf-8")


def _code(text: str) -> list[str]:
    """Fenced blocks, then the inline spans of the text outside them."""
    blocks = [block.strip("`") for block in _FENCE.findall(text)]
    return blocks + _SPAN.findall(_FENCE.sub("", text))


def _tracked_top_level() -> set[str]:
    """The repository's top-level names that git tracks (not .venv, .local, bench/); without
    git, the top-level names but hidden and generated ones."""
    try:
        listed = subprocess.run(
            ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return {p.name for p in REPO.iterdir() if not p.name.startswith(".")} - {"bench"}
    return {name.split("/", 1)[0] for name in listed}


def _named_paths(doc: Path, top: set[str]) -> list[tuple[str, Path]]:
    """(as written, where it should be) for each repository path in a span or a link."""
    text = _text(doc)
    found: list[tuple[str, Path]] = []
    for span in _SPAN.findall(_FENCE.sub("", text)):
        candidate = span.strip()
        if not _PATH.match(candidate) or candidate.startswith(("./", "../")):
            continue
        first = candidate.split("/", 1)[0]
        if first in top and ("/" in candidate or (REPO / first).is_file()):
            found.append((candidate, REPO / candidate))
    for target in _LINK.findall(text):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        found.append((target, (doc.parent / target.split("#", 1)[0]).resolve()))
    return found


def _make_targets() -> set[str]:
    makefile = (REPO / "Makefile").read_text()
    targets = set(re.findall(r"^([a-z][\w-]*)\s*:(?!=)", makefile, re.M))
    for phony in re.findall(r"^\.PHONY:((?:.*\\\n)*.*)$", makefile, re.M):
        targets.update(phony.replace("\\\n", " ").split())
    return targets


def _subcommands() -> set[str]:
    parser = build_parser()
    for action in parser._actions:  # argparse keeps its subparsers here
        choices = getattr(action, "choices", None)
        if isinstance(choices, dict):
            return set(choices)
    raise AssertionError("lakehouse's parser has no subcommands")


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.relative_to(REPO).as_posix())
def test_named_paths_exist(doc: Path) -> None:
    named = _named_paths(doc, _tracked_top_level())
    missing = [written for written, path in named if not path.exists()]
    assert not missing, f"{doc.name} names paths that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.relative_to(REPO).as_posix())
def test_make_targets_exist(doc: Path) -> None:
    known = _make_targets() | PLANNED_MAKE_TARGETS
    named = {t for code in _code(_text(doc)) for t in _MAKE.findall(code)}
    assert named - known == set(), f"{doc.name} names make targets the Makefile lacks"


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.relative_to(REPO).as_posix())
def test_lakehouse_subcommands_exist(doc: Path) -> None:
    known = _subcommands()
    named = {c for code in _code(_text(doc)) for c in _LAKEHOUSE.findall(code)}
    assert named - known == set(), f"{doc.name} names lakehouse commands that do not exist"


def test_planned_targets_are_still_planned() -> None:
    """Once the Makefile has a planned target, it leaves the allow-list."""
    assert PLANNED_MAKE_TARGETS & _make_targets() == set()


def test_readme_is_a_map() -> None:
    lines = len(_text(REPO / "README.md").splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines: move detail to docs/"


def test_the_checks_see_the_docs() -> None:
    """The patterns find what the README names (a check that finds nothing passes)."""
    code = _code(_text(REPO / "README.md"))
    assert "demo" in {t for c in code for t in _MAKE.findall(c)}
    assert "run" in {c for block in code for c in _LAKEHOUSE.findall(block)}
    named = _named_paths(REPO / "README.md", _tracked_top_level())
    assert "src/lakehouse_tables/tables.yaml" in {written for written, _ in named}
