"""What the CLI, the local stack, the AWS paths and the load generator all need: the
settings (config), the service clients, the bootstrap of stream, bucket and database,
SIGTERM as Ctrl-C (interrupts), and process statistics (procstats).

The bottom of src/lakehouse: it imports nothing of the project but lakehouse_tables, and
the load generator (locust/loadgen) imports nothing of src/lakehouse but this package.
"""
