"""moto's server, checking signatures over the headers each request says it signed.

AWS verifies a SigV4 signature over exactly the headers named in its SignedHeaders. moto
recomputes it with botocore's signer, which leaves out headers botocore itself never signs,
User-Agent among them; the AWS SDK for Java v1 (Kinesis, S3A) signs User-Agent, so every
call from the job would fail the check. moto only ever passes it the signed headers
(iam/access_control.py), so emptying the list makes the check AWS's.

Usage: python -m tests.support.moto_server <moto_server arguments>
"""

from __future__ import annotations

import botocore.auth

botocore.auth.SIGNED_HEADERS_BLACKLIST.clear()

from moto.server import main  # noqa: E402 - after the signer is changed

if __name__ == "__main__":
    main()
