"""lakehouse.bench.pipeline: the producer's events, freshness from probe samples, percentiles,
profiles."""

import json
from importlib.util import find_spec
from pathlib import Path

import pytest

from lakehouse.bench import pipeline
from lakehouse.bench.pipeline import (
    Probe,
    Producer,
    job_module,
    job_profile_args,
    order_event,
    parse_variant,
    pct,
    profile_settings,
)
from lakehouse.core.config import ConfigError, Settings
from lakehouse_job.bench.job import YARDSTICKS
from lakehouse_job.hudi_options import PROFILES

pytestmark = pytest.mark.unit


def test_freshness_is_the_first_poll_that_sees_the_marker() -> None:
    probe = Probe(lambda: None, 1.0)
    probe.samples = [(100.0, 90.0), (101.0, 99.5), (102.0, 101.2)]
    # sent at 99.0: first seen at 101.0; sent at 101.0: at 102.0; sent at 103: never
    assert probe.latencies([99.0, 101.0, 103.0]) == [(99.0, 2.0), (101.0, 1.0)]


def test_percentiles_are_taken_from_the_sorted_values() -> None:
    values = [float(v) for v in range(1, 101)]
    assert pct(values, 0.5) == 51.0
    assert pct(values, 0.95) == 96.0
    assert pct([], 0.95) is None


def test_hudi_sink_profile_runs_the_job_with_hudis_streaming_sink() -> None:
    assert job_profile_args("hudi-sink") == [
        "--profile",
        "fast",
        "--writer",
        "hudi-streaming-sink",
    ]
    assert job_profile_args("hudi-sink-all")[-2:] == ["--writer", "hudi-streaming-sink-all"]
    with pytest.raises(ValueError, match="unknown benchmark profile"):
        job_profile_args("fastest")


def test_a_job_that_picks_a_writer_runs_from_the_benchmarks_entry() -> None:
    for profile in ("hudi-sink", "hudi-sink-all"):
        assert job_module(job_profile_args(profile)) == "lakehouse_job.bench.job"
    assert job_module(["--writer=hudi-streaming-sink"]) == "lakehouse_job.bench.job"
    for profile in ("fast", "baseline", "fast-nometrics"):
        assert job_module(job_profile_args(profile)) == "lakehouse_job.job"
    assert job_module(["--writer-lease"]) == "lakehouse_job.job"
    assert set(pipeline.SINK_WRITERS.values()) == set(YARDSTICKS)
    assert all(find_spec(m) for m in (pipeline.JOB_MODULE, pipeline.YARDSTICK_MODULE))


def test_layout_profiles_are_the_jobs_profiles() -> None:
    # The bench names the job's profiles without importing the job (tests/unit/test_layering.py).
    assert pipeline.LAYOUT_PROFILES == PROFILES


def test_the_producer_encodes_its_events_ahead_and_stamps_only_the_send_time() -> None:
    producer = Producer(client=None, stream="s", rate=10, seconds=2, keys=5, first=3)
    assert len(producer.payloads) == 20
    key, head, tail = producer.payloads[0]
    stamp = "2026-11-26T08:00:00.000Z"
    assert key == "4"
    assert json.loads(head + stamp.encode() + tail) == order_event(4, 5, stamp)


def test_a_variant_is_the_fast_profile_with_the_users_job_options() -> None:
    variant = parse_variant("noreadahead=--kinesis-option readAhead=false")
    assert variant == ("noreadahead", ("--kinesis-option", "readAhead=false"))
    assert job_profile_args("noreadahead", (variant,)) == [
        "--profile",
        "fast",
        "--kinesis-option",
        "readAhead=false",
    ]
    assert job_profile_args("fast", (variant,)) == ["--profile", "fast"]
    for wrong in ("no-equals-sign", "Fast=--x", "hudi-sink=--x", "=--x"):
        with pytest.raises(ValueError, match="NAME=JOB OPTIONS"):
            parse_variant(wrong)


def test_a_variants_leading_settings_replace_the_stacks_for_its_job_only() -> None:
    variant = parse_variant("hudi102=HUDI_VERSION=1.0.2 --hudi-option hoodie.x=1")
    assert job_profile_args("hudi102", (variant,)) == [
        "--profile",
        "fast",
        "--hudi-option",
        "hoodie.x=1",
    ]
    settings = Settings({"HUDI_VERSION": "0.15.0"}, {"KINESIS_PORT": "4567"}, Path("c"), Path("s"))
    assert profile_settings(settings, "hudi102", (variant,))["HUDI_VERSION"] == "1.0.2"
    assert profile_settings(settings, "fast", (variant,)) is settings
    wrong = parse_variant("typo=HUDI_VERSIO=1.0.2")
    with pytest.raises(ConfigError, match="HUDI_VERSIO: not a setting of versions"):
        profile_settings(settings, "typo", (wrong,))
