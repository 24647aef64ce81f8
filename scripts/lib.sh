# Shared by the scripts: where builds go, and installing the tools they need when missing.
# Build output lives outside the clone so CI and later builds reuse it: a target/ inside a fresh clone starts cold every time.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/docnum-target}"
export LEPTOS_SITE_ROOT="${LEPTOS_SITE_ROOT:-$ROOT/target/site}"
WASM_BINDGEN_VERSION="0.2.130"   # must equal the wasm-bindgen crate pinned in Cargo.toml

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# The build's own tools (wasm-bindgen-cli, cargo-llvm-cov, docnum-wasm-split) are compiled without optimisation: each
# does seconds of work per run, and on a fresh machine their release builds held up the first test build for 5.5
# minutes; their debug builds take about 2 (docs/benchmarks/ci-time.md). What they make is the same: the bound bundle
# byte for byte, the coverage totals, the split's main module (its manifest's order varies run to run in either build).
# Nor with debug info, which nobody reads here: wasm-bindgen-cli's build took 139 CPU-seconds with it, 113 without.
# Each builds in a target directory of its own: cargo install in a shared one waits for the other's lock, and
# cargo-llvm-cov, which the test build waits for, took 80 s instead of 41 behind wasm-bindgen-cli.
install_tool() { local dir="$1"; shift; CARGO_TARGET_DIR="$dir" CARGO_PROFILE_DEV_DEBUG=false cargo install --debug "$@"; }

# rustup must not run twice at once on one toolchain: each install rewrites the toolchain's record of what is installed
# and the last writer wins, so the other component's files stay without a record and the next `rustup component add`
# fails on them. A script that installs in the background calls these two first, one after the other.
ensure_wasm_target() {
  if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    log "installing the wasm32-unknown-unknown target"
    rustup target add wasm32-unknown-unknown
  fi
}
ensure_llvm_tools() {
  if ! rustup component list --installed | grep -q '^llvm-tools'; then
    log "installing llvm-tools (rustup)"
    rustup component add llvm-tools
  fi
}

