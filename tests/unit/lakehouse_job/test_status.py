"""lakehouse_job.status: the status file and the source's lag."""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from lakehouse_job.status import LagListener, StatusFile, source_lag

pytestmark = pytest.mark.unit


def test_sections_from_several_writers_end_up_in_one_file(tmp_path: Path) -> None:
    status = StatusFile(tmp_path / "job-status.json")
    status.update(compaction={"t": 1})
    status.update(kinesis_lag={"max_millis_behind_latest": 5})
    written = json.loads((tmp_path / "job-status.json").read_text())
    assert written["compaction"] == {"t": 1}
    assert written["kinesis_lag"] == {"max_millis_behind_latest": 5}
    StatusFile(None).update(anything=1)  # no file: nothing written, no error


def test_the_lag_comes_from_the_kinesis_sources_metrics() -> None:
    progress = {
        "batchId": 4,
        "sources": [{"metrics": {"maxMillisBehindLatest": "1200", "shardsWithLag": "2"}}],
    }
    assert source_lag(progress) == {
        "batch_id": 4,
        "max_millis_behind_latest": 1200,
        "shards_with_lag": 2,
        "millis_behind_latest_by_shard": {},
        "missing_streams": [],
    }
    assert source_lag(None) is None
    assert source_lag({"sources": [{"metrics": {}}]}) is None


def test_the_listener_writes_each_batchs_lag(tmp_path: Path) -> None:
    progress = {"batchId": 9, "sources": [{"metrics": {"maxMillisBehindLatest": "300"}}]}
    event = SimpleNamespace(progress=SimpleNamespace(json=json.dumps(progress)))
    LagListener(StatusFile(tmp_path / "s.json")).onQueryProgress(event)
    written = json.loads((tmp_path / "s.json").read_text())["kinesis_lag"]
    assert written == {
        "batch_id": 9,
        "max_millis_behind_latest": 300,
        "shards_with_lag": 0,
        "millis_behind_latest_by_shard": {},
        "missing_streams": [],
    }


def test_several_streams_report_the_largest_lag_and_every_shard_behind() -> None:
    progress = {
        "batchId": 2,
        "sources": [
            {
                "metrics": {
                    "maxMillisBehindLatest": "100",
                    "shardsWithLag": "1",
                    "millisBehindLatestByShard": '{"orders":{"shardId-0":100,"shardId-1":0}}',
                }
            },
            {
                "metrics": {
                    "maxMillisBehindLatest": "900",
                    "shardsWithLag": "2",
                    "millisBehindLatestByShard": '{"cdc.public.a":{"shardId-0":900}}',
                    "missingStreams": "cdc.public.items,cdc.public.gone",
                }
            },
        ],
    }
    assert source_lag(progress) == {
        "batch_id": 2,
        "max_millis_behind_latest": 900,
        "shards_with_lag": 3,
        "millis_behind_latest_by_shard": {
            "orders": {"shardId-0": 100, "shardId-1": 0},
            "cdc.public.a": {"shardId-0": 900},
        },
        "missing_streams": ["cdc.public.gone", "cdc.public.items"],
    }
