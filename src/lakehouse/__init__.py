"""The sandbox's Python side beside the job and the load generator, by what it serves:
core (settings, clients: what everything needs), local (the stack as host processes),
compose (the stack in containers), aws (clusters and AWS accounts), bench (benchmarks),
inspect (reading the pipeline's state), the CDC part (cdc, cdc_workload), and cli, the
`lakehouse` command on top. tests/unit/test_layering.py holds who may import whom."""
