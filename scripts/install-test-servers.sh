#!/usr/bin/env bash
# Installs the real language servers the integration tests drive, pinned, into .tools/ (npm,
# pip, `go install`) and the system (clangd, neovim from apt). Safe to run again: it skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLS="$PWD/.tools"
mkdir -p "$TOOLS"

NPM_PKGS=(pyright@1.1.414 typescript-language-server@5.1.3 typescript@5.9.3 bash-language-server@5.8.1)
if [ ! -x "$TOOLS/node_modules/.bin/pyright-langserver" ] \
  || [ ! -x "$TOOLS/node_modules/.bin/typescript-language-server" ] \
  || [ ! -x "$TOOLS/node_modules/.bin/bash-language-server" ] \
  || [ ! -f "$TOOLS/node_modules/typescript/lib/tsserver.js" ]; then
  if ! command -v npm >/dev/null; then
    echo "npm is required (Node.js 20+)" >&2
    exit 1
  fi
  echo "installing ${NPM_PKGS[*]} into $TOOLS" >&2
  npm install --prefix "$TOOLS" --no-audit --no-fund --loglevel=error "${NPM_PKGS[@]}" >&2
fi

# basedpyright, the alternative Python preset, in a folder of its own: its package installs a
# `pyright-langserver` too, which would stand in for pyright's on the tests' PATH.
if [ ! -x "$TOOLS/basedpyright/node_modules/.bin/basedpyright-langserver" ]; then
  echo "installing basedpyright@1.40.1 into $TOOLS/basedpyright" >&2
  npm install --prefix "$TOOLS/basedpyright" --no-audit --no-fund --loglevel=error basedpyright@1.40.1 >&2
fi

# ruff: a second Python server (a linter) beside pyright, in a private virtualenv.
if [ ! -x "$TOOLS/venv/bin/ruff" ]; then
  echo "installing ruff into $TOOLS/venv" >&2
  python3 -m venv "$TOOLS/venv" >&2
  "$TOOLS/venv/bin/pip" install --quiet ruff==0.14.5 >&2
fi

# Real MCP clients for the HTTP tests, each in a folder of its own (kept off the servers' PATH:
# pyright would otherwise see the client's packages): the Python MCP SDK (its Streamable HTTP
# client) and the MCP Inspector's CLI.
if ! "$TOOLS/mcp-venv/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("mcp") != "2.3.0")' 2>/dev/null; then
  echo "installing mcp==2.3.0 into $TOOLS/mcp-venv" >&2
  python3 -m venv "$TOOLS/mcp-venv" >&2
  "$TOOLS/mcp-venv/bin/pip" install --quiet mcp==2.3.0 >&2
fi
# A real LSP client library for tests/it/lsp_face.rs (`lspgate lsp`): pygls, in a folder of its own
# for the same reason.
if ! "$TOOLS/lsp-venv/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("pygls") != "2.1.1")' 2>/dev/null; then
  echo "installing pygls==2.1.1 into $TOOLS/lsp-venv" >&2
  python3 -m venv "$TOOLS/lsp-venv" >&2
  "$TOOLS/lsp-venv/bin/pip" install --quiet pygls==2.1.1 >&2
fi
if [ ! -x "$TOOLS/inspector/node_modules/.bin/mcp-inspector" ]; then
  echo "installing @modelcontextprotocol/inspector@0.18.0 into $TOOLS/inspector" >&2
  mkdir -p "$TOOLS/inspector"
  npm install --prefix "$TOOLS/inspector" --no-audit --no-fund --loglevel=error @modelcontextprotocol/inspector@0.18.0 >&2
fi

# A real browser for tests/it/status_page.rs: playwright-core (no browsers of its own) drives
# Debian's chromium, in a folder of its own.
if [ ! -f "$TOOLS/playwright/node_modules/playwright-core/package.json" ]; then
  echo "installing playwright-core@1.49.1 into $TOOLS/playwright" >&2
  mkdir -p "$TOOLS/playwright"
  npm install --prefix "$TOOLS/playwright" --no-audit --no-fund --loglevel=error playwright-core@1.49.1 >&2
fi

# The real agent harnesses for tests/harnesses.rs (`lspgate setup` + hooks, end to end against a
# scripted model on 127.0.0.1), pinned, in a folder of their own: Claude Code (a native binary),
# Codex (a native binary), Gemini CLI (Node.js).
HARNESS_PKGS=(@anthropic-ai/claude-code@2.1.332 @openai/codex@0.171.0 @google/gemini-cli@0.61.0)
if ! "$TOOLS/harnesses/node_modules/.bin/claude" --version 2>/dev/null | grep -q '^2\.1\.332 ' \
  || ! "$TOOLS/harnesses/node_modules/.bin/codex" --version 2>/dev/null | grep -q ' 0\.171\.0$' \
  || ! grep -q '"version": "0.61.0"' "$TOOLS/harnesses/node_modules/@google/gemini-cli/package.json" 2>/dev/null; then
  echo "installing ${HARNESS_PKGS[*]} into $TOOLS/harnesses" >&2
  mkdir -p "$TOOLS/harnesses"
  npm install --prefix "$TOOLS/harnesses" --no-audit --no-fund --loglevel=error "${HARNESS_PKGS[@]}" >&2
