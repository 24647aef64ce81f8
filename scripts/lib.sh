# Shared by the scripts: where builds go, and installing the tools they need when missing.
# Build output lives outside the clone so CI and later sessions reuse it (BUILD-NOTES "Keeping CI fast").
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/docnum-target}"
export LEPTOS_SITE_ROOT="${LEPTOS_SITE_ROOT:-$ROOT/target/site}"
WASM_BINDGEN_VERSION="0.2.130"   # must equal the wasm-bindgen crate pinned in Cargo.toml

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

ensure_wasm_tools() {
  if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    log "installing the wasm32-unknown-unknown target"
    rustup target add wasm32-unknown-unknown
  fi
  if ! command -v wasm-bindgen >/dev/null || [ "$(wasm-bindgen --version | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
    log "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (about 3 minutes, once)"
    cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force   # not --locked: see BUILD-NOTES
  fi
}

ensure_lint_tools() {
  local missing=""
  cargo fmt --version >/dev/null 2>&1 || missing="$missing rustfmt"
  cargo clippy --version >/dev/null 2>&1 || missing="$missing clippy"
  if [ -n "$missing" ]; then
    log "installing$missing"
    rustup component add $missing
  fi
}

# Formatting and lints, for both builds (the server with every target, the browser bundle's library: the
# dev-dependencies do not build for wasm32, and the pure modules' tests are linted in the server build).
lint() {
  ensure_lint_tools
  ensure_wasm_tools
  log "cargo fmt --check"
  (cd "$ROOT" && cargo fmt --check)
  log "cargo clippy (ssr, all targets)"
  (cd "$ROOT" && cargo clippy --all-targets --features ssr -- -D warnings)
  log "cargo clippy (hydrate, the browser bundle)"
  (cd "$ROOT" && cargo clippy --lib --target wasm32-unknown-unknown --no-default-features --features hydrate -- -D warnings)
}

# Schemathesis 4 (API fuzzing, scripts/fuzz-api.sh) in a virtualenv of its own; sets $SCHEMATHESIS.
SCHEMATHESIS_VENV="${SCHEMATHESIS_VENV:-$HOME/.cache/docnum-venv}"
ensure_schemathesis() {
  if ! "$SCHEMATHESIS_VENV/bin/schemathesis" --version 2>/dev/null | grep -q 'version 4\.'; then
    log "installing schemathesis 4 from PyPI into $SCHEMATHESIS_VENV"
    if ! python3 -m venv "$SCHEMATHESIS_VENV"; then
      if [ "$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
      else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null; fi
      python3 -m venv "$SCHEMATHESIS_VENV"
    fi
    "$SCHEMATHESIS_VENV/bin/pip" install -q 'schemathesis==4.*'
  fi
  export SCHEMATHESIS="$SCHEMATHESIS_VENV/bin/schemathesis"
}

ensure_chromium() {
  if ! [ -x /usr/bin/chromium ]; then
    log "installing Chromium from Debian"
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; fi
  fi
}

ensure_npm_packages() {
  if ! [ -d "$ROOT/end2end/node_modules/@playwright/test" ]; then
    log "installing the end-to-end test packages (npm ci)"
    (cd "$ROOT/end2end" && npm ci --no-audit --no-fund)
  fi
}

# Builds the browser bundle (hydrate) and the server (ssr) into $LEPTOS_SITE_ROOT and $CARGO_TARGET_DIR.
build_site() {
  local profile_flag="" profile_dir="debug"
  if [ "${1:-}" = "--release" ]; then profile_flag="--release"; profile_dir="release"; fi
  ensure_wasm_tools
  log "building the browser bundle (wasm, $profile_dir)"
  (cd "$ROOT" && cargo build --lib --target wasm32-unknown-unknown --no-default-features --features hydrate $profile_flag)
  mkdir -p "$LEPTOS_SITE_ROOT/pkg"
  wasm-bindgen --target web --out-dir "$LEPTOS_SITE_ROOT/pkg" --out-name docnum --no-typescript \
    "$CARGO_TARGET_DIR/wasm32-unknown-unknown/$profile_dir/docnum.wasm"
  # keep wasm-bindgen's name docnum_bg.wasm: without LEPTOS_OUTPUT_NAME at compile time (see below) the
  # hydration script asks for exactly that file
  rm -f "$LEPTOS_SITE_ROOT/pkg/docnum.wasm"
  cp "$ROOT/style/main.css" "$LEPTOS_SITE_ROOT/pkg/docnum.css"
  cp -r "$ROOT/public/." "$LEPTOS_SITE_ROOT/"
  log "building the server ($profile_dir)"
  # no LEPTOS_OUTPUT_NAME here: leptos_config reads it with option_env!, so setting it would rebuild leptos
  # whenever `cargo test` and this script alternate; the server reads output-name from Leptos.toml instead.
  (cd "$ROOT" && cargo build --features ssr --bins $profile_flag)
  export SERVER_BIN="$CARGO_TARGET_DIR/$profile_dir/docnum"
  export LOADGEN_BIN="$CARGO_TARGET_DIR/$profile_dir/loadgen"
}

# Waits until http://$1/health answers, or fails after $2 seconds.
wait_for_health() {
  local addr="$1" secs="${2:-60}"
  for _ in $(seq 1 $((secs * 5))); do
    if curl -fsS "http://$addr/health" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  echo "server at $addr did not become healthy within ${secs}s" >&2
  return 1
}
