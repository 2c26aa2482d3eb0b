#!/usr/bin/env bash
# Makes the stand-in for the Dockerfile's base image (Node.js 20 on Debian 12) where no image registry is
# reachable: Debian's minimal system from debootstrap, with this machine's Node.js package, its npm
# settings and the certificate authorities it trusts. Prints the image's name.
# Usage: .ci/container-base.sh [image-name]
set -euo pipefail
image="${1:-localhost/parley-ci-node:20-bookworm}"
if podman image exists "$image"; then echo "$image"; exit 0; fi

rootfs="$(mktemp -d)"
trap 'rm -rf "$rootfs"' EXIT
debootstrap --variant=minbase --include=ca-certificates bookworm "$rootfs" >&2
# Node.js and npm as this machine has them (with Node's headers, which native modules build against), and
# the authorities this machine trusts.
tar -C / -cf - usr/bin/node usr/bin/npm usr/bin/npx usr/include/node usr/lib/node_modules/npm | tar -C "$rootfs" -xf -
cp -r /usr/local/share/ca-certificates/. "$rootfs/usr/local/share/ca-certificates/"
chroot "$rootfs" update-ca-certificates >&2
# Debian's base image keeps no package lists; the Dockerfile's apt-get update fetches them.
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/archives/*.deb

tar -C "$rootfs" -c . | podman import \
  --change 'ENV npm_config_nodedir=/usr' \
  --change 'ENV npm_config_cafile=/etc/ssl/certs/ca-certificates.crt' \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  --change 'CMD ["node"]' \
  - "$image" >&2
echo "$image"
