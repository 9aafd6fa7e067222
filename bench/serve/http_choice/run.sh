#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the candidate HTTP servers (Beast, cpp-httplib, evhttp) and runs the wrk comparison,
# interleaving the servers over several rounds; prints markdown tables of the medians.
#   bench/serve/http_choice/run.sh            # ROUNDS=3 DURATION=5s CONNS="1 16 64 256"
# Needs: cmake, g++, libboost-dev, libcpp-httplib-dev, wrk, curl, ss (iproute2); libevent-dev
# is optional. DURATION must be 5 s or more (the under-load checks happen 3 s in).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-/tmp/http_choice_build}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5s}
CONNS=${CONNS:-"1 16 64 256"}
PORT=${PORT:-18080}
SCRIPT="$HERE/post_infer.lua"
RESULTS="$BUILD/results.tsv"
URL="http://127.0.0.1:$PORT"

# ---- build, timing each translation unit alone (compile only, -j1) ----
cmake -S "$HERE" -B "$BUILD" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release >/dev/null
make -C "$BUILD" clean >/dev/null
declare -A COMPILE_S
make_targets=$(make -C "$BUILD" help)
for tu in beast_server httplib_server evhttp_server; do
  if [[ $make_targets == *" $tu.o"* ]]; then
    t0=$(date +%s.%N)
    make -C "$BUILD" -j1 "$tu.o" >/dev/null
    t1=$(date +%s.%N)
    COMPILE_S[$tu]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  fi
done
cmake --build "$BUILD" -j2 >/dev/null

# ---- configurations: label, binary, threads ----
CONFIGS=(
  "beast t1|beast_server|1"
  "beast t2|beast_server|2"
  "httplib pool1|httplib_server|1"
  "httplib pool2|httplib_server|2"
  "httplib pool32|httplib_server|32"
)
if [[ -x "$BUILD/evhttp_server" ]]; then
  CONFIGS+=("evhttp t1|evhttp_server|1" "evhttp t2|evhttp_server|2")
fi

SERVER_PID=""
stop_server() {
  if [[ -n "$SERVER_PID" ]]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
  fi
}
trap stop_server EXIT

