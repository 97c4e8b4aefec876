#!/usr/bin/env bash
# A three-node kuebus cluster on this machine, from node-a.yaml, node-b.yaml
# and node-c.yaml: each node embeds a NATS server routed to the other two,
# joins one memberlist ring, and runs core and the HTTP API; all share one
# Redis. The nodes are locked: up generates fresh secrets (NATS users with
# roles, route credentials, the gossip key) into $RUN_DIR/secrets.env, which
# replace the demo values of the YAML files, and writes each user's client
# variables into $RUN_DIR/admin.env, worker.env, producer.env and viewer.env:
#   set -a; . "$RUN_DIR/admin.env"; set +a; "$RUN_DIR/kuebus" stats
# The HTTP API is locked with the same users and roles (docs/http.md):
#   curl -u "admin:$KUEBUS_NATS_PASSWORD" http://127.0.0.1:8080/stats
# or sign in to the dashboard with the user and password.
#
#   local-cluster.sh up          build kuebus, start Redis (unless REDIS_URL)
#                                and the three nodes, wait until they answer;
#                                a port taken is named before anything starts,
#                                and when any part fails, up stops (by pid)
#                                all it started
#   local-cluster.sh status      one line per node: NAME PID NATS_URL HTTP_URL
#   local-cluster.sh down        stop what up started
#   local-cluster.sh kill NAME   kill -9 one node (to watch a failover)
#   local-cluster.sh stop NAME   stop one node gracefully (SIGTERM: it leaves
#                                the ring, handing leadership over at once)
#   local-cluster.sh start NAME  start one node again
#
# Environment:
#   RUN_DIR     pid files, logs, the binary and Redis's data (default
#               cluster-config/.run)
#   REDIS_URL   use this Redis instead of starting one
#   REDIS_PORT  port of the Redis that up starts (default 6389)
#   PORT_BASE   move every port: NATS clients PORT_BASE+0..2, NATS routes
#               +10..12, memberlist +20..22, HTTP +30..32 (default: the
#               ports in the YAML files: 4222.., 6222.., 7946.., 8080..)
#   KUEBUS_BIN  use this kuebus binary instead of building one
#   WAIT        seconds up waits for the cluster (default 60)
#   KUEBUS_EVENTS_DURABLE=true  (for up) durable events, replicated on the
#               three servers, each with its JetStream files in
#               $RUN_DIR/NAME.jetstream; start NAME does the same after it
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
RUN_DIR=${RUN_DIR:-$here/.run}
REDIS_PORT=${REDIS_PORT:-6389}
WAIT=${WAIT:-60}
NODES=(node-a node-b node-c)
bin=${KUEBUS_BIN:-$RUN_DIR/kuebus}

