"""The streaming job (`python -m lakehouse_job.job`) and the drivers beside it: the
backfill, and the benchmark's in lakehouse_job.bench. Where each part lives:
docs/architecture.md."""
