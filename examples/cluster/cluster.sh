#!/usr/bin/env bash
# Starts (or stops) a local rshub cluster on loopback: three nats-server
# processes forming a JetStream cluster (built from the Go module), one
# redis-server and three hubs sharing them.
#
#   examples/cluster/cluster.sh start   # build, start everything, print the URLs
#   examples/cluster/cluster.sh status  # which processes are alive
#   examples/cluster/cluster.sh stop    # stop everything started by start
#
# Settings (environment): RSHUB_CLUSTER_DIR (state, logs, pids; default
# /tmp/rshub-cluster), NATS_BASE (client ports NATS_BASE..+2, default 14222),
# ROUTE_BASE (cluster ports, default 16222), REDIS_PORT (default 16379),
# HUB_BASE (hub HTTP ports HUB_BASE..+2, default 18081).
set -euo pipefail
cd "$(dirname "$0")/../.."

DIR=${RSHUB_CLUSTER_DIR:-/tmp/rshub-cluster}
NATS_BASE=${NATS_BASE:-14222}
ROUTE_BASE=${ROUTE_BASE:-16222}
REDIS_PORT=${REDIS_PORT:-16379}
HUB_BASE=${HUB_BASE:-18081}
HUB_URL="http://127.0.0.1:${HUB_BASE}/" # the URL Sources name in rel="hub"; behind a load balancer, its URL

nats_urls() {
  local u=""
  for i in 0 1 2; do u+="${u:+,}nats://127.0.0.1:$((NATS_BASE + i))"; done
  echo "$u"
}

start_one() { # name, logfile, command...
  local name=$1 log=$2; shift 2
  "$@" >"$log" 2>&1 &
  echo $! >"$DIR/$name.pid"
}

wait_port() { # port, what
  for _ in $(seq 1 200); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "$2 did not open port $1; see $DIR/*.log" >&2
  return 1
}

wait_ready() { # port, what: until GET /readyz answers 200
  for _ in $(seq 1 600); do
    if exec 3<>"/dev/tcp/127.0.0.1/$1" 2>/dev/null; then
      printf 'GET /readyz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
      local status
      read -r _ status _ <&3 || true
      exec 3<&- 3>&-
      [ "$status" = 200 ] && return 0
    fi
    sleep 0.1
  done
  echo "$2 not ready on port $1; see $DIR/*.log" >&2
  return 1
}

start() {
  mkdir -p "$DIR/bin"
  command -v redis-server >/dev/null || { echo "redis-server not found: apt-get install redis-server" >&2; exit 1; }
  echo "building hub and nats-server into $DIR/bin"
  go build -o "$DIR/bin/hub" ./cmd/hub
  go build -o "$DIR/bin/nats-server" github.com/nats-io/nats-server/v2
  local routes=""
  for i in 0 1 2; do routes+="${routes:+,}nats://127.0.0.1:$((ROUTE_BASE + i))"; done
  for i in 0 1 2; do
    mkdir -p "$DIR/nats$i"
    start_one "nats$i" "$DIR/nats$i.log" "$DIR/bin/nats-server" -a 127.0.0.1 -p $((NATS_BASE + i)) \
      -js -sd "$DIR/nats$i" --name "n$i" --cluster_name rshub \
      --cluster "nats://127.0.0.1:$((ROUTE_BASE + i))" --routes "$routes"
  done
  start_one redis "$DIR/redis.log" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$DIR" --appendonly yes
  for i in 0 1 2; do wait_port $((NATS_BASE + i)) "nats$i"; done
  wait_port "$REDIS_PORT" redis
  for i in 0 1 2; do
    start_one "hub$i" "$DIR/hub$i.log" "$DIR/bin/hub" --listen "127.0.0.1:$((HUB_BASE + i))" --hub-url "$HUB_URL" \
      --nats-url "$(nats_urls)" --nats-replicas 3 --redis-url "redis://127.0.0.1:$REDIS_PORT/0" \
      --allow-networks 127.0.0.0/8 --claim-ttl 10s --reconcile 2s
  done
  for i in 0 1 2; do wait_ready $((HUB_BASE + i)) "hub$i"; done
  echo "cluster up: hubs http://127.0.0.1:${HUB_BASE}/ .. http://127.0.0.1:$((HUB_BASE + 2))/ (hub URL $HUB_URL)"
  echo "NATS $(nats_urls); Redis redis://127.0.0.1:$REDIS_PORT/0; logs in $DIR"
}

stop() {
  local any=0
  for f in "$DIR"/*.pid; do
    [ -e "$f" ] || continue
    any=1
    kill "$(cat "$f")" 2>/dev/null || true
    rm -f "$f"
  done
  [ $any = 1 ] && echo "stopped" || echo "nothing running"
}

status() {
  for f in "$DIR"/*.pid; do
    [ -e "$f" ] || { echo "nothing running"; return; }
    n=$(basename "$f" .pid)
    if kill -0 "$(cat "$f")" 2>/dev/null; then echo "$n: running"; else echo "$n: dead"; fi
  done
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|status|stop" >&2; exit 2 ;;
esac
