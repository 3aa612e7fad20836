"""lakehouse_job.table_recovery: which `.hoodie` folders are debris of a cut-short creation."""

import pytest

from lakehouse_job.hudi_timeline import has_commit
from lakehouse_job.table_recovery import DamagedTableError, is_unfinished

pytestmark = pytest.mark.unit


def test_a_folder_without_properties_or_commits_is_unfinished() -> None:
    assert is_unfinished([])
    assert is_unfinished([".aux", ".temp", "metadata", "20261123074753729.deltacommit.inflight"])


def test_a_table_with_properties_is_left_alone() -> None:
    assert not is_unfinished(["hoodie.properties", ".aux"])
    assert not is_unfinished(["hoodie.properties.backup", "20261123074753729.commit"])


def test_commits_without_properties_are_damage_not_debris() -> None:
    with pytest.raises(DamagedTableError, match="has commits"):
        is_unfinished(["20261123074753729.deltacommit", ".aux"])


def test_only_completed_writes_count_as_commits() -> None:
    assert has_commit(["20261123074753729.commit"])
    assert has_commit(["20261123074753729.deltacommit", "hoodie.properties"])
    assert not has_commit(["20261123074753729.deltacommit.inflight", "hoodie.properties"])
    assert not has_commit(["20261123074753729.compaction.requested", "hoodie.properties"])
