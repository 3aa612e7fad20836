"""lakehouse.bench.pipeline: freshness from probe samples, percentiles, profiles."""

import pytest

from lakehouse.bench import pipeline
from lakehouse.bench.pipeline import Probe, job_profile_args, pct
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
    with pytest.raises(ValueError, match="unknown benchmark profile"):
        job_profile_args("fastest")


def test_layout_profiles_are_the_jobs_profiles() -> None:
    # The bench names the job's profiles without importing the job (tests/unit/test_layering.py).
    assert pipeline.LAYOUT_PROFILES == PROFILES
