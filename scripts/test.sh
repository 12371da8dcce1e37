#!/usr/bin/env bash
# The test command: installs the real language servers the tests need, then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-test-servers.sh
export PATH="$PWD/.tools/node_modules/.bin:$PWD/.tools/venv/bin:$PATH"
# The benchmark runs too (as a smoke test, few calls); `cargo bench` gives the real figures.
BENCH_CALLS="${BENCH_CALLS:-50}" BENCH_FILES="${BENCH_FILES:-20}" cargo test --all-targets --no-fail-fast "$@"
