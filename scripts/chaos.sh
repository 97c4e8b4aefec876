#!/usr/bin/env bash
# The fault suite: builds kuebus and kuebus-chaos, then runs, on loopback,
# each fault under load (kill -9 of a worker, once and twenty times; a
# worker stopped for 2 s; kill -9 of a core, of Redis; a Redis
# SIGSTOP; kill -9 of the promoter leader; kill -9 of a core while flows
# run, and of a core and a Redis Cluster master at once) and prints a table
# per scenario. Exits non-zero when an acknowledged job was lost, a job was
# held by two workers at once, or a flow's dependent ran too early, twice
# unexplained or stayed waiting. docs/reliability.md explains the figures.
#
#   scripts/chaos.sh              every scenario, about 5 minutes
#   scripts/chaos.sh --short      the short form CI runs, under 2 minutes:
#                                 without kill-cluster-flow (a Redis
#                                 Cluster of six servers and a failover)
#   scripts/chaos.sh --short --scenario kill-cluster-flow   that one, short
#   scripts/chaos.sh --scenario kill-redis,stop-redis
#
# Any other flag goes to kuebus-chaos (see cmd/kuebus-chaos/main.go).
# Environment:
#   CHAOS_KEEP=1   keep the run's folder (configs, logs, worker records)
#   CHAOS_LIMIT    seconds before the run is killed (default 420: the full
#                  run with kill-workers and kill-cluster-flow is near 300)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

work=$(mktemp -d "${TMPDIR:-/tmp}/kuebus-chaos.XXXXXX")
driver=""

# cleanup kills, by pid, the driver and every process it started: the
# driver writes its own pid to $work/pids and each child's to
# $work/<scenario>/pids before anything else, so this works even when the
# driver, or the timeout in front of it, was killed. A pid is killed only
# while its command line still names $work, so a reused pid is left alone.
cleanup() {
  local rc=$? pid name
  trap - EXIT INT TERM
  if [[ -n $driver ]] && kill -0 "$driver" 2>/dev/null; then
    kill -TERM "$driver" 2>/dev/null || true
    wait "$driver" 2>/dev/null || true
  fi
  for f in "$work"/pids "$work"/*/pids; do
    [[ -f $f ]] || continue
    while read -r pid name; do
      if [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$work"; then
        kill -CONT "$pid" 2>/dev/null || true
        kill -KILL "$pid" 2>/dev/null || true
      fi
    done <"$f"
  done
  if [[ ${CHAOS_KEEP:-} == 1 || $rc -ne 0 ]]; then
    echo "chaos: the run's configs, logs and records are in $work" >&2
  else
    rm -rf "$work"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

go build -o "$work/kuebus" ./cmd/kuebus
go build -o "$work/kuebus-chaos" ./cmd/kuebus-chaos
timeout --signal=TERM --kill-after=10 "${CHAOS_LIMIT:-420}" \
  "$work/kuebus-chaos" --kuebus "$work/kuebus" --dir "$work" "$@" &
driver=$!
wait "$driver"
