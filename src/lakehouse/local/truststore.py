"""A Java truststore that trusts what AWS_CA_BUNDLE names, for the JVMs of the aws target.

boto3 reads AWS_CA_BUNDLE itself; the AWS SDKs for Java (Kinesis, S3A, Glue) trust the JVM's
store, so the job's JVM gets one made of the JDK's own CAs plus the bundle's (a TLS-inspecting
proxy's CA, a simulation's), selected with -Djavax.net.ssl.trustStore.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

PASSWORD = "changeit"  # the JDK's own store's; a truststore holds no secrets
_PEM = re.compile(rb"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----", re.S)


class TruststoreError(Exception):
    """The CA bundle cannot be read or turned into a truststore; the message says which."""


def java_truststore(ca_bundle: Path, java_home: Path, out_dir: Path) -> Path:
    """The truststore for `ca_bundle` (made once per bundle content, kept in `out_dir`)."""
    try:
        pem = ca_bundle.read_bytes()
    except OSError as error:
        raise TruststoreError(f"AWS_CA_BUNDLE={ca_bundle} cannot be read: {error}") from None
    certificates = _PEM.findall(pem)
    if not certificates:
        raise TruststoreError(f"AWS_CA_BUNDLE={ca_bundle} holds no PEM certificate")
    store = out_dir / f"truststore-{hashlib.sha256(pem).hexdigest()[:16]}.p12"
    if store.exists():
        return store
    out_dir.mkdir(parents=True, exist_ok=True)
    partial = store.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    keytool = str(java_home / "bin" / "keytool")
    _keytool(
        [
            keytool,
            "-importkeystore",
            "-srckeystore",
            str(java_home / "lib/security/cacerts"),
            "-srcstorepass",
            PASSWORD,
            "-destkeystore",
            str(partial),
            "-deststoretype",
            "PKCS12",
            "-deststorepass",
            PASSWORD,
            "-noprompt",
        ]
    )
    for number, certificate in enumerate(certificates):
        one = out_dir / f"ca-{number}.pem"
        one.write_bytes(certificate + b"\n")
        _keytool(
            [
                keytool,
                "-importcert",
                "-alias",
                f"aws-ca-bundle-{number}",
                "-file",
                str(one),
                "-keystore",
                str(partial),
                "-storepass",
                PASSWORD,
                "-noprompt",
            ]
        )
        one.unlink()
    partial.rename(store)
    return store


def java_options(store: Path) -> str:
    return f"-Djavax.net.ssl.trustStore={store} -Djavax.net.ssl.trustStorePassword={PASSWORD}"


def _keytool(cmd: list[str]) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise TruststoreError(
            f"keytool failed (exit {done.returncode}) making the job's truststore: "
            f"{(done.stdout + done.stderr).strip()[-500:]}"
        )