ensure_wasm_tools() {
  ensure_wasm_target
  if ! command -v wasm-bindgen >/dev/null || [ "$(wasm-bindgen --version | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
    log "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (about a minute, once)"
    install_tool "$CARGO_TARGET_DIR/tools/wasm-bindgen" wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force   # not --locked: with it, a locked dependency is missing from the registry (0.2.130)
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

# Formatting, and clippy with -D warnings riding along with the suite's own builds: clippy-driver compiles this
# crate in place of rustc (RUSTC_WORKSPACE_WRAPPER; dependencies still go to rustc), so `cargo test` lints the
# server with every target it builds (lib, bins, their tests, tests/it) and build_site's wasm-release build lints
# the browser bundle's library. A separate `cargo clippy` checked every dependency a second and third time: 12.7
# of a cold CI run's 38.7 minutes (docs/benchmarks/ci-time.md). CLIPPY_ARGS is how cargo-clippy hands clippy-driver the
# arguments after `--`; the self-check below fails the run if this toolchain's driver no longer reads them.
# Exported, so every cargo command of the calling script builds this crate the same way (no rebuilds between them).
lint() {
  ensure_lint_tools
  log "cargo fmt --check"
  (cd "$ROOT" && cargo fmt --check && cargo fmt --check --manifest-path staff/Cargo.toml)
  RUSTC_WORKSPACE_WRAPPER="$(rustup which clippy-driver)"
  CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
  export RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS
  local probe; probe="$(mktemp -d)"
  printf 'fn main() { let v = vec![1]; println!("{}", v.len() == 0); }\n' > "$probe/probe.rs"
  local said; said="$("$RUSTC_WORKSPACE_WRAPPER" --edition 2021 --crate-type bin -o "$probe/probe" "$probe/probe.rs" 2>&1 || true)"
  rm -rf "$probe"
  if ! grep -q 'clippy::.*implied by `-D warnings`' <<<"$said"; then
    echo "clippy-driver did not deny a clippy warning: CLIPPY_ARGS is not read as expected. It said:" >&2
    echo "$said" >&2; return 1
  fi
  log "clippy with -D warnings runs inside the builds that follow (server: cargo test; browser bundle: build_site)"
}

# cargo-llvm-cov (coverage in scripts/test.sh) and the LLVM tools it reads the profiles with
ensure_coverage_tools() {
  ensure_llvm_tools
  if ! cargo llvm-cov --version >/dev/null 2>&1; then
    log "installing cargo-llvm-cov (about 30 seconds, once)"
    install_tool "$CARGO_TARGET_DIR/tools/llvm-cov" cargo-llvm-cov --locked --version 0.9.1
  fi
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

# promtool and amtool (scripts/check-monitoring.sh), from Debian's prometheus and prometheus-alertmanager packages
# without their recommends; their services are not started. Returns 1 when they cannot be installed.
ensure_monitoring_tools() {
  local missing=""
  command -v promtool >/dev/null || missing="$missing prometheus"
  command -v amtool >/dev/null || missing="$missing prometheus-alertmanager"
  [ -n "$missing" ] || return 0
  log "installing$missing (Debian, no recommends: promtool and amtool)"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null; fi
}

# Everything the test phases after the builds need from the network: Chromium, promtool and amtool (Debian), the
# end-to-end packages (npm), Schemathesis (PyPI). scripts/test.sh runs it beside the builds, which wait on the cores
# while this waits on the network; one job, so that no two apt-gets race for dpkg's lock. Each phase still calls its
# own ensure_*, which finds the tool in place (or installs it then, and fails there if it cannot).
ensure_test_tools() {
  ensure_chromium
  ensure_monitoring_tools
  ensure_npm_packages
  ensure_schemathesis
}

ensure_npm_packages() {
  if ! [ -d "$ROOT/end2end/node_modules/@playwright/test" ]; then
    log "installing the end-to-end test packages (npm ci)"
    (cd "$ROOT/end2end" && npm ci --no-audit --no-fund)
  fi
}

# wasm-opt from npm's binaryen, installed once into the cache (Debian's binaryen 108 breaks hydration: "WebAssembly.Table.set(): Argument 1 is invalid")
BINARYEN_VERSION="132.0.0"
BINARYEN_DIR="$HOME/.cache/docnum-binaryen"
ensure_wasm_opt() {
  WASM_OPT="$BINARYEN_DIR/node_modules/.bin/wasm-opt"
  local have=""
  [ -f "$BINARYEN_DIR/node_modules/binaryen/package.json" ] && \
    have="$(node -p "require('$BINARYEN_DIR/node_modules/binaryen/package.json').version")"
  if ! [ -x "$WASM_OPT" ] || [ "$have" != "$BINARYEN_VERSION" ]; then
    log "installing wasm-opt (npm binaryen@$BINARYEN_VERSION) into $BINARYEN_DIR"
    npm install --no-audit --no-fund --prefix "$BINARYEN_DIR" "binaryen@$BINARYEN_VERSION" >/dev/null
  fi
}

# docnum-wasm-split (tools/wasm-split): splits the browser bundle at its lazy pages and writes Leptos' preload manifest;
# installed once into the cache, again when its source changes
WASM_SPLIT_DIR="$HOME/.cache/docnum-tools"
ensure_wasm_split() {
  WASM_SPLIT="$WASM_SPLIT_DIR/bin/docnum-wasm-split"
  local stamp; stamp="$(cat "$ROOT/tools/wasm-split/Cargo.toml" "$ROOT/tools/wasm-split/Cargo.lock" "$ROOT/tools/wasm-split/src/main.rs" | sha256sum | cut -c1-16)"
  if ! [ -x "$WASM_SPLIT" ] || [ "$(cat "$WASM_SPLIT_DIR/wasm-split.stamp" 2>/dev/null)" != "$stamp" ]; then
    log "installing docnum-wasm-split (tools/wasm-split, about 30 seconds, once)"
    install_tool "$WASM_SPLIT_DIR/target" --quiet --locked --force --path "$ROOT/tools/wasm-split" --root "$WASM_SPLIT_DIR"
    printf '%s' "$stamp" > "$WASM_SPLIT_DIR/wasm-split.stamp"
  fi
}

# The browser bundle of one cargo build, split and bound: every page but the staff's (`/`, `/login`) is a chunk loaded on
# its first visit (`#[lazy_route]` in src/app/mod.rs). Leaves in $2: docnum.js, docnum_bg.wasm, the chunks, their loader
# (`__wasm_split.______________________.js`, the name Leptos preloads) and `__wasm_split_manifest.json`.
split_and_bind() {
  local wasm="$1" out="$2"
  log "splitting the bundle at its lazy pages (docnum-wasm-split), binding it (wasm-bindgen)"
  "$WASM_SPLIT" "$wasm" "$out" "$out/docnum_split.wasm"
  # the chunks import the main module's functions by their linker names: keep them
  wasm-bindgen --target web --keep-lld-exports --no-demangle --out-dir "$out" --out-name docnum --no-typescript "$out/docnum_split.wasm"
  rm "$out/docnum_split.wasm"
}

# The staff script (staff/, the reserve page's own small crate; ADR 0005), built for wasm32 and bound into $2 as
# staff.js and staff_bg.wasm. `build_staff_script [--dev] OUT`.
build_staff_script() {
  local profile="release" flag="--release"
  if [ "$1" = "--dev" ]; then profile="debug"; flag=""; shift; fi
  local out="$1"
  log "building the staff script (staff/, $profile)"
  # the main crate's flags (.cargo/config.toml, found from staff/ too) are not this crate's: an empty RUSTFLAGS wins
  (cd "$ROOT/staff" && RUSTFLAGS="" CARGO_TARGET_DIR="$BUNDLE_TARGET_DIR/staff" cargo build --locked --target wasm32-unknown-unknown $flag)
  wasm-bindgen --target web --out-dir "$out" --out-name staff --no-typescript \
    "$BUNDLE_TARGET_DIR/staff/wasm32-unknown-unknown/$profile/docnum_staff.wasm"
}

# The browser bundle (hydrate) builds in a target directory of its own, so that it can build beside the server's
# builds (cargo locks a whole target directory): scripts/test.sh runs it in the background. No host crate is lost
# by it: the wasm-release profile's build scripts and proc macros were never the debug server's.
BUNDLE_TARGET_DIR="${BUNDLE_TARGET_DIR:-$CARGO_TARGET_DIR/browser}"

# Builds the browser bundle (hydrate) into $LEPTOS_SITE_ROOT and the server (ssr) into $CARGO_TARGET_DIR.
#   build_site            the production bundle: the wasm-release profile, wasm-opt -Oz, in a folder named by its
#                         content's hash (`pkg/<hash>/`, written as `dir: <hash>` into hash.txt next to the server
#                         executable; server::bundle serves it for a year), .br and .gz files beside each; a debug
#                         server (quick to build)
#   build_site --release  the same bundle and a release server
#   build_site --dev      the quick loop: debug WASM, no wasm-opt, no hashes, no compression, straight in pkg/
#   build_site --as-tested the debug server with the test targets' features (dev-dependencies unify features, so a
#                         plain `cargo build` after `cargo test` rebuilt ten crates and the server: 2 minutes cold);
#                         scripts/test.sh uses it, after `cargo test` built exactly this
# Both bundles are split (split_and_bind): a lazy page's code imports its loader, so an unsplit bundle cannot start.
build_site() {
  local bundle_mode="" server_args=()
  for arg in "$@"; do
    case "$arg" in
      --dev) bundle_mode="--dev" ;;
      --release|--as-tested) server_args+=("$arg") ;;
      *) echo "build_site: unknown option $arg (--dev, --release, --as-tested)" >&2; return 2 ;;
    esac
  done
  build_bundle $bundle_mode
  build_server "${server_args[@]}"
}

