"""The Grafana dashboards' queries (services/grafana/dashboards), evaluated by the tests
against a live Prometheus: a panel whose query returns nothing is a panel that shows
"No data" (a renamed series, a typo in a label), which Grafana itself would not report."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from lakehouse.core.config import SERVICES_DIR

DASHBOARDS = SERVICES_DIR / "grafana" / "dashboards"


@dataclass(frozen=True)
class PanelQuery:
    dashboard: str
    panel: str
    expr: str


def panel_queries(folder: Path = DASHBOARDS) -> list[PanelQuery]:
    return [
        PanelQuery(path.name, panel["title"], target["expr"])
        for path in sorted(folder.glob("*.json"))
        for panel in json.loads(path.read_text())["panels"]
        for target in panel.get("targets", [])
    ]


def queries_without_data(
    evaluate: Callable[[str], Sequence[object]],
    queries: Sequence[PanelQuery],
    timeout_s: float,
    poll_s: float = 5.0,
) -> list[PanelQuery]:
    """The queries that still return no series after `timeout_s` (rates need two scrapes
    inside their window, recording rules an evaluation after that)."""
    waiting = list(queries)
    deadline = time.monotonic() + timeout_s
    while True:
        waiting = [q for q in waiting if not evaluate(q.expr)]
        if not waiting or time.monotonic() > deadline:
            return waiting
        time.sleep(poll_s)
