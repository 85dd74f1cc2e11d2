#!/bin/sh
# One replica of the app: the start command of deploy/Dockerfile and of every replica
# deploy/run-local.sh starts. Run from anywhere; it serves the repository it lives in.
#
# Environment:
#   APP_ADDRESS      address to listen on (default 0.0.0.0; run-local.sh: 127.0.0.1)
#   APP_PORT         port to listen on (default 8501). Streamlit exits when it is taken
#                    (a port given explicitly is never swapped for the next free one).
#   PYTHON           interpreter with requirements.txt installed (default: python)
#   ROOM_STORE_URL   redis://host:port/db, the room store every replica shares
#
# Nothing here differs from a single server: the replicas behind HAProxy need no
# shared secret and no CORS or XSRF change (deploy/README.md, "Streamlit behind the
# balancer"). A watched file system is useless in a deployment: no file watcher.
set -eu
cd "$(dirname "$0")/.."
exec "${PYTHON:-python}" -m streamlit run app.py \
    --server.headless true \
    --server.address "${APP_ADDRESS:-0.0.0.0}" \
    --server.port "${APP_PORT:-8501}" \
    --server.fileWatcherType none \
    --browser.gatherUsageStats false
