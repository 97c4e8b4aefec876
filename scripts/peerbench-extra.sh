#!/usr/bin/env bash
# peerbench-extra.sh: kuebus as applications run it, for the peer harness's
# EXTRA_CMD: core in a `kuebus dev` of its own on the peers' Redis, and
# `kuebus bench` against it over NATS; then the in-process `kuebus bench`,
# its figures prefixed inproc_ (docs/benchmarks.md).
#
#   cd /tmp/peerbench && ROUNDS=2 N=30000 \
#     EXTRA_CMD='BIN=/tmp/kuebus N=30000 /path/to/scripts/peerbench-extra.sh' ./run.sh
#
# PORT is the peers' Redis (run.sh's, default 6390); NATS_PORT the dev's
# client port (default 4333). The dev process is stopped by its pid.
set -uo pipefail
PORT=${PORT:-6390}; N=${N:-30000}; BIN=${BIN:-kuebus}; NATS_PORT=${NATS_PORT:-4333}
D=$(mktemp -d)
trap 'kill -INT $P 2>/dev/null; wait $P 2>/dev/null; rm -rf "$D"' EXIT
"$BIN" dev --redis-url "redis://127.0.0.1:$PORT" --nats-listen "127.0.0.1:$NATS_PORT" --http-listen "" --data-dir "$D" > "$D/dev.log" 2>&1 & P=$!
for _ in $(seq 100); do grep -q ready "$D/dev.log" && break; sleep 0.1; done
"$BIN" bench --nats-url "nats://127.0.0.1:$NATS_PORT" --redis-url "redis://127.0.0.1:$PORT" --n "$N" --c 16 --concurrency 64
kill -INT $P; wait $P
"$BIN" bench --redis-url "redis://127.0.0.1:$PORT" --n "$N" --c 16 --concurrency 64 | sed -e '/^#/!s/^/inproc_/'
