#!/usr/bin/env bash
# lspgate beside its peers (cclsp, mcpls, Serena) over one pyright, through one MCP client.
# Builds lspgate in release mode, installs pyright, the peers and the Python MCP client into a
# cache folder (target/bench-peers, or $LSPGATE_BENCH_CACHE), then runs bench/peers/bench.py,
# which prints the table. A peer that cannot be installed is reported as such by the bench.
# Extra arguments go to bench.py (--only lspgate,cclsp; --hover-calls N; --refs-calls N).
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${LSPGATE_BENCH_CACHE:-$repo/target/bench-peers}
mkdir -p "$cache"
log() { echo "bench: $*" >&2; }

log "building lspgate (release)"
(cd "$repo" && cargo build --release --bin lspgate) || exit 1

if [ ! -x "$cache/pyright/node_modules/.bin/pyright-langserver" ]; then
  log "installing pyright 1.1.414 (the one server behind every bridge)"
  npm install --silent --prefix "$cache/pyright" pyright@1.1.414 >&2 || exit 1
fi
if [ ! -x "$cache/cclsp/node_modules/.bin/cclsp" ]; then
  log "installing cclsp 0.7.0 from npm"
  npm install --silent --prefix "$cache/cclsp" cclsp@0.7.0 >&2 || log "cclsp could not be installed"
fi
if [ ! -x "$cache/mcpls/bin/mcpls" ]; then
  log "installing mcpls 0.6.0 from crates.io (a few minutes)"
  cargo install --quiet --locked mcpls --version 0.6.0 --root "$cache/mcpls" >&2 || log "mcpls could not be installed"
fi
if [ ! -x "$cache/venv/bin/python" ]; then
  python3 -m venv "$cache/venv" || exit 1
fi
if [ ! -x "$cache/venv/bin/serena" ]; then
  log "installing Serena 2.1.0 from PyPI"
  "$cache/venv/bin/pip" install --quiet serena-agent==2.1.0 >&2 || log "Serena could not be installed"
fi
if ! "$cache/venv/bin/python" -c "import mcp, jsonschema" 2>/dev/null; then
  log "installing the Python MCP client"
  "$cache/venv/bin/pip" install --quiet mcp jsonschema >&2 || exit 1
fi

exec "$cache/venv/bin/python" "$repo/bench/peers/bench.py" \
  --cache "$cache" \
  --lspgate "$repo/target/release/lspgate" \
  --pyright "$cache/pyright/node_modules/.bin/pyright-langserver" "$@"
