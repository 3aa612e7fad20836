"""Locust entry: Kinesis load for the streaming lakehouse.

    locust -f locust/locustfile.py --headless -u 4 -r 2 --run-time 60s --stop-timeout 30 \
        --stream-name lakehouse-events --kinesis-endpoint http://localhost:4567 \
        --event-model mix --duplicate-rate 0.01 --out-of-order-rate 0.05 --ledger-dir ledger

Distributed: add --master (and --expect-workers N) here, and run N times
`locust -f locust/locustfile.py --worker`. Web UI: omit --headless (port 8089).
The logic lives in the loadgen package (locust/loadgen); see loadgen.user.
"""

# isort: off
import locust  # noqa: F401  (gevent monkey patching before anything imports boto3)

# isort: on
from loadgen.user import KinesisUser

__all__ = ["KinesisUser"]
