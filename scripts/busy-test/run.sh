#!/usr/bin/env bash
# Runs the README's test command with two CPU-bound processes beside it,
# one per core of a two-core machine, RUNS times in a row (default 3), and
# prints each run's verdict, wall time and per-package times, and the
# tests that skipped for want of a quiet host (with their reasons).
# Usage: [PKGS=./cmd] scripts/busy-test/run.sh [RUNS] [OUTDIR]
set -uo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-3}; out=${2:-/tmp/knee-busy}
mkdir -p "$out"
busy() { while :; do :; done; }
busy & b1=$!
busy & b2=$!
trap 'kill $b1 $b2 2>/dev/null' EXIT
status=0
for i in $(seq 1 "$runs"); do
  start=$(date +%s)
  go test -count=1 -json ${PKGS:-./...} > "$out/run$i.json" 2> "$out/run$i.stderr"
  rc=$?
  end=$(date +%s)
  echo "== run $i: exit $rc, $((end - start)) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
  python3 - "$out/run$i.json" <<'PY'
import json, sys
pk, skips, fails = {}, [], []
for line in open(sys.argv[1]):
    try: e = json.loads(line)
    except ValueError: continue
    a, t = e.get('Action'), e.get('Test')
    if a in ('pass', 'fail') and not t:
        pk[e['Package'].split('knee/')[-1]] = (a, e.get('Elapsed', 0))
    if a == 'fail' and t:
        fails.append(f"{e['Package'].split('knee/')[-1]} {t}")
    if a == 'output' and t and ('quiet host' in e.get('Output', '') or 'host-starved' in e.get('Output', '')) and '--- SKIP' not in e.get('Output', ''):
        skips.append(f"{t}: {e['Output'].strip()}")
for p, (a, el) in sorted(pk.items(), key=lambda x: -x[1][1])[:6]:
    print(f"   {p:28} {a} {el:7.1f} s")
for f in fails: print("   FAIL", f)
for s in skips[:20]: print("   skipped:", s[:200])
PY
  [ "$rc" = 0 ] || status=1
done
exit $status
