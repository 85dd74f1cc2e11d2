#!/usr/bin/env bash
# N replicas of the app behind HAProxy, with Redis as their room store, on one machine.
#
#   deploy/run-local.sh [--free-ports] [--state-dir DIR] N
#
# Starts, all on loopback (HAProxy on LB_ADDRESS if set, e.g. 0.0.0.0 on a VM):
#   1. redis-server with deploy/redis.conf (append-only log in DIR/redis);
#   2. N replicas, each deploy/start-app.sh (the Dockerfile's command) with
#      ROOM_STORE_URL=redis://127.0.0.1:<redis port>/0;
#   3. HAProxy with deploy/haproxy.cfg and DIR/servers.cfg (one line per replica).
# It waits until each one answers, prints the learners' URL, and runs until Ctrl-C or
# SIGTERM, then stops HAProxy, the replicas and Redis, in that order. A replica that dies
# stays dead (HAProxy sends its learners to the others). Redis that exits is started again
# after REDIS_RESTART_S seconds (default 5), on the same port and data (its append-only
# log keeps the rooms), as a service manager would; meanwhile the learners' cards say
# their answers were not shared. HAProxy dying stops the whole run with status 1.
#
# Ports, from the environment (or every one free, chosen by the system, with --free-ports):
#   LB_PORT        the learners' port (default 8500)
#   APP_PORT_BASE  replica k listens on APP_PORT_BASE + k - 1 (default 8501)
#   REDIS_PORT     Redis (default 6380)
# Also: PYTHON (interpreter with requirements.txt, default python), HAPROXY_COOKIE_KEY.
#
# DIR (default: $TMPDIR/attention-lab-deploy, so a restart finds the rooms again) holds:
#   state.json  written once everything answers and removed on the way out: the URL, and
#               the pid and port of every process (the tests and benchmarks/scale_out.py
#               wait for it and read it)
#   ports.env   the same ports as shell variables
#   servers.cfg, haproxy.sock, redis/ (Redis's data), logs/<name>.log
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${PYTHON:-python}"
START_TIMEOUT_S="${START_TIMEOUT_S:-120}"

die() { printf 'run-local.sh: %s\n' "$*" >&2; exit 1; }
say() { printf '[run-local] %s\n' "$*"; }
usage() { sed -n '4p' "${BASH_SOURCE[0]}" | sed 's/^# *//' >&2; exit 2; }

free_ports=0
state_dir="${TMPDIR:-/tmp}/attention-lab-deploy"
n=""
while [ $# -gt 0 ]; do
    case "$1" in
        --free-ports) free_ports=1 ;;
        --state-dir) [ $# -ge 2 ] || usage; state_dir="$2"; shift ;;
        -h|--help) usage ;;
        -*) die "unknown option $1" ;;
        *) [ -z "$n" ] || die "one replica count expected, got '$n' and '$1'"; n="$1" ;;
    esac
    shift
done
[ -n "$n" ] || usage
[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 64 ] \
    || die "N, the number of replicas, must be a whole number from 1 to 64 (got '$n')"

for tool in redis-server redis-cli haproxy timeout flock; do
    command -v "$tool" >/dev/null 2>&1 \
        || die "$tool not found (Debian: apt-get install redis-server haproxy)"
done
"$PYTHON" -c 'import streamlit' 2>/dev/null \
    || die "PYTHON=$PYTHON cannot import streamlit (pip install -r requirements.txt)"

# --- ports ----------------------------------------------------------------------------
if [ "$free_ports" -eq 1 ]; then
    # n + 2 distinct free ports: all bound at once, then released
    read -r -a ports <<<"$("$PYTHON" - "$((n + 2))" <<'EOF'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
)"
    LB_PORT="${ports[0]}"
    REDIS_PORT="${ports[1]}"
    app_ports=("${ports[@]:2}")
else
    LB_PORT="${LB_PORT:-8500}"
    REDIS_PORT="${REDIS_PORT:-6380}"
    base="${APP_PORT_BASE:-8501}"
    app_ports=()
    for ((k = 0; k < n; k++)); do app_ports+=("$((base + k))"); done
