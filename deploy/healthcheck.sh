#!/usr/bin/env bash
# Container health check: succeeds when GET /v2/health/ready answers 200. Uses bash's
# /dev/tcp so the runtime image needs no HTTP client. Port: IGNIS_HEALTH_PORT (default 8000,
# the server's default --http-port); change it when the server runs with another --http-port.
set -uo pipefail
port=${IGNIS_HEALTH_PORT:-8000}
exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
printf 'GET /v2/health/ready HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nConnection: close\r\n\r\n' "$port" >&3
read -r -t 5 _ status _ <&3 || exit 1
[ "$status" = 200 ]
