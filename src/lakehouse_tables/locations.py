"""Where a table, checkpoint or lease lives on S3, from the URLs the job and the CLI are given.

Spark's paths say s3a:// (Hadoop's S3A), boto3's callers want a bucket and a key; both the
job (its writer lease) and the CLI (`lakehouse schema diff`) turn one into the other here.
"""

from __future__ import annotations

S3_SCHEMES = ("s3", "s3a")


def s3_location(url: str) -> tuple[str, str] | None:
    """s3a://bucket/a/b/ or s3://bucket/a/b -> ("bucket", "a/b"); None for any other path."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in S3_SCHEMES or not rest.strip("/"):
        return None
    bucket, _, key = rest.partition("/")
    return bucket, key.strip("/")
