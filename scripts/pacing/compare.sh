#!/usr/bin/env bash
# Compares knee's open-loop pacing with vegeta's on the same simulator, in
# interleaved pairs: send lateness against the schedule (p50, p99) and the
# client's CPU time. vegeta is a benchmark tool, not a dependency:
#   GOBIN=$HOME/bin go install github.com/tsenart/vegeta/v12@v12.13.0
# Usage: scripts/pacing/compare.sh [RATES] [SECONDS] [PAIRS]   (from the repo root)
#   e.g. scripts/pacing/compare.sh 5000,10000 5 3
# knee is asked for an all-but-constant schedule (--burstiness 1000), as
# vegeta's constant pacer offers; both send the same one-token chat request
# to the simulator's instant model, and its answer is read whole.
set -euo pipefail
rates=${1:-5000,10000}; secs=${2:-5}; pairs=${3:-3}
knee=${KNEE:-./knee}; vegeta=${VEGETA:-vegeta}
[ -x "$knee" ] || go build -o "$knee" ./cmd/knee
command -v "$vegeta" >/dev/null || { echo "vegeta not found (see the header)"; exit 2; }
work=$(mktemp -d); trap 'kill $sim 2>/dev/null; rm -rf "$work"' EXIT
"$knee" sim --port 0 --ready-file "$work/ready" --responses builtin:bench-responses 2>/dev/null & sim=$!
for _ in $(seq 100); do [ -s "$work/ready" ] && break; sleep 0.05; done
addr=$(cat "$work/ready")
body='{"model":"knee-sim-instant","messages":[{"role":"user","content":"hi"}],"max_tokens":1,"stream":true,"stream_options":{"include_usage":true}}'
echo "$body" > "$work/body.json"
printf 'POST http://%s/v1/chat/completions\nContent-Type: application/json\n@%s\n' "$addr" "$work/body.json" > "$work/targets"
cpu() { awk '{print ($14+$15)}' "/proc/$1/stat"; }   # utime+stime of a live process, in ticks
hz=$(getconf CLK_TCK)
printf '%-8s %6s %5s  %10s %10s %9s\n' tool rate pair "late p50" "late p99" "CPU s"
for rate in ${rates//,/ }; do
  for pair in $(seq "$pairs"); do
    # knee
    "$knee" run --base-url "http://$addr/v1" --model knee-sim-instant --rate "$rate" --burstiness 1000 \
      --duration "${secs}s" --max-tokens 1 --prompt hi --no-server-metrics --warmup 0 --quiet -o "$work/k.json" \
      --records "$work/k.jsonl"
    python3 - "$work/k.json" "$work/k.jsonl" "$rate" "$pair" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
a, h = r['arrivals'], r['health']
rate, pair = float(sys.argv[3]), sys.argv[4]
print(f"{'knee':8} {int(rate):>6} {pair:>5}  {a['send_lateness_p50_ms']:>8.3f}ms {a['send_lateness_p99_ms']:>8.3f}ms {h['cpu_s']:>8.2f}s")
# The same sends judged as vegeta's are: against a constant schedule
# t0 + seq/rate from the first send. knee's schedule is gamma-distributed
# (--burstiness 1000), not constant: it wanders from t0 + seq/rate by a
# random walk, and that walk reads as lateness when the sends are judged
# against the constant one.
recs = sorted((x['index'], x['scheduled_unix_ns'], x['sent_unix_ns']) for x in map(json.loads, open(sys.argv[2])))
t0, s0 = recs[0][2], recs[0][1]
q = lambda v, p: sorted(v)[min(int(p * len(v)), len(v) - 1)]
own = [max(sent - sched, 0) / 1e6 for _, sched, sent in recs]
const = [max(sent - (t0 + i * 1e9 / rate), 0) / 1e6 for i, (_, _, sent) in enumerate(recs)]
drift = [abs(sched - (s0 + i * 1e9 / rate)) / 1e6 for i, (_, sched, _) in enumerate(recs)]
print(f"{'  records':8} {'':>6} {'':>5}  own schedule p99 {q(own, .99):.3f}ms · constant schedule p50 {q(const, .5):.3f}ms p99 {q(const, .99):.3f}ms · schedule's drift from constant p99 {q(drift, .99):.3f}ms")
PY
    # vegeta
    ( "$vegeta" attack -rate "$rate/s" -duration "${secs}s" -targets "$work/targets" -output "$work/v.bin" ) &
    vp=$!; sleep 0.2; c0=$(cpu $vp 2>/dev/null || echo 0)
    # Sample the process's CPU until it ends (its own counters vanish with it).
    last=$c0; while kill -0 $vp 2>/dev/null; do last=$(cpu $vp 2>/dev/null || echo "$last"); sleep 0.1; done
    wait $vp || true
    "$vegeta" encode --to csv "$work/v.bin" > "$work/v.csv"
    python3 - "$work/v.csv" "$rate" "$pair" "$last" "$hz" <<'PY'
import csv, sys
rate, pair, ticks, hz = float(sys.argv[2]), sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
rows = sorted((int(r[8]), int(r[0])) for r in csv.reader(open(sys.argv[1])))
t0 = rows[0][1]
late = sorted(max(ts - (t0 + seq * 1e9 / rate), 0) / 1e6 for seq, ts in rows)
q = lambda p: late[min(int(p * len(late)), len(late) - 1)]
print(f"{'vegeta':8} {int(rate):>6} {pair:>5}  {q(0.5):>8.3f}ms {q(0.99):>8.3f}ms {ticks / hz:>8.2f}s")
PY
  done
done
