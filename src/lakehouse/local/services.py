"""How each service runs as a host process in local mode.

Each builder turns the settings into a ServiceSpec: the command, its
environment (the same service config files compose mounts), its ports and a
health probe. Installing what it needs is done first, by lakehouse.local.installers.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import urllib.request
from pathlib import Path

from lakehouse import cdc
from lakehouse.core.clients import kinesis_client, trino_connection
from lakehouse.core.config import SERVICES_DIR, Settings
from lakehouse.local import installers
from lakehouse.local.job_launcher import QUICK_JIT, SPARK_UI_PORT
from lakehouse.local.supervisor import ServiceSpec, port_is_open

KINESIS_ENGINES = ("kinesis-mock", "kinesalite")
# A stack that lives for minutes (the test suite's: tests/local/conftest.py sets it to
# "quick") runs its JVMs (metastore, Trino, CDC) with C1 only: over six end-to-end tests
# (4 minutes) the metastore's and Trino's CPU 54 -> 31 s, and 47 -> 25 s for their start
# and a first test; half of it had been C2 compiling, their requests cost the same. A
# user's stack keeps the default JIT, whose C2 code Trino's queries need on larger data.
SERVICES_JIT_ENV = "LAKEHOUSE_SERVICES_JIT"


def _http_ok(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2) as response:
        return bool(response.status == 200)


def _base_env(settings: Settings) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **settings.service_env()}


def _jvm_env(settings: Settings) -> dict[str, str]:
    """_base_env for a JVM service: C1 only when SERVICES_JIT_ENV says "quick"."""
    env = _base_env(settings)
    if os.environ.get(SERVICES_JIT_ENV) == "quick":
        env["JAVA_TOOL_OPTIONS"] = QUICK_JIT
    return env


def kinesis_spec(settings: Settings) -> ServiceSpec:
    engine = settings["KINESIS_ENGINE"]
    port = settings.port("KINESIS_PORT")
    env = _base_env(settings)
    if engine == "kinesis-mock":
        main_js = installers.ensure_kinesis_mock(settings)
        env.update(KINESIS_MOCK_PLAIN_PORT=str(port))
        command = ["node", str(main_js)]
        ports: tuple[int, ...] = (port, settings.port("KINESIS_MOCK_TLS_PORT"))
        cwd = main_js.parent  # it loads server.json (its TLS cert) from here
    elif engine == "kinesalite":
        cli_js = installers.ensure_kinesalite(settings)
        command = [
            "node",
            str(cli_js),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--createStreamMs",
            "0",
            "--deleteStreamMs",
            "0",
            "--updateStreamMs",
            "0",
            "--shardLimit",
            settings["SHARD_LIMIT"],
        ]
        ports = (port,)
        cwd = None
    else:
        raise installers.InstallError(
            f"KINESIS_ENGINE={engine!r} is not known; choose one of {KINESIS_ENGINES} "
            "in services/kinesis/kinesis.env or the environment"
        )

    def healthy() -> bool:
        kinesis_client(settings.endpoints, max_attempts=1).list_streams(Limit=1)
        return True

    return ServiceSpec(
        name="kinesis",
        command=command,
        env=env,
        ports=ports,
        url=settings.kinesis_endpoint,
        health=healthy,
        cwd=cwd,
        start_timeout_s=60,
    )


def minio_server(
    settings: Settings, data: Path, port: int, console: int
) -> tuple[list[str], dict[str, str]]:
    """The command and environment of a MinIO serving `data` on `port` (the stack's, or
    one a test runs on a volume of its own)."""
    command = [
        str(installers.ensure_minio(settings)),
        "server",
        str(data),
        *("--address", f"127.0.0.1:{port}", "--console-address", f"127.0.0.1:{console}"),
    ]
    env = _base_env(settings)
    env.update(
        MINIO_ROOT_USER=settings["S3_ACCESS_KEY"],
        MINIO_ROOT_PASSWORD=settings["S3_SECRET_KEY"],
        MINIO_REGION=settings["AWS_REGION"],
    )
    return command, env


def minio_spec(settings: Settings) -> ServiceSpec:
    port, console = settings.port("MINIO_PORT"), settings.port("MINIO_CONSOLE_PORT")
    data = settings.data_dir / "minio"
    data.mkdir(parents=True, exist_ok=True)
    command, env = minio_server(settings, data, port, console)
    return ServiceSpec(
        name="minio",
        command=command,
        env=env,
        ports=(port, console),
        url=f"{settings.s3_endpoint} (console http://127.0.0.1:{console})",
        health=lambda: _http_ok(f"{settings.s3_endpoint}/minio/health/live"),
        start_timeout_s=60,
    )


def metastore_spec(settings: Settings) -> ServiceSpec:
    jars = installers.ensure_spark_jars(settings)
    pyspark_jars = installers.pyspark_home() / "jars"
    s3a_jars = [str(j) for j in jars if "hudi" not in j.name]
    conf_dir = SERVICES_DIR / "hive-metastore"
    port = settings.port("HMS_PORT")
    db = settings.data_dir / "metastore_db"
    db.parent.mkdir(parents=True, exist_ok=True)
    env = _jvm_env(settings)
    env["METASTORE_DB_URL"] = f"jdbc:derby:;databaseName={db};create=true"
    java = installers.spark_java_home() / "bin" / "java"
    # The bind jar comes first: it replaces the one class that makes Hive 2.3's metastore
    # listen on every interface (it holds the S3 root keys and has no auth).
    bind_jar = str(installers.ensure_metastore_bind_jar(settings))
    classpath = os.pathsep.join([str(conf_dir), bind_jar, f"{pyspark_jars}/*", *s3a_jars])
    return ServiceSpec(
        name="metastore",
        # The schema step (lakehouse.local.metastore_schema) runs first, then becomes the metastore.
        command=[
            sys.executable,
            "-m",
            "lakehouse.local.metastore_schema",
            "--",
            str(java),
            f"-Xmx{settings['HMS_HEAP']}",
            "-Dderby.stream.error.file=" + str(settings.logs_dir / "metastore-derby.log"),
            "-Dmetastore.bind.host=127.0.0.1",
            "-cp",
            classpath,
            "org.apache.hadoop.hive.metastore.HiveMetaStore",
            "-p",
            str(port),
        ],
        env=env,
        ports=(port,),
        url=settings.hms_uri,
        health=lambda: port_is_open(port),
        cwd=settings.data_dir,
        start_timeout_s=90,
    )


def zookeeper_config(settings: Settings, data: Path) -> str:
    """zoo.cfg of a standalone server on 127.0.0.1 keeping its data in `data`. Its session
    timeout bounds are the tick's defaults (4 s to 40 s), the range the writers' setting
    (ZOOKEEPER_SESSION_TIMEOUT_MS) must fall in; the admin server (an HTTP port on every
    interface) is off."""
    return "\n".join(
        [
            "tickTime=2000",
            f"dataDir={data}",
            f"clientPort={settings.port('ZOOKEEPER_PORT')}",
            "clientPortAddress=127.0.0.1",
            "admin.enableServer=false",
            # A sandbox's lock nodes are few: no snapshot purge needed beyond the defaults.
            "autopurge.snapRetainCount=3",
            "autopurge.purgeInterval=24",
            "",
        ]
    )


def zookeeper_spec(settings: Settings) -> ServiceSpec:
    """The lock the writers of a table share (docs/writers.md): a lock whose holder dies
    is freed when its session expires, whatever killed it."""
    data = settings.data_dir / "zookeeper"
    data.mkdir(parents=True, exist_ok=True)
    config = data / "zoo.cfg"
    config.write_text(zookeeper_config(settings, data))
    port = settings.port("ZOOKEEPER_PORT")
    java = installers.spark_java_home() / "bin" / "java"
    pyspark_jars = installers.pyspark_home() / "jars"
    return ServiceSpec(
        name="zookeeper",
        command=[
            str(java),
            f"-Xmx{settings['ZOOKEEPER_HEAP']}",
            "-cp",
            f"{pyspark_jars}/*",
            "org.apache.zookeeper.server.quorum.QuorumPeerMain",
            str(config),
        ],
        env=_jvm_env(settings),
        ports=(port,),
        url=f"zk://{settings.lock_url}",
        health=lambda: port_is_open(port),
        cwd=data,
        start_timeout_s=60,
    )


def trino_spec(settings: Settings) -> ServiceSpec:
    home = installers.ensure_trino(settings)
    java_home = installers.trino_java_home(settings)
    data = settings.data_dir / "trino"
    data.mkdir(parents=True, exist_ok=True)
    # The supervisor owns the lifecycle. The launcher's own PID file can name a
    # process that is gone but not yet reaped, which makes it refuse to start.
    (data / "var" / "run" / "launcher.pid").unlink(missing_ok=True)
    env = _jvm_env(settings)
    env.update(JAVA_HOME=str(java_home), PATH=f"{java_home / 'bin'}{os.pathsep}{env['PATH']}")

    def healthy() -> bool:
        with urllib.request.urlopen(f"{settings.trino_url}/v1/info", timeout=2) as response:
            if json.load(response)["starting"]:
                return False
        # Started is not ready: until the node's catalogs are announced, every table scan
        # fails with NO_NODES_AVAILABLE, for a few seconds after a restart. Neither SELECT 1
        # nor system tables need them; a scan of the built-in tpch catalog does, as a scan
        # of a lakehouse table does (catalogs are announced together).
        cursor = trino_connection(settings.endpoints, catalog="tpch").cursor()
        cursor.execute("SELECT count(*) FROM tpch.tiny.region")
        return cursor.fetchall() == [[5]]

    return ServiceSpec(
        name="trino",
        command=[
            str(home / "bin" / "launcher"),
            "run",
            f"--etc-dir={SERVICES_DIR / 'trino' / 'etc'}",
            f"--data-dir={data}",
        ],
        env=env,
        ports=(settings.port("TRINO_PORT"),),
        url=settings.trino_url,
        health=healthy,
        start_timeout_s=150,
    )


def postgres_spec(settings: Settings) -> ServiceSpec:
    """The CDC part's PostgreSQL: Debian's server, a cluster of its own in the state dir,
    logical decoding on, listening on loopback only."""
    bin_dir = installers.postgres_bin_dir(settings)
    data = cdc.pg_data_dir(settings)
    cdc.init_cluster(settings, bin_dir, data)
    port = settings.port("CDC_PG_PORT")
    return ServiceSpec(
        name="postgres",
        command=cdc.postgres_command(settings, bin_dir, data),
        env=_base_env(settings),
        ports=(port,),
        url=f"postgresql://127.0.0.1:{port}/{settings['CDC_PG_DATABASE']}",
        health=lambda: cdc.postgres_healthy(settings),
        cwd=data.parent,
        start_timeout_s=60,
    )


def cdc_spec(settings: Settings) -> ServiceSpec:
    """The CDC service (services/cdc): Debezium's embedded engine -> Kinesis."""
    classpath = installers.cdc_classpath(settings)
    java = installers.spark_java_home() / "bin" / "java"
    offsets = cdc.offsets_file(settings)
    offsets.parent.mkdir(parents=True, exist_ok=True)
    port = settings.port("CDC_HEALTH_PORT")
    env = _jvm_env(settings)
    env.update(
        CDC_OFFSETS_FILE=str(offsets), AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test"
    )

    def healthy() -> bool:
        return _http_ok(f"http://127.0.0.1:{port}/health")

    return ServiceSpec(
        name="cdc",
        command=[
            str(java),
            f"-Xmx{settings['CDC_HEAP']}",
            "-XX:+UseSerialGC",
            "-Dorg.slf4j.simpleLogger.showDateTime=true",
            "-cp",
            classpath,
            "lakehouse.cdc.CdcService",
        ],
        env=env,
        ports=(port,),
        url=f"http://127.0.0.1:{port}/health ({settings['CDC_TOPIC_PREFIX']}.<schema>.<table>)",
        health=healthy,
        cwd=offsets.parent,
        start_timeout_s=120,
    )