fi
for p in "$LB_PORT" "$REDIS_PORT" "${app_ports[@]}"; do
    [[ "$p" =~ ^[0-9]+$ ]] && [ "$p" -ge 1 ] && [ "$p" -le 65535 ] \
        || die "bad port '$p' (1 to 65535; --free-ports lets the system choose)"
done

# --- state folder ---------------------------------------------------------------------
mkdir -p "$state_dir"
state_dir="$(cd "$state_dir" && pwd)"
exec 9>"$state_dir/.lock"
flock -n 9 || die "another run-local.sh is using $state_dir (--state-dir picks another)"
rm -f "$state_dir/state.json" "$state_dir/ports.env" "$state_dir/haproxy.sock"
mkdir -p "$state_dir/redis" "$state_dir/logs"

# --- stopping -------------------------------------------------------------------------
haproxy_pid=""
redis_pid=""
app_pids=()

stop_pid() {  # stop_pid PID NAME: SIGTERM, then SIGKILL after 10 s
    local pid="$1" name="$2" i
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        say "$name (pid $pid) did not stop within 10 s; killing it"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}

stopping=0
stop_all() {
    [ "$stopping" -eq 0 ] || return 0
    stopping=1
    rm -f "$state_dir/state.json" "$state_dir/ports.env"
    stop_pid "$haproxy_pid" haproxy  # first: no new requests
    local k
    for k in "${!app_pids[@]}"; do stop_pid "${app_pids[$k]}" "replica r$((k + 1))"; done
    stop_pid "$redis_pid" redis-server  # last: it flushes its log on SIGTERM
    rm -f "$state_dir/haproxy.sock"
    say "stopped"
}
trap 'stop_all' EXIT
trap 'exit 0' INT TERM

http_ok() (  # http_ok PORT PATH: GET http://127.0.0.1:PORT/PATH answers 200 within 5 s
    exec 3<>"/dev/tcp/127.0.0.1/$1"
    printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1:%s\r\n\r\n' "$2" "$1" >&3
    IFS= read -r -t 5 status_line <&3
    [[ "$status_line" == "HTTP/1."?" 200 "* ]]
)

redis_ok() {  # redis_ok PORT: Redis on 127.0.0.1:PORT answers PING within 5 s
    [ "$(timeout 5 redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null)" = PONG ]
}

wait_for() {  # wait_for NAME PID COMMAND...: until COMMAND succeeds, the process lives
    local name="$1" pid="$2" deadline=$((SECONDS + START_TIMEOUT_S))
    shift 2
    until "$@" >/dev/null 2>&1; do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -n 20 "$state_dir/logs/$name.log" >&2 || true
            die "$name exited while starting (log: $state_dir/logs/$name.log)"
        fi
        [ "$SECONDS" -lt "$deadline" ] \
            || die "$name not ready after $START_TIMEOUT_S s (log: $state_dir/logs/$name.log)"
        sleep 0.3
    done
}

# --- 1. Redis -------------------------------------------------------------------------
start_redis() {
    redis-server "$HERE/redis.conf" --port "$REDIS_PORT" --bind 127.0.0.1 \
        --dir "$state_dir/redis" >>"$state_dir/logs/redis.log" 2>&1 &
    redis_pid=$!
    wait_for redis "$redis_pid" redis_ok "$REDIS_PORT"
}
REDIS_RESTART_S="${REDIS_RESTART_S:-5}"
[[ "$REDIS_RESTART_S" =~ ^[0-9]+(\.[0-9]+)?$ ]] \
    || die "REDIS_RESTART_S must be a number of seconds (got '$REDIS_RESTART_S')"
start_redis
room_store_url="redis://127.0.0.1:$REDIS_PORT/0"
say "redis on port $REDIS_PORT (pid $redis_pid, data in $state_dir/redis)"

# --- 2. the replicas ------------------------------------------------------------------
for ((k = 0; k < n; k++)); do
    APP_ADDRESS=127.0.0.1 APP_PORT="${app_ports[$k]}" ROOM_STORE_URL="$room_store_url" \
        PYTHON="$PYTHON" "$HERE/start-app.sh" >"$state_dir/logs/r$((k + 1)).log" 2>&1 &
    app_pids+=("$!")
