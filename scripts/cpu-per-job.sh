#!/usr/bin/env bash
# cpu-per-job.sh PHASE N ROUNDS BINARY...
#
# CPU per job of each part, for comparing kuebus builds on a noisy machine
# where throughput alone cannot tell them apart. For each round and each
# BINARY (a kuebus binary, e.g. one built from main and one from a branch),
# it starts `BINARY dev` in its own process on a redis-server of its own,
# runs `BINARY bench --only PHASE --n N` against it, and prints jobs/s and
# the CPU time per job of core (the dev process, from /proc), of the bench
# process (producers and workers) and of Redis (INFO cpu). PHASE is one of
# kuebus bench's phases: enqueue_seq, enqueue_conc, enqueue_bulk, process,
# latency, delayed.
#
#   scripts/cpu-per-job.sh enqueue_bulk 50000 3 /tmp/kuebus-main ./kuebus
#
# Needs redis-server, redis-cli and /usr/bin/time. Ports 6396 and 4501+.
set -euo pipefail
PHASE=$1; N=$2; ROUNDS=$3; shift 3
PORT=${PORT:-6396}; TCK=$(getconf CLK_TCK)
D=$(mktemp -d)
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$D" > "$D/redis.log" 2>&1 & RP=$!
trap 'kill $RP 2>/dev/null; wait $RP 2>/dev/null; rm -rf "$D"' EXIT
for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
cpu_ms() { awk -v t="$TCK" '{print ($14+$15)*1000/t}' "/proc/$1/stat"; }
redis_ms() { redis-cli -p "$PORT" info cpu | awk -F: '/used_cpu_sys:|used_cpu_user:/{s+=$2} END{print s*1000}'; }
np=4500
for r in $(seq "$ROUNDS"); do
  for bin in "$@"; do
    np=$((np + 1))
    redis-cli -p "$PORT" flushall >/dev/null
    DD=$(mktemp -d)
    "$bin" dev --redis-url "redis://127.0.0.1:$PORT" --nats-listen "127.0.0.1:$np" --http-listen "" --data-dir "$DD" > "$DD/dev.log" 2>&1 & P=$!
    for _ in $(seq 100); do grep -q ready "$DD/dev.log" && break; sleep 0.1; done
    r0=$(redis_ms); c0=$(cpu_ms $P)
    /usr/bin/time -f "%U %S" -o "$DD/time" "$bin" bench --nats-url "nats://127.0.0.1:$np" \
      --redis-url "redis://127.0.0.1:$PORT" --n "$N" --only "$PHASE" > "$DD/bench.txt" 2>&1
    c1=$(cpu_ms $P); r1=$(redis_ms)
    thr=$(awk '/throughput/{print $2; exit}' "$DD/bench.txt")
    bench_ms=$(awk '{print ($1+$2)*1000}' "$DD/time")
    awk -v p="$PHASE" -v r="$r" -v b="$(basename "$bin")" -v thr="$thr" -v n="$N" \
      -v core=$(echo "$c1 - $c0" | bc -l) -v bench="$bench_ms" -v redis=$(echo "$r1 - $r0" | bc -l) \
      'BEGIN { printf "%-13s r%d %-16s %8s jobs/s  core %6.1f us/job  bench %6.1f us/job  redis %6.1f us/job\n", p, r, b, thr, core*1000/n, bench*1000/n, redis*1000/n }'
    kill -INT $P; wait $P || true; rm -rf "$DD"
  done
done
