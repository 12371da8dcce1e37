#!/usr/bin/env bash
# Builds lspgate's packages into dist/: the npm launcher `lspgate` and the platform package
# holding this machine's binary (`lspgate-linux-x64`, …) as npm tarballs, the wheel (maturin,
# `bindings = "bin"`), and checks the crate with `cargo publish --dry-run --workspace`.
#
#   scripts/package.sh [npm] [wheel] [crate]     (default: all three)
#
# Environment:
#   LSPGATE_BIN        the binary to put in the npm package (default: `cargo build --release`'s)
#   LSPGATE_PLATFORM   its npm platform, OS-CPU as node names them (default: this machine's)
#   LSPGATE_PLATFORMS  the platforms released, the launcher's optionalDependencies (default:
#                      linux-x64 linux-arm64; the launcher knows darwin-arm64 and darwin-x64 too)
#   WHEEL_PROFILE      the cargo profile maturin builds the wheel with (default: release)
#   WHEEL_TARGET       a rust target triple for the wheel (default: this machine's)
#   MATURIN            the maturin command (default: maturin)
#   DIST               the output folder (default: dist)
set -euo pipefail
cd "$(dirname "$0")/.."
dist="${DIST:-dist}"
mkdir -p "$dist"
dist=$(cd "$dist" && pwd)
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(npm wheel crate)

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
[ -n "$version" ] || { echo "package.sh: no version in Cargo.toml" >&2; exit 1; }

# Versions in step: server.json names the version every registry gets.
python3 - "$version" <<'PY'
import json, sys
v = sys.argv[1]
s = json.load(open("server.json"))
bad = [f"server.json {k}" for k, x in [("version", s["version"])] + [(p["registryType"], p["version"]) for p in s["packages"]] if x != v]
if bad:
    sys.exit(f"package.sh: Cargo.toml says {v}, not {', '.join(bad)}")
PY

platform() {
  local os cpu
  case "$(uname -s)" in Linux) os=linux ;; Darwin) os=darwin ;; *) os=unknown ;; esac
  case "$(uname -m)" in x86_64 | amd64) cpu=x64 ;; aarch64 | arm64) cpu=arm64 ;; *) cpu=unknown ;; esac
  echo "$os-$cpu"
}

npm_packages() {
  local plat="${LSPGATE_PLATFORM:-$(platform)}" bin="${LSPGATE_BIN:-}"
  if [ -z "$bin" ]; then
    cargo build --release --locked --bin lspgate
    bin=target/release/lspgate
  fi
  local work="$dist/npm"
  rm -rf "$work"
  mkdir -p "$work/lspgate-$plat/bin" "$work/lspgate/bin"
  # The platform package: the binary, for one os and cpu.
  cp "$bin" "$work/lspgate-$plat/bin/lspgate"
  chmod 755 "$work/lspgate-$plat/bin/lspgate"
  python3 - "$version" "$plat" "$work" "${LSPGATE_PLATFORMS:-linux-x64 linux-arm64}" <<'PY'
import json, sys
version, plat, work, released = sys.argv[1:]
os_, cpu = plat.split("-")
tmpl = json.load(open("packaging/npm/platform/package.json"))
fill = lambda x: x.replace("OS-CPU", plat).replace("OS", os_).replace("CPU", cpu) if isinstance(x, str) else x
p = {k: ([fill(i) for i in v] if isinstance(v, list) else fill(v)) for k, v in tmpl.items()}
p["version"] = version
json.dump(p, open(f"{work}/lspgate-{plat}/package.json", "w"), indent=2)
launcher = json.load(open("packaging/npm/lspgate/package.json"))
launcher["version"] = version
known = launcher["optionalDependencies"]
deps = {f"lspgate-{p}": version for p in released.split()}
if not set(deps) <= set(known) or f"lspgate-{plat}" not in deps:
    sys.exit(f"package.sh: platforms {released} (building {plat}): the launcher knows {', '.join(known)}")
launcher["optionalDependencies"] = deps
json.dump(launcher, open(f"{work}/lspgate/package.json", "w"), indent=2)
PY
  cp packaging/npm/lspgate/bin/lspgate.js "$work/lspgate/bin/"
  cp packaging/npm/README.md "$work/lspgate/"
  cp LICENSE "$work/lspgate/"
  cp LICENSE "$work/lspgate-$plat/"
  (cd "$dist" && npm pack --silent "$work/lspgate-$plat" "$work/lspgate" >/dev/null)
  echo "npm: $dist/lspgate-$plat-$version.tgz $dist/lspgate-$version.tgz"
}

wheel() {
  local maturin="${MATURIN:-maturin}" args=(--out "$dist")
  case "${WHEEL_PROFILE:-release}" in
    release) args+=(--release) ;;
    *) args+=(--profile "$WHEEL_PROFILE") ;;
  esac
  [ -n "${WHEEL_TARGET:-}" ] && args+=(--target "$WHEEL_TARGET")
  rm -f "$dist"/lspgate-*.whl
  "$maturin" build --locked "${args[@]}"
  local whl
  whl=$(ls "$dist"/lspgate-"$version"-*.whl)
  # The wheel holds lspgate and nothing else (no fixture server).
  python3 - "$whl" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
scripts = [n for n in names if ".data/scripts/" in n]
if [s.rsplit("/", 1)[1] for s in scripts] != ["lspgate"]:
    sys.exit(f"package.sh: the wheel's scripts are {scripts}, not lspgate alone")
PY
  echo "wheel: $whl"
}

crate() {
  # Cargo verifies each crate against the others packaged into a registry of its own, and it
  # trusts what it unpacked or built from that registry before as long as the version is the
  # same: a machine that ran this step at an earlier commit would compile the crates against
  # their old sources (CI did, on 2026-12-06). So the step unpacks and builds them afresh.
  local home="${CARGO_HOME:-$HOME/.cargo}" check="${CARGO_TARGET_DIR:-target}/crate-check"
  rm -rf "$home"/registry/src/*/lspgate-* "$home"/registry/cache/*/lspgate-*
  rm -rf "$check"/package "$check"/debug/.fingerprint/lspgate-*
  CARGO_TARGET_DIR="$check" cargo publish --dry-run --workspace --locked --allow-dirty
  echo "crate: cargo publish --dry-run passed"
}

for step in "${steps[@]}"; do
  case "$step" in
    npm) npm_packages ;;
    wheel) wheel ;;
    crate) crate ;;
    *) echo "package.sh: no step $step (npm, wheel, crate)" >&2; exit 2 ;;
  esac
done
