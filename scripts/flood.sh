#!/usr/bin/env bash
# flood.sh [KUEBUS_BINARY]
#
# The memory ceiling of `kuebus dev` under the floods of issue 25: it
# starts `kuebus dev` (on a redis-server of its own, loopback ports the
# kernel picks) once per flood, and runs cmd/kuebus-flood against it:
#   1. 60,000 waiting lease requests at once (LEASES=…);
#   2. 3 subscribers to job.> that never read (SUBSCRIBERS=…) while
#      `kuebus bench --only process` creates and runs 100,000 jobs (JOBS=…).
# For each it prints the peak RSS of the dev process (sampled every 100 ms
# from /proc/PID/status) and whether core answered `stats` all along. With
# no argument it builds kuebus from this tree. Every process it starts is
# ended by its pid. Figures: docs/reliability.md.
#
#   scripts/flood.sh                 # this tree
#   scripts/flood.sh /tmp/kuebus-old # another build, for a before/after
#
# Needs redis-server and redis-cli.
set -euo pipefail
cd "$(dirname "$0")/.."
LEASES=${LEASES:-60000}; SUBSCRIBERS=${SUBSCRIBERS:-3}; JOBS=${JOBS:-100000}
D=$(mktemp -d)
RP=; P=
cleanup() {
  [ -n "$P" ] && kill -INT "$P" 2>/dev/null && wait "$P" 2>/dev/null || true
  [ -n "$RP" ] && kill "$RP" 2>/dev/null && wait "$RP" 2>/dev/null || true
  rm -rf "$D"
}
trap cleanup EXIT
BIN=${1:-}
if [ -z "$BIN" ]; then BIN=$D/kuebus; go build -o "$BIN" ./cmd/kuebus; fi
go build -o "$D/flood" ./cmd/kuebus-flood

# A free loopback port for Redis: the kernel's pick, released at once.
RPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$D" > "$D/redis.log" 2>&1 & RP=$!
for _ in $(seq 50); do redis-cli -p "$RPORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
REDIS=redis://127.0.0.1:$RPORT

# start_dev starts `kuebus dev` and sets P and NATS (its client URL).
start_dev() {
  redis-cli -p "$RPORT" flushall >/dev/null
  : > "$D/dev.log"
  "$BIN" dev --redis-url "$REDIS" --nats-listen 127.0.0.1:0 --http-listen "" --data-dir "$D/dev" > "$D/dev.log" 2>&1 & P=$!
  for _ in $(seq 100); do grep -q 'kuebus dev ready' "$D/dev.log" && break; sleep 0.1; done
  NATS=$(grep -o 'nats_url=[^ ]*' "$D/dev.log" | head -1 | cut -d= -f2)
  [ -n "$NATS" ] || { cat "$D/dev.log"; exit 1; }
}
stop_dev() { kill -INT "$P"; wait "$P" || true; P=; }

echo "== $LEASES waiting leases at once"
start_dev
"$D/flood" -nats "$NATS" -pid "$P" -mode leases -leases "$LEASES" || st=$?
stop_dev

echo "== $SUBSCRIBERS subscribers to job.> that never read, $JOBS jobs created and run"
start_dev
"$D/flood" -nats "$NATS" -pid "$P" -mode subscribers -subscribers "$SUBSCRIBERS" -- \
  "$BIN" bench --nats-url "$NATS" --redis-url "$REDIS" --only process --n "$JOBS" || st=$?
stop_dev
exit "${st:-0}"
