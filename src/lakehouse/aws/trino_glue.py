"""Trino's catalogs over the aws target's Glue Data Catalog and S3: the properties files with
which a Trino (this sandbox's, or one of yours) reads the job's tables on AWS, and in which
the job makes its live views and raw JSON tables (given TRINO_URL), as on the sandbox's
metastore: `hudi` (the Hudi tables) and `hive` (views, raw JSON; Hudi tables found there are
redirected to `hudi`), as services/trino/etc/catalog has them.

Written from the settings, not shipped with values: the region is the user's, and an
endpoint appears only where AWS_ENDPOINT_URL[_<SERVICE>] names one. Credentials: Trino's
AWS SDK default chain; a custom CA: its JVM's truststore (lakehouse.local.truststore).
"""

from __future__ import annotations

from lakehouse.core.config import ConfigError, Settings

HEADER = "# The lakehouse job's tables in AWS Glue (`lakehouse aws-trino-catalogs`)."
CONNECTORS = {
    "hudi": ["connector.name=hudi"],
    "hive": [
        "connector.name=hive",
        "hive.hudi-catalog-name=hudi",
        "hive.non-managed-table-writes-enabled=true",
        "hive.recursive-directories=true",
    ],
}


def glue_catalogs(settings: Settings) -> dict[str, str]:
    """Catalog name -> its properties file."""
    if settings.target != "aws":
        raise ConfigError("the Glue catalogs are the aws target's: set LAKEHOUSE_TARGET=aws")
    region = settings["AWS_REGION"]
    where = [
        "hive.metastore=glue",
        f"hive.metastore.glue.region={region}",
        "fs.native-s3.enabled=true",
        f"s3.region={region}",
    ]
    if settings.glue_endpoint:
        where.append(f"hive.metastore.glue.endpoint-url={settings.glue_endpoint}")
    if settings.s3_endpoint:
        where += [f"s3.endpoint={settings.s3_endpoint}", "s3.path-style-access=true"]
    return {
        name: "\n".join([HEADER, *connector, *where]) + "\n"
        for name, connector in CONNECTORS.items()
    }
