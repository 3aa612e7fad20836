"""Prometheus over the local stack (marker `local`): it scrapes a running job's own
metrics and Spark's, its recording and alert rules load and evaluate, the job-down alert
fires when the job stops and resolves when it resumes, the freshness and quarantine alerts
turn active on the stale and bad records sent meanwhile, `lakehouse top` in a real
terminal shows the job's records and quits on `q`, and promtool's unit tests of the alert
rules pass (services/prometheus)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from lakehouse.core.config import load_settings
from lakehouse.inspect import top
from lakehouse.local import installers
from lakehouse.local.job_launcher import job_env
from lakehouse.local.services import service_names
from tests.support.dashboards import panel_queries, queries_without_data
from tests.support.pipeline import Run, tail, wait_for
from tests.support.ports import free_port
from tests.support.prometheus import (
    alert_state,
    by_label,
    labels,
    order,
    prometheus,
    prometheus_url,
    scrape_targets,
    value,
)
from tests.support.terminal import Terminal

pytestmark = pytest.mark.local

RULES_TEST = Path(__file__).with_name("prometheus_rules_test.yml")


def test_the_alert_rules_fire_on_their_cases() -> None:
    promtool = installers.ensure_prometheus(load_settings()).with_name("promtool")
    done = subprocess.run(
        [str(promtool), "test", "rules", RULES_TEST.name],
        cwd=RULES_TEST.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_prometheus_scrapes_the_job_and_spark_and_evaluates_the_rules(run: Run) -> None:
    metrics_port, ui_port = free_port(), free_port()
    scraped = scrape_targets(run, {"lakehouse-job": metrics_port, "spark-driver": ui_port})
    submit = "--driver-class-path"  # PYSPARK_SUBMIT_ARGS of job_env, with a UI port of its own
    # `lakehouse top` in a real terminal, from before the job's records arrive.
    terminal = Terminal([str(Path(sys.executable).with_name("lakehouse")), "top", "--every", "1"])
    with scraped:
        job = run.start_job(
            *("--trigger-seconds", "1", "--metrics-port", str(metrics_port)),
            env={
                "PYSPARK_SUBMIT_ARGS": job_env(run.settings)["PYSPARK_SUBMIT_ARGS"].replace(
                    submit, f"--conf spark.ui.port={ui_port} {submit}", 1
                )
            },
        )
        try:
            check_the_job_and_its_alerts(run, job, metrics_port, ui_port, terminal)
        finally:
            terminal.close()
            job.send_signal(signal.SIGTERM)
            job.wait(120)

    groups = {g["name"]: g for g in prometheus(run, "/api/v1/rules")["groups"]}
    assert set(groups) == {"lakehouse"}
    rules = groups["lakehouse"]["rules"]
    assert {r["type"] for r in rules} == {"recording", "alerting"}
    assert [r["name"] for r in rules if r["health"] != "ok"] == []


def rate_moving(screen: str, event_type: str) -> bool:
    """The screen's row of `event_type`: events/s over 0 and a sparkline that moved."""
    row = next(
        (line.split() for line in screen.splitlines() if line.startswith(f"  {event_type} ")), []
    )
    return len(row) == 4 and float(row[1].replace(",", "")) > 0 and len(set(row[3])) > 1


