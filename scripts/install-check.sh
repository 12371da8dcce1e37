#!/usr/bin/env bash
# Installs what scripts/package.sh puts in dist/ the way users do, in a clean HOME, and asks
# each install for `tools/list` over MCP stdio: the npm tarballs into a fresh prefix (through
# `npx lspgate serve`, and through npm exec's cache as `npx -y lspgate` runs it), the wheel into
# a fresh venv and through uvx; each `lspgate setup` writes the command it was run with.
#
# Quick by default: the debug binary (LSPGATE_BIN, default target/debug/lspgate) goes into the
# npm package and the wheel is built with the dev profile (WHEEL_PROFILE); maturin and uv come
# from PyPI into a venv under the scratch folder unless MATURIN and UV name them.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
scratch=$(mktemp -d "${TMPDIR:-/tmp}/lspgate-install.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export DIST="$scratch/dist"

if [ -z "${LSPGATE_BIN:-}" ]; then
  cargo build --locked --bin lspgate
  export LSPGATE_BIN="$root/target/debug/lspgate"
fi
export WHEEL_PROFILE="${WHEEL_PROFILE:-dev}"
if [ -z "${MATURIN:-}" ] || [ -z "${UV:-}" ]; then
  python3 -m venv "$scratch/tools"
  "$scratch/tools/bin/pip" install --quiet "maturin>=1.9,<2" "uv>=0.8,<1"
  export MATURIN="${MATURIN:-$scratch/tools/bin/maturin}"
  UV="${UV:-$scratch/tools/bin/uv}"
fi
bash scripts/package.sh npm wheel
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)

# A clean user: nothing of this one's HOME, caches or configuration.
export HOME="$scratch/home"
mkdir -p "$HOME" "$scratch/project"
export npm_config_cache="$scratch/npm-cache" npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
export UV_CACHE_DIR="$scratch/uv-cache" XDG_CACHE_HOME="$scratch/cache" XDG_DATA_HOME="$scratch/data"
export PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1
unset LSPGATE_LAUNCHER LSPGATE_LAUNCHER_PATH
printf 'def f(x: int) -> int:\n    return x\n' > "$scratch/project/app.py"

# `tools/list` answered over stdio by the command given, run in the project.
tools_list() {
  (cd "$scratch/project" && timeout 120 python3 "$root/scripts/mcp-tools-list.py" "$@")
}

# The command `lspgate setup cursor` writes when run as the command given.
setup_command() {
  (cd "$scratch/project" && rm -rf .cursor && "$@" setup cursor >/dev/null &&
    python3 -c 'import json; print(json.load(open(".cursor/mcp.json"))["mcpServers"]["lspgate"]["command"])')
}

expect() {
  if [ "$1" != "$2" ]; then
    echo "install-check: $3: got \`$1\`, expected \`$2\`" >&2
    exit 1
  fi
}

for tgz in "$DIST"/lspgate-*-*-"$version".tgz; do
  plat=${tgz##*/lspgate-}
  plat=${plat%-"$version".tgz}
done
# npm: the tarballs installed globally into a fresh prefix; `npx lspgate` finds its bin.
npm install --silent --global --prefix "$scratch/prefix" "$DIST/lspgate-$plat-$version.tgz" "$DIST/lspgate-$version.tgz"
export PATH="$scratch/prefix/bin:$PATH"
NPM_CONFIG_PREFIX="$scratch/prefix" tools_list npx --no-install lspgate serve
expect "$(setup_command lspgate)" lspgate "setup through the global install"
# npx -y: the package from npm exec's cache (here from the tarballs, as from the registry).
npx_run=(npx -y --package "$DIST/lspgate-$plat-$version.tgz" --package "$DIST/lspgate-$version.tgz" -- lspgate)
tools_list "${npx_run[@]}" serve
expect "$(setup_command "${npx_run[@]}")" npx "setup through npx"
echo "install-check: npm ok (npx lspgate serve answers tools/list)"

# The wheel into a fresh venv.
python3 -m venv "$scratch/venv"
"$scratch/venv/bin/pip" install --quiet --no-index "$DIST"/lspgate-"$version"-*.whl
tools_list "$scratch/venv/bin/lspgate" serve
expect "$(setup_command "$scratch/venv/bin/lspgate")" "$scratch/venv/bin/lspgate" "setup from the venv"
# uvx: the wheel run from uv's cache, offline.
uvx_run=("$UV" tool run --offline --from "$(ls "$DIST"/lspgate-"$version"-*.whl)" lspgate)
tools_list "${uvx_run[@]}" serve
expect "$(setup_command "${uvx_run[@]}")" uvx "setup through uvx"
echo "install-check: wheel ok (pip venv and uvx answer tools/list)"
