#!/usr/bin/env bash
# cluster.sh up|down|kubectl ARGS: a one-node Kubernetes of the binaries in
# $BIN, every process inside the network namespace knee-e2e, which has no
# link out: the node is 10.201.0.1 on a veth pair whose ends both stay in
# it, pods are 10.244.0.0/24 on the bridge cni0, CoreDNS answers on the
# node IP. Everything it writes is under $W; down undoes the rest (pods,
# mounts, cgroups, the namespace, and the sysctls the kubelet rewrites).
set -euo pipefail
: "${W:?}" "${BIN:?}"
NS=knee-e2e NODE=knee-node NODE_IP=10.201.0.1 POD_CIDR=10.244.0.0/24
pki=$W/pki logs=$W/log run=$W/run
sock=$run/containerd/containerd.sock
in_ns="nsenter --net=/run/netns/$NS"
mkdir -p "$logs" "$run" "$W/var" "$W/etc/cni"

kc() { $in_ns "$BIN/kubectl" --kubeconfig "$pki/admin.kubeconfig" "$@"; }

# ours NAME: the process in its pid file is alive and is ours (PIDs are
# reused fast on these machines: its command line must name $W).
ours() {
  local f=$run/$1.pid p
  [ -f "$f" ] || return 1
  p=$(cat "$f")
  kill -0 "$p" 2>/dev/null && tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "$W"
}

launch() { # NAME CMD...: in the namespace, in the background, logged
  local n=$1; shift
  ours "$n" && return 0
  nohup $in_ns "$@" >>"$logs/$n.log" 2>&1 &
  echo $! >"$run/$n.pid"
}

await() { # WHAT SECONDS CMD...
  local what=$1 n=$2; shift 2
  for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  echo "cluster: $what not ready after ${n}s (logs in $logs)" >&2
  return 1
}

