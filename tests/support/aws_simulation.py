"""A simulated AWS account for the AWS target's tests: moto's server (Kinesis, S3, Glue, STS,
IAM on one port) behind TLS with a certificate from a CA made for the run, and credentials
reachable only through the default provider chain.

The credentials are a role's temporary ones (moto's STS AssumeRole), served the way ECS and
EKS Pod Identity serve a task's role: an HTTP endpoint on loopback named by
AWS_CONTAINER_CREDENTIALS_FULL_URI. boto3, the AWS SDK for Java (v1: Kinesis, S3A; v2: Glue)
all look there when the environment holds no keys, so nothing in the run's environment is a
key, and the only difference from a real account is AWS_ENDPOINT_URL and AWS_CA_BUNDLE.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import boto3
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from lakehouse.core.config import REPO_ROOT
from tests.support.ports import free_port

# moto's default account: a simulation's, not anyone's.
ACCOUNT = "123456789012"


@dataclass(frozen=True)
class Tls:
    ca_bundle: Path
    cert: Path
    key: Path


def make_tls(folder: Path) -> Tls:
    """A CA and a server certificate it signs, for 127.0.0.1 and localhost."""
    folder.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.UTC)

    def name(common: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(name("lakehouse simulated AWS CA"))
        .issuer_name(name("lakehouse simulated AWS CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(name("127.0.0.1"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    tls = Tls(folder / "ca.pem", folder / "server.pem", folder / "server.key")
    tls.ca_bundle.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    tls.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    tls.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return tls


@dataclass(frozen=True)
class SimulatedAws:
    endpoint: str
    tls: Tls
    region: str
    # role name -> the loopback URI serving that role's temporary credentials
    credentials_uris: Mapping[str, str]
    admin_keys: tuple[str, str]

    def environment(self, role: str) -> dict[str, str]:
        """What a shell on a host running as `role` holds, plus the endpoint and CA."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_CA_BUNDLE": str(self.tls.ca_bundle),
            "AWS_REGION": self.region,
            "AWS_DEFAULT_REGION": self.region,
            "AWS_CONTAINER_CREDENTIALS_FULL_URI": self.credentials_uris[role],
        }

    def admin(self, service: str):
        """A client of the account's administrator (an IAM user allowed everything), for
        what a user creates before the pipeline runs and for the test's checks."""
        return boto3.client(
            service,
            endpoint_url=self.endpoint,
            region_name=self.region,
            verify=str(self.tls.ca_bundle),
            aws_access_key_id=self.admin_keys[0],
            aws_secret_access_key=self.admin_keys[1],
        )


class _RoleCredentials(BaseHTTPRequestHandler):
    by_path: Mapping[str, Mapping[str, str]] = {}

    def do_GET(self) -> None:
        credentials = self.by_path.get(self.path)
        body = json.dumps(credentials or {"message": "no such role"}).encode()
        self.send_response(200 if credentials else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


@contextmanager
def simulated_aws(
    folder: Path, policies: Mapping[str, dict], region: str = "eu-west-2"
) -> Iterator[SimulatedAws]:
    """moto's server on TLS with IAM enforced: one role per entry of `policies` (role name
    -> its permissions policy) whose credentials a loopback endpoint serves, and an
    administrator user for the set-up.

    moto checks every call's signature and action against the caller's policies; it checks
    the resource of S3 calls (bucket and key) but takes every Kinesis and Glue call's
    resource as "*", so a policy scoped to ARNs is checked by its actions only there."""
    tls = make_tls(folder / "tls")
    port = free_port()
    log = (folder / "moto.log").open("w")
    server = subprocess.Popen(
        [
            *(sys.executable, "-m", "tests.support.moto_server"),
            *("-H", "127.0.0.1", "-p", str(port), "-c", str(tls.cert), "-k", str(tls.key)),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=REPO_ROOT,
    )
    credentials = None
    try:
        endpoint = f"https://127.0.0.1:{port}"
        _wait_until_up(port, server)
        # Until IAM is switched on below, moto takes any key: these make the administrator.
        bootstrap = SimulatedAws(endpoint, tls, region, {}, ("bootstrap", "bootstrap"))
        iam = bootstrap.admin("iam")
        iam.create_user(UserName="admin")
        iam.put_user_policy(
            UserName="admin", PolicyName="everything", PolicyDocument=json.dumps(ALLOW_ALL)
        )
        key = iam.create_access_key(UserName="admin")["AccessKey"]
        sts = bootstrap.admin("sts")
        by_path = {}
        for role_name, policy in policies.items():
            role = iam.create_role(
                RoleName=role_name, AssumeRolePolicyDocument=json.dumps(TRUST_ACCOUNT)
            )["Role"]
            iam.put_role_policy(
                RoleName=role_name, PolicyName="permissions", PolicyDocument=json.dumps(policy)
            )
            assumed = sts.assume_role(
                RoleArn=role["Arn"], RoleSessionName=role_name, DurationSeconds=3600
            )["Credentials"]
            by_path[f"/role/{role_name}"] = {
                "AccessKeyId": assumed["AccessKeyId"],
                "SecretAccessKey": assumed["SecretAccessKey"],
                "Token": assumed["SessionToken"],
                "Expiration": assumed["Expiration"].strftime("%Y-%m-%dT%H:%M:%SZ"),
                "RoleArn": role["Arn"],
            }
        _enforce_iam(endpoint, tls)
        handler = type("RoleCredentials", (_RoleCredentials,), {"by_path": by_path})
        credentials = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=credentials.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{credentials.server_address[1]}"
        yield SimulatedAws(
            endpoint,
            tls,
            region,
            {name: f"{base}/role/{name}" for name in policies},
            (key["AccessKeyId"], key["SecretAccessKey"]),
        )
    finally:
        if credentials is not None:
            credentials.shutdown()
        server.terminate()
        server.wait(timeout=30)
        log.close()


ALLOW_ALL = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}],
}
TRUST_ACCOUNT = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"},
            "Action": "sts:AssumeRole",
        }
    ],
}


def _enforce_iam(endpoint: str, tls: Tls) -> None:
    """From now on every call must be signed by a known key and allowed by its policies."""
    import ssl
    import urllib.request

    request = urllib.request.Request(
        f"{endpoint}/moto-api/reset-auth",
        data=b"0",
        method="POST",
        headers={"Content-Type": "text/plain"},  # else Flask takes the body for a form
    )
    context = ssl.create_default_context(cafile=str(tls.ca_bundle))
    with urllib.request.urlopen(request, context=context, timeout=10) as response:
        response.read()


def _wait_until_up(port: int, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise
            time.sleep(0.2)
