#!/usr/bin/env bash
# run.sh BIN [DIR]: signals at every phase of run, sweep, a repeated sweep
# and plan (issue 56). Each command is started with an existing output file
# in place and sent SIGINT, SIGTERM or SIGHUP (or two SIGINTs) after a
# delay from 0.05 s (before anything is measured) to well into the work.
# Every case must end within 5 s of its signal with exit 130 (or 0 if it
# finished first), print no panic or goroutine dump, and leave its output
# either untouched (the old file, when nothing was measured) or valid JSON
# with no NaN or Inf. Prints one line a case and a summary; exits 1 on any
# failure.
set -uo pipefail
bin=${1:?usage: run.sh BIN [DIR]}
dir=${2:-$(mktemp -d)}
mkdir -p "$dir"
fails=0 cases=0
cmds=(
  "run --rate 4 --duration 4s -o OUT"
  "sweep --rates 2,4 --duration 3s --out-dir D --label s"
  "sweep --rates 2,4 --duration 2s --repeat 2 --out-dir D --label s"
  "plan --rate 10 --input-tokens 500 --max-tokens 100 --gpus h100-80gb,a100-80gb --duration 1m --out-dir D --label s"
)
for c in "${cmds[@]}"; do
  for sig in INT TERM HUP INTx2; do
    for delay in 0.05 0.3 1 2.5; do
      cases=$((cases + 1))
      d="$dir/case$cases"
      mkdir -p "$d"
      out="$d/s.json"
      [[ $c == run* ]] && out="$d/out.json"
      echo '{"old": "a result from before"}' >"$out"
      args=${c//OUT/$out}
      args=${args//D/$d}
      # shellcheck disable=SC2086
      "$bin" $args >"$d/stdout" 2>"$d/stderr" &
      pid=$!
      sleep "$delay"
      t0=$(date +%s.%N)
      if [ "$sig" = INTx2 ]; then
        kill -INT "$pid" 2>/dev/null; sleep 0.1; kill -INT "$pid" 2>/dev/null
      else
        kill -"$sig" "$pid" 2>/dev/null
      fi
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid"; wait "$pid" 2>/dev/null
        echo "FAIL case $cases ($c, SIG$sig at ${delay}s): still running 5 s after the signal"
        fails=$((fails + 1)); continue
      fi
      wait "$pid"; rc=$?
      took=$(echo "$(date +%s.%N) - $t0" | bc)
      why=""
      [ "$rc" = 130 ] || [ "$rc" = 0 ] || why="exit $rc"
      grep -qE '^panic|^goroutine [0-9]+ \[' "$d/stderr" && why="$why; a panic or stack trace"
      if ! cmp -s "$out" <(echo '{"old": "a result from before"}'); then
        jq -e . "$out" >/dev/null 2>&1 || why="$why; $out is not JSON"
        grep -qE 'NaN|Inf' "$out" && why="$why; NaN or Inf in $out"
        state="written"
      else
        state="kept"
      fi
      if [ -n "$why" ]; then
        echo "FAIL case $cases ($c, SIG$sig at ${delay}s): ${why#; }"
        fails=$((fails + 1))
      else
        lab=${c%% *}
        [[ $c == *repeat* ]] && lab="$lab --repeat"
        printf 'ok   case %2d exit %3s in %.2fs, output %-7s SIG%-5s at %4ss: %s\n' "$cases" "$rc" "$took" "$state" "$sig" "$delay" "$lab"
      fi
    done
  done
done
echo "signals: $((cases - fails)) of $cases cases held"
[ "$fails" = 0 ]
