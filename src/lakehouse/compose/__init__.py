"""The stack in containers: `docker compose` and what a machine needs before it works.

engine    a Docker engine and the Compose v2 CLI (started or built only where missing)
images    images no registry serves here: the base image and the stand-ins
project   `docker compose` on docker-compose.yml: up, down, status, the ledger of a UI run
"""


class ComposeError(Exception):
    """A container step failed; the message says which and what to do about it."""
