"""Locust entry: the CDC part's transactional workload in PostgreSQL (Locust's web UI).

    locust -f locust/cdc_locustfile.py                       # web UI on :8089
    locust -f locust/cdc_locustfile.py --headless -u 4 -r 2 --run-time 60s \
        --transactions-per-sec 5

`lakehouse cdc-load` starts it against the local stack's CDC part. Each user runs one
shop's transactions (lakehouse.cdc_workload); Debezium captures what they commit, and
`lakehouse verify --cdc` compares the database with the lake. See loadgen.cdc_user.
"""

# isort: off
import locust  # noqa: F401  (gevent monkey patching before anything opens a socket)

# isort: on
from loadgen.cdc_user import CdcUser

__all__ = ["CdcUser"]
