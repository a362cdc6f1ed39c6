#!/usr/bin/env bash
# e2e.sh: knee's own manifests on the cluster of cluster.sh, as an operator
# would run them: the shipped examples validated by the API server; a
# `knee k8s sim` fleet; one `knee run` pod and then a `knee k8s job` of
# $SHARDS shards, both reading a dataset from a ConfigMap and a key from a
# Secret, on one seed and nonce; the last shard deliberately started late;
# logs collected by completion index, merged, and checked against the one
# process (check/main.go).
set -euo pipefail
: "${W:?}" "${REPO:?}"
here=$(cd "$(dirname "$0")" && pwd)
SHARDS=${SHARDS:-4} REPLICAS=${REPLICAS:-4} RATE=${RATE:-10} DURATION=${DURATION:-20s} DELAY=${DELAY:-25s} LATE=${LATE:-6}
img=localhost/knee:e2e knee=$W/bin/knee out=$W/e2e
k() { bash "$here/cluster.sh" kubectl "$@"; }
t0=$SECONDS
say() { echo "[e2e $((SECONDS - t0))s] $*"; }
mkdir -p "$out"

say "the shipped manifests, verbatim, through the API server's validation (server-side dry run)"
k create namespace knee-dryrun >/dev/null
for f in "$REPO"/deploy/kubernetes/*.yaml; do k -n knee-dryrun apply --server-side --dry-run=server -f "$f"; done

say "inputs: a ConfigMap with a dataset, a Secret with a key"
for i in $(seq 0 199); do
  printf '{"prompt": "Request %d: summarise the plot of a film about a lighthouse keeper in %d words, then list %d of its themes.", "output_tokens_count": %d}\n' \
    "$i" $((20 + i % 30)) $((2 + i % 4)) $((8 + i % 17))
done >"$out/prompts.jsonl"
k create configmap knee-inputs --from-file="$out/prompts.jsonl" >/dev/null
k create secret generic e2e-key --from-literal=api-key=e2e-not-a-real-key >/dev/null

say "simulator fleet: $REPLICAS replicas behind a headless Service"
"$knee" k8s sim --replicas "$REPLICAS" --image "$img" --cpu 100m --memory 64Mi -- --models builtin:models >"$out/sim.yaml"
k apply --server-side -f "$out/sim.yaml" >/dev/null
k rollout status deploy/knee-sim --timeout=180s
target=http://knee-sim.default.svc.cluster.local:8000/v1
load=(--model knee-sim --rate "$RATE" --duration "$DURATION" --dataset /inputs/prompts.jsonl --seed 7)
nonce=e2e0c0de

# run_job NAME SHARDS PARALLELISM: prints the manifest with the one nonce
# and applies it with that many pods at first.
run_job() {
  "$knee" k8s job --name "$1" --shards "$2" --base-url "$target" --image "$img" --cpu 100m --memory 64Mi \
    --start-delay "$DELAY" --api-key-secret e2e-key --inputs-configmap knee-inputs -- "${load[@]}" >"$out/$1.yaml"
  sed -i -e "/name: KNEE_RUN_NONCE/{n;s/value: .*/value: $nonce/}" -e "s/^  parallelism: .*/  parallelism: $3/" "$out/$1.yaml"
  k apply --server-side -f "$out/$1.yaml" >/dev/null
}

# collect NAME SHARDS: each pod's log (its JSON result, --output - --quiet)
# by completion index.
collect() {
  k wait --for=condition=complete "job/$1" --timeout=5m >/dev/null
  for i in $(seq 0 $(($2 - 1))); do
    pod=$(k get pods -l "knee/job=$1,batch.kubernetes.io/job-completion-index=$i" -o name)
    k logs "$pod" >"$out/$1-$i.json"
  done
}

say "hostile images against a vision simulator as knee k8s sim deploys it"
k create configmap knee-vision --from-file=vision.yml="$REPO/docs/examples/vision.yml" >/dev/null
"$knee" k8s sim --name knee-sim-vl --replicas 1 --image "$img" --cpu 100m --memory 64Mi \
  --inputs-configmap knee-vision -- --models /inputs/vision.yml >"$out/sim-vl.yaml"
k apply --server-side -f "$out/sim-vl.yaml" >/dev/null
k rollout status deploy/knee-sim-vl --timeout=180s
vl_ip=$(k get pods -l knee/fleet=knee-sim-vl -o jsonpath='{.items[0].status.podIP}')
sim_ip=$(k get pods -l knee/fleet=knee-sim -o jsonpath='{.items[0].status.podIP}')
(cd "$REPO" && go build -o "$W/bin/hostile" ./scripts/k8s-e2e/hostile)
# Its own routes, a neighbour's, the API server, the kubelet (open) and a
# closed port, CoreDNS, names the cluster resolves, a metadata address,
# decimal and IPv6 forms of loopback, file://.
nsenter --net=/run/netns/knee-e2e "$W/bin/hostile" "http://$vl_ip:8000" vl \
  "http://$vl_ip:8000/metrics" "http://127.0.0.1:8000/admin/faults" "http://$sim_ip:8000/metrics" \
  https://10.96.0.1/ https://10.201.0.1:10250/pods http://10.201.0.1:1/ http://10.96.0.10:53/ \
  https://kubernetes.default.svc.cluster.local/ http://knee-sim.default.svc.cluster.local:8000/metrics \
  http://169.254.169.254/latest/meta-data/ http://2130706433:8000/metrics "http://[::1]:8000/metrics" \
  file:///etc/passwd | tee "$out/hostile.txt"
restarts=$(k get pods -l knee/fleet=knee-sim-vl -o jsonpath='{.items[0].status.containerStatuses[0].restartCount}')
[ "$restarts" = 0 ] || { echo "the vision simulator restarted $restarts times" >&2; exit 1; }
k delete deploy/knee-sim-vl service/knee-sim-vl >/dev/null

say "one process: the whole load from one pod"
run_job knee-single 1 1
collect knee-single 1

say "$SHARDS shards, shard $((SHARDS - 1)) held back until ${LATE}s after --start-at"
run_job knee-shards "$SHARDS" $((SHARDS - 1))
start_at=$(grep -A1 -e '- --start-at$' "$out/knee-shards.yaml" | tail -1 | sed -e 's/^ *- //' -e "s/[\"']//g")
wait_s=$(($(date -d "$start_at" +%s) + LATE - $(date +%s)))
[ "$wait_s" -gt 0 ] && sleep "$wait_s"
k patch job knee-shards --type merge -p "{\"spec\":{\"parallelism\":$SHARDS}}" >/dev/null
collect knee-shards "$SHARDS"
"$knee" merge -o "$out/merged.json" "$out"/knee-shards-*.json >"$out/merge.txt"

say "merged shards against the one process"
(cd "$REPO" && go run ./scripts/k8s-e2e/check "$out/knee-single-0.json" "$out/merged.json" $((SHARDS - 1)))
say "done"
