#!/usr/bin/env bash
# mkimage.sh NAME OUT.tar BINARY: a one-layer FROM-scratch image holding
# BINARY as its entrypoint (and an empty /tmp), as a docker-archive tar for
# `ctr images import`. Base images cannot be pulled here, and a static Go
# binary needs none. The layer is reproducible: fixed owners and times.
set -euo pipefail
name=$1 out=$2 bin=$3
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
entry=/$(basename "$bin")
mkdir -p "$d/fs/tmp" "$d/img" && chmod 1777 "$d/fs/tmp"
install -m 0755 "$bin" "$d/fs$entry"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$d/fs" -cf "$d/layer.tar" .
layer=$(sha256sum "$d/layer.tar" | cut -d' ' -f1)
mv "$d/layer.tar" "$d/img/$layer.tar"
printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":["%s"],"Env":["PATH=/"],"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
  "$entry" "$layer" >"$d/config.json"
cfg=$(sha256sum "$d/config.json" | cut -d' ' -f1)
mv "$d/config.json" "$d/img/$cfg.json"
printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s.tar"]}]' "$cfg" "$name" "$layer" >"$d/img/manifest.json"
tar --owner=0 --group=0 --mtime=@0 -C "$d/img" -cf "$out" .
