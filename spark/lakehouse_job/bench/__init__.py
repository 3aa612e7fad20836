"""The benchmark's Spark drivers, beside the job and apart from it: Hudi's own streaming
sink as the yardstick (`python -m lakehouse_job.bench.job --writer ...`), the per-commit
cost (commit_bench) and dropping a run's databases (drop_databases). `lakehouse bench`
launches them; the job never imports this package."""
