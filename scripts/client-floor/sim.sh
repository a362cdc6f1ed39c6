# Sourced by run.sh and ab.sh: start_sim KNEE DIR starts KNEE's simulator
# with its fixed model streaming 100 tokens/s, in the background, and sets
# sim (its pid) and url (its base URL); DIR holds its files.
start_sim() {
  "$1" sim --print-config models |
    sed 's/decode_tokens_per_second: 50}/decode_tokens_per_second: 100}/' >"$2/m100.yml"
  grep -q 'decode_tokens_per_second: 100}' "$2/m100.yml" || { echo "could not set 100 tokens/s" >&2; exit 1; }
  "$1" sim --port 0 --ready-file "$2/ready" --models "$2/m100.yml" 2>/dev/null &
  sim=$!
  for _ in $(seq 100); do [ -s "$2/ready" ] && break; sleep 0.05; done
  url="http://$(cat "$2/ready")/v1"
}
