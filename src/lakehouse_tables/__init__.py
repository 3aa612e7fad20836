"""Table declarations and record rules, shared by the job, the load generator and the CLI.

Pure Python (PyYAML only): `declarations` reads tables.yaml into TableSpecs, `columns`
names the columns the job adds, `rules` holds the record rules' constants.
"""
