"""lakehouse_job.bench.commit_bench: lever variants and per-commit medians."""

import pytest

from lakehouse_job.bench.commit_bench import Variant, medians

pytestmark = pytest.mark.unit


def test_commit_bench_variants_change_one_lever() -> None:
    v = Variant.parse("gzip:fast:hoodie.parquet.compression.codec=gzip,sync.every.commit=true")
    assert (v.label, v.profile) == ("gzip", "fast")
    assert v.options["hoodie.parquet.compression.codec"] == "gzip"
    assert v.sync_every_commit
    assert Variant.parse("baseline").sync_every_commit
    assert not Variant.parse("fast").sync_every_commit
    with pytest.raises(SystemExit):
        Variant.parse("x:turbo:")


def test_commit_medians_leave_out_each_tables_first_commit() -> None:
    row = {"profile": "fast", "table_type": "COPY_ON_WRITE", "keys": 10}
    results = [row | {"commit": 0, "seconds": 9.0}] + [
        row | {"commit": i, "seconds": float(i)} for i in (1, 2, 3)
    ]
    assert medians(results, "seconds") == {"fast/COPY_ON_WRITE/10": 2.0}


def test_a_lock_variant_names_the_shared_lock_and_keeps_it_out_of_hudis_options() -> None:
    from argparse import Namespace

    from lakehouse_job.bench.commit_bench import _sink

    v = Variant.parse("zk:fast:lock.url=127.0.0.1:2181")
    args = Namespace(base="s3a://b/bench", metastore_uri="")
    assert _sink(args, "t", v).lock_url == "127.0.0.1:2181"
    assert _sink(args, "t", Variant.parse("fast")).lock_url == ""
