#!/usr/bin/env bash
# Run a command on this machine as if some programs were not installed: in a private mount
# namespace, /usr/bin, /usr/sbin and /usr/local/bin are overlays that lack them. Nothing
# outside the namespace changes. Needs root (or a user namespace) and util-linux's unshare.
#
#   scripts/without-commands.sh bwrap docker dockerd -- npx clawgym run
#
# How a fresh machine without bubblewrap or Docker is reproduced in the newcomer tests.
# FORGET_PACKAGES="bubblewrap docker.io" also gives the namespace a copy of dpkg's database
# without those packages, so `apt-get install` inside it really installs them (their programs
# land in the namespace's overlays; their other files are rewritten in place, unchanged).
set -euo pipefail
hide=()
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do hide+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift || { echo "usage: $0 PROGRAM... -- COMMAND [ARG...]" >&2; exit 2; }
[ "$#" -gt 0 ] || { echo "usage: $0 PROGRAM... -- COMMAND [ARG...]" >&2; exit 2; }
[ "${#hide[@]}" -gt 0 ] || { echo "name at least one program to hide" >&2; exit 2; }
user_ns=()
[ "$(id -u)" = 0 ] || user_ns=(--user --map-root-user)

# Runs inside the namespace: $1 a scratch folder, $2 how many programs, then them, then the command.
read -r -d '' inside <<'INSIDE' || true
set -euo pipefail
views=$1; n=$2; shift 2; hide=("${@:1:$n}"); shift "$n"
mount -t tmpfs clawgym-without "$views"
for dir in /usr/bin /usr/sbin /usr/local/bin; do
  [ -d "$dir" ] || continue
  key=$(echo "$dir" | tr / _)
  mkdir -p "$views/upper$key" "$views/work$key"
  # An overlay of the real folder: what is removed or installed in it stays in the namespace.
  mount -t overlay overlay -o "lowerdir=$dir,upperdir=$views/upper$key,workdir=$views/work$key" "$dir"
  for p in "${hide[@]}"; do rm -f "$dir/$p"; done
done
if [ -n "${FORGET_PACKAGES:-}" ]; then
  mkdir "$views/dpkg" && cp -a /var/lib/dpkg/. "$views/dpkg/"
  for p in $FORGET_PACKAGES; do rm -f "$views/dpkg/info/$p".* "$views/dpkg/info/$p":*; done
  awk -v forget=" $FORGET_PACKAGES " 'BEGIN { RS = ""; ORS = "\n\n" } { split($0, l, "\n"); sub(/^Package: /, "", l[1]); if (index(forget, " " l[1] " ") == 0) print }' \
    /var/lib/dpkg/status > "$views/dpkg/status"
  mount --bind "$views/dpkg" /var/lib/dpkg
fi
exec "$@"
INSIDE

# The overlays' upper layers live on a tmpfs mounted inside the namespace: they vanish with it,
# and the folder left on the host is empty whatever happens to the command.
views=$(mktemp -d /tmp/clawgym-without-XXXXXX)
trap 'rmdir "$views" 2>/dev/null || true' EXIT
unshare "${user_ns[@]}" --mount --propagation private bash -c "$inside" clawgym-without "$views" "${#hide[@]}" "${hide[@]}" "$@"
