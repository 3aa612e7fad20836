"""Create the Hive Metastore's schema, with its constraints, before the metastore serves.

Usage: python -m lakehouse.local.metastore_schema -- JAVA [JVM options] -cp CLASSPATH MAIN [args]

Runs DataNucleus' SchemaTool with the metastore command's own java and class path over
Hive's model (package.jdo, in the hive-metastore jar) and the datastore settings of the
hive-site.xml on that class path, then replaces itself with the metastore command. Local
mode (Derby) and compose (PostgreSQL) start the metastore this same way.

Why not let Hive create its tables as they are first used: on PostgreSQL the foreign key
of a table created inside a running transaction (TBL_PRIVS, on the first CREATE TABLE
that grants its owner privileges, as Trino's do) waits for a lock on TBLS that the same
transaction holds, and the metastore hangs for good; and without the unique indexes two
concurrent writers leave duplicate rows (a database, a table) that fail every later
lookup. Tables that exist are kept, so a restart changes nothing.
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

SCHEMA_TOOL = "org.datanucleus.store.schema.SchemaTool"
DATASTORE_PREFIXES = ("datanucleus.", "javax.jdo.")
_ENV_REFERENCE = re.compile(r"\$\{env\.([A-Za-z_][A-Za-z0-9_]*)\}")


class MetastoreSchemaError(RuntimeError):
    pass


def split_command(command: Sequence[str]) -> tuple[str, list[str]]:
    """The java executable and the class path entries of a `java ... -cp CP MAIN` command."""
    for flag in ("-cp", "-classpath", "--class-path"):
        if flag in command[:-1]:
            return command[0], command[command.index(flag) + 1].split(os.pathsep)
    raise MetastoreSchemaError(f"the metastore command has no -cp class path: {list(command)}")


def _expand(entries: Sequence[str]) -> list[Path]:
    paths: list[Path] = []
    for entry in entries:
        if entry.endswith("*"):
            paths.extend(Path(p) for p in sorted(glob.glob(entry + ".jar")))
        else:
            paths.append(Path(entry))
    return paths


def find_hive_site(entries: Sequence[str]) -> Path:
    for path in _expand(entries):
        if path.is_dir() and (path / "hive-site.xml").is_file():
            return path / "hive-site.xml"
    raise MetastoreSchemaError(f"no directory on the class path holds hive-site.xml: {entries}")


def find_model_jar(entries: Sequence[str]) -> Path:
    for path in _expand(entries):
        if re.fullmatch(r"hive-metastore-[\d.]+\.jar", path.name):
            return path
    raise MetastoreSchemaError(f"no hive-metastore-<version>.jar on the class path: {entries}")


def _resolve(name: str, value: str, env: Mapping[str, str]) -> str:
    missing = [m for m in _ENV_REFERENCE.findall(value) if m not in env]
    if missing:
        raise MetastoreSchemaError(
            f"hive-site.xml's {name} needs the environment variable {missing[0]}"
        )
    return _ENV_REFERENCE.sub(lambda match: env[match.group(1)], value)


def datastore_properties(hive_site_xml: str, env: Mapping[str, str]) -> dict[str, str]:
    """The DataNucleus settings of a hive-site.xml, ${env.NAME} resolved as Hadoop does,
    with table and constraint creation on (the point of the schema step)."""
    properties: dict[str, str] = {}
    for prop in ET.fromstring(hive_site_xml).iter("property"):
        name = (prop.findtext("name") or "").strip()
        if name.startswith(DATASTORE_PREFIXES):
            properties[name] = _resolve(name, (prop.findtext("value") or "").strip(), env)
    if "javax.jdo.option.ConnectionURL" not in properties:
        raise MetastoreSchemaError("hive-site.xml sets no javax.jdo.option.ConnectionURL")
    properties["datanucleus.schema.autoCreateAll"] = "true"
    properties["datanucleus.schema.autoCreateConstraints"] = "true"
    return properties


def write_properties(properties: Mapping[str, str], path: Path) -> None:
    # java.util.Properties: backslashes escape, so they are doubled.
    lines = [f"{k}={v.replace(chr(92), chr(92) * 2)}" for k, v in sorted(properties.items())]
    path.write_text("\n".join(lines) + "\n")


def create_schema(java: str, entries: Sequence[str], env: Mapping[str, str]) -> None:
    hive_site = find_hive_site(entries)
    properties = datastore_properties(hive_site.read_text(), env)
    with tempfile.TemporaryDirectory(prefix="metastore-schema-") as work:
        props_file = Path(work) / "datastore.properties"
        write_properties(properties, props_file)
        with zipfile.ZipFile(find_model_jar(entries)) as jar:
            jdo_file = Path(jar.extract("package.jdo", work))
        command = [java, "-cp", os.pathsep.join(entries), SCHEMA_TOOL, "-create", "-api", "JDO"]
        command += ["-props", str(props_file), str(jdo_file)]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0 or "completed successfully" not in result.stdout:
        output = (result.stdout + result.stderr).strip().splitlines()[-15:]
        raise MetastoreSchemaError(
            f"DataNucleus SchemaTool could not create the metastore schema at "
            f"{properties['javax.jdo.option.ConnectionURL']} (exit {result.returncode}); "
            "check that its database is up and reachable. Last lines:\n" + "\n".join(output)
        )


def main(argv: Sequence[str]) -> None:
    if not argv or argv[0] != "--" or len(argv) < 2:
        sys.exit(__doc__)
    command = list(argv[1:])
    java, entries = split_command(command)
    try:
        create_schema(java, entries, os.environ)
    except MetastoreSchemaError as error:
        sys.exit(f"metastore schema: {error}")
    print("metastore schema: every table of Hive's model exists", flush=True)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