def check_the_job_and_its_alerts(
    run: Run, job: subprocess.Popen, metrics_port: int, ui_port: int, terminal: Terminal
) -> None:
    instance = f'instance="127.0.0.1:{metrics_port}"'
    wait_for(lambda: "job      up" in terminal.screen(), 120, "lakehouse top to see the job up")
    run.put([order(n) for n in range(20)] + [b"not json", b"{}"])
    wait_for(
        lambda: value(run, f"sum(lakehouse_job_records_total{{{instance}}})") == 22,
        240,
        lambda: f"Prometheus to see the job's 22 records:\n{tail(run.log)}",
    )
    valid = value(run, f'sum(lakehouse_job_records_total{{{instance},outcome="valid"}})')
    quarantined = f'sum(lakehouse_job_records_total{{{instance},outcome="quarantined"}})'
    assert (valid, value(run, quarantined)) == (20, 2)
    # By the ledger's kind of reason: "not json" is not JSON, "{}" has no event_type; and
    # every record by the shard it was read from (the test's stream has two).
    kinds = f"lakehouse_job_quarantined_total{{{instance}}} > 0"
    wait_for(
        lambda: by_label(run, kinds, "kind") == {"not_json": 1, "unknown_event_type": 1},
        30,
        "the quarantined records by kind",
    )
    shards = by_label(run, f"lakehouse_job_shard_records_total{{{instance}}}", "shard")
    assert sum(shards.values()) == 22 and len(shards) == 2, shards
    cow = f'lakehouse_job_freshness_seconds_count{{{instance},sink="hudi_orders_cow"}}'
    assert (value(run, cow) or 0) >= 1
    # Hudi's own figures of each write (lakehouse_job.hudi_metrics), as Hudi counted them:
    # the CoW table's commits and the MoR table's delta commits wrote the orders.
    # (Set after the records counter in the same batch: a scrape may fall between.)
    hudi = [
        f'lakehouse_job_hudi_metric{{{instance},table="{table}",metric="{action}.{metric}"}}'
        for table, action in (("hudi_orders_cow", "commit"), ("hudi_orders_mor", "deltacommit"))
        for metric in ("totalRecordsWritten", "duration")
    ]
    wait_for(lambda: all((value(run, q) or 0) > 0 for q in hudi), 30, "Hudi's figures")
    jvm_wide = f'lakehouse_job_hudi_metric{{{instance},metric=~"HoodieWrapper.*"}}'
    assert value(run, jvm_wide) is None, "Hudi's JVM-wide registries are no table's"
    spark = f'count({{job="spark-driver",instance="127.0.0.1:{ui_port}"}})'
    wait_for(lambda: (value(run, spark) or 0) > 10, 60, "Spark's driver metrics")
    # Trino's named series only (prometheus.yml's name[] list), through basic auth.
    trino = 'count({job="trino",__name__=~"trino_.*"})'
    wait_for(lambda: value(run, trino) == 7, 60, "Trino's seven series")
    # Every target of the stack's own, this job's and its Spark driver's is up (the load
    # generator's is down between loads; other tests' jobs come and go).
    ours = {"trino", "processes", "minio", "prometheus"}
    mine = {f"127.0.0.1:{metrics_port}", f"127.0.0.1:{ui_port}"}

    def targets_down() -> dict[str, str]:
        targets = prometheus(run, "/api/v1/targets")["activeTargets"]
        watched = [
            t for t in targets if t["labels"]["job"] in ours or t["labels"]["instance"] in mine
        ]
        assert {t["labels"]["job"] for t in watched} >= ours | {"lakehouse-job", "spark-driver"}
        return {t["scrapeUrl"]: t["lastError"] for t in watched if t["health"] != "up"}

    wait_for(lambda: targets_down() == {}, 30, "every target up")
    # Each service's process group (lakehouse.local.process_exporter): Trino's JVM alone holds
    # hundreds of MiB, and every service of the stack is there.
    services = set(service_names())
    up = 'lakehouse_service_up{job="processes"} == 1'
    wait_for(lambda: services <= labels(run, up, "service"), 60, "every service up")
    trino_rss = 'lakehouse_service_resident_bytes{service="trino"}'
    assert (value(run, trino_rss) or 0) > 200 * 2**20
    recorded = 'lakehouse:records:rate1m{outcome="valid",event_type="orders"}'
    wait_for(lambda: value(run, recorded) is not None, 60, "the recording rule's series")
    # `lakehouse top` reads the same: the job up, orders coming in.
    url = prometheus_url(run)
    view = top.snapshot(top.prometheus_query(url), lambda: top.firing_alerts(url))
    assert view.job_up and view.rates[("orders", "valid")] > 0, top.render(view)
    # In its terminal: the orders' rate up from where it was (its sparkline moved), the
    # tables, the last batches; `q` quits it cleanly.
    wait_for(lambda: rate_moving(terminal.screen(), "orders"), 90, "lakehouse top's orders to move")
    screen = terminal.screen()
    assert "  hudi_orders_cow " in screen and "last batches" in screen, screen
    terminal.press("q")
    assert terminal.exit_code(10) == 0, terminal.screen()
    # Every Grafana panel (services/grafana/dashboards) has data, but the load
    # generator's: no load runs here (the compose test covers those with one).
    missing = queries_without_data(
        top.prometheus_query(url),
        [q for q in panel_queries() if "loadgen_" not in q.expr],
        timeout_s=90,
    )
    assert missing == [], missing
    # Alerts provoked live. The job stopped (SIGSTOP: its metrics stop answering) fires
    # LakehouseJobDown after the rule's minute; records sent meanwhile wait for it, so
    # once it resumes (the alert resolved) their batch is over a minute old: CoW's p95
    # freshness passes the 30 s line, and with one more record quarantined (3 of 27)
    # the quarantine ratio passes 5 %. Those two rules turn active (pending: their
    # 2 minutes of `for` are proven by promtool, test_the_alert_rules_fire_on_their_cases,
    # and live to firing and resolved by tests/local/test_data_alerts.py, a long test).
    this_job = {"instance": f"127.0.0.1:{metrics_port}"}
    os.killpg(job.pid, signal.SIGSTOP)
    try:
        run.put([order(n) for n in range(22, 26)] + [b"still not json"])
        wait_for(
            lambda: alert_state(url, "LakehouseJobDown", **this_job) == "firing",
            180,
            "LakehouseJobDown to fire for the stopped job",
        )
    finally:
        os.killpg(job.pid, signal.SIGCONT)
    wait_for(
        lambda: alert_state(url, "LakehouseJobDown", **this_job) is None,
        60,
        "the alert to resolve",
    )
    wait_for(
        lambda: value(run, f"sum(lakehouse_job_records_total{{{instance}}})") == 27,
        120,
        lambda: f"the resumed job's records:\n{tail(run.log)}",
    )
    # Per job: the other tests' jobs (on the stack's default metrics port) do not count.
    for name, alert_labels in (
        ("LakehouseFreshnessHigh", {"sink": "hudi_orders_cow", **this_job}),
        ("LakehouseQuarantineSpike", this_job),
    ):
        wait_for(
            lambda name=name, alert_labels=alert_labels: (
                alert_state(url, name, **alert_labels) is not None
            ),
            60,
            f"{name} to turn active",
        )
