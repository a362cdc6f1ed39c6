#!/bin/sh
# Input lengths against a real llama-server: for 64, 512 and 2,048 asked
# tokens, on the chat and completions endpoints, with knee's probe-fitted
# sizing and with --tokenizer, one run of 20 requests each, and a sweep of
# three levels (where a level's own words are drawn). Prints, per case,
# the mean and extremes of what the server counted (usage.prompt_tokens)
# and the miss of the mean against the promise (3%, or 2 tokens).
#
# Usage: scripts/llama-lengths/run.sh BASE_URL TOKENIZER.json [KNEE] [OUT]
#   BASE_URL   a llama-server's /v1 (../shared/reference/foreign-targets/llama.cpp)
#   TOKENIZER  its tokenizer.json (gguf_tokenizer.py writes one from the GGUF)
#   KNEE       the knee binary (default: built from this checkout)
#   OUT        a folder for the result files (default: a temporary one)
set -eu
base=$1 tok=$2
here=$(cd "$(dirname "$0")/../.." && pwd)
knee=${3:-}
out=${4:-$(mktemp -d)}
mkdir -p "$out"
if [ -z "$knee" ]; then
	knee=$out/knee
	(cd "$here" && go build -o "$knee" ./cmd/knee)
fi
printf '%-12s %-6s %-9s %-6s %8s %6s %6s %8s %s\n' endpoint asked sizing shape mean min max miss within
for endpoint in chat completions; do
	for n in 64 512 2048; do
		for sizing in fitted tokenizer; do
			extra=""
			[ "$sizing" = tokenizer ] && extra="--tokenizer $tok"
			f=$out/$endpoint-$n-$sizing
			# shellcheck disable=SC2086
			"$knee" run --base-url "$base" --endpoint "$endpoint" --concurrency 2 --requests 20 \
				--input-tokens "$n" --max-tokens 4 --extra-body '{"ignore_eos":true}' $extra \
				-o "$f.json" >"$f.txt" 2>&1
			# shellcheck disable=SC2086
			"$knee" sweep --base-url "$base" --endpoint "$endpoint" --concurrency 1,2,4 --requests 12 \
				--input-tokens "$n" --max-tokens 4 --extra-body '{"ignore_eos":true}' $extra \
				--out-dir "$out" --label "$endpoint-$n-$sizing-sweep" >"$f-sweep.txt" 2>&1
			python3 - "$f.json" "$out/$endpoint-$n-$sizing-sweep.json" "$endpoint" "$n" "$sizing" <<'PY'
import json, sys
run, sweep, endpoint, n, sizing = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
def line(shape, t):
    i = t["input_per_request"]
    miss = i["mean"] - n
    ok = abs(miss) <= max(2, 0.03 * n)
    print(f"{endpoint:<12} {n:<6} {sizing:<9} {shape:<6} {i['mean']:8.1f} {i['min']:6.0f} {i['max']:6.0f} {100*miss/n:+7.2f}% {'yes' if ok else 'NO'}")
line("run", json.load(open(run))["tokens"])
for k, lv in enumerate(json.load(open(sweep))["levels"]):
    line(f"lvl{k}", lv["run"]["tokens"])
PY
		done
	done
done
echo "results in $out"
