#!/usr/bin/env bash
# lspgate beside its peers (cclsp, mcpls, Serena) over one pyright, through one MCP client.
# Builds lspgate in release mode, installs pyright, the peers and the Python MCP client into a
# cache folder (target/bench-peers, or $LSPGATE_BENCH_CACHE), then runs bench/peers/bench.py,
# which prints the tables. A peer that cannot be installed is reported as such by the bench.
# Extra arguments go to bench.py (--only lspgate,cclsp; --hover-calls N; --refs-calls N;
# --tool-list: only each bridge's tools/list sizes). With --only, only those peers are installed.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${LSPGATE_BENCH_CACHE:-$repo/target/bench-peers}
mkdir -p "$cache"
log() { echo "bench: $*" >&2; }

only=""
prev=""
for a in "$@"; do
  case "$a" in
    --only=*) only=${a#--only=} ;;
  esac
  [ "$prev" = "--only" ] && only=$a
  prev=$a
done
# Whether the run drives bridge $1 (every bridge without --only; prefixes, as bench.py reads them).
wanted() {
  [ -z "$only" ] && return 0
  local o
  for o in ${only//,/ }; do
    case "$1" in "${o,,}"*) return 0 ;; esac
  done
  return 1
}

log "building lspgate (release)"
(cd "$repo" && cargo build --release --bin lspgate) || exit 1

if [ ! -x "$cache/pyright/node_modules/.bin/pyright-langserver" ]; then
  log "installing pyright 1.1.414 (the one server behind every bridge)"
  npm install --silent --prefix "$cache/pyright" pyright@1.1.414 >&2 || exit 1
fi
if wanted cclsp && [ ! -x "$cache/cclsp/node_modules/.bin/cclsp" ]; then
  log "installing cclsp 0.7.0 from npm"
  npm install --silent --prefix "$cache/cclsp" cclsp@0.7.0 >&2 || log "cclsp could not be installed"
fi
if wanted mcpls && [ ! -x "$cache/mcpls/bin/mcpls" ]; then
  log "installing mcpls 0.6.0 from crates.io (a few minutes)"
  cargo install --quiet --locked mcpls --version 0.6.0 --root "$cache/mcpls" >&2 || log "mcpls could not be installed"
fi
if [ ! -x "$cache/venv/bin/python" ]; then
  python3 -m venv "$cache/venv" || exit 1
fi
if wanted serena && [ ! -x "$cache/venv/bin/serena" ]; then
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
