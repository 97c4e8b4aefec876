#!/usr/bin/env bash
# One command for a single-machine kuebus: installs redis-server when missing,
# then runs `kuebus dev` (embedded NATS on 127.0.0.1:4222, its own Redis with
# data under ./.kuebus). Extra arguments go to `kuebus dev`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
exec go run ./cmd/kuebus dev "$@"
