#!/usr/bin/env bash
# certs.sh: a throwaway CA for the test cluster, the API server's serving
# certificate, one client certificate and kubeconfig per component, and the
# service-account key pair, in $W/pki. Nothing here outlives the run.
set -euo pipefail
: "${W:?}"
NODE_IP=${NODE_IP:-10.201.0.1} NODE=${NODE:-knee-node}
pki=$W/pki
mkdir -p "$pki" && cd "$pki"
[ -f ca.crt ] && exit 0
quiet() { "$@" 2>/dev/null; }
quiet openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=knee-e2e-ca
sign() { # name subject extensions
  quiet openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2"
  quiet openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -out "$1.crt" -extfile <(printf '%s\n' "$3")
  rm -f "$1.csr"
}
sign apiserver /CN=kube-apiserver "extendedKeyUsage=serverAuth
subjectAltName=IP:$NODE_IP,IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
client() { sign "$1" "/CN=$2${3:+/O=$3}" "extendedKeyUsage=clientAuth"; }
client admin admin system:masters
client apiserver-kubelet apiserver-kubelet system:masters
client controller-manager system:kube-controller-manager
client scheduler system:kube-scheduler
client kubelet "system:node:$NODE" system:nodes
client coredns coredns system:masters
quiet openssl genrsa -out sa.key 2048
quiet openssl rsa -in sa.key -pubout -out sa.pub
for c in admin controller-manager scheduler kubelet coredns; do
  cat >"$c.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: e2e, cluster: {server: "https://127.0.0.1:6443", certificate-authority: $pki/ca.crt}}]
users: [{name: $c, user: {client-certificate: $pki/$c.crt, client-key: $pki/$c.key}}]
contexts: [{name: e2e, context: {cluster: e2e, user: $c, namespace: default}}]
current-context: e2e
KC
done
