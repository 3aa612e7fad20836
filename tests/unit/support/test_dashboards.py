"""services/grafana: dashboards that Grafana's file provisioning loads as they are, over the
provisioned data source; tests.support.dashboards finds every panel's query."""

import json
from pathlib import Path

import pytest
import yaml

from lakehouse.core.config import REPO_ROOT, SERVICES_DIR
from tests.support.dashboards import DASHBOARDS, PanelQuery, panel_queries, queries_without_data

pytestmark = pytest.mark.unit

GRAFANA = SERVICES_DIR / "grafana"


def test_every_panel_queries_the_provisioned_prometheus() -> None:
    (source,) = yaml.safe_load(
        (GRAFANA / "provisioning" / "datasources" / "prometheus.yml").read_text()
    )["datasources"]
    assert source["url"] == "http://prometheus:9090"  # the compose service
    uids = set()
    for path in sorted(DASHBOARDS.glob("*.json")):
        board = json.loads(path.read_text())
        uids.add(board["uid"])
        ids = [panel["id"] for panel in board["panels"]]
        assert len(ids) == len(set(ids)), f"{path.name}: panel ids repeat"
        for panel in board["panels"]:
            assert panel["datasource"]["uid"] == source["uid"], (path.name, panel["title"])
            assert panel["targets"], (path.name, panel["title"])
            for target in panel["targets"]:
                assert target["datasource"]["uid"] == source["uid"]
                assert target["expr"].strip() and target["refId"]
    assert len(uids) == len(list(DASHBOARDS.glob("*.json"))) >= 3


def test_compose_provisions_the_dashboards_and_opens_the_overview() -> None:
    (provider,) = yaml.safe_load(
        (GRAFANA / "provisioning" / "dashboards" / "lakehouse.yml").read_text()
    )["providers"]
    stack = yaml.safe_load((SERVICES_DIR / "stack.compose.yml").read_text())
    grafana = stack["services"]["grafana"]
    mounts = {
        target: (REPO_ROOT / source).resolve()
        for source, target, _mode in (volume.split(":") for volume in grafana["volumes"])
    }
    assert mounts["/var/lib/grafana/dashboards"] == DASHBOARDS
    assert provider["options"]["path"] == "/var/lib/grafana/dashboards"
    home = grafana["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert (DASHBOARDS / Path(home).name).exists()


def test_queries_are_found_and_waited_for_until_they_return_data(tmp_path: Path) -> None:
    board = {"panels": [{"title": "a", "targets": [{"expr": "up"}, {"expr": "x"}]}]}
    (tmp_path / "b.json").write_text(json.dumps(board))
    queries = panel_queries(tmp_path)
    assert queries == [PanelQuery("b.json", "a", "up"), PanelQuery("b.json", "a", "x")]
    calls: list[str] = []

    def evaluate(expr: str) -> list[int]:
        calls.append(expr)
        return [1] if expr == "up" or calls.count("x") > 1 else []

    assert queries_without_data(evaluate, queries, timeout_s=5, poll_s=0) == []
    assert queries_without_data(lambda _: [], queries, timeout_s=0, poll_s=0) == queries