halt() {
  local f=$run/$1.pid p
  [ -f "$f" ] || return 0
  p=$(cat "$f")
  if ours "$1"; then
    kill "$p" 2>/dev/null || true
    for _ in $(seq 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$p" 2>/dev/null || true
  fi
  rm -f "$f"
}

namespace() {
  [ -e "/run/netns/$NS" ] && return 0
  ip netns add "$NS"
  ip -n "$NS" link set lo up
  ip -n "$NS" link add e2e0 type veth peer name e2e1
  ip -n "$NS" addr add "$NODE_IP/24" dev e2e0
  ip -n "$NS" link set e2e0 up
  ip -n "$NS" link set e2e1 up
  # The kubelet wants a default route; this one leads nowhere.
  ip -n "$NS" route add default dev e2e0
}

configure() {
  cat >"$W/etc/containerd.toml" <<TOML
version = 2
root = "$W/var/containerd"
state = "$run/containerd"
[grpc]
  address = "$sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/pause:e2e"
  # Root here lacks CAP_SYS_RESOURCE: a sandbox's oom_score_adj of -998
  # cannot be set, and runc fails without saying why. Clamp it instead.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$W/etc/cni"
TOML
  cat >"$W/etc/cni/10-e2e.conflist" <<JSON
{"cniVersion": "1.0.0", "name": "e2e", "plugins": [{"type": "bridge", "bridge": "cni0", "isGateway": true,
  "ipMasq": false, "hairpinMode": true, "ipam": {"type": "host-local", "dataDir": "$W/var/ipam",
  "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}]}}]}
JSON
  : >"$W/etc/resolv.conf"
  cat >"$W/etc/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://$sock
cgroupDriver: cgroupfs
# These machines mount cgroup v1; the kubelet still runs on it when told.
failCgroupV1: false
failSwapOn: false
authentication: {anonymous: {enabled: false}, webhook: {enabled: true}, x509: {clientCAFile: $pki/ca.crt}}
authorization: {mode: Webhook}
clusterDomain: cluster.local
clusterDNS: [$NODE_IP]
resolvConf: $W/etc/resolv.conf
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
serializeImagePulls: false
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imagePullCredentialsVerificationPolicy: NeverVerify
YAML
  cat >"$W/etc/Corefile" <<CORE
.:53 {
    bind $NODE_IP
    kubernetes cluster.local {
        kubeconfig $pki/coredns.kubeconfig e2e
    }
    cache 5
}
CORE
}

up() {
  namespace
  configure
  launch containerd containerd --config "$W/etc/containerd.toml"
  await containerd 30 ctr -a "$sock" version
  for tar in "$W"/images/*.tar; do ctr -a "$sock" -n k8s.io images import "$tar" >/dev/null; done
  launch etcd "$BIN/etcd" --name e2e --data-dir "$W/var/etcd" --unsafe-no-fsync \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster e2e=http://127.0.0.1:2380 --listen-metrics-urls http://127.0.0.1:2381
  await etcd 60 $in_ns curl -sf http://127.0.0.1:2381/health
  launch kube-apiserver "$BIN/kube-apiserver" --etcd-servers http://127.0.0.1:2379 \
    --bind-address 0.0.0.0 --secure-port 6443 --advertise-address "$NODE_IP" \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" --client-ca-file "$pki/ca.crt" \
    --kubelet-client-certificate "$pki/apiserver-kubelet.crt" --kubelet-client-key "$pki/apiserver-kubelet.key" \
    --kubelet-preferred-address-types InternalIP \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --service-cluster-ip-range 10.96.0.0/24 --authorization-mode Node,RBAC --profiling=false
  await kube-apiserver 240 kc get --raw /readyz
  launch kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig "$pki/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$pki/controller-manager.kubeconfig" --authorization-kubeconfig "$pki/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --use-service-account-credentials \
    --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" --profiling=false
  launch kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$pki/scheduler.kubeconfig" \
    --authentication-kubeconfig "$pki/scheduler.kubeconfig" --authorization-kubeconfig "$pki/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --profiling=false
  # The kubelet writes vm.overcommit_memory=1, kernel.panic=10 and
  # kernel.panic_on_oops=1 as it starts; the machine's own values go back
  # once it has (and again at down).
  [ -f "$W/sysctls" ] || echo $(sysctl -n vm.overcommit_memory kernel.panic kernel.panic_on_oops) >"$W/sysctls"
  launch kubelet "$BIN/kubelet" --config "$W/etc/kubelet.yaml" --kubeconfig "$pki/kubelet.kubeconfig" \
    --root-dir "$W/var/kubelet" --hostname-override "$NODE" --node-ip "$NODE_IP"
  for _ in $(seq 120); do [ "$(sysctl -n kernel.panic)" = 10 ] && break; sleep 0.5; done
  restore_sysctls
  await node 120 kc get node "$NODE"
  await node-ready 120 kc wait --for=condition=Ready "node/$NODE" --timeout=1s
  launch coredns "$BIN/coredns" -conf "$W/etc/Corefile"
  # Pods run as the default service account; let it be created first.
  await default-serviceaccount 60 kc get serviceaccount default
}

# restore_sysctls puts back the values saved before the kubelet first ran
# (in $W, which outlives a restart of the cluster but not the test).
restore_sysctls() {
  [ -s "$W/sysctls" ] || return 0
  local a b c
  read -r a b c <"$W/sysctls" || true
  sysctl -q -w vm.overcommit_memory="$a" kernel.panic="$b" kernel.panic_on_oops="$c"
}

down() {
  if ours kube-apiserver && ours kubelet; then
    kc delete jobs,deployments,pods --all --all-namespaces --wait --timeout=60s >/dev/null 2>&1 || true
  fi
  halt coredns
  halt kubelet
  if ours containerd; then
    # Tasks the kubelet left: kill them, so their shims exit.
    for t in $(ctr -a "$sock" -n k8s.io tasks ls -q 2>/dev/null); do ctr -a "$sock" -n k8s.io tasks kill -s KILL "$t" 2>/dev/null || true; done
    sleep 1
    for t in $(ctr -a "$sock" -n k8s.io tasks ls -q 2>/dev/null); do ctr -a "$sock" -n k8s.io tasks rm -f "$t" >/dev/null 2>&1 || true; done
  fi
  for n in kube-scheduler kube-controller-manager kube-apiserver etcd containerd; do halt "$n"; done
  # Shims that outlived containerd.
  pkill -9 -f "containerd-shim.*$W" 2>/dev/null || true
  grep -oF " $W/" /proc/mounts >/dev/null 2>&1 &&
    awk -v w="$W/" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/*/k8s.io /sys/fs/cgroup/kubepods /sys/fs/cgroup/k8s.io; do
    [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
  ip netns del "$NS" 2>/dev/null || true
  restore_sysctls
  rm -rf "$W/var" "$run"
}

case "${1:-}" in
up) up ;;
down) down ;;
kubectl) shift; kc "$@" ;;
*) echo "usage: cluster.sh up|down|kubectl ARGS" >&2; exit 2 ;;
esac
