"""`lakehouse bench` (bench.run) and what other commands read of its results."""

# The job's own --max-records-per-shard default (lakehouse_job.cli, which the CLI never
# imports): the batches a user's job makes from a backlog, and the benchmark's default.
JOB_RECORDS_PER_SHARD = 20_000
