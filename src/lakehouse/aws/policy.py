"""The IAM policies of the AWS target (services/aws/*-policy.json), filled in for an account.

The files hold ${partition}, ${region}, ${account}, ${bucket}, ${stream} and ${database}
placeholders, so the repository names no account, region or bucket; `lakehouse aws-policy`
prints one filled in from the settings and the caller's account.
"""

from __future__ import annotations

import json
from pathlib import Path
from string import Template
from typing import Any

from lakehouse.core.config import SERVICES_DIR

POLICIES = {
    "job": SERVICES_DIR / "aws" / "job-policy.json",
    "load-generator": SERVICES_DIR / "aws" / "load-generator-policy.json",
}
PLACEHOLDERS = ("partition", "region", "account", "bucket", "stream", "database")


class PolicyError(Exception):
    """A policy cannot be filled in; the message names the placeholder or file."""


def render(name: str, values: dict[str, str], path: Path | None = None) -> dict[str, Any]:
    """The policy `name` (job | load-generator) with every placeholder replaced."""
    path = path or POLICIES[name]
    missing = [key for key in PLACEHOLDERS if key not in values]
    if missing:
        raise PolicyError(f"{path.name}: no value for {', '.join(missing)}")
    try:
        text = Template(path.read_text()).substitute(values)
    except (KeyError, ValueError) as error:
        raise PolicyError(f"{path.name}: unknown placeholder {error}") from None
    return json.loads(text)
