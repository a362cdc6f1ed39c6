#!/usr/bin/env bash
# run.sh: the end-to-end test of knee on a real one-node Kubernetes (see
# README.md here). It builds or reuses the cluster's binaries in $CACHE,
# builds knee and its FROM-scratch image, starts the cluster in a network
# namespace of its own, runs e2e.sh, and tears everything down on any exit,
# leaving no process, mount, namespace, cgroup or changed sysctl behind.
# Where it cannot run (not root, no network namespaces, no package source)
# it says so and exits 0, so CI elsewhere is not failed by the machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export REPO=$(cd "$here/../.." && pwd)
export CACHE=${KNEE_E2E_CACHE:-/var/cache/knee-e2e}
skipped=""
skip() { skipped=1; echo "k8s e2e: skipped: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "it needs root (network namespaces, containerd, the kubelet)"
probe=knee-e2e-probe-$$
ip netns add "$probe" 2>/dev/null || skip "this machine cannot create network namespaces"
ip netns del "$probe"
[ -d /sys/fs/cgroup ] || skip "no cgroups mounted"

export W
W=$(mktemp -d /tmp/knee-e2e.XXXXXX)
t0=$SECONDS
cleanup() {
  rc=$?
  BIN=${BIN:-/nonexistent} bash "$here/cluster.sh" down >/dev/null 2>&1 || true
  if [ "$rc" != 0 ] && [ -d "$W/log" ]; then
    for f in "$W"/log/*.log; do echo "== tail of $f"; tail -n 15 "$f"; done
    echo "== e2e files"; ls -la "$W/e2e" 2>/dev/null || true
  fi
  rm -rf "$W"
  [ -n "$skipped" ] && return
  echo "k8s e2e: $([ "$rc" = 0 ] && echo passed || echo FAILED) in $((SECONDS - t0)) s, torn down"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$CACHE"
t=$SECONDS
BIN=$(bash "$here/build.sh" | tail -1) || { echo "k8s e2e: the cluster's binaries did not build" >&2; exit 1; }
[ "$BIN" = no-packages ] && skip "Debian's containerd, runc and CNI plugins are not installed and cannot be"
export BIN
echo "k8s e2e: cluster binaries ready in $((SECONDS - t)) s ($BIN)"
mkdir -p "$W/bin" "$W/images"
(cd "$REPO" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$W/bin/knee" ./cmd/knee)
bash "$here/mkimage.sh" localhost/knee:e2e "$W/images/knee.tar" "$W/bin/knee"
bash "$here/mkimage.sh" localhost/pause:e2e "$W/images/pause.tar" "$BIN/pause"
bash "$here/certs.sh"
t=$SECONDS
bash "$here/cluster.sh" up
echo "k8s e2e: cluster up in $((SECONDS - t)) s"
bash "$here/e2e.sh"
