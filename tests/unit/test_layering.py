"""Which of the project's packages may import which, within src/lakehouse and the load
generator which of their packages may import which, and within the streaming job which of
its modules may import which.

lakehouse_tables (declarations and record rules) is the bottom layer: pure, imported by
all. The streaming job (lakehouse_job, in spark/) is launched, never imported, by the
CLI (src/lakehouse) and the load generator (locust/), so neither drags pyspark or the
job's code into the Locust image or the CLI.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
OURS = ("lakehouse", "lakehouse_tables", "lakehouse_job", "loadgen")

# folder -> the project packages (and heavy dependencies) its modules must not import
FORBIDDEN = {
    "src/lakehouse_tables": ("lakehouse", "lakehouse_job", "loadgen", "pyspark", "boto3"),
    "locust": ("lakehouse_job", "pyspark"),
    "src/lakehouse": ("lakehouse_job", "pyspark"),
    "spark/lakehouse_job": ("loadgen",),
}


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("folder", sorted(FORBIDDEN))
def test_package_imports_respect_the_layers(folder: str) -> None:
    broken = {}
    for path in sorted((REPO / folder).rglob("*.py")):
        bad = imported_roots(path) & set(FORBIDDEN[folder])
        if bad:
            broken[str(path.relative_to(REPO))] = sorted(bad)
    assert broken == {}


def test_the_checker_sees_imports() -> None:
    # Guards the test above against passing vacuously (a wrong folder, a parser change).
    assert "lakehouse_tables" in imported_roots(REPO / "spark/lakehouse_job/field_checks.py")
    assert "lakehouse_tables" in imported_roots(REPO / "locust/loadgen/validation.py")


def job_imports(path: Path, modules: set[str]) -> set[str]:
    """The lakehouse_job modules `path` imports, at load time or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.module in modules and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in modules else node.module)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """A cycle through each module that is on one (depth first; empty when none)."""
    found: list[list[str]] = []
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            found.append([*path[path.index(module) :], module])
            return
        if module in done:
            return
        for imported in sorted(graph.get(module, ())):
            visit(imported, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    return found


# --- src/lakehouse's packages and the load generator -------------------------------------
#
# Bottom first: lakehouse.core (settings, clients, bootstrap, interrupts, process
# statistics) imports none of the others; the load generator imports only core; the CLI
# (lakehouse.cli) is the top and may import anything. lakehouse_tables, below them all, is
# checked by FORBIDDEN above.
SRC = REPO / "src" / "lakehouse"
LOCUST = REPO / "locust"
# area -> the areas its modules may import besides their own
ALLOWED: dict[str, frozenset[str]] = {
    "core": frozenset(),
    "cdc": frozenset({"core"}),
    "loadgen": frozenset({"core"}),
    "inspect": frozenset({"core"}),
    "local": frozenset({"core", "cdc", "loadgen"}),
    "compose": frozenset({"core", "local"}),
    "bench": frozenset({"core", "local"}),
    "aws": frozenset({"core", "local", "bench"}),
    "cli": frozenset({"core", "cdc", "loadgen", "inspect", "local", "compose", "bench", "aws"}),
}
# Until the CDC work lands: the load generator's CDC users drive lakehouse.cdc_workload,
# and the CDC modules read the settings through the top-level lakehouse.config.
LEFT_FOR_CDC = frozenset({("loadgen", "cdc")})
AREA_OF_MODULE = {
    "lakehouse.cdc": "cdc",
    "lakehouse.cdc_workload": "cdc",
    "lakehouse.cdc_declare": "cdc",
    "lakehouse.config": "core",  # kept for the CDC modules only: it re-exports core's
}


def project_modules() -> dict[str, Path]:
    """src/lakehouse's and the load generator's modules (packages by their __init__) ->
    their files; the load generator's scripts (locust/*.py) by their file names."""
    found = {}
    for root, base in ((SRC, SRC.parent), (LOCUST / "loadgen", LOCUST)):
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(base).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    for path in sorted(LOCUST.glob("*.py")):
        found[f"locust:{path.stem}"] = path
    return found


def area(module: str) -> str:
    if module in AREA_OF_MODULE:
        return AREA_OF_MODULE[module]
    if module.startswith(("loadgen", "locust:")):
        return "loadgen"
    parts = module.split(".")
    assert len(parts) > 1 and parts[1] in ALLOWED, f"{module}: in no area of ALLOWED"
    return parts[1]


def project_graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: job_imports(path, set(modules)) - {name} for name, path in modules.items()}


