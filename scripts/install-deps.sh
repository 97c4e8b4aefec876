#!/usr/bin/env bash
# Installs what kuebus needs on a Debian machine that has Go and nothing else:
# redis-server (for `kuebus dev` and the tests) and, with --browser, Debian's
# Chromium for the dashboard's browser test. Installs only what is missing.
set -euo pipefail
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
if [[ "${1:-}" == "--browser" ]] && ! command -v chromium >/dev/null 2>&1; then
  need+=(chromium fonts-liberation)
fi
if ((${#need[@]})); then
  sudo=""
  if [[ "$(id -u)" -ne 0 ]]; then sudo="sudo"; fi
  echo "install-deps: installing ${need[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
