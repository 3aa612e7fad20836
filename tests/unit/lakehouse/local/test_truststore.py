"""The job's truststore from AWS_CA_BUNDLE: the JDK's CAs plus the bundle's (keytool)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from lakehouse.local import installers
from lakehouse.local.truststore import PASSWORD, TruststoreError, java_options, java_truststore
from tests.support.aws_simulation import make_tls

pytestmark = pytest.mark.unit


def test_truststore_holds_the_jdks_cas_and_the_bundles(tmp_path: Path) -> None:
    tls = make_tls(tmp_path / "tls")
    java_home = installers.spark_java_home()
    store = java_truststore(tls.ca_bundle, java_home, tmp_path / "run")
    listing = subprocess.run(
        [str(java_home / "bin/keytool"), "-list", "-keystore", str(store), "-storepass", PASSWORD],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "aws-ca-bundle-0" in listing
    assert listing.count("trustedCertEntry") > 50  # the JDK's own CAs stay trusted
    assert java_truststore(tls.ca_bundle, java_home, tmp_path / "run") == store  # made once
    assert f"-Djavax.net.ssl.trustStore={store}" in java_options(store)


def test_a_bundle_without_certificates_is_named(tmp_path: Path) -> None:
    bundle = tmp_path / "empty.pem"
    bundle.write_text("not a certificate\n")
    with pytest.raises(TruststoreError, match=r"empty\.pem holds no PEM certificate"):
        java_truststore(bundle, installers.spark_java_home(), tmp_path)
    with pytest.raises(TruststoreError, match="cannot be read"):
        java_truststore(tmp_path / "missing.pem", installers.spark_java_home(), tmp_path)
