#!/usr/bin/env bash
# build.sh: the binaries a one-node cluster needs, from Debian packages and
# the Go module proxy only, cached in $CACHE/bin (kept between runs: a cold
# build compiles kube-apiserver and friends, 10–25 minutes on two cores; a
# warm one takes seconds). Builds are keyed by version, so a version bump
# rebuilds.
#   Kubernetes: kube-apiserver, kube-controller-manager, kube-scheduler,
#     kubelet, kubectl (k8s.io/kubernetes required as a library, each
#     k8s.io staging module replaced by its matching v0.X release)
#   etcd (go.etcd.io/etcd/server/v3's etcdmain), CoreDNS, and pause
set -euo pipefail
: "${CACHE:?}"
here=$(cd "$(dirname "$0")" && pwd)
KV=${KV:-v1.37.2} SV=${SV:-v0.37.2} ETCDV=${ETCDV:-v3.7.3} COREDNSV=${COREDNSV:-v1.15.0}
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOCACHE=${GOCACHE_K8S:-$CACHE/gocache}
bin=$CACHE/bin/$KV-$ETCDV-$COREDNSV src=$CACHE/src
mkdir -p "$bin" "$src"
timed() { local what=$1; shift; local t0=$SECONDS; nice -n 19 "$@"; echo "built $what in $((SECONDS - t0)) s" >&2; }

if ! command -v containerd >/dev/null || ! command -v runc >/dev/null || [ ! -x /usr/lib/cni/bridge ]; then
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    containerd runc containernetworking-plugins iptables >/dev/null; }; then
    echo "no-packages" # run.sh skips: this machine cannot install containerd, runc and the CNI plugins
    exit 0
  fi
fi

mkdir -p "$src/k8s-$KV" && cd "$src/k8s-$KV"
if [ ! -f go.sum ]; then
  gomod=$(go mod download -json "k8s.io/kubernetes@$KV" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
  {
    printf 'module kneee2e/k8s\n\ngo 1.26\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$KV"
    # Kubernetes replaces its staging modules by ./staging paths, which a
    # module depending on it cannot follow: name their releases instead.
    sed -n '/^replace (/,/^)/p' "$gomod" | awk -v v="$SV" '/=>/ { print "\t" $1 " => " $1 " " v }'
    echo ')'
  } >go.mod
  go get $(for c in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do echo "k8s.io/kubernetes/cmd/$c@$KV"; done)
fi
minor=$(echo "$KV" | cut -d. -f2)
ld="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ld="$ld -X $p.gitVersion=$KV -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done
for c in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
  [ -x "$bin/$c" ] || timed "$c" go build -trimpath -ldflags "$ld" -o "$bin/$c" "k8s.io/kubernetes/cmd/$c"
done

mkdir -p "$src/etcd-$ETCDV" && cd "$src/etcd-$ETCDV"
if [ ! -f go.sum ]; then
  printf 'package main\n\nimport (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\nfunc main() { etcdmain.Main(os.Args) }\n' >main.go
  go mod init kneee2e/etcd >/dev/null 2>&1 && go get "go.etcd.io/etcd/server/v3@$ETCDV" && go mod tidy
fi
[ -x "$bin/etcd" ] || timed etcd go build -trimpath -ldflags '-s -w' -o "$bin/etcd" .

mkdir -p "$src/coredns-$COREDNSV" && cd "$src/coredns-$COREDNSV"
[ -f go.sum ] || { go mod init kneee2e/coredns >/dev/null 2>&1 && go get -tool "github.com/coredns/coredns@$COREDNSV"; }
[ -x "$bin/coredns" ] || timed coredns go build -trimpath -ldflags '-s -w' -o "$bin/coredns" github.com/coredns/coredns

mkdir -p "$src/pause" && cp "$here/pause/main.go" "$src/pause/" && cd "$src/pause"
[ -f go.mod ] || go mod init kneee2e/pause >/dev/null 2>&1
[ -x "$bin/pause" ] || go build -trimpath -ldflags '-s -w' -o "$bin/pause" .
echo "$bin"