def test_every_module_of_src_lakehouse_is_in_an_area() -> None:
    assert {area(module) for module in project_modules() if module != "lakehouse"} <= set(ALLOWED)


def test_src_lakehouse_and_the_load_generator_import_only_downwards() -> None:
    backward = sorted(
        f"{module} ({area(module)}) imports {imported} ({area(imported)})"
        for module, imports in project_graph().items()
        if module != "lakehouse"
        for imported in imports
        if imported != "lakehouse"
        and area(imported) != area(module)
        and area(imported) not in ALLOWED[area(module)]
        and (area(module), area(imported)) not in LEFT_FOR_CDC
    )
    assert backward == []


def test_src_lakehouse_and_the_load_generator_import_each_other_in_no_cycle() -> None:
    assert cycles(project_graph()) == []


def test_the_area_checks_see_imports() -> None:
    # Guards the tests above against passing vacuously.
    graph = project_graph()
    assert "lakehouse.core.clients" in graph["loadgen.kinesis"]
    assert "lakehouse.local.stack" in graph["lakehouse.cli.stack"]
    assert "lakehouse.core.procstats" in graph["locust:bench_load"]
    assert area("lakehouse.aws.cost") == "aws" and area("loadgen.send") == "loadgen"
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]


# --- lakehouse_job's modules ---------------------------------------------------------------
#
# From the top: the benchmark's drivers (lakehouse_job.bench), the entry modules `python -m`
# runs (the job, the backfill), the job's start-up and stop (its command line,
# configuration, checks, session and signals), and the pipeline's stages (every other
# module: parse, validate, dedupe, the sinks, the batch writer, compaction, ...). A module
# imports only from its own layer or those below, entries import no other entry, and no
# modules import each other in a cycle: the job never imports the benchmark, and a stage
# never the entry or the command line.
JOB = REPO / "spark" / "lakehouse_job"
BENCH = "lakehouse_job.bench"
ENTRIES = {"lakehouse_job.job", "lakehouse_job.backfill"}
STARTUP = {
    "lakehouse_job.cli",
    "lakehouse_job.config",
    "lakehouse_job.session",
    "lakehouse_job.startup",
    "lakehouse_job.stopping",
}
LAYER_NAMES = ("stages", "start-up", "entries", "bench")


def job_modules() -> dict[str, Path]:
    """lakehouse_job's modules (packages by their __init__) -> their files."""
    found = {}
    for path in sorted(JOB.rglob("*.py")):
        parts = path.relative_to(JOB.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def job_graph() -> dict[str, set[str]]:
    modules = job_modules()
    return {name: job_imports(path, set(modules)) - {name} for name, path in modules.items()}


def layer(module: str) -> int:
    if module == BENCH or module.startswith(f"{BENCH}."):
        return LAYER_NAMES.index("bench")
    if module in ENTRIES:
        return LAYER_NAMES.index("entries")
    if module in STARTUP:
        return LAYER_NAMES.index("start-up")
    return LAYER_NAMES.index("stages")


def test_the_jobs_layers_name_its_modules() -> None:
    assert {*ENTRIES, *STARTUP, BENCH} <= set(job_modules())


def test_job_modules_import_only_their_layer_and_those_below() -> None:
    upward = {
        f"{module} ({LAYER_NAMES[layer(module)]}) imports {imported} "
        f"({LAYER_NAMES[layer(imported)]})"
        for module, imports in job_graph().items()
        for imported in imports
        if layer(imported) > layer(module)
    }
    assert upward == set()


def test_no_entry_imports_another() -> None:
    graph = job_graph()
    assert {entry: graph[entry] & ENTRIES for entry in ENTRIES} == {e: set() for e in ENTRIES}


def test_the_jobs_modules_import_each_other_in_no_cycle() -> None:
    assert cycles(job_graph()) == []


def test_the_layer_checks_see_imports() -> None:
    # Guards the tests above against passing vacuously.
    graph = job_graph()
    assert "lakehouse_job.batch_writer" in graph["lakehouse_job.job"]
    assert "lakehouse_job.job" in graph["lakehouse_job.bench.job"]
    assert "lakehouse_job.bench.hudi_streaming_sink" in graph["lakehouse_job.bench.job"]
    assert layer("lakehouse_job.bench.job") > layer("lakehouse_job.job")
    assert layer("lakehouse_job.job") > layer("lakehouse_job.startup")
    assert layer("lakehouse_job.startup") > layer("lakehouse_job.parse")