# build_bundle [--dev]: the browser bundle alone, into $LEPTOS_SITE_ROOT; the production bundle's folder name goes to
# $LEPTOS_SITE_ROOT/hash.txt, which build_server puts next to the server executable.
build_bundle() {
  local mode="prod"
  [ "${1:-}" != "--dev" ] || mode="dev"
  ensure_wasm_tools
  ensure_wasm_split
  local pkg="$LEPTOS_SITE_ROOT/pkg" hash_file="$LEPTOS_SITE_ROOT/hash.txt" target="$BUNDLE_TARGET_DIR/wasm32-unknown-unknown"
  local started=$SECONDS out; out="$(mktemp -d)"
  # `--cfg erase_components` and the linker's `--emit-relocs` (what wasm-split reads) come from .cargo/config.toml
  if [ "$mode" = dev ]; then
    log "building the browser bundle (wasm, debug)"
    (cd "$ROOT" && CARGO_TARGET_DIR="$BUNDLE_TARGET_DIR" cargo build --lib --target wasm32-unknown-unknown --no-default-features --features hydrate)
    split_and_bind "$target/debug/docnum.wasm" "$out"
    build_staff_script --dev "$out"
    cp "$ROOT/style/main.css" "$out/docnum.css"
    rm -rf "$pkg" && mkdir -p "$pkg" && cp "$out"/* "$pkg/"
    rm -f "$hash_file"   # no hash file: the server uses the plain names (server::bundle)
  else
    ensure_wasm_opt
    log "building the browser bundle (wasm, wasm-release profile)"
    (cd "$ROOT" && CARGO_TARGET_DIR="$BUNDLE_TARGET_DIR" cargo build --lib --target wasm32-unknown-unknown --no-default-features --features hydrate --profile wasm-release)
    split_and_bind "$target/wasm-release/docnum.wasm" "$out"
    build_staff_script "$out"
    local before; before="$(cat "$out"/*.wasm | wc -c)"
    log "wasm-opt -Oz (binaryen $BINARYEN_VERSION), every module in one process"
    # binaryen warns of the name section's newer subsections, which it drops anyway (no names are kept)
    node "$ROOT/scripts/wasm-opt-all.mjs" "$BINARYEN_DIR" "$out" >&2 2> >(grep -v "unknown name subsection" >&2)
    cp "$ROOT/style/main.css" "$out/docnum.css"
    # one name for the whole build: the loader and the chunks name each other and the main module as they are
    local hash; hash="$(cd "$out" && sha256sum -- * | sha256sum | cut -c1-16)"
    rm -rf "$pkg" && mkdir -p "$pkg/$hash" && cp "$out"/* "$pkg/$hash/"
    printf 'dir: %s\n' "$hash" > "$hash_file"
    log "precompressing (brotli, gzip)"
    node "$ROOT/scripts/precompress.mjs" "$pkg/$hash"/*.js "$pkg/$hash"/*.wasm "$pkg/$hash"/*.css | sed 's/^/    /' >&2
    echo "    the modules before wasm-opt: $before bytes" >&2
  fi
  rm -rf "$out"
  cp -r "$ROOT/public/." "$LEPTOS_SITE_ROOT/"
  log "browser bundle ready in $((SECONDS - started)) s"
}

# build_server [--release] [--as-tested]: the server against the bundle build_bundle left; sets SERVER_BIN, LOADGEN_BIN.
build_server() {
  local server_flag="" server_dir="debug" tests_flag=""
  for arg in "$@"; do
    case "$arg" in
      --release) server_flag="--release"; server_dir="release" ;;
      --as-tested) tests_flag="--tests" ;;
      *) echo "build_server: unknown option $arg (--release, --as-tested)" >&2; return 2 ;;
    esac
  done
  log "building the server ($server_dir)"
  # no LEPTOS_OUTPUT_NAME here: leptos_config reads it with option_env!, so setting it would rebuild leptos
  # whenever `cargo test` and this script alternate; the server reads output-name from Leptos.toml instead.
  (cd "$ROOT" && cargo build --features ssr --bins $server_flag $tests_flag)
  local bin_dir="$CARGO_TARGET_DIR/$server_dir"
  if [ -f "$LEPTOS_SITE_ROOT/hash.txt" ]; then cp "$LEPTOS_SITE_ROOT/hash.txt" "$bin_dir/hash.txt"; else rm -f "$bin_dir/hash.txt"; fi
  export SERVER_BIN="$bin_dir/docnum"
  export LOADGEN_BIN="$bin_dir/loadgen"
}

# Phases that can run side by side (scripts/test.sh): `beside NAME CMD…` starts CMD in the background with its output
# in a log of its own; `together` waits for all of them, prints each log whole in the order they were started, and fails
# if any failed.
BESIDE_PIDS=(); BESIDE_NAMES=(); BESIDE_LOGS=()
beside() {
  local name="$1"; shift
  local out; out="$(mktemp)"
  ( "$@" ) > "$out" 2>&1 &
  BESIDE_PIDS+=("$!"); BESIDE_NAMES+=("$name"); BESIDE_LOGS+=("$out")
  log "started beside the others: $name"
}
together() {
  local failed=0 i verdict
  for i in "${!BESIDE_PIDS[@]}"; do
    verdict="passed"
    wait "${BESIDE_PIDS[$i]}" || { verdict="FAILED"; failed=1; }
    log "${BESIDE_NAMES[$i]}: $verdict"
    cat "${BESIDE_LOGS[$i]}"; rm -f "${BESIDE_LOGS[$i]}"
  done
  BESIDE_PIDS=(); BESIDE_NAMES=(); BESIDE_LOGS=()
  return $failed
}

# Stops a process and everything it started (children first, so none is left to its parent's end).
kill_tree() {
  local child
  for child in $(pgrep -P "$1" || true); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}

# Sets the niceness of a process and everything it started (`renice_tree PID N`); a lower one than the process has
# needs root, and is then left as it was.
renice_tree() {
  local child
  for child in $(pgrep -P "$1" || true); do renice_tree "$child" "$2"; done
  renice -n "$2" -p "$1" >/dev/null 2>&1 || true
}

# A TCP port free on 127.0.0.1 now (the kernel's pick).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

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
