#!/usr/bin/env bash
# Times a fixed battery of knee plan questions with one build and keeps
# their answers, for comparing builds (compare.sh): a change meant to make
# planning faster must give the same answers. Each question's wall time
# and peak memory go to NAME.time; the plans to NAME.json.
# Usage: scripts/plan-battery/run.sh KNEE OUTDIR [NAME...]
#   (the names pick questions; all by default)
set -euo pipefail
knee=$1; out=$2; shift 2; mkdir -p "$out"
export KNEE_RUN_NONCE=battery
here=$(cd "$(dirname "$0")" && pwd)
declare -A q=(
  [mixed-gpus]="--rate 50 --input-tokens 1000 --max-tokens 200 --slo ttft_p95:500 --gpus h100-80gb,a100-80gb,l40s"
  [70b-fp8]="--rate 25 --input-tokens 3000 --max-tokens 400 --models llama-3.1-70b@fp8 --gpus h100-80gb --slo ttft_p95:2000,itl_p95:50"
  [voice]="--workload voice --rate 0.5 --models gemma-3-12b --gpus h100-80gb,l40s --slo ttft_sched_p95:300 --long-prefill-token-threshold 512 --routing prefix-affinity"
  [eight-gpus]="--gpus h100-80gbx8 --find-max-rate --input-tokens 512 --max-tokens 128 --slo ttft_p95:300"
  [weekday]="--trace $here/../../docs/examples/weekday.csv --input-tokens 512 --max-tokens 128 --slo ttft_p95:500"
)
names=("$@")
[ ${#names[@]} -eq 0 ] && names=(mixed-gpus 70b-fp8 voice eight-gpus weekday)
for name in "${names[@]}"; do
  args=${q[$name]:?unknown question $name}
  # shellcheck disable=SC2086 # the arguments are words
  /usr/bin/time -f "%e s, %M KB peak" -o "$out/$name.time" \
    "$knee" plan --out-dir "$out" --label "$name" $args > "$out/$name.txt" 2>&1 || echo "$name: exit $?"
  echo "$name: $(cat "$out/$name.time")"
done
