# The sandbox's front door. Versions come from versions.env; everything that
# is downloaded lands in $(LAKEHOUSE_CACHE) (outside the repo).
include versions.env
export

PYTHON_BOOT ?= python3
VENV        := .venv
PY          := $(VENV)/bin/python
LAKEHOUSE   := $(VENV)/bin/lakehouse
PYTEST      := $(VENV)/bin/pytest
STAMP       := $(VENV)/.installed-$(PYSPARK_VERSION)

.PHONY: help setup demo test unit-test local-test java-test lint \
        local-up local-down local-status run load verify clean-state bench

help:
	@echo "make demo        set up (first run downloads ~2 GB) and run the pipeline end to end"
	@echo "make test        set up and run every test (unit, Java, local end-to-end)"
	@echo "make local-up | local-down | local-status   the service stack as host processes"
	@echo "make run | load | verify                    the streaming job, the load generator, the ledger check"
	@echo "make bench       benchmark the job (needs the stack: KINESIS_ENGINE=kinesalite make local-up);"
	@echo "                 BENCH_ARGS='--rates 1000,5000 --commit-cost' for more, results in bench/results/"
	@echo "make lint        ruff"

$(STAMP): pyproject.toml versions.env
	$(PYTHON_BOOT) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "pyspark==$(PYSPARK_VERSION)" -e ".[dev]"
	touch $(STAMP)

# Python environment plus every download (jars, Trino, npm engines, MinIO build).
setup: $(STAMP)
	$(LAKEHOUSE) install

demo: setup
	$(LAKEHOUSE) demo

test: setup lint unit-test java-test local-test

unit-test: $(STAMP)
	$(PYTEST) -m unit -q

java-test: setup
	$(LAKEHOUSE) java-test

local-test: setup
	$(PYTEST) -m local -q

lint: $(STAMP)
	$(VENV)/bin/ruff check .

local-up: setup
	$(LAKEHOUSE) up

local-down: $(STAMP)
	$(LAKEHOUSE) down

local-status: $(STAMP)
	$(LAKEHOUSE) status

run: setup
	$(LAKEHOUSE) run

load: setup
	$(LAKEHOUSE) load

verify: $(STAMP)
	$(LAKEHOUSE) verify

BENCH_ARGS ?=
bench: setup
	$(LAKEHOUSE) bench $(BENCH_ARGS)

# Removes local-mode data (tables, stream, metastore); downloads are kept.
clean-state: local-down
	rm -rf .local

# --- The stack in containers (docker compose) ---------------------------------
# tests/containers/harness.py starts a Docker engine if none runs, provides
# `docker compose` v2, and builds or loads every image (stand-ins for upstream
# images no registry serves here); compose reads the same env files as local mode.
HARNESS := $(PYTHON_BOOT) tests/containers/harness.py
COMPOSE := $(HARNESS) compose

.PHONY: up down ps logs integration-test

up:
	$(HARNESS) prepare
	$(COMPOSE) up -d --wait --no-build

down:
	$(COMPOSE) down

ps:
	$(COMPOSE) ps

logs:
	$(COMPOSE) logs --tail=200

# Brings the stack up with testcontainers (ports 1xxxx), load, verify, tear down.
integration-test: $(STAMP)
	$(PY) -c "import testcontainers" 2>/dev/null || $(PY) -m pip install --quiet "testcontainers>=4.8"
	$(PYTEST) -m containers -q -p no:cacheprovider tests/containers
