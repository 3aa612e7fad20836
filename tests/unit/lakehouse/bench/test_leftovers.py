from __future__ import annotations

from typing import Any

import pytest

from lakehouse.bench import leftovers

pytestmark = pytest.mark.unit


class FakeS3:
    """list_objects_v2 pages of `page_size` keys and delete_objects, over a key set."""

    def __init__(self, keys: list[str], page_size: int = 2, fail_on: str = "") -> None:
        self.keys = set(keys)
        self.page_size = page_size
        self.fail_on = fail_on
        self.delete_calls: list[list[str]] = []

    def get_paginator(self, name: str) -> FakeS3:
        assert name == "list_objects_v2"
        return self

    def paginate(self, Bucket: str, Prefix: str) -> list[dict[str, Any]]:
        found = sorted(k for k in self.keys if k.startswith(Prefix))
        pages = [found[i : i + self.page_size] for i in range(0, len(found), self.page_size)]
        return [{"Contents": [{"Key": k} for k in page]} for page in pages] or [{}]

    def delete_objects(self, Bucket: str, Delete: dict[str, Any]) -> dict[str, Any]:
        batch = [o["Key"] for o in Delete["Objects"]]
        self.delete_calls.append(batch)
        if self.fail_on in batch:
            return {"Errors": [{"Key": self.fail_on, "Message": "Access Denied"}]}
        self.keys -= set(batch)
        return {}


def test_deletes_every_key_under_the_prefix_and_nothing_beside_it() -> None:
    run = [f"bench/drain_a/warehouse/t/f{i}" for i in range(5)]
    others = ["bench/drain_ab/warehouse/x", "bench/drain_b/raw/y", "warehouse/lakehouse.db/z"]
    s3 = FakeS3(run + others)

    assert leftovers.delete_prefix(s3, "lakehouse", "bench/drain_a/") == 5
    assert s3.keys == set(others)


def test_deletes_in_requests_of_at_most_a_thousand_keys() -> None:
    s3 = FakeS3([f"bench/r/k{i:05d}" for i in range(2500)], page_size=1000)

    assert leftovers.delete_prefix(s3, "lakehouse", "bench/r/") == 2500
    assert [len(c) for c in s3.delete_calls] == [1000, 1000, 500]
    assert not s3.keys


@pytest.mark.parametrize("prefix", ["bench/drain_a", "", "/"])
def test_a_prefix_that_is_not_a_folder_is_refused(prefix: str) -> None:
    s3 = FakeS3(["bench/drain_a/x", "bench/drain_ab/y"])

    with pytest.raises(ValueError, match="refusing"):
        leftovers.delete_prefix(s3, "lakehouse", prefix)
    assert len(s3.keys) == 2


def test_a_refused_delete_names_the_key_and_the_reason() -> None:
    s3 = FakeS3(["bench/r/a", "bench/r/b"], fail_on="bench/r/b")

    with pytest.raises(RuntimeError, match="bench/r/b: Access Denied"):
        leftovers.delete_prefix(s3, "lakehouse", "bench/r/")


def remove_run(
    monkeypatch: pytest.MonkeyPatch, s3: FakeS3
) -> tuple[dict[str, set[str]], list[str]]:
    """leftovers.remove_run of bench/r/ and drain_r against `s3`: each database dropped,
    with the keys the bucket held when it was, and what was said."""
    monkeypatch.setattr(leftovers, "s3_client", lambda _endpoints: s3)
    dropped: dict[str, set[str]] = {}

    def drop(_settings: Any, databases: tuple[str, ...]) -> None:
        dropped.update((db, set(s3.keys)) for db in databases)

    monkeypatch.setattr(leftovers, "drop_databases", drop)
    said: list[str] = []
    settings: Any = type("S", (), {"endpoints": None, "__getitem__": lambda _s, _k: "lakehouse"})()
    leftovers.remove_run(settings, "bench/r/", ("drain_r",), said.append)
    return dropped, said


def test_remove_run_says_what_is_left_when_it_cannot_remove(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    s3 = FakeS3(["bench/r/a"], fail_on="bench/r/a")

    dropped, said = remove_run(monkeypatch, s3)

    assert list(dropped) == ["drain_r"]
    assert s3.keys == {"bench/r/a"}
    assert said and "could not remove" in said[0] and "s3://lakehouse/bench/r/" in said[0]


def test_remove_run_drops_the_database_then_deletes_the_objects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    s3 = FakeS3(["bench/r/a", "bench/r/b", "bench/other/c"])

    dropped, said = remove_run(monkeypatch, s3)

    # the catalog while the run's files were all still there (Spark cannot drop a table
    # whose files are gone), then the files
    assert dropped == {"drain_r": {"bench/r/a", "bench/r/b", "bench/other/c"}}
    assert s3.keys == {"bench/other/c"}
    assert "2 objects" in said[0]
