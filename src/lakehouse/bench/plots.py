"""PNG plots of a benchmark summary (summary.json written by lakehouse.bench.run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def write_plots(summary: dict[str, Any], out: Path) -> list[Path]:
    """The throughput and freshness plots of the rate runs, and the commit cost's; the
    files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written: list[Path] = []
    runs = summary.get("pipeline", [])
    if runs:
        written.append(_throughput(plt, runs, out / "throughput.png"))
        written.append(_freshness(plt, runs, out / "freshness.png"))
    # "profile/table type/keys" -> median seconds, from lakehouse_job.bench.commit_bench.medians
    medians = summary.get("commit_cost", {}).get("median_seconds", {})
    if medians:
        batch = summary["commit_cost"]["batch"]
        written.append(_commit_cost(plt, medians, batch, out / "commit_cost.png"))
    return written


def _throughput(plt: Any, runs: list[dict[str, Any]], path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for profile in sorted({r["profile"] for r in runs}):
        mine = sorted((r for r in runs if r["profile"] == profile), key=lambda r: r["rate"])
        ax.plot(
            [r["input_per_s"] for r in mine],
            [r["processed_per_s"] for r in mine],
            marker="o",
            label=profile,
        )
    top = max(r["input_per_s"] for r in runs)
    ax.plot([0, top], [0, top], linestyle=":", color="grey", label="keeping up")
    ax.set_xlabel("input rate (events/s)")
    ax.set_ylabel("processed while sending (events/s)")
    ax.set_title("Streaming job throughput")
    ax.legend()
    return _save(fig, path)


def _freshness(plt: Any, runs: list[dict[str, Any]], path: Path) -> Path:
    fig, axes = plt.subplots(len(runs), 1, figsize=(8, 3 * len(runs)), squeeze=False)
    for ax, run in zip(axes[:, 0], runs, strict=True):
        plotted = False
        for table, fresh in run["freshness"].items():
            series = fresh.get("series", [])
            if series:
                ax.plot([s[0] for s in series], [s[1] for s in series], label=table)
                plotted = True
        ax.set_title(f"{run['profile']} at {run['rate']:,} events/s")
        ax.set_xlabel("time since sending started (s)")
        ax.set_ylabel("freshness (s)")
        if plotted:
            ax.legend(fontsize="small")
        else:  # Hudi's sink keeps no per-batch record: its freshness is read back only
            ax.text(0.5, 0.5, "no per-batch record", ha="center", transform=ax.transAxes)
    return _save(fig, path)


def _commit_cost(plt: Any, medians: dict[str, float], batch: int, path: Path) -> Path:
    curves: dict[str, list[tuple[int, float]]] = {}
    for key, seconds in medians.items():
        profile, table_type, keys = key.split("/")
        curves.setdefault(f"{profile} {table_type}", []).append((int(keys), seconds))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, points in sorted(curves.items()):
        points.sort()
        ax.plot([k for k, _ in points], [s for _, s in points], marker="o", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("keys in the table")
    ax.set_ylabel("upsert commit time, median (s)")
    ax.set_title(f"Per-commit cost vs table size ({batch:,}-row batch)")
    ax.legend()
    return _save(fig, path)


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path
