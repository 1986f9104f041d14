#!/usr/bin/env bash
# Installs what the tests need when it is missing: redis-server, curl (the
# README's walkthrough and the cluster script use it), openssl and python3
# (the private-channel tests mint their tokens outside Go with them), nginx
# (the static-file Source tests of integration/staticsource run it as the
# test's user) and chromium from Debian's packages (chromium is skipped with
# RSHUB_NO_BROWSER set).
# Runs apt-get directly when root and through sudo otherwise, waits up to
# RSHUB_APT_LOCK_TIMEOUT seconds (default 600) for a dpkg lock another
# apt-get holds, and does nothing when both are already installed.
set -euo pipefail

need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v curl >/dev/null 2>&1 || need_apt+=(curl)
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need_apt+=(nginx)
if [ "${RSHUB_NO_BROWSER:-}" = "" ]; then
  command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
  # integration/mercure runs Mercure's conformance suite (Playwright, with
  # this chromium) through node; npm installs its runner into the cache
  command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
  command -v npm >/dev/null 2>&1 || need_apt+=(npm)
fi
[ ${#need_apt[@]} -eq 0 ] && exit 0

echo "== installing ${need_apt[*]} (apt-get)"
apt=(apt-get)
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "installing ${need_apt[*]} needs root or sudo; install them and run again" >&2
    exit 1
  fi
  apt=(sudo apt-get)
fi
lock=(-o "DPkg::Lock::Timeout=${RSHUB_APT_LOCK_TIMEOUT:-600}")
"${apt[@]}" "${lock[@]}" update -qq
DEBIAN_FRONTEND=noninteractive "${apt[@]}" "${lock[@]}" install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
