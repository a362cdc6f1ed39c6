#!/usr/bin/env bash
# Interleaved A/B of two knee builds' client CPU per streamed token, each
# round the floor's reader first, then both builds in turn (the order
# alternating), all against one `knee sim` streaming 100 tokens/s.
# Usage (repo root): scripts/client-floor/ab.sh OLD_KNEE NEW_KNEE [STREAMS] [ROUNDS]
# Prints per round: floor, each build's CPU and user CPU per token (µs),
# and each build's ratio to the floor.
set -euo pipefail
old=$1 new=$2 n=${3:-256} rounds=${4:-6} sim=
tmp=$(mktemp -d)
trap 'kill $sim 2>/dev/null; rm -rf "$tmp"' EXIT
go build -o "$tmp/loopfloor" ./scripts/loopfloor
. scripts/client-floor/sim.sh
start_sim "$new" "$tmp"
one() { # one BINARY: "total user" µs per token
  /usr/bin/time -f '%U %S' -o "$tmp/cpu" "$1" run --base-url "$url" --model knee-sim-fixed \
    --concurrency "$n" --max-tokens 1000 --duration 12s --warmup 0 --output "$tmp/out.json" >/dev/null 2>&1
  python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
tokens = json.load(open(d + "/out.json"))["tokens"]["output_total"]
u, s = map(float, open(d + "/cpu").read().split())
print(f"{(u + s) * 1e6 / tokens:.2f} {u * 1e6 / tokens:.2f}")
PY
}
for i in $(seq "$rounds"); do
  read -r floor fuser < <("$tmp/loopfloor" -conns "$n" -interval 10ms -duration 10s |
    awk '/^reader:/{sub(/,/, "", $8); print $2, $8}')
  if [ $((i % 2)) = 1 ]; then a=$(one "$old"); b=$(one "$new"); else b=$(one "$new"); a=$(one "$old"); fi
  read -r at au <<<"$a"; read -r bt bu <<<"$b"
  python3 -c "print(f'round $i: floor $floor (user $fuser) · old $at (user $au) · new $bt (user $bu) · ratio old {$at/$floor:.2f} new {$bt/$floor:.2f}')"
done
