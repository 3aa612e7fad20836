"""Reading the pipeline's state, in any mode: top (Prometheus' figures, live), the tables
report (Trino), schema diff (the tables on S3 against the tables file)."""
