import os
import zipfile
from pathlib import Path

import pytest

from lakehouse.local import metastore_schema as ms

pytestmark = pytest.mark.unit

HIVE_SITE = """<?xml version="1.0"?>
<configuration>
  <property><name>javax.jdo.option.ConnectionURL</name><value>${env.DB_URL}</value></property>
  <property><name>javax.jdo.option.ConnectionUserName</name><value>APP</value></property>
  <property><name>datanucleus.schema.autoCreateAll</name><value>false</value></property>
  <property><name>datanucleus.identifierFactory</name><value>datanucleus1</value></property>
  <property><name>hive.metastore.port</name><value>${env.NOT_NEEDED}</value></property>
</configuration>
"""


def test_datastore_properties_resolve_env_and_keep_only_datanucleus_and_jdo() -> None:
    props = ms.datastore_properties(HIVE_SITE, {"DB_URL": "jdbc:derby:;databaseName=/x"})
    assert props == {
        "javax.jdo.option.ConnectionURL": "jdbc:derby:;databaseName=/x",
        "javax.jdo.option.ConnectionUserName": "APP",
        "datanucleus.schema.autoCreateAll": "true",
        "datanucleus.schema.autoCreateConstraints": "true",
        "datanucleus.identifierFactory": "datanucleus1",
    }


def test_a_missing_env_variable_is_named() -> None:
    with pytest.raises(ms.MetastoreSchemaError, match="DB_URL"):
        ms.datastore_properties(HIVE_SITE, {})


def test_a_hive_site_without_connection_url_is_refused() -> None:
    with pytest.raises(ms.MetastoreSchemaError, match="ConnectionURL"):
        ms.datastore_properties("<configuration/>", {})


def test_split_command_finds_java_and_class_path() -> None:
    command = ["/j/bin/java", "-Xmx1g", "-cp", os.pathsep.join(["/conf", "/jars/*"]), "Main"]
    assert ms.split_command(command) == ("/j/bin/java", ["/conf", "/jars/*"])
    with pytest.raises(ms.MetastoreSchemaError, match="-cp"):
        ms.split_command(["java", "Main"])


def test_hive_site_and_model_jar_are_found_on_the_class_path(tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "hive-site.xml").write_text(HIVE_SITE)
    jars = tmp_path / "jars"
    jars.mkdir()
    for name in ("hive-metastore-2.3.9.jar", "hive-metastore-bind.jar", "other.jar"):
        with zipfile.ZipFile(jars / name, "w") as jar:
            jar.writestr("package.jdo", "<jdo/>")
    entries = [str(tmp_path / "absent"), str(conf), f"{jars}/*"]
    assert ms.find_hive_site(entries) == conf / "hive-site.xml"
    assert ms.find_model_jar(entries) == jars / "hive-metastore-2.3.9.jar"
    with pytest.raises(ms.MetastoreSchemaError, match=r"hive-site\.xml"):
        ms.find_hive_site([f"{jars}/*"])


def test_properties_file_escapes_backslashes(tmp_path: Path) -> None:
    path = tmp_path / "p.properties"
    ms.write_properties({"b": r"C:\db", "a": "x"}, path)
    assert path.read_text() == "a=x\nb=C:\\\\db\n"
