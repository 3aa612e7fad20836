from pathlib import Path

import pytest

from lakehouse.core.config import ConfigError, load_settings, parse_env_file

pytestmark = pytest.mark.unit


def test_parse_env_file_reads_pairs_and_skips_comments(tmp_path: Path) -> None:
    path = tmp_path / "x.env"
    path.write_text("# comment\n\nA=1\nB = two words\nC=\n")
    assert parse_env_file(path) == {"A": "1", "B": "two words", "C": ""}


def test_parse_env_file_names_file_and_line_on_garbage(tmp_path: Path) -> None:
    path = tmp_path / "bad.env"
    path.write_text("A=1\nthis is not a setting\n")
    with pytest.raises(ConfigError, match=r"bad\.env:2"):
        parse_env_file(path)


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        parse_env_file(tmp_path / "nope.env")


def test_repo_settings_load_with_versions_and_ports() -> None:
    settings = load_settings(environ={})
    assert settings["PYSPARK_VERSION"].startswith("3.5")
    assert settings.port("TRINO_PORT") > 0
    assert settings.kinesis_endpoint.startswith("http://127.0.0.1:")
    env = settings.service_env()
    assert env["S3_ENDPOINT"] == settings.s3_endpoint
    assert env["HMS_URI"].startswith("thrift://127.0.0.1:")


def test_environment_overrides_only_known_keys() -> None:
    settings = load_settings(environ={"KINESIS_ENGINE": "kinesalite", "UNRELATED": "x"})
    assert settings["KINESIS_ENGINE"] == "kinesalite"
    with pytest.raises(ConfigError, match="UNRELATED"):
        settings["UNRELATED"]


def test_non_numeric_port_is_reported() -> None:
    settings = load_settings(environ={"TRINO_PORT": "eighty"})
    with pytest.raises(ConfigError, match="TRINO_PORT"):
        settings.port("TRINO_PORT")
