#!/usr/bin/env bash
# Runs a fixed battery of knee predict sweeps with one build, for comparing
# builds: a change that should not move predictions must print the same
# tables (compare.sh). The nonce is fixed, so two runs of one build are
# byte-identical but for timestamps and timing lines.
# Usage: scripts/predict-battery/run.sh KNEE OUTDIR
set -euo pipefail
knee=$1; out=$2; mkdir -p "$out"
export KNEE_RUN_NONCE=battery
run() { local name=$1; shift; "$knee" predict --out-dir "$out" --label "$name" "$@" > "$out/$name.txt" 2>&1 || echo "$name: exit $?"; }
run default
run closed --concurrency 1,4,16,64 --step-duration 60s --input-tokens 512 --max-tokens 128
run capped --rates 4,8,16,32 --max-concurrency 16 --step-duration 60s --input-tokens 1024 --max-tokens 64
run counted --rates 2,8,32 --requests 200 --step-duration 0 --input-tokens 256
run voice --workload voice --rates 0.2,0.5,1 --step-duration 2m
run voicecalls --workload voice --rates 0.5,2 --calls 30
run fleet --rates 10,40,80 --replicas 4 --routing least-loaded --step-duration 60s --input-tokens 1024 --max-tokens 128
run drain --rates 30,60 --step-duration 30s --drain-timeout 5s --input-tokens 2048 --max-tokens 256
