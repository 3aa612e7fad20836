"""The alerts about the records a job writes, stale or bad, provoked live on the local
stack's Prometheus, from firing to resolved (markers `faults` and `long`: minutes of
waiting, so `make fault-test-long` runs it, not `make test`; tests/local/test_prometheus.py
sees both turn active in `make test`, and promtool's rule tests prove them in a second).

Records that waited 45 s for a job, 3 of 23 of them bad, make CoW's p95 freshness pass
30 s and the quarantined share pass 5 %: LakehouseFreshnessHigh and LakehouseQuarantineSpike
fire after their 2 minutes of `for`. Fresh, valid records flowing on bring both back under
their lines within the rules' 5-minute windows, and both resolve.
"""

from __future__ import annotations

import time

import pytest

from tests.support.pipeline import Run, tail, wait_for
from tests.support.ports import free_port
from tests.support.prometheus import alert_state, order, prometheus_url, scraped_job

pytestmark = [pytest.mark.faults, pytest.mark.long]

ALERTS = ("LakehouseFreshnessHigh", "LakehouseQuarantineSpike")


def test_freshness_and_quarantine_alerts_fire_on_stale_bad_records_and_resolve_on_good_ones(
    run: Run,
) -> None:
    url = prometheus_url(run)
    port = free_port()
    run.put([order(i) for i in range(20)] + [b"not json", b"{}", b"[1, 2]"])
    time.sleep(45)
    sent = 20

    def send_fresh() -> None:
        nonlocal sent
        run.put([order(i) for i in range(sent, sent + 20)], start=sent)
        sent += 20

    with scraped_job(run, port, "--trigger-seconds", "1") as (job, instance):
        labels = {
            "LakehouseFreshnessHigh": {"instance": instance, "sink": "hudi_orders_cow"},
            "LakehouseQuarantineSpike": {"instance": instance},
        }

        def state(name: str) -> str | None:
            return alert_state(url, name, **labels[name])

        fired: set[str] = set()

        def both_fired() -> bool:
            fired.update(name for name in ALERTS if state(name) == "firing")
            return fired == set(ALERTS)

        wait_for(both_fired, 420, lambda: f"{ALERTS} to fire:\n{tail(run.log)}")
        deadline = time.monotonic() + 420
        while any(state(name) is not None for name in ALERTS):
            assert job.poll() is None, f"the job exited:\n{tail(run.log)}"
            assert time.monotonic() < deadline, (
                f"not resolved in 7 minutes of fresh records: {[state(n) for n in ALERTS]}"
            )
            send_fresh()
            time.sleep(5)
        wait_for(lambda: run.records_done() >= sent + 3, 120, lambda: f"the job:\n{tail(run.log)}")
