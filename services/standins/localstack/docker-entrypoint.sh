#!/bin/sh
# Stand-in entrypoint: run LocalStack's runtime in the foreground, as upstream's does.
set -e
mkdir -p /var/lib/localstack /tmp/localstack
exec python -m localstack.runtime.main "$@"
