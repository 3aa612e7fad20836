"""Local mode: the stack as host processes and the job beside it.

services        how each service is run (command, ports, health) and installed (installers)
supervisor      start, watch and stop processes by PID file; keepalive restarts the job
stack           up, down, status of the whole stack; job_control the job alone
job_launcher    the job's command line and environment (class_archive, truststore)
shells          Trino's CLI, Spark SQL, JupyterLab against the stack; demo the whole flow
"""
