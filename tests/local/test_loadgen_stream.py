"""Master + 2 workers, headless, against the local Kinesis: what is on the stream
equals the ledger, record for record."""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.request
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from lakehouse.core.bootstrap import ensure_stream
from lakehouse_tables.declarations import load_tables
from loadgen.kinesis import make_client
from loadgen.ledger import expected_state, ledger_files, read_ledger
from loadgen.options import LoadOptions
from loadgen.runner import run_load
from tests.support.ports import free_port
from tests.support.stream import compare_stream, read_stream

pytestmark = pytest.mark.local

SHARDS = 4


def scrape(port: int, into: list[dict[str, float]], seconds: float = 60) -> None:
    """The load generator's metrics every half second until it stops serving them."""
    deadline = time.monotonic() + seconds
    seen = False
    while time.monotonic() < deadline:
        try:
            url = f"http://127.0.0.1:{port}/metrics"
            text = urllib.request.urlopen(url, timeout=2).read().decode()
        except OSError:
            if seen:
                return
        else:
            seen = True
            into.append(
                {
                    name: float(value)
                    for name, value in re.findall(r"^(loadgen_[a-z_]+) (\S+)$", text, re.M)
                }
            )
        time.sleep(0.5)


def test_stream_equals_ledger(stack: Any, tmp_path: Path) -> None:
    client = make_client(
        stack.kinesis_endpoint, stack.region, stack.aws_access_key, stack.aws_secret_key
    )
    stream = f"loadgen-test-{uuid.uuid4().hex[:8]}"
    ensure_stream(client, stream, shards=SHARDS)
    ledger_dir = tmp_path / "ledger"
    try:
        opts = LoadOptions(
            stream_name=stream,
            kinesis_endpoint=stack.kinesis_endpoint,
            region=stack.region,
            workers=2,
            users=4,
            run_time="8s",
            stop_timeout=20,
            master_port=free_port(),
            ledger_dir=str(ledger_dir),
            event_model="mix",
            seed="1234",
            events_per_sec=150,
            batch_size=50,
            key_cardinality="200",
            duplicate_rate=0.02,
            out_of_order_rate=0.05,
            late_rate=0.05,
            malformed_rate=0.02,
            metrics_port=free_port(),
        )
        scrapes: list[dict[str, float]] = []
        scraper = threading.Thread(target=scrape, args=(opts.metrics_port, scrapes), daemon=True)
        scraper.start()
        rc = run_load(
            opts,
            env={
                "AWS_ACCESS_KEY_ID": stack.aws_access_key,
                "AWS_SECRET_ACCESS_KEY": stack.aws_secret_key,
            },
            log_dir=tmp_path / "logs",
            timeout=180,
        )
        scraper.join(10)
        logs = {p.name: p.read_text()[-3000:] for p in (tmp_path / "logs").glob("*.log")}
        assert rc == 0, logs

        files = ledger_files(ledger_dir)
        assert {f.name.split("-")[2] for f in files} == {"w0", "w1"}, files
        entries = list(read_ledger(ledger_dir))
        assert entries
        assert all(e["acked"] for e in entries), Counter(e["error"] for e in entries)
        summaries = [json.loads(p.read_text()) for p in ledger_dir.glob("*.summary.json")]
        assert sum(s["taken"] for s in summaries) == len(entries)  # nothing unrecorded

        on_stream = read_stream(client, stream)
        diff = compare_stream(on_stream, entries)
        assert diff.ok, diff
        assert diff.matched == len(entries) == len(on_stream)

        per_shard = Counter(shard for shard, _, _ in on_stream)
        assert len(per_shard) == SHARDS
        assert min(per_shard.values()) > 0.5 * len(on_stream) / SHARDS  # spread over shards

        kinds = Counter(e["kind"] for e in entries)
        assert kinds["valid"] > 0 and sum(kinds.values()) > kinds["valid"]
        # The master's Prometheus figures while it ran (loadgen.metrics): both workers, and
        # never more events acknowledged than the ledgers hold.
        assert scrapes, "the load generator served no metrics"
        assert max(m["loadgen_workers"] for m in scrapes) == 2
        assert 0 < max(m["loadgen_events_acked_total"] for m in scrapes) <= len(entries)
        state = expected_state(entries, load_tables())
        assert state.counts["malformed"] == sum(v for k, v in kinds.items() if k != "valid")
        assert set(state.rows) == {"orders", "ticker", "clicks", "iot"}
    finally:
        client.delete_stream(StreamName=stream, EnforceConsumerDeletion=True)
