#!/usr/bin/env bash
# Installs what kuebus needs on a Debian machine that has Go and nothing else:
# redis-server (for `kuebus dev` and the tests); with --browser, Debian's
# Chromium for the dashboard's browser test; with --node, Node.js and npm and
# the Node example's one dependency (examples/node, run by its Go test).
# Installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
browser=0 nodejs=0
for arg in "$@"; do
  case "$arg" in
    --browser) browser=1 ;;
    --node) nodejs=1 ;;
    *) echo "install-deps: unknown flag $arg (takes --browser, --node)" >&2; exit 2 ;;
  esac
done
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
if ((browser)) && ! command -v chromium >/dev/null 2>&1; then
  need+=(chromium fonts-liberation)
fi
if ((nodejs)); then
  command -v node >/dev/null 2>&1 || need+=(nodejs)
  command -v npm >/dev/null 2>&1 || need+=(npm)
fi
if ((${#need[@]})); then
  sudo=""
  if [[ "$(id -u)" -ne 0 ]]; then sudo="sudo"; fi
  echo "install-deps: installing ${need[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ((nodejs)) && [[ ! -f examples/node/node_modules/nats/package.json ]]; then
  echo "install-deps: npm ci in examples/node" >&2
  npm ci --prefix examples/node --no-audit --no-fund --loglevel=error
fi
