"""Trino's Hudi catalog over the aws target's Glue Data Catalog and S3: the properties file
with which a Trino (this sandbox's, or one of yours) reads the job's tables on AWS.

Written from the settings, not shipped with values: the region is the user's, and an
endpoint appears only where AWS_ENDPOINT_URL[_<SERVICE>] names one. Credentials: Trino's
AWS SDK default chain; a custom CA: its JVM's truststore (lakehouse.truststore).
"""

from __future__ import annotations

from lakehouse.config import ConfigError, Settings


def glue_catalog_properties(settings: Settings) -> str:
    if settings.target != "aws":
        raise ConfigError("the Glue catalog is the aws target's: set LAKEHOUSE_TARGET=aws")
    region = settings["AWS_REGION"]
    lines = [
        "# The lakehouse job's Hudi tables in AWS Glue (`lakehouse aws-trino-catalog`).",
        "connector.name=hudi",
        "hive.metastore=glue",
        f"hive.metastore.glue.region={region}",
        "fs.native-s3.enabled=true",
        f"s3.region={region}",
    ]
    if settings.glue_endpoint:
        lines.append(f"hive.metastore.glue.endpoint-url={settings.glue_endpoint}")
    if settings.s3_endpoint:
        lines += [f"s3.endpoint={settings.s3_endpoint}", "s3.path-style-access=true"]
    return "\n".join(lines) + "\n"