def prometheus_targets(settings: Settings) -> dict[str, list[dict[str, list[str]]]]:
    """Each scrape job's targets (services/prometheus/prometheus.yml) in local mode."""

    def at(port: int) -> list[dict[str, list[str]]]:
        return [{"targets": [f"127.0.0.1:{port}"]}]

    return {
        "lakehouse-job": at(settings.port("LAKEHOUSE_JOB_METRICS_PORT")),
        "loadgen": at(settings.port("LOADGEN_METRICS_PORT")),
        "spark-driver": at(SPARK_UI_PORT),
        "minio": at(settings.port("MINIO_PORT")),
        "trino": at(settings.port("TRINO_PORT")),
        "processes": at(settings.port("PROCESS_METRICS_PORT")),
        "prometheus": at(settings.port("PROMETHEUS_PORT")),
    }


def prometheus_config_dir(settings: Settings) -> Path:
    """Where local mode's Prometheus reads its config, rules and targets/<job>*.json."""
    return settings.data_dir / "prometheus" / "config"


def prometheus_spec(settings: Settings) -> ServiceSpec:
    """Prometheus over the stack: the repository's config and rules, copied at each start
    beside the local targets (its file paths are relative to the config file)."""
    binary = installers.ensure_prometheus(settings)
    port = settings.port("PROMETHEUS_PORT")
    config = prometheus_config_dir(settings)
    (config / "targets").mkdir(parents=True, exist_ok=True)
    for name in ("prometheus.yml", "rules.yml"):
        shutil.copyfile(SERVICES_DIR / "prometheus" / name, config / name)
    for job, targets in prometheus_targets(settings).items():
        (config / "targets" / f"{job}.json").write_text(json.dumps(targets))
    url = f"http://127.0.0.1:{port}"
    return ServiceSpec(
        name="prometheus",
        command=[
            str(binary),
            f"--config.file={config / 'prometheus.yml'}",
            f"--storage.tsdb.path={settings.data_dir / 'prometheus' / 'tsdb'}",
            "--storage.tsdb.retention.time=2d",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        env=_base_env(settings),
        ports=(port,),
        url=url,
        health=lambda: _http_ok(f"{url}/-/ready"),
        start_timeout_s=60,
    )


def processes_spec(settings: Settings) -> ServiceSpec:
    """Each service's CPU and memory for Prometheus (lakehouse.local.process_exporter)."""
    port = settings.port("PROCESS_METRICS_PORT")
    env = {**_base_env(settings), "LAKEHOUSE_STATE": str(settings.state_dir)}
    url = f"http://127.0.0.1:{port}/metrics"
    return ServiceSpec(
        name="processes",
        command=[sys.executable, "-m", "lakehouse.local.process_exporter", "--port", str(port)],
        env=env,
        ports=(port,),
        url=url,
        health=lambda: _http_ok(url),
        start_timeout_s=30,
    )


# The CDC part, started after the rest (it needs Kinesis) and only when asked for.
CDC_SERVICE_BUILDERS = {"postgres": postgres_spec, "cdc": cdc_spec}

# Start order matters only for bootstrap; processes start side by side.
SERVICE_BUILDERS = {
    "minio": minio_spec,
    "zookeeper": zookeeper_spec,
    "kinesis": kinesis_spec,
    "metastore": metastore_spec,
    "trino": trino_spec,
    "prometheus": prometheus_spec,
    "processes": processes_spec,
}


def service_names() -> list[str]:
    return list(SERVICE_BUILDERS)
