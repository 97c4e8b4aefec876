#!/usr/bin/env bash
# One command for the whole test suite: installs what is missing (redis-server,
# and Chromium for the dashboard's browser test), checks formatting and vet,
# then runs every test under the race detector against a real redis-server
# (started by the tests themselves unless TEST_REDIS_URL is set) and real
# embedded NATS servers.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --browser --node --prom --postgres --mariadb
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [[ -n "$unformatted" ]]; then
  echo "gofmt would change:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
go test -race -count=1 -timeout 15m "$@" ./...
# The outbox is a module of its own (so the kuebus module links no SQL
# driver): ./... above does not enter it.
(cd outbox && go vet ./... && go test -race -count=1 -timeout 15m "$@" ./...)
scripts/chaos.sh --short # the fault suite, about a minute: docs/reliability.md
