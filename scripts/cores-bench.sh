#!/usr/bin/env bash
# cores-bench.sh PHASE N ROUNDS BINARY CORES...
#
# Throughput and CPU per job with several core instances on one Redis and
# one NATS (docs/scaling.md). For each round and each CORES count, it
# starts a redis-server of its own, `BINARY dev` (embedded NATS, the first
# core, the promoter) and CORES-1 `BINARY node` processes with the core
# role alone on dev's NATS and Redis, runs `BINARY bench --only PHASE --n
# N` against them, and prints jobs/s and the CPU time per job of the dev
# process, of the other cores together, of the bench process (producers
# and workers) and of Redis (INFO cpu).
#
#   scripts/cores-bench.sh process 30000 3 ./kuebus 1 2 3
#
# Needs redis-server, redis-cli, bc and /usr/bin/time. Ports 6397 and 4601+.
# Every process it starts is stopped by its pid.
set -euo pipefail
PHASE=$1; N=$2; ROUNDS=$3; BIN=$4; shift 4
PORT=${PORT:-6397}; TCK=$(getconf CLK_TCK)
D=$(mktemp -d)
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$D" > "$D/redis.log" 2>&1 & RP=$!
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -INT "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  kill "$RP" 2>/dev/null; wait "$RP" 2>/dev/null; rm -rf "$D"
}
trap cleanup EXIT
for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
cpu_ms() { awk -v t="$TCK" '{print ($14+$15)*1000/t}' "/proc/$1/stat"; }
redis_ms() { redis-cli -p "$PORT" info cpu | awk -F: '/used_cpu_sys:|used_cpu_user:/{s+=$2} END{print s*1000}'; }
np=4600
for r in $(seq "$ROUNDS"); do
  for cores in "$@"; do
    np=$((np + 1))
    redis-cli -p "$PORT" flushall >/dev/null
    DD=$(mktemp -d)
    "$BIN" dev --redis-url "redis://127.0.0.1:$PORT" --nats-listen "127.0.0.1:$np" --http-listen "" --data-dir "$DD" > "$DD/dev.log" 2>&1 & P=$!
    PIDS=("$P")
    for _ in $(seq 100); do grep -qs ready "$DD/dev.log" && break; sleep 0.1; done
    EXTRA=()
    for k in $(seq 2 "$cores"); do
      cat > "$DD/core$k.yaml" <<EOF
name: core$k
roles: [core]
nats:
  external:
    urls: [nats://127.0.0.1:$np]
redis:
  url: redis://127.0.0.1:$PORT
EOF
      "$BIN" node --config "$DD/core$k.yaml" > "$DD/core$k.log" 2>&1 & EP=$!
      EXTRA+=("$EP"); PIDS+=("$EP")
      for _ in $(seq 100); do grep -qs ready "$DD/core$k.log" && break; sleep 0.1; done
    done
    extra_ms() { local s=0; for p in "${EXTRA[@]}"; do s=$(echo "$s + $(cpu_ms "$p")" | bc -l); done; echo "$s"; }
    r0=$(redis_ms); c0=$(cpu_ms "$P"); e0=$(extra_ms)
    /usr/bin/time -f "%U %S" -o "$DD/time" "$BIN" bench --nats-url "nats://127.0.0.1:$np" \
      --redis-url "redis://127.0.0.1:$PORT" --n "$N" --only "$PHASE" > "$DD/bench.txt" 2>&1
    c1=$(cpu_ms "$P"); e1=$(extra_ms); r1=$(redis_ms)
    thr=$(awk '/throughput/{print $2; exit}' "$DD/bench.txt")
    bench_ms=$(awk '{print ($1+$2)*1000}' "$DD/time")
    awk -v p="$PHASE" -v r="$r" -v k="$cores" -v thr="$thr" -v n="$N" \
      -v dev=$(echo "$c1 - $c0" | bc -l) -v extra=$(echo "$e1 - $e0" | bc -l) \
      -v bench="$bench_ms" -v redis=$(echo "$r1 - $r0" | bc -l) \
      'BEGIN { printf "%-13s r%d cores %d %8s jobs/s  dev %6.1f  other cores %6.1f  bench %6.1f  redis %6.1f  total %6.1f us/job\n", p, r, k, thr, dev*1000/n, extra*1000/n, bench*1000/n, redis*1000/n, (dev+extra+bench+redis)*1000/n }'
    for p in "${PIDS[@]}"; do kill -INT "$p"; wait "$p" || true; done
    PIDS=()
    rm -rf "$DD"
  done
done
