#!/bin/bash
# lakehouse/spark roles:
#   master            standalone master (RPC 7077, UI 8080)
#   worker            standalone worker of $SPARK_MASTER_URL (UI 8081)
#   job [ARGS...]     bootstrap (stream, bucket, schema: through their APIs), then
#                     run the streaming job's driver against $SPARK_MASTER_URL
#   job-cdc [ARGS...] the job over the CDC part's streams (compose profile `cdc`)
#   metastore         Hive Metastore 2.3 Thrift server (lakehouse/hive-metastore image)
#   driver ARGS...    Spark on Kubernetes' driver pod (lakehouse submit --master k8s://...)
#   executor          Spark on Kubernetes' executor pods (their settings: the environment)
#   anything else     executed as is
set -euo pipefail
: "${SPARK_MASTER_URL:=spark://spark-master:7077}"
role="${1:-master}"; shift || true
case "$role" in
  master)
    exec "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.master.Master \
      --host "$(hostname)" --port 7077 --webui-port 8080 "$@" ;;
  worker)
    exec "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.worker.Worker \
      --webui-port 8081 "$@" "$SPARK_MASTER_URL" ;;
  job)
    python -m lakehouse.core.bootstrap
    # As local mode (src/lakehouse/local/job_launcher.py): python is the driver's parent
    # process, so SIGTERM (docker stop) reaches the job's graceful stop. Every node has
    # the jars in its image: a class path, not --jars (which copies ~390 MB per start).
    export PYSPARK_SUBMIT_ARGS="--master $SPARK_MASTER_URL --deploy-mode client \
      --conf spark.driver.host=${SPARK_DRIVER_HOST:-$(hostname)} \
      --conf spark.driver.bindAddress=0.0.0.0 --conf spark.ui.port=4040 \
      --driver-memory ${SPARK_DRIVER_MEMORY:-1g} --executor-memory ${SPARK_EXECUTOR_MEMORY:-1g} \
      --total-executor-cores ${SPARK_TOTAL_EXECUTOR_CORES:-2} \
      --conf spark.driver.extraClassPath=$LAKEHOUSE_JARS/* \
      --conf spark.executor.extraClassPath=$LAKEHOUSE_JARS/* pyspark-shell"
    exec python -m lakehouse_job.job "$@" ;;
  job-cdc)
    # The job over the CDC part's streams: one per table of CDC_TABLES (services/cdc/cdc.env),
    # named as the CDC service names them, with the CDC tables file.
    streams=""
    IFS=, read -ra tables <<< "$CDC_TABLES"
    for table in "${tables[@]}"; do streams="${streams:+$streams,}${CDC_TOPIC_PREFIX}.${table}"; done
    exec "$0" job --stream "$streams" --tables /opt/lakehouse/cdc/tables.yaml "$@" ;;
  metastore)
    cp="${HIVE_CONF_DIR:-/opt/hive/conf}:$SPARK_HOME/jars/*:$(ls /opt/lakehouse/jars/hadoop-aws-*.jar):$(ls /opt/lakehouse/jars/aws-java-sdk-bundle-*.jar):/usr/share/java/postgresql.jar"
    # As local mode: the schema step (lakehouse.local.metastore_schema) first, then the metastore.
    exec python -m lakehouse.local.metastore_schema -- java "-Xmx${HMS_HEAP:-384m}" -cp "$cp" org.apache.hadoop.hive.metastore.HiveMetaStore -p "${HMS_PORT:-9083}" "$@" ;;
  driver)
    # Spark starts the pod as `driver --properties-file F --class
    # org.apache.spark.deploy.PythonRunner local:///opt/lakehouse/run_job.py JOB_ARGS...`.
    # Run as the job role does: python is the driver's parent process, so the pod's SIGTERM
    # reaches the job's graceful stop (under spark-submit, the JVM would get it instead).
    submit=(--deploy-mode client --conf "spark.driver.bindAddress=${SPARK_DRIVER_BIND_ADDRESS:-0.0.0.0}")
    script=""
    while [ $# -gt 0 ]; do
      case "$1" in
        --class) shift 2 ;;
        local://*) script="${1#local://}"; shift; break ;;
        *) submit+=("$1"); shift ;;
      esac
    done
    [ -n "$script" ] || { echo "driver: no local:// script among its arguments" >&2; exit 2; }
    PYSPARK_SUBMIT_ARGS="$(printf '%q ' "${submit[@]}")pyspark-shell"
    export PYSPARK_SUBMIT_ARGS
    exec python "$script" "$@" ;;
  executor)
    # Spark passes an executor's settings as environment variables; its JVM options as
    # SPARK_JAVA_OPT_0, _1, ... in that order.
    readarray -t java_opts < <(env | grep '^SPARK_JAVA_OPT_' | sort -t_ -k4 -n | sed 's/^[^=]*=//')
    exec "$JAVA_HOME/bin/java" "${java_opts[@]}" \
      -Xms"$SPARK_EXECUTOR_MEMORY" -Xmx"$SPARK_EXECUTOR_MEMORY" \
      -cp "${SPARK_CONF_DIR:-/opt/spark/conf}:${SPARK_CLASSPATH:+$SPARK_CLASSPATH:}$SPARK_HOME/jars/*" \
      org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend \
      --driver-url "$SPARK_DRIVER_URL" --executor-id "$SPARK_EXECUTOR_ID" \
      --cores "$SPARK_EXECUTOR_CORES" --app-id "$SPARK_APPLICATION_ID" \
      --hostname "$SPARK_EXECUTOR_POD_IP" --resourceProfileId "${SPARK_RESOURCE_PROFILE_ID:-0}" \
      --podName "$SPARK_EXECUTOR_POD_NAME" ;;
  *) exec "$role" "$@" ;;
esac