die() { echo "local-cluster: $*" >&2; exit 1; }
# alive PID: the process runs (a zombie waiting for its reaper does not).
alive() {
  [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null || return 1
  [[ ! -r /proc/$1/stat ]] || [[ $(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) != Z ]]
}
pid_of() { [[ -f $RUN_DIR/$1.pid ]] && cat "$RUN_DIR/$1.pid" || true; }

# index_of NAME: the node's position, 0..2.
index_of() {
  local i
  for i in "${!NODES[@]}"; do [[ ${NODES[$i]} == "$1" ]] && { echo "$i"; return; }; done
  die "no node named $1 (nodes: ${NODES[*]})"
}

# secret: a fresh random secret without , or : (it goes into NAME:ROLE:PASSWORD).
secret() { head -c "$1" /dev/urandom | base64 | tr -d '\n' | tr '+/' '-_'; }

# make_secrets: the cluster's secrets, once per run folder (start NAME
# reuses them). Files of mode 0600; none of it is committed.
make_secrets() {
  [[ -f $RUN_DIR/secrets.env ]] && return
  local role users="" key
  (
    umask 077
    for role in admin worker producer viewer; do
      local pw
      pw=$(secret 18)
      users+="${users:+,}$role:$role:$pw"
      # The URL of node-a's NATS, so that a client that sources the file
      # finds the cluster on moved ports too (PORT_BASE).
      printf 'KUEBUS_NATS_URL=nats://127.0.0.1:%s\nKUEBUS_NATS_USER=%s\nKUEBUS_NATS_PASSWORD=%s\n' \
        "${PORT_BASE:-4222}" "$role" "$pw" >"$RUN_DIR/$role.env"
    done
    key=$(head -c 32 /dev/urandom | base64 | tr -d '\n')
    {
      echo "KUEBUS_NATS_EMBEDDED_USERS=$users"
      echo "KUEBUS_NATS_EMBEDDED_ROUTE_USER=route"
      echo "KUEBUS_NATS_EMBEDDED_ROUTE_PASSWORD=$(secret 18)"
      echo "KUEBUS_MEMBERLIST_SECRET_KEY=$key"
    } >"$RUN_DIR/secrets.env"
  )
}

# as_admin CMD...: run kuebus with the admin's credentials.
as_admin() {
  local vars=()
  mapfile -t vars <"$RUN_DIR/admin.env"
  env "${vars[@]}" "$bin" "$@"
}

# node_env NAME: the KUEBUS_* variables of the node, one per line.
node_env() {
  local i j routes="" seeds=""
  i=$(index_of "$1")
  cat "$RUN_DIR/secrets.env"
  echo "KUEBUS_REDIS_URL=$(cat "$RUN_DIR/redis.url")"
  echo "KUEBUS_LOG_FORMAT=text" # status and up read the ready line
  # Durable events, as up was told (start NAME too): each server keeps
  # its JetStream files apart.
  if [[ -f $RUN_DIR/durable-events ]]; then
    echo "KUEBUS_EVENTS_DURABLE=true"
    echo "KUEBUS_EVENTS_STORE_DIR=$RUN_DIR/$1.jetstream"
  fi
  [[ -z ${PORT_BASE:-} ]] && return
  for j in 0 1 2; do
    [[ $j == "$i" ]] && continue
    routes+="${routes:+,}nats-route://127.0.0.1:$((PORT_BASE + 10 + j))"
    seeds+="${seeds:+,}127.0.0.1:$((PORT_BASE + 20 + j))"
  done
  echo "KUEBUS_NATS_EMBEDDED_LISTEN=127.0.0.1:$((PORT_BASE + i))"
  echo "KUEBUS_NATS_EMBEDDED_CLUSTER_LISTEN=127.0.0.1:$((PORT_BASE + 10 + i))"
  echo "KUEBUS_NATS_EMBEDDED_ROUTES=$routes"
  echo "KUEBUS_MEMBERLIST_BIND=127.0.0.1:$((PORT_BASE + 20 + i))"
  echo "KUEBUS_MEMBERLIST_SEEDS=$seeds"
  echo "KUEBUS_HTTP_LISTEN=127.0.0.1:$((PORT_BASE + 30 + i))"
}

# node_ports NAME: the TCP ports the node listens on, one "PORT WHAT" a
# line: PORT_BASE's, or those of its YAML file (memberlist listens on UDP
# too, on the same port).
node_ports() {
  local i file=$here/$1.yaml
  i=$(index_of "$1")
  if [[ -n ${PORT_BASE:-} ]]; then
    echo "$((PORT_BASE + i)) NATS clients"
    echo "$((PORT_BASE + 10 + i)) NATS routes"
    echo "$((PORT_BASE + 20 + i)) memberlist"
    echo "$((PORT_BASE + 30 + i)) HTTP"
    return
  fi
  sed -n 's/^    listen: *[^ #]*:\([0-9][0-9]*\).*/\1 NATS clients/p' "$file"
  sed -n 's/^    cluster_listen: *[^ #]*:\([0-9][0-9]*\).*/\1 NATS routes/p' "$file"
  sed -n 's/^  bind: *[^ #]*:\([0-9][0-9]*\).*/\1 memberlist/p' "$file"
  sed -n 's/^  listen: *[^ #]*:\([0-9][0-9]*\).*/\1 HTTP/p' "$file"
}

# port_taken PORT: something listens on the TCP port on loopback.
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# check_ports: refuse to start when a port a node (or the Redis up would
# start) listens on is taken, naming each, before anything starts. A port
# taken between this check and the bind, or a UDP port taken (memberlist's),
# makes that node exit instead; wait_ready then names the port.
check_ports() {
  local name port what taken=()
  for name in "${NODES[@]}"; do
    while read -r port what; do
      port_taken "$port" && taken+=("$port ($what of $name)")
    done < <(node_ports "$name")
  done
  if [[ -z ${REDIS_URL:-} ]] && port_taken "$REDIS_PORT"; then
    taken+=("$REDIS_PORT (Redis: set REDIS_PORT, or REDIS_URL to use that Redis)")
  fi
  ((${#taken[@]} == 0)) && return
  local list
  list=$(printf ', %s' "${taken[@]}")
  if ((${#taken[@]} == 1)); then
    die "port ${list:2} is taken: nothing started; free it, or move the nodes' ports with PORT_BASE"
  fi
  die "ports ${list:2} are taken: nothing started; free them, or move the nodes' ports with PORT_BASE"
}

# taken_port NAME: the port the node's log says it could not listen on
# ("listen udp 127.0.0.1:7948: bind: address already in use"), as "PORT
# (WHAT of NAME)"; nothing when the log says no such thing.
taken_port() {
  local port what
  port=$(grep -o '[0-9.]*:[0-9][0-9]*: bind: address already in use' "$RUN_DIR/$1.log" 2>/dev/null |
    head -n 1 | sed 's/: bind: .*//; s/.*://')
  [[ -n $port ]] || return 0
  what=$(node_ports "$1" | awk -v p="$port" '$1 == p {$1 = ""; sub(/^ /, ""); print; exit}')
  echo "$port (${what:-a port} of $1)"
}

# ready_field NAME KEY: a field of the node's ready log line.
ready_field() {
  grep 'msg="kuebus node ready"' "$RUN_DIR/$1.log" 2>/dev/null | tail -n 1 |
    sed -n "s/.* $2=\([^ ]*\).*/\1/p"
}

start_redis() {
  if [[ -n ${REDIS_URL:-} ]]; then
    echo "$REDIS_URL" >"$RUN_DIR/redis.url"
    return
  fi
  command -v redis-server >/dev/null || die "redis-server is not installed: apt-get install -y redis-server, or set REDIS_URL"
  if (exec 3<>"/dev/tcp/127.0.0.1/$REDIS_PORT") 2>/dev/null; then
    die "port $REDIS_PORT is taken: set REDIS_PORT, or REDIS_URL to use that Redis"
  fi
  mkdir -p "$RUN_DIR/redis"
  nohup redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$RUN_DIR/redis" \
    --save "" --appendonly yes --daemonize no </dev/null >"$RUN_DIR/redis.log" 2>&1 &
  echo $! >"$RUN_DIR/redis.pid"
  started+=(redis)
  echo "redis://127.0.0.1:$REDIS_PORT/0" >"$RUN_DIR/redis.url"
  local deadline=$((SECONDS + WAIT)) reply
  until reply=$( (exec 3<>"/dev/tcp/127.0.0.1/$REDIS_PORT" && printf 'PING\r\n' >&3 && head -c 5 <&3) 2>/dev/null) && [[ $reply == "+PONG" ]]; do
    alive "$(cat "$RUN_DIR/redis.pid")" || { tail -n 20 "$RUN_DIR/redis.log" >&2; die "redis-server exited"; }
    ((SECONDS < deadline)) || die "redis-server does not answer on port $REDIS_PORT"
    sleep 0.1
  done
}

start_node() {
  local name=$1 pid
  pid=$(pid_of "$name")
  alive "$pid" && die "$name runs already (pid $pid)"
  local vars=()
  mapfile -t vars < <(node_env "$name")
  : >"$RUN_DIR/$name.log"
  env "${vars[@]}" nohup "$bin" node --config "$here/$name.yaml" </dev/null >>"$RUN_DIR/$name.log" 2>&1 &
  echo $! >"$RUN_DIR/$name.pid"
  started+=("$name")
}

# wait_ready NAME: until the node logged its ready line.
wait_ready() {
  local name=$1 deadline=$((SECONDS + WAIT))
  until [[ -n $(ready_field "$name" nats_url) ]]; do
    if ! alive "$(pid_of "$name")"; then
      tail -n 20 "$RUN_DIR/$name.log" >&2
      local taken
      taken=$(taken_port "$name")
      [[ -z $taken ]] || die "$name exited: port $taken is taken; its log is $RUN_DIR/$name.log"
      die "$name exited; its log is $RUN_DIR/$name.log"
    fi
    ((SECONDS < deadline)) || die "$name not ready after ${WAIT}s; its log is $RUN_DIR/$name.log"
    sleep 0.1
  done
}

# wait_ring: until every node's NATS answers cluster.status with all three
# members alive, and core answers through it.
wait_ring() {
  local name url deadline=$((SECONDS + WAIT))
  for name in "${NODES[@]}"; do
    url=$(ready_field "$name" nats_url)
    until as_admin cluster --json --nats-url "$url" 2>/dev/null | grep -c '"state": "alive"' | grep -qx 3 &&
      as_admin stats --nats-url "$url" >/dev/null 2>&1; do
      ((SECONDS < deadline)) || die "the ring did not form within ${WAIT}s (see $RUN_DIR/*.log)"
      sleep 0.2
    done
  done
}

# started: what this run of up or start has started (redis, node names),
# for up_failed to stop.
started=()

# up_failed: the EXIT trap of up. When up fails at any step after it
# started something, it stops, by pid and in reverse order, everything
# this run started, so that no node or Redis is left running alone.
up_failed() {
  local status=$? i name pid stopped=()
  trap - EXIT
  if ((status != 0)); then
    for ((i = ${#started[@]} - 1; i >= 0; i--)); do
      name=${started[$i]}
      pid=$(pid_of "$name")
      if alive "$pid"; then
        stop "$RUN_DIR/$name.pid"
        stopped+=("$name (pid $pid)")
      else
        rm -f "$RUN_DIR/$name.pid"
        stopped+=("$name${pid:+ (pid $pid, exited already)}")
      fi
    done
    ((${#stopped[@]} == 0)) || echo "local-cluster: up failed; stopped what it started: ${stopped[*]}" >&2
  fi
  exit "$status"
}

cmd_up() {
  mkdir -p "$RUN_DIR"
  local name
  for name in "${NODES[@]}"; do
    alive "$(pid_of "$name")" && die "$name runs already: run $0 down first"
  done
  check_ports
  if [[ -z ${KUEBUS_BIN:-} ]]; then
    (cd "$root" && go build -o "$bin" ./cmd/kuebus) || die "go build failed"
  fi
  trap up_failed EXIT
  start_redis
  make_secrets
  # A node restarted without JetStream would leave the stream's quorum:
  # remember the choice for start NAME.
  if [[ ${KUEBUS_EVENTS_DURABLE:-} == true ]]; then : >"$RUN_DIR/durable-events"; else rm -f "$RUN_DIR/durable-events"; fi
  for name in "${NODES[@]}"; do start_node "$name"; done
  for name in "${NODES[@]}"; do wait_ready "$name"; done
  wait_ring
  trap - EXIT # up: everything answers; down stops it
  cmd_status
  echo "leader: $(as_admin cluster --nats-url "$(ready_field node-a nats_url)" | awk '$1 == "leader" {print $2}')"
}

cmd_status() {
  local name pid
  for name in "${NODES[@]}"; do
    pid=$(pid_of "$name")
    alive "$pid" || pid=stopped
    echo "$name $pid $(ready_field "$name" nats_url) $(ready_field "$name" http_url)"
  done
}

# stop PIDFILE: TERM, then KILL after 15 s, then forget the pid file.
stop() {
  local pid deadline
  pid=$(cat "$1" 2>/dev/null || true)
  if alive "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    deadline=$((SECONDS + 15))
    while alive "$pid" && ((SECONDS < deadline)); do sleep 0.1; done
    alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$1"
}

cmd_down() {
  local i
  # Highest name first: the leader (lowest name) goes last, so leadership
  # does not move from node to node on the way down.
  for ((i = ${#NODES[@]} - 1; i >= 0; i--)); do stop "$RUN_DIR/${NODES[$i]}.pid"; done
  [[ -f $RUN_DIR/redis.pid ]] && stop "$RUN_DIR/redis.pid"
  return 0
}

cmd_kill() {
  local pid
  pid=$(pid_of "$1")
  alive "$pid" || die "$1 is not running"
  kill -KILL "$pid"
  echo "killed $1 (pid $pid)"
}

cmd_start() {
  index_of "$1" >/dev/null
  [[ -f $RUN_DIR/redis.url ]] || die "no cluster: run $0 up first"
  start_node "$1"
  wait_ready "$1"
  cmd_status
}

case ${1:-} in
up) cmd_up ;;
status) cmd_status ;;
down) cmd_down ;;
kill) cmd_kill "${2:?usage: $0 kill NAME}" ;;
stop)
  index_of "${2:?usage: $0 stop NAME}" >/dev/null
  stop "$RUN_DIR/$2.pid"
  ;;
start) cmd_start "${2:?usage: $0 start NAME}" ;;
*)
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
  ;;
esac
