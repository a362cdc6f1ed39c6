#!/usr/bin/env bash
# Compares two knee builds' open-loop pacing and client CPU on one
# simulator, in interleaved pairs: send lateness against the schedule
# (p50, p99), the client's CPU seconds, and its CPU per request.
# Usage: scripts/pacing/ab.sh OLD_KNEE NEW_KNEE [RATES] [SECONDS] [PAIRS] [EXTRA RUN FLAGS...]
#   e.g. scripts/pacing/ab.sh /tmp/knee-old ./knee 5000,10000 5 3
#        scripts/pacing/ab.sh /tmp/knee-old ./knee 0 5 3 --concurrency 64   (a closed loop: RATES 0)
set -euo pipefail
old=$1; new=$2; rates=${3:-5000,10000}; secs=${4:-5}; pairs=${5:-3}; shift $(( $# < 5 ? $# : 5 ))
work=$(mktemp -d); trap 'kill $sim 2>/dev/null; rm -rf "$work"' EXIT
"$new" sim --port 0 --ready-file "$work/ready" --responses builtin:bench-responses 2>/dev/null & sim=$!
for _ in $(seq 100); do [ -s "$work/ready" ] && break; sleep 0.05; done
addr=$(cat "$work/ready")
printf '%-5s %6s %5s  %10s %10s %8s %10s\n' build rate pair "late p50" "late p99" "CPU s" "CPU/req"
for rate in ${rates//,/ }; do
  load=(--rate "$rate" --burstiness 1000)
  [ "$rate" = 0 ] && load=()
  for pair in $(seq "$pairs"); do
    for b in old new; do
      bin=$old; [ $b = new ] && bin=$new
      "$bin" run --base-url "http://$addr/v1" --model knee-sim-instant "${load[@]}" --duration "${secs}s" \
        --max-tokens 1 --prompt hi --no-server-metrics --warmup 0 --quiet -o "$work/$b.json" "$@"
      python3 - "$work/$b.json" "$b" "$rate" "$pair" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
a, h = r['arrivals'], r['health']
n = max(r['requests']['sent'], 1)
print(f"{sys.argv[2]:5} {sys.argv[3]:>6} {sys.argv[4]:>5}  {a.get('send_lateness_p50_ms', 0):>8.3f}ms {a.get('send_lateness_p99_ms', 0):>8.3f}ms "
      f"{h['cpu_s']:>7.2f}s {1e6 * h['cpu_s'] / n:>8.1f}µs")
PY
    done
  done
done
