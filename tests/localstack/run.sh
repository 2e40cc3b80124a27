#!/usr/bin/env bash
# LocalStack's own SQS (localstack-core 4.14.0, host mode, no Docker) for `make verify` (issue 27):
# its own Python 3.13 venv (.venv-localstack, tests/localstack/requirements.lock), bound to
# 127.0.0.1 on a free port, every file it writes under a temporary folder removed afterwards; the
# queue contract and the event-source-mapping contract run against it (REMINDERS_TEST_LOCALSTACK_SQS).
# Extra arguments go to pytest. LocalStack's DynamoDB is not run: it downloads DynamoDB Local and a
# JDK at start, and this machine reaches no host but the package registries.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=.venv-localstack
LOCK=tests/localstack/requirements.lock

python313() {
  local c
  for c in "${PYTHON313:-}" python3.13; do
    if [ -n "$c" ] && "$c" -c 'import sys; assert sys.version_info[:2] == (3, 13)' 2>/dev/null; then
      command -v "$c"
      return 0
    fi
  done
  if command -v pyenv >/dev/null 2>&1; then  # an installed 3.13 that is not pyenv's global one
    for c in "$(pyenv root)"/versions/3.13*/bin/python3.13; do
      if [ -x "$c" ]; then echo "$c"; return 0; fi
    done
  fi
  .venv/bin/uv python find 3.13 2>/dev/null && return 0
  # python-build-standalone comes from GitHub: fails where only the package registries are reachable.
  .venv/bin/uv python install 3.13 >&2 && .venv/bin/uv python find 3.13
}

if [ ! -f "$VENV/.installed" ] || [ "$LOCK" -nt "$VENV/.installed" ]; then
  PY313=$(python313) || { echo "run.sh: no Python 3.13 here (set PYTHON313=/path/to/python3.13)" >&2; exit 1; }
  rm -rf "$VENV"
  "$PY313" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$LOCK"
  touch "$VENV/.installed"
fi

DATA=$(mktemp -d)
PORT=$(.venv/bin/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ROOT=$PWD
# Host mode even inside a container (OVERRIDE_IN_DOCKER=0: its files under FILESYSTEM_ROOT, not
# /var/lib/localstack); hypercorn binds the host given (its twisted server binds 0.0.0.0); no DNS
# server, no analytics, no certificate download.
(
  cd "$DATA"
  exec env HOME="$DATA" OVERRIDE_IN_DOCKER=0 FILESYSTEM_ROOT="$DATA/fs" SERVICES=sqs \
    GATEWAY_SERVER=hypercorn GATEWAY_LISTEN="127.0.0.1:$PORT" SQS_ENDPOINT_STRATEGY=path \
    DNS_ADDRESS=0 DISABLE_EVENTS=1 SKIP_SSL_CERT_DOWNLOAD=1 \
    "$ROOT/$VENV/bin/python" -m localstack.runtime.main
) >"$DATA/localstack.log" 2>&1 &
LS_PID=$!
cleanup() {
  # By its pid: only the process this script started. LocalStack 4.14.0 can hang in its shutdown
  # after SIGTERM ("Stopping all services" and no exit): a bounded poll, then SIGKILL, and the
  # temporary folder goes whatever the tests said.
  kill "$LS_PID" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$LS_PID" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$LS_PID" 2>/dev/null || true
  wait "$LS_PID" 2>/dev/null || true
  rm -rf "$DATA"
}
trap cleanup EXIT

for _ in $(seq 600); do  # ready when its health names SQS (a poll, a few seconds)
  if ! kill -0 "$LS_PID" 2>/dev/null; then cat "$DATA/localstack.log" >&2; echo "LocalStack exited" >&2; exit 1; fi
  if .venv/bin/python - "$PORT" <<'EOF' 2>/dev/null; then break; fi
import json, sys, urllib.request
health = json.load(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/_localstack/health", timeout=1))
sys.exit(0 if health["services"].get("sqs") in ("available", "running") else 1)
EOF
  sleep 0.2
done
echo "$(grep -o "LocalStack version: [0-9.]*" "$DATA/localstack.log" || true): SQS on 127.0.0.1:$PORT"
REMINDERS_TEST_LOCALSTACK_SQS="http://127.0.0.1:$PORT" .venv/bin/python -m pytest -q -p no:randomly \
  tests/contract/test_queue_contract.py tests/contract/test_esm_contract.py -k sqs-localstack "$@"
