"""A checkpoint's sinks against the ones a run asks for (checkpoint_sinks)."""

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from lakehouse_job.checkpoint_sinks import (
    SINKS_FILE,
    CheckpointSinks,
    CheckpointSinksRefused,
    check_checkpoint_sinks,
    has_committed_batch,
    record_checkpoint_sinks,
    recorded_sinks,
    refusal,
)

pytestmark = pytest.mark.unit

SINKS = CheckpointSinks("s3a://lake/warehouse", "s3a://lake/raw")


def test_the_same_sinks_go_on_however_their_urls_are_spelled() -> None:
    assert refusal("cp", SINKS, SINKS) is None
    assert refusal("cp", SINKS, CheckpointSinks("s3://lake/warehouse/", "s3n://lake/raw")) is None


@pytest.mark.parametrize(
    ("asked", "named"),
    [
        (CheckpointSinks("s3a://lake/elsewhere", "s3a://lake/raw"), "--warehouse"),
        (CheckpointSinks("s3a://lake/warehouse", "s3a://other/raw"), "--raw"),
    ],
)
def test_other_sinks_are_refused_naming_what_moved_and_what_to_do(
    asked: CheckpointSinks, named: str
) -> None:
    reason = refusal("s3a://lake/checkpoints/job", SINKS, asked)
    assert reason is not None
    assert "the checkpoint s3a://lake/checkpoints/job has committed batches" in reason
    assert f"{named} " in reason and "nothing was written" in reason
    assert "Use a new --checkpoint" in reason
    moved = {"--warehouse": "--raw", "--raw": "--warehouse"}[named]
    assert f"{moved} " not in reason  # only what moved is named


def test_the_record_reads_back() -> None:
    assert CheckpointSinks.from_json(SINKS.to_json()) == SINKS


def test_a_checkpoint_with_committed_batches_refuses_other_sinks(
    spark: SparkSession, tmp_path: Path
) -> None:
    checkpoint = str(tmp_path / "checkpoint")
    moved = CheckpointSinks("s3a://lake/elsewhere", SINKS.raw)
    # No committed batch yet: any sinks; the last start's are recorded.
    check_checkpoint_sinks(spark, checkpoint, SINKS)
    record_checkpoint_sinks(spark, checkpoint, moved)
    record_checkpoint_sinks(spark, checkpoint, SINKS)
    assert recorded_sinks(spark, checkpoint) == SINKS
    check_checkpoint_sinks(spark, checkpoint, moved)
    (tmp_path / "checkpoint" / "commits").mkdir()
    (tmp_path / "checkpoint" / "commits" / "0").write_text("v1\n{}")
    assert has_committed_batch(spark, checkpoint)
    check_checkpoint_sinks(spark, checkpoint, SINKS)
    with pytest.raises(CheckpointSinksRefused, match="--warehouse s3a://lake/warehouse -> "):
        check_checkpoint_sinks(spark, checkpoint, moved)
    record_checkpoint_sinks(spark, checkpoint, moved)  # never over a committed checkpoint's
    assert recorded_sinks(spark, checkpoint) == SINKS


def test_a_committed_checkpoint_older_than_the_record_takes_this_runs_sinks(
    spark: SparkSession,
    tmp_path: Path,
) -> None:
    checkpoint = str(tmp_path / "checkpoint")
    (tmp_path / "checkpoint" / "commits").mkdir(parents=True)
    (tmp_path / "checkpoint" / "commits" / "3").write_text("v1\n{}")
    check_checkpoint_sinks(spark, checkpoint, SINKS)
    record_checkpoint_sinks(spark, checkpoint, SINKS)
    assert recorded_sinks(spark, checkpoint) == SINKS


def test_a_record_cut_short_is_written_again(spark: SparkSession, tmp_path: Path) -> None:
    checkpoint = str(tmp_path / "checkpoint")
    (tmp_path / "checkpoint" / "commits").mkdir(parents=True)
    (tmp_path / "checkpoint" / "commits" / "0").write_text("v1\n{}")
    (tmp_path / "checkpoint" / SINKS_FILE).write_text('{"warehouse": "s3a://la')
    assert recorded_sinks(spark, checkpoint) is None
    check_checkpoint_sinks(spark, checkpoint, SINKS)
    record_checkpoint_sinks(spark, checkpoint, SINKS)
    assert recorded_sinks(spark, checkpoint) == SINKS
