#!/usr/bin/env bash
# Measures one load against a separate `knee sim` process and prints the
# client's report plus the simulator process's CPU per output token.
# Usage: scripts/perf-run.sh [knee run flags...]   (run from the repo root)
set -euo pipefail
bin=${KNEE:-./knee}
[ -x "$bin" ] || go build -o "$bin" ./cmd/knee
ready=$(mktemp)
"$bin" sim --port 0 --ready-file "$ready" --responses builtin:bench-responses ${SIM_FLAGS:-} 2>/dev/null &
sim=$!
trap 'kill $sim 2>/dev/null; rm -f "$ready"' EXIT
for _ in $(seq 100); do [ -s "$ready" ] && break; sleep 0.05; done
url="http://$(cat "$ready")/v1"
ticks() { awk '{print $14, $15}' /proc/$sim/stat; }
hz=$(getconf CLK_TCK)
read -r u0 s0 < <(ticks)
out=$(mktemp)
"$bin" run --base-url "$url" --output "$out" "$@"
read -r u1 s1 < <(ticks)
tokens=$(python3 -c "import json;r=json.load(open('$out'));s=r.get('server') or {};print(s.get('output_tokens') or r['tokens']['output_total'])")
python3 - "$u0" "$s0" "$u1" "$s1" "$hz" "$tokens" <<'PY'
import sys
u0,s0,u1,s1,hz,tokens=map(float,sys.argv[1:])
user,system=(u1-u0)/hz,(s1-s0)/hz
cpu=user+system
per=lambda x: x*1e6/max(tokens,1)
print(f"simulator process: {cpu:.2f} CPU-s for {tokens:.0f} output tokens = {per(cpu):.2f} µs/token"
      f" (user {per(user):.2f}, system {per(system):.2f}; includes warm-up traffic)")
PY
rm -f "$out"
