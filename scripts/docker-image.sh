#!/usr/bin/env bash
# Build the local sandbox image `clawgym-sandbox:<version>` for @clawgym/sandbox-docker,
# without any image registry: a busybox-static userland plus this machine's `node` binary and
# the shared libraries it links, imported with `docker import`.
#
#   DOCKER_HOST=unix:///path/to/docker.sock scripts/docker-image.sh     # FORCE=1 rebuilds
#
# Needs: docker CLI, busybox-static (`apt-get install -y busybox-static`), node 20.
# Prints the image tag on its last line. Idempotent: skips when the image already exists.
#
# Why busybox + node rather than `debootstrap --variant=minbase`: it builds in a few seconds
# (no download), is about half the size, and gives the same node as the host's, which is all
# the sandbox needs to run netns-run.js and node-based harnesses.
set -euo pipefail

RECIPE=2
NODE_BIN="$(readlink -f "${NODE:-$(command -v node)}")"
NODE_VERSION="$("$NODE_BIN" -p process.versions.node)"
IMAGE="${IMAGE:-clawgym-sandbox:${RECIPE}-node${NODE_VERSION}}"
BUSYBOX="${BUSYBOX:-/bin/busybox}"
DOCKER="${DOCKER:-docker}"

if [[ "${FORCE:-0}" != 1 ]] && "$DOCKER" image inspect "$IMAGE" >/dev/null 2>&1; then
  echo "$IMAGE exists (FORCE=1 rebuilds)" >&2
  echo "$IMAGE"
  exit 0
fi

[[ -x "$BUSYBOX" ]] || { echo "busybox not found at $BUSYBOX: apt-get install -y busybox-static" >&2; exit 1; }

ROOT="$(mktemp -d "${TMPDIR:-/tmp}/clawgym-image-XXXXXX")"
trap 'rm -rf "$ROOT"' EXIT

mkdir -p "$ROOT"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,etc,tmp,run/clawgym,opt/clawgym,proc,sys,dev,home/agent,workspace,root,var/tmp}
chmod 1777 "$ROOT/tmp" "$ROOT/var/tmp"
chmod 700 "$ROOT/root"

# busybox and its applets
cp "$BUSYBOX" "$ROOT/bin/busybox"
for applet in $("$ROOT/bin/busybox" --list); do
  [[ "$applet" == busybox ]] && continue
  ln -sf /bin/busybox "$ROOT/bin/$applet"
done
ln -sf /bin/env "$ROOT/usr/bin/env"

# node and the shared libraries it needs (same paths as on the host); bash too, because task
# scripts (Harbor's solve.sh and tests/test.sh) are bash scripts, which busybox sh cannot run
BASH_BIN="$(readlink -f "${BASH_BIN:-$(command -v bash)}")"
cp "$NODE_BIN" "$ROOT/usr/local/bin/node"
ln -sf /usr/local/bin/node "$ROOT/usr/bin/node"
cp "$BASH_BIN" "$ROOT/usr/local/bin/bash"
ln -sf /usr/local/bin/bash "$ROOT/usr/bin/bash"
for lib in $( { ldd "$NODE_BIN"; ldd "$BASH_BIN"; } | awk '/=>/ { print $3 } /^[[:space:]]*\// { print $1 }' | sort -u); do
  [[ -f "$lib" ]] || continue
  mkdir -p "$ROOT$(dirname "$lib")"
  cp -L "$lib" "$ROOT$lib"
done

cat >"$ROOT/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
agent:x:1000:1000:agent:/home/agent:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
cat >"$ROOT/etc/group" <<'EOF'
root:x:0:
agent:x:1000:
nogroup:x:65534:
EOF
echo 'hosts: files' >"$ROOT/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n::1 localhost\n' >"$ROOT/etc/hosts"
chown 1000:1000 "$ROOT/home/agent" "$ROOT/workspace"

# sanity: busybox and node run in the new root with only what was copied
if [[ "$(id -u)" == 0 ]]; then
  chroot "$ROOT" /bin/env -i PATH=/usr/local/bin:/bin /bin/sh -c 'node -e "process.exit(0)" && bash -c "[[ 1 == 1 ]]"' || { echo "node or bash does not run in the image root" >&2; exit 1; }
fi

tar --numeric-owner -C "$ROOT" -c . | "$DOCKER" import \
  --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin' \
  --change 'ENV HOME=/home/agent' \
  --change 'USER 1000:1000' \
  --change 'WORKDIR /workspace' \
  --change "LABEL clawgym.image.recipe=$RECIPE clawgym.image.node=$NODE_VERSION" \
  --change 'CMD ["/bin/sh"]' \
  - "$IMAGE" >/dev/null
echo "$IMAGE"
