#!/usr/bin/env bash
# Everything the whole test suite needs that `npm install` cannot give: system packages from
# Debian (namespaces, bubblewrap, the Docker engine, busybox for the sandbox image, Chromium for
# the report's browser tests, Python modules that independent checkers use) and the real harness
# CLIs (scripts/install-harnesses.sh, under Node 24). Idempotent: what is present is left alone.
#
#   bash scripts/setup-tests.sh            (the README's test command runs it before npm test)
#
# As root it installs with apt-get. Otherwise it prints the exact `sudo apt-get …` line, installs
# the harness CLIs (no root needed), and exits 1 so the next command does not run half-ready:
# type the line, then run the same command again. No package may start a service of its own
# (openssh-server would start sshd on port 22): the tests start what they need, in namespaces
# they make, and stop it by PID.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[setup-tests] %s\n' "$*" >&2; }

need=()
command -v unshare >/dev/null || need+=(util-linux)
command -v ip >/dev/null || need+=(iproute2)
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v dockerd >/dev/null || need+=(docker.io)
[ -x /bin/busybox ] || need+=(busybox-static)
command -v openssl >/dev/null || need+=(openssl)                      # certificates for the TLS Docker host test
{ [ -x /usr/sbin/sshd ] && command -v ssh-keygen >/dev/null; } || need+=(openssh-server) # the ssh:// Docker host test's own sshd
command -v chromium >/dev/null || need+=(chromium)                    # the report's browser tests
command -v perl >/dev/null || need+=(perl-base)                       # the local sandbox's holder
command -v debootstrap >/dev/null || need+=(debootstrap)               # the OpenClaw image's root filesystem (scripts/openclaw-image.sh)
[ -x /usr/bin/python3 ] || need+=(python3)                            # ClawGym-Task's reward.sh, its reference grader, PinchBench's grade()
# The TensorBoard reporter test reads event files with Google's protobuf runtime and crcmod, and
# the template goldens render with Debian's jinja2: independent readers, not our code.
/usr/bin/python3 -c "import google.protobuf, crcmod" 2>/dev/null || need+=(python3-protobuf python3-crcmod)
/usr/bin/python3 -c "import jinja2" 2>/dev/null || need+=(python3-jinja2)

missing_root=""
if [ "${#need[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    log "apt-get install ${need[*]}"
    made_policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && made_policy=1; fi
    trap '[ -n "$made_policy" ] && rm -f /usr/sbin/policy-rc.d' EXIT
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    missing_root="sudo apt-get install -y --no-install-recommends ${need[*]}"
  fi
else
  log "system packages: all present"
fi

log "harness CLIs (claude-code openclaw codex qwen-code opencode gemini-cli pi kilo grok cline continue droid copilot omp) into .harnesses/"
bash scripts/install-harnesses.sh claude-code openclaw codex qwen-code opencode gemini-cli pi kilo grok cline continue droid copilot omp >/dev/null

if [ -n "$missing_root" ]; then
  log "system packages are missing and this is not root; type:"
  printf '  %s\n' "$missing_root" >&2
  log "then run the same command again (the sandbox, Docker and end-to-end tests need root for namespaces)."
  exit 1
fi
# The OpenClaw image's root filesystem (the local sandbox's rootfs test, the paper example):
# built once from Debian's packages with the CLIs just installed, then cached.
if [ "$(id -u)" = 0 ]; then
  log "the OpenClaw root filesystem (scripts/openclaw-image.sh; minutes the first time, cached after)"
  HARNESSES_FROM="$PWD/.harnesses" bash scripts/openclaw-image.sh >/dev/null
else
  log "not root: the OpenClaw root filesystem is not built (debootstrap needs root); its test skips"
fi
log "ready: npm test"
