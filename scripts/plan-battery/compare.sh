#!/usr/bin/env bash
# Compares two plan-battery runs (run.sh): each question's answer line and
# every row's configuration, replicas, verdict and headroom (within the
# row's bisection step), then the times side by side.
# Usage: scripts/plan-battery/compare.sh OLDDIR NEWDIR
set -uo pipefail
old=$1; new=$2; status=0
for f in "$old"/*.json; do
  n=$(basename "$f" .json)
  case $n in *-day) continue ;; esac
  python3 - "$f" "$new/$n.json" <<'PY' || status=1
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def rows(p):
    return {(r['config'], r.get('routing', '')): r for r in p['rows']}
ra, rb, bad = rows(a), rows(b), []
for k in sorted(set(ra) | set(rb)):
    x, y = ra.get(k), rb.get(k)
    if x is None or y is None:
        bad.append(f'{k}: only in {"new" if x is None else "old"}'); continue
    for f in ('meets', 'replicas'):
        if x.get(f) != y.get(f):
            bad.append(f'{k}: {f} {x.get(f)} -> {y.get(f)}')
    step = max(x.get('step', 0), y.get('step', 0))
    if abs(x.get('headroom', 0) - y.get('headroom', 0)) > step + 1e-9:
        bad.append(f"{k}: headroom {x.get('headroom')} -> {y.get('headroom')} (step {step})")
name = sys.argv[1].rsplit('/', 1)[-1]
for line in bad:
    print(f'== {name}: {line}')
sys.exit(1 if bad else 0)
PY
  printf '%-12s %-28s %s\n' "$n" "$(cat "$old/$n.time" 2>/dev/null)" "$(cat "$new/$n.time" 2>/dev/null)"
done
exit $status
