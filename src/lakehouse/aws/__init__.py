"""The job and its tables on a cluster or an AWS account: spark-submit to a standalone
master (submit), Kubernetes (kubernetes), EMR Serverless and EMR on EC2 (emr and its two
targets), the IAM policies (policy), Trino's catalogs over Glue (trino_glue) and what a
month costs (cost)."""
