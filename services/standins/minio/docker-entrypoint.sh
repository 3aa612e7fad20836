#!/bin/sh
# As upstream's: `docker run IMAGE server /data` runs `minio server /data`.
set -e
if [ "${1}" != "minio" ]; then
  if [ -n "${1}" ]; then set -- minio "$@"; fi
fi
exec "$@"