# Starts a server and waits for /v2/health/ready. A restart on the same port can fail to bind
# while the previous server's orphaned sockets are still closing, so it retries a few times.
start_server() {
  local bin=$1 threads=$2
  for _ in 1 2 3 4 5; do
    "$BUILD/$bin" "$PORT" "$threads" 2>/dev/null &
    SERVER_PID=$!
    for _ in $(seq 50); do
      kill -0 "$SERVER_PID" 2>/dev/null || break
      if [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$URL/v2/health/ready") == 200 ]]; then
        return 0
      fi
      sleep 0.1
    done
    stop_server
    sleep 2
  done
  echo "$bin did not start on port $PORT" >&2
  return 1
}

# One wrk run (DURATION of 5 s or more). 3 s in, two looks at the server under load:
#  - starved connections: wrk reports no error for a connection that never gets an answer, so
#    `ss` lists wrk's sockets and counts those that have received nothing for 500 ms, or are
#    still connecting (a server whose accept queue overflowed leaves them waiting for SYN
#    retries, or with the client believing it is connected while the server holds nothing);
#  - a fresh connection asks /v2/health/ready, like a readiness probe (1.5 s limit).
# Prints: rps p50_us p99_us socket_errors non2xx starved probe_ms (-1 = no answer)
measure() {
  local conns=$1 out look
  look=$(mktemp)
  ( sleep 3
    ss -tinH state established state syn-sent "( dport = :$PORT )" |
      awk '/^SYN-SENT/ { n++ }
           /lastrcv:/ { match($0, /lastrcv:[0-9]+/); if (substr($0, RSTART + 8, RLENGTH - 8) + 0 >= 500) n++ }
           END { printf "%d ", n }' >"$look"
    curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 1.5 "$URL/v2/health/ready" \
      >>"$look" || true ) &
  local look_pid=$!
  out=$(wrk -t1 -c"$conns" -d"$DURATION" --latency -s "$SCRIPT" "$URL")
  wait "$look_pid" || true
  local starved_probe
  starved_probe=$(awk '{ printf "%d ", $1 } $2 == 200 { printf "%.3f", $3 * 1000; ok = 1 }
                       END { if (!ok) print -1 }' "$look")
  rm -f "$look"
  echo "$out" | awk -v tail="$starved_probe" '
    function us(v) {
      if (v ~ /us$/) return v + 0
      if (v ~ /ms$/) return v * 1000
      if (v ~ /s$/) return v * 1000000
      return v + 0
    }
    $1 == "50%" { p50 = us($2) }
    $1 == "99%" { p99 = us($2) }
    $1 == "Requests/sec:" { rps = $2 }
    /Socket errors:/ { gsub(",", ""); errs = $4 + $6 + $8 + $10 }
    /Non-2xx or 3xx responses:/ { non2xx = $5 }
    END { printf "%s %s %s %d %d %s\n", rps, p50, p99, errs, non2xx, tail }'
}

[[ -r "$SCRIPT" ]] || { echo "missing $SCRIPT" >&2; exit 1; }  # wrk would fall back to GET /
: >"$RESULTS"
if curl -s -o /dev/null --max-time 1 "$URL/"; then
  echo "something already listens on port $PORT; set PORT=..." >&2
  exit 1
fi
for round in $(seq "$ROUNDS"); do
  for cfg in "${CONFIGS[@]}"; do
    IFS='|' read -r label bin threads <<<"$cfg"
    start_server "$bin" "$threads"
    for c in $CONNS; do
      line=$(measure "$c")
      printf '%s\t%s\t%s\t%s\n' "$round" "$label" "$c" "${line// /$'\t'}" >>"$RESULTS"
      sleep 1
    done
    rss=$(awk '/^VmHWM:/ { print $2 }' "/proc/$SERVER_PID/status")
    printf '%s\t%s\trss\t%s\n' "$round" "$label" "$rss" >>"$RESULTS"
    stop_server
    echo "round $round: $label done" >&2
  done
done

# ---- report ----
echo "## HTTP server libraries for ignis serve: measured $(date -u +%F)"
echo
echo "CPU: $(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1), $(nproc) logical CPUs;" \
  "$(uname -sr); g++ $(g++ -dumpfullversion); wrk and the server share the machine."
echo "Load: \`wrk -t1 -c C -d $DURATION --latency -s post_infer.lua\` (POST of a 3236-byte" \
  "KServe v2 binary request: 100-byte JSON header + 28x28 FP32), medians of $ROUNDS interleaved rounds."
echo
echo "| server | conns | req/s | p50 | p99 | wrk errors (max) | non-2xx (max) | starved conns at 3 s (max) | health probe under load |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---|"
awk -F'\t' -v conns="$CONNS" '
  function median(list,   v, n, i, j, t) {
    n = split(list, v, ",")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
      t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
    }
    return v[int((n + 1) / 2)]
  }
  function dur(u) {
    if (u < 1000) return sprintf("%d us", u)
    if (u < 1000000) return sprintf("%.2f ms", u / 1000)
    return sprintf("%.2f s", u / 1000000)
  }
  function maxof(list,   v, n, i, m) {
    n = split(list, v, ","); m = v[1] + 0
    for (i = 2; i <= n; i++) if (v[i] + 0 > m) m = v[i] + 0
    return m
  }
  $3 == "rss" { rss[$2] = rss[$2] (rss[$2] == "" ? "" : ",") $4; next }
  {
    if (!($2 in seen)) { seen[$2] = 1; order[++nc] = $2 }
    k = $2 SUBSEP $3
    rps[k] = rps[k] (rps[k] == "" ? "" : ",") $4
    p50[k] = p50[k] (p50[k] == "" ? "" : ",") $5
    p99[k] = p99[k] (p99[k] == "" ? "" : ",") $6
    err[k] = err[k] (err[k] == "" ? "" : ",") $7
    bad[k] = bad[k] (bad[k] == "" ? "" : ",") $8
    st[k] = st[k] (st[k] == "" ? "" : ",") $9
    if ($10 < 0) { miss[k]++ } else { probe[k] = probe[k] (probe[k] == "" ? "" : ",") $10 }
    runs[k]++
  }
  END {
    nconn = split(conns, cs, " ")
    for (i = 1; i <= nconn; i++) for (j = 1; j <= nc; j++) {
      k = order[j] SUBSEP cs[i]
      if (!(k in runs)) continue
      pr = (miss[k] > 0) ? sprintf("no answer in 1.5 s (%d/%d runs)", miss[k], runs[k]) \
                         : sprintf("%.1f ms", median(probe[k]))
      printf "| %s | %s | %.0f | %s | %s | %d | %d | %d | %s |\n", order[j], cs[i], median(rps[k]),
             dur(median(p50[k])), dur(median(p99[k])), maxof(err[k]), maxof(bad[k]), maxof(st[k]), pr
    }
    print ""
    print "| server | peak RSS (VmHWM) after all runs |"
    print "|---|---:|"
    for (j = 1; j <= nc; j++) printf "| %s | %.1f MiB |\n", order[j], median(rss[order[j]]) / 1024
  }' "$RESULTS"
echo
echo "| translation unit | compile time (-O2, -j1, one TU) |"
echo "|---|---:|"
for tu in beast_server httplib_server evhttp_server; do
  [[ -n "${COMPILE_S[$tu]:-}" ]] && echo "| $tu.cc | ${COMPILE_S[$tu]} s |"
done
echo
echo "Raw per-run numbers: $RESULTS"