fi

# gopls, pinned (v0.24 needs a newer Go than 1.25), built by `go install` into .tools/go/bin;
# Go's module cache for it and for the Go projects below is .tools/go (writable, so it can be
# deleted), the build cache Go's default. tests/it/golang.rs runs with the same GOPATH, offline.
if ! command -v go >/dev/null; then
  echo "go is required (Go 1.25+, https://go.dev/dl/) for gopls and tests/it/golang.rs" >&2
  exit 1
fi
go_env() { env GOPATH="$TOOLS/go" GOBIN="$TOOLS/go/bin" GOFLAGS=-modcacherw GOTOOLCHAIN=local "$@"; }
if ! "$TOOLS/go/bin/gopls" version 2>/dev/null | grep -q 'golang.org/x/tools/gopls v0.23.0'; then
  echo "installing gopls v0.23.0 into $TOOLS/go/bin" >&2
  (cd "$TOOLS" && go_env go install golang.org/x/tools/gopls@v0.23.0) >&2
fi

APT_PKGS=()
command -v clangd >/dev/null || APT_PKGS+=(clangd)
command -v shellcheck >/dev/null || APT_PKGS+=(shellcheck)
command -v nim >/dev/null || APT_PKGS+=(nim)
# Neovim (Debian 12's 0.7.2): a real editor's LSP client for tests/it/lsp_face.rs.
command -v nvim >/dev/null || APT_PKGS+=(neovim)
# Emacs with eglot (Debian 12's Emacs 28, eglot 1.9): another editor's client (tests/it/lsp_face_eglot.rs).
command -v emacs >/dev/null || APT_PKGS+=(emacs-nox)
[ -d /usr/share/emacs/site-lisp/elpa/eglot-1.9 ] || APT_PKGS+=(elpa-eglot)
# Chromium: the status page's browser test (tests/it/status_page.rs).
[ -x /usr/bin/chromium ] || APT_PKGS+=(chromium)
if [ ${#APT_PKGS[@]} -gt 0 ]; then
  echo "installing ${APT_PKGS[*]}" >&2
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${APT_PKGS[@]}" >&2
  else
    echo "missing: ${APT_PKGS[*]} (install them with apt-get)" >&2
    exit 1
  fi
fi

# Real code the tests run on, fetched by package name and pinned (never committed): Django's
# source from its PyPI wheel (883 Python files, 87 JavaScript files).
PROJECTS="$TOOLS/projects"
if [ ! -f "$PROJECTS/django-5.2/django/__init__.py" ]; then
  echo "fetching django==5.2 (wheel) into $PROJECTS" >&2
  mkdir -p "$PROJECTS/download"
  python3 -m pip download --quiet --no-deps --only-binary=:all: django==5.2 -d "$PROJECTS/download" >&2
  python3 - "$PROJECTS" <<'PY'
import pathlib, sys, zipfile
projects = pathlib.Path(sys.argv[1])
wheel = next((projects / "download").glob("[Dd]jango-5.2-*.whl"))
with zipfile.ZipFile(wheel) as z:
    z.extractall(projects / "django-5.2")
PY
fi

# rxjs 7.8.2's npm package, which ships its TypeScript sources (src/, 251 files) beside its
# builds (dist/).
if [ ! -f "$PROJECTS/rxjs-7.8.2/src/internal/Subject.ts" ]; then
  echo "fetching rxjs@7.8.2 (npm pack) into $PROJECTS" >&2
  mkdir -p "$PROJECTS/download" "$PROJECTS/rxjs-7.8.2"
  (cd "$PROJECTS/download" && npm pack --silent rxjs@7.8.2 >/dev/null)
  tar -xzf "$PROJECTS/download/rxjs-7.8.2.tgz" -C "$PROJECTS/rxjs-7.8.2" --strip-components=1
fi

# cobra 1.8.1, fetched by module name from the Go module proxy (go mod download), copied out of
# the read-only module cache into a writable tree, and its dependencies downloaded, so the tests
# build it offline.
if [ ! -f "$PROJECTS/cobra-1.8.1/command.go" ]; then
  echo "fetching github.com/spf13/cobra@v1.8.1 (go mod download) into $PROJECTS" >&2
  mkdir -p "$PROJECTS"
  dir=$(cd "$PROJECTS" && go_env go mod download -json github.com/spf13/cobra@v1.8.1 \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')
  rm -rf "$PROJECTS/cobra-1.8.1.part"
  cp -r "$dir" "$PROJECTS/cobra-1.8.1.part"
  chmod -R u+w "$PROJECTS/cobra-1.8.1.part"
  (cd "$PROJECTS/cobra-1.8.1.part" && go_env go mod download && go_env go build ./...) >&2
  mv "$PROJECTS/cobra-1.8.1.part" "$PROJECTS/cobra-1.8.1"
fi
