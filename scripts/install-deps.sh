#!/usr/bin/env bash
# Installs what kuebus needs on a Debian machine that has Go and nothing else:
# redis-server (which also runs the tests' Sentinels) and redis-cli (for
# `kuebus dev` and the tests); with --browser, Debian's
# Chromium for the dashboard's browser test; with --node, Node.js and npm and
# the Node example's one dependency (examples/node, run by its Go test);
# with --prom, promtool (Debian's prometheus package), which checks the
# alert rules of deploy/prometheus; with --postgres and --mariadb, Debian's
# postgresql and mariadb-server, whose servers the outbox module's tests
# start in folders of their own (the packages' own services are not used).
# Installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
browser=0 nodejs=0 prom=0 postgres=0 mariadb=0
for arg in "$@"; do
  case "$arg" in
    --browser) browser=1 ;;
    --node) nodejs=1 ;;
    --prom) prom=1 ;;
    --postgres) postgres=1 ;;
    --mariadb) mariadb=1 ;;
    *) echo "install-deps: unknown flag $arg (takes --browser, --node, --prom, --postgres, --mariadb)" >&2; exit 2 ;;
  esac
done
need=()
# redis-server also runs the test suite's Sentinels (node/redisproc
# StartSentinel: redis-server sentinel.conf --sentinel, which is all that
# Debian's redis-sentinel package adds, with a service we do not want), so
# no redis-sentinel is needed: Debian's redis-server binary has Sentinel
# mode built in, as every redis-server since 2.8.
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
# redis-cli joins the test suite's Redis Cluster (node/redisproc); Debian's
# redis-server pulls it in, a hand-made install may not.
command -v redis-cli >/dev/null 2>&1 || need+=(redis-tools)
if ((browser)) && ! command -v chromium >/dev/null 2>&1; then
  need+=(chromium fonts-liberation)
fi
if ((nodejs)); then
  command -v node >/dev/null 2>&1 || need+=(nodejs)
  command -v npm >/dev/null 2>&1 || need+=(npm)
fi
if ((postgres)) && ! compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; then
  need+=(postgresql)
fi
if ((mariadb)) && ! command -v mariadb-install-db >/dev/null 2>&1; then
  need+=(mariadb-server)
fi
# promtool alone is used: the server's recommends stay out.
need_lean=()
if ((prom)) && ! command -v promtool >/dev/null 2>&1; then
  need_lean+=(prometheus)
fi
if ((${#need[@]} + ${#need_lean[@]})); then
  sudo=""
  if [[ "$(id -u)" -ne 0 ]]; then sudo="sudo"; fi
  echo "install-deps: installing ${need[*]} ${need_lean[*]}" >&2
  $sudo apt-get update -qq
  if ((${#need[@]})); then
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
  fi
  if ((${#need_lean[@]})); then
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need_lean[@]}" >/dev/null
  fi
fi
if ((nodejs)) && [[ ! -f examples/node/node_modules/nats/package.json ]]; then
  echo "install-deps: npm ci in examples/node" >&2
  npm ci --prefix examples/node --no-audit --no-fund --loglevel=error
fi