done
for ((k = 0; k < n; k++)); do
    wait_for "r$((k + 1))" "${app_pids[$k]}" \
        http_ok "${app_ports[$k]}" /_stcore/health
    say "replica r$((k + 1)) on port ${app_ports[$k]} (pid ${app_pids[$k]})"
done

# --- 3. HAProxy -----------------------------------------------------------------------
{
    echo "# written by deploy/run-local.sh: this run's replicas, for deploy/haproxy.cfg"
    echo "backend replicas"
    for ((k = 0; k < n; k++)); do
        echo "    server r$((k + 1)) 127.0.0.1:${app_ports[$k]}"
    done
} >"$state_dir/servers.cfg"
export LB_ADDRESS="${LB_ADDRESS:-127.0.0.1}" LB_PORT HAPROXY_STATE_DIR="$state_dir"
export HAPROXY_COOKIE_KEY="${HAPROXY_COOKIE_KEY:-attention-scaling-lab}"
haproxy_args=(-f "$HERE/haproxy.cfg" -f "$state_dir/servers.cfg")
haproxy -c -q "${haproxy_args[@]}" >"$state_dir/logs/haproxy.log" 2>&1 \
    || { cat "$state_dir/logs/haproxy.log" >&2; die "haproxy rejects its configuration"; }
haproxy -db "${haproxy_args[@]}" >>"$state_dir/logs/haproxy.log" 2>&1 &
haproxy_pid=$!
url="http://127.0.0.1:$LB_PORT/"  # LB_ADDRESS 0.0.0.0 also listens there
wait_for haproxy "$haproxy_pid" http_ok "$LB_PORT" /_stcore/health

# --- ready ----------------------------------------------------------------------------
{
    echo "LB_PORT=$LB_PORT"
    echo "REDIS_PORT=$REDIS_PORT"
    echo "APP_PORTS=\"${app_ports[*]}\""
} >"$state_dir/ports.env"
write_state() {  # state.json: written whole, then moved into place
    replicas_json=""
    for ((k = 0; k < n; k++)); do
        [ -z "$replicas_json" ] || replicas_json+=", "
        replicas_json+="{\"name\": \"r$((k + 1))\", \"port\": ${app_ports[$k]}, \"pid\": ${app_pids[$k]},"
        replicas_json+=" \"log\": \"$state_dir/logs/r$((k + 1)).log\"}"
    done
    cat >"$state_dir/state.json.tmp" <<EOF
{
  "url": "$url",
  "pid": $$,
  "state_dir": "$state_dir",
  "haproxy": {"pid": $haproxy_pid, "port": $LB_PORT, "stats_socket": "$state_dir/haproxy.sock",
              "log": "$state_dir/logs/haproxy.log"},
  "redis": {"pid": $redis_pid, "port": $REDIS_PORT, "url": "$room_store_url",
            "dir": "$state_dir/redis", "log": "$state_dir/logs/redis.log"},
  "replicas": [$replicas_json]
}
EOF
    mv "$state_dir/state.json.tmp" "$state_dir/state.json"
}
write_state
say "$n replica(s) behind HAProxy: $url   (Ctrl-C stops everything)"

# --- run until told to stop -----------------------------------------------------------
declare -A reported=()
while true; do
    sleep 1 &
    wait $! || true
    kill -0 "$haproxy_pid" 2>/dev/null || die "haproxy exited (log: $state_dir/logs/haproxy.log)"
    if ! kill -0 "$redis_pid" 2>/dev/null; then
        wait "$redis_pid" 2>/dev/null || true
        say "redis-server (pid $redis_pid) exited; starting it again in $REDIS_RESTART_S s"
        sleep "$REDIS_RESTART_S" &
        wait $! || true
        start_redis
        write_state
        say "redis on port $REDIS_PORT again (pid $redis_pid)"
    fi
    for k in "${!app_pids[@]}"; do
        if [ -z "${reported[$k]:-}" ] && ! kill -0 "${app_pids[$k]}" 2>/dev/null; then
            reported[$k]=1
            say "replica r$((k + 1)) (pid ${app_pids[$k]}) exited; HAProxy sends its learners to the others"
        fi
    done
done
