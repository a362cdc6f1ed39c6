#!/usr/bin/env bash
# Interleaved pairs of the client's CPU per streamed token against
# scripts/loopfloor's bare Go reader at the same streams and message rate.
# A pair is: loopfloor (-conns N -interval 10ms), then `knee run` at
# --concurrency N against a separate `knee sim` whose fixed model streams
# 100 tokens/s; the client's figure is its whole process's CPU (user +
# system, /usr/bin/time) over its output tokens, warm-up and set-up of N
# streams included, so it is if anything high.
# Usage (repo root): scripts/client-floor/run.sh STREAMS PAIRS
set -euo pipefail
n=${1:-256} pairs=${2:-5} sim=
tmp=$(mktemp -d)
trap 'kill $sim 2>/dev/null; rm -rf "$tmp"' EXIT
go build -o "$tmp/loopfloor" ./scripts/loopfloor
go build -o "$tmp/knee" ./cmd/knee
. scripts/client-floor/sim.sh
start_sim "$tmp/knee" "$tmp"
for i in $(seq "$pairs"); do
  read -r floor fuser < <("$tmp/loopfloor" -conns "$n" -interval 10ms -duration 10s |
    awk '/^reader:/{sub(/,/, "", $8); print $2, $8}')
  /usr/bin/time -f '%U %S' -o "$tmp/cpu" "$tmp/knee" run --base-url "$url" --model knee-sim-fixed \
    --concurrency "$n" --max-tokens 1000 --duration 12s --warmup 0 --output "$tmp/out.json" >/dev/null 2>&1
  tokens=$(python3 -c "import json;r=json.load(open('$tmp/out.json'));print(r['tokens']['output_total'])")
  read -r u s <"$tmp/cpu"
  python3 -c "
f=$floor; c=($u+$s)*1e6/$tokens
print(f'pair $i: floor {f:.2f} µs/message (user $fuser) · client {c:.2f} µs/token (user {$u*1e6/$tokens:.2f}, system {$s*1e6/$tokens:.2f}) · ratio {c/f:.2f}')"
done
