"""The job as a Python file, for cluster managers that start one (spark-submit in cluster
mode: EMR Serverless, Kubernetes): `python -m lakehouse_job.job`, from the environment's
installed package."""

import runpy

runpy.run_module("lakehouse_job.job", run_name="__main__", alter_sys=True)
