#!/usr/bin/env bash
# Starts (or stops) a local rshub cluster on loopback: three nats-server
# processes forming a JetStream cluster (built from the Go module), one
# redis-server and three hubs sharing them, with an admin token and an open
# channel "demo" to publish to.
#
#   examples/cluster/cluster.sh start   # build, start everything, print the URLs and a publish command
#   examples/cluster/cluster.sh status  # which processes are alive
#   examples/cluster/cluster.sh stop    # stop everything started by start
#
# Ports (loopback; each can be moved with the environment variable named):
#   hubs (HTTP)    18081 18082 18083   HUB_BASE
#   NATS clients   14222 14223 14224   NATS_BASE
#   NATS routes    16222 16223 16224   ROUTE_BASE
#   Redis          16379               REDIS_PORT
# State, logs and pids live in RSHUB_CLUSTER_DIR (default /tmp/rshub-cluster);
# the admin token is RSHUB_ADMIN_TOKEN, or one generated into
# $RSHUB_CLUSTER_DIR/admin-token on the first start.
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

# Every probe runs in a subshell with its own stderr silenced: a refused
# connection is expected while a server starts, and the script's own
# stderr stays as it was for the errors that matter.
wait_port() { # port, what
  for _ in $(seq 1 200); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "$2 did not open port $1; see $DIR/$2.log" >&2
  return 1
}

readyz() { # port: prints the HTTP status of GET /readyz, or nothing
  (
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 0
    printf 'GET /readyz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
    read -r _ status _ <&3 && echo "$status"
  ) 2>/dev/null || true
}

wait_ready() { # port, what: until GET /readyz answers 200 (60 s at most)
  for _ in $(seq 1 600); do
    [ "$(readyz "$1")" = 200 ] && return 0
    sleep 0.1
  done
  echo "$2 not ready on port $1; see $DIR/$2.log" >&2
  return 1
}

admin_token() { # the token every hub takes: RSHUB_ADMIN_TOKEN, or one kept in $DIR
  if [ -n "${RSHUB_ADMIN_TOKEN:-}" ]; then echo "$RSHUB_ADMIN_TOKEN"; return; fi
  if [ ! -s "$DIR/admin-token" ]; then
    od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$DIR/admin-token"
  fi
  cat "$DIR/admin-token"
}

create_demo_channel() { # an open channel "demo" hosted by the cluster, unless it exists
  local body='{"name":"demo","topic":"'"${HUB_URL}"'topics/demo","trust":"open","hosted":true}'
  local status
  status=$(curl -s -o "$DIR/channel.out" -w '%{http_code}' -X POST "${HUB_URL}admin/channels" \
    -H "Authorization: Bearer $1" -H 'Content-Type: application/json' --data "$body")
  case "$status" in
    200 | 201) echo "channel demo: ${HUB_URL}topics/demo (open: any publisher)" ;;
    409) echo "channel demo: exists" ;;
    *) echo "creating channel demo answered $status: $(cat "$DIR/channel.out")" >&2; return 1 ;;
  esac
}

start() {
  mkdir -p "$DIR/bin"
  command -v redis-server >/dev/null || { echo "redis-server not found: apt-get install redis-server" >&2; exit 1; }
  command -v curl >/dev/null || { echo "curl not found: apt-get install curl" >&2; exit 1; }
  for f in "$DIR"/*.pid; do
    if [ -e "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; then
      echo "a cluster already runs from $DIR ($(basename "$f" .pid) is alive): $0 stop first, or set RSHUB_CLUSTER_DIR and the ports (see $0)" >&2
      exit 1
    fi
  done
  local token
  token=$(admin_token)
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
      --allow-networks 127.0.0.0/8 --claim-ttl 10s --reconcile 2s --admin-token "$token"
  done
  for i in 0 1 2; do wait_ready $((HUB_BASE + i)) "hub$i"; done
  create_demo_channel "$token"
  echo "cluster up: hubs http://127.0.0.1:${HUB_BASE}/ .. http://127.0.0.1:$((HUB_BASE + 2))/ (hub URL $HUB_URL)"
  echo "NATS $(nats_urls); Redis redis://127.0.0.1:$REDIS_PORT/0; logs in $DIR"
  echo "admin token: $token (dashboard ${HUB_URL}dashboard/#token=$token)"
  echo "publish:"
  echo "  curl -i $HUB_URL -H 'Content-Type: application/xml' \\"
  echo "    -H 'Link: <${HUB_URL}topics/demo>; rel=\"self\", <$HUB_URL>; rel=\"hub\"' \\"
  echo "    --data-binary @changefeed/testdata/spec/notif_1_3_payload.xml"
}

stop() { # SIGTERM to everything started, then wait (10 s at most, then SIGKILL) until each has exited
  local any=0 pids=()
  for f in "$DIR"/*.pid; do
    [ -e "$f" ] || continue
    any=1
    pid=$(cat "$f")
    kill "$pid" 2>/dev/null && pids+=("$pid")
    rm -f "$f"
  done
  for _ in $(seq 1 100); do
    alive=()
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive+=("$pid"); done
    [ ${#alive[@]} -eq 0 ] && { pids=(); break; }
    pids=("${alive[@]}")
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
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
