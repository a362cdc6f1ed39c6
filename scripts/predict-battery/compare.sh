#!/usr/bin/env bash
# Compares two battery runs (run.sh): the printed tables line for line
# (the timing line left out), then each JSON file's figures, naming every
# one that differs by more than a relative 1e-6 (timestamps, the
# environment and encoded histograms left out).
# Usage: scripts/predict-battery/compare.sh OLDDIR NEWDIR
set -uo pipefail
old=$1; new=$2; status=0
for f in "$old"/*.txt; do
  n=$(basename "$f")
  if ! diff <(grep -v '^predicted in' "$f") <(grep -v '^predicted in' "$new/$n") > /dev/null; then
    echo "== $n: the printed tables differ"; diff <(grep -v '^predicted in' "$f") <(grep -v '^predicted in' "$new/$n") | head -20; status=1
  fi
done
for f in "$old"/*.json; do
  python3 - "$f" "$new/$(basename "$f")" <<'PY' || status=1
import json, sys
skip = {'started_at', 'window_started_at', 'environment', 'histograms'}
def walk(a, b, path, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in skip:
                walk(a.get(k), b.get(k), path + '.' + k, out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, f'{path}[{i}]', out)
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        if abs(a - b) > 1e-6 * max(abs(a), abs(b), 1e-9):
            out.append(f'{path}: {a} -> {b}')
    elif a != b:
        out.append(f'{path}: {str(a)[:60]} -> {str(b)[:60]}')
out = []
walk(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), '', out)
if out:
    print(f'== {sys.argv[1]}: {len(out)} figures differ'); print('\n'.join(out[:15])); sys.exit(1)
PY
done
exit $status
