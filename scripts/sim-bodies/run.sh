#!/bin/sh
# knee sim under a flood of large bodies: 16 concurrent requests of 30 MB
# against a simulator capped at 3 GB of address space (ulimit -v), as
# issue 34 reproduced its out-of-memory death. Prints the simulator's
# peak RSS, the answers' status codes and whether it still serves.
#
# Usage: scripts/sim-bodies/run.sh [KNEE] [EXTRA SIM FLAGS...]
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
knee=${1:-}
[ $# -gt 0 ] && shift
if [ -z "$knee" ]; then
	knee=$work/knee
	(cd "$here" && go build -o "$knee" ./cmd/knee)
fi
python3 -c "
import json
open('$work/big.json','w').write(json.dumps({'model':'knee-sim','messages':[{'role':'user','content':'word '*(6*1024*1024)}],'max_tokens':4}))"
port=28700
(ulimit -v 3000000; exec "$knee" sim --port $port --max-body-bytes 40000000 "$@" >"$work/sim.log" 2>&1) &
pid=$!
sleep 1
for i in $(seq 16); do
	curl -s -o /dev/null -w "%{http_code}\n" -H 'Content-Type: application/json' \
		--data-binary @"$work/big.json" http://127.0.0.1:$port/v1/chat/completions >>"$work/codes" &
done
peak=0
for k in $(seq 40); do
	r=$(ps -o rss= -p $pid 2>/dev/null || echo 0)
	[ "$r" -gt "$peak" ] && peak=$r
	sleep 0.5
done
wait 2>/dev/null || true
echo "peak RSS $((peak / 1024)) MiB"
sort "$work/codes" | uniq -c
curl -s -o /dev/null -w "health afterwards: %{http_code}\n" http://127.0.0.1:$port/health || true
kill $pid 2>/dev/null || true
grep -i "out of memory" "$work/sim.log" | head -1 || true
