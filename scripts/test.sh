#!/usr/bin/env bash
# The test command: installs the real language servers the tests need, then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-test-servers.sh
export PATH="$PWD/.tools/node_modules/.bin:$PWD/.tools/venv/bin:$PATH"
cargo test --all-targets --no-fail-fast "$@"
