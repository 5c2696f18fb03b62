#!/usr/bin/env bash
# Build the OpenClaw sandbox image, ClawGym's equivalent of the image ClawGym-RL runs each rollout
# in (the official OpenClaw release plus Python), without any image registry:
#   a Debian bookworm root filesystem (debootstrap, minbase) from Debian's packages, with python3
#   and the extra Python modules some ClawGym-Task checks import (EXTRA_PACKAGES), Node 24 (npm's
#   node@24 package), and the newest OpenClaw and Claude Code CLIs from npm
#   (scripts/install-harnesses.sh, into /usr/local/lib/clawgym-harnesses), `openclaw`, `claude`
#   and `node` on PATH, the sandbox user agent (1000) and the folders sandboxes bind.
# It is kept as a root filesystem folder and, where a Docker engine answers, imported as the image
# clawgym-openclaw:<recipe> (`docker import`: nothing is pulled).
#
#   scripts/openclaw-image.sh            # FORCE=1 rebuilds; DOCKER_HOST picks the engine
#
# Needs: debootstrap (apt-get install -y debootstrap), npm, root (debootstrap), the Debian mirror.
# Environment:
#   CLAWGYM_IMAGE_CACHE  where root filesystems are kept (default ~/.cache/clawgym/images)
#   HARNESSES_FROM       an install-harnesses.sh folder (.harnesses) to copy the CLIs from instead
#                        of downloading them again (its node24, openclaw, claude-code)
#   EXTRA_PACKAGES       Debian packages beyond python3 (default: python3-yaml, which 23 of the
#                        2,200 ClawGym-Task/ClawGym-Bench check.py import)
#   DEBIAN_MIRROR        default: the first URI of /etc/apt/sources.list.d/debian.sources, else deb.debian.org
# Prints the rootfs path, then the image tag (when imported) on the last line. Cached: a finished
# rootfs (and image) is reused unless FORCE=1.
set -euo pipefail

RECIPE=1
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${CLAWGYM_IMAGE_CACHE:-$HOME/.cache/clawgym/images}/openclaw-$RECIPE"
ROOTFS="$CACHE/rootfs"
IMAGE="${IMAGE:-clawgym-openclaw:$RECIPE}"
DOCKER="${DOCKER:-docker}"
EXTRA_PACKAGES="${EXTRA_PACKAGES:-python3-yaml}"
HARNESS_REL=usr/local/lib/clawgym-harnesses
log() { printf '[openclaw-image] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

have_docker() { "$DOCKER" version >/dev/null 2>&1; }
image_exists() { "$DOCKER" image inspect "$IMAGE" >/dev/null 2>&1; }

if [[ "${FORCE:-0}" != 1 && -f "$ROOTFS/.clawgym-complete" ]]; then
  if ! have_docker || image_exists; then
    log "$ROOTFS is built (FORCE=1 rebuilds)"
    echo "$ROOTFS"
    have_docker && echo "$IMAGE"
    exit 0
  fi
fi

command -v debootstrap >/dev/null || die "debootstrap is not installed: apt-get install -y debootstrap"
[[ "$(id -u)" == 0 ]] || die "debootstrap needs root"
MIRROR="${DEBIAN_MIRROR:-$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"

t0=$SECONDS
if [[ ! -f "$ROOTFS/.clawgym-complete" || "${FORCE:-0}" == 1 ]]; then
  mkdir -p "$CACHE"
  STAGE="$(mktemp -d "$CACHE/stage-XXXXXX")"
  trap 'rm -rf "$STAGE"' EXIT
  include="python3,ca-certificates,$(echo "$EXTRA_PACKAGES" | tr ' ' ',')"
  log "debootstrap bookworm from $MIRROR with $include"
  debootstrap --variant=minbase --include="${include%,}" bookworm "$STAGE" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
    || die "debootstrap failed: see $CACHE/debootstrap.log"
  log "Debian root filesystem in $((SECONDS - t0)) s"

  harnesses="$STAGE/$HARNESS_REL"
  mkdir -p "$harnesses"
  if [[ -n "${HARNESSES_FROM:-}" ]]; then
    for h in node24 openclaw claude-code; do
      [[ -d "$HARNESSES_FROM/$h" ]] && cp -a "$HARNESSES_FROM/$h" "$harnesses/"
    done
  fi
  summary="$(CLAWGYM_HARNESS_DIR="$harnesses" bash "$ROOT/scripts/install-harnesses.sh" openclaw claude-code)"
  log "$(echo "$summary" | tr '\n' ' ')"
  inside() { local p; p="$(readlink -f "$1")"; echo "/${p#"$STAGE"/}"; }
  field() { echo "$summary" | awk -v h="$1" -v k="$2=" '$2 == h { for (i = 3; i <= NF; i++) if (index($i, k) == 1) print substr($i, length(k) + 1) }'; }
  node_bin="$(field openclaw node)"
  [[ -n "$node_bin" ]] || die "install-harnesses.sh gave no node for openclaw"
  ln -sf "$(inside "$node_bin")" "$STAGE/usr/local/bin/node"
  printf '#!/bin/sh\nexec /usr/local/bin/node %s "$@"\n' "$(inside "$(field openclaw bin)")" >"$STAGE/usr/local/bin/openclaw"
  claude_bin="$(field claude-code bin)"
  case "$(head -c 2 "$claude_bin")" in
    '#!') printf '#!/bin/sh\nexec /usr/local/bin/node %s "$@"\n' "$(inside "$claude_bin")" >"$STAGE/usr/local/bin/claude" ;;
    *) ln -sf "$(inside "$claude_bin")" "$STAGE/usr/local/bin/claude" ;;
  esac
  chmod 755 "$STAGE/usr/local/bin/openclaw" "$STAGE/usr/local/bin/claude" 2>/dev/null || true

  # The sandbox user and the folders the sandboxes bind or work in.
  grep -q '^agent:' "$STAGE/etc/passwd" || echo 'agent:x:1000:1000:agent:/home/agent:/bin/bash' >>"$STAGE/etc/passwd"
  grep -q '^agent:' "$STAGE/etc/group" || echo 'agent:x:1000:' >>"$STAGE/etc/group"
  mkdir -p "$STAGE"/{workspace,home/agent,run/clawgym,opt/clawgym}
  chown 1000:1000 "$STAGE/workspace" "$STAGE/home/agent"
  rm -rf "$STAGE"/var/cache/apt/archives/*.deb "$STAGE"/var/lib/apt/lists/*
  chroot "$STAGE" /usr/local/bin/node --version >/dev/null || die "node does not run in the root filesystem"
  chroot "$STAGE" /usr/bin/python3 -c "import json" || die "python3 does not run in the root filesystem"
  touch "$STAGE/.clawgym-complete"
  rm -rf "$ROOTFS"
  mv "$STAGE" "$ROOTFS"
  trap - EXIT
  log "root filesystem: $ROOTFS ($(du -sh "$ROOTFS" | cut -f1)) in $((SECONDS - t0)) s"
fi
echo "$ROOTFS"

if have_docker; then
  t1=$SECONDS
  tar -C "$ROOTFS" --exclude=./.clawgym-complete -c . | "$DOCKER" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'WORKDIR /workspace' - "$IMAGE" >/dev/null
  log "image $IMAGE imported in $((SECONDS - t1)) s ($("$DOCKER" image inspect -f '{{.Size}}' "$IMAGE" | awk '{ printf "%.0f MB", $1 / 1e6 }'))"
  echo "$IMAGE"
else
  log "no Docker engine answers: the root filesystem is built, the image is not (DOCKER_HOST picks an engine)"
fi
