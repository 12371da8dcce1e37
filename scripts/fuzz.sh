#!/usr/bin/env bash
# Fuzzing (not in CI): builds the cargo-fuzz targets of fuzz/ and runs each for a bounded time
# under `nice -n 19`, then prints per target: executions, exec/s, corpus size, crashes.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default: 120 s, every target)
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). The corpus grows in
# fuzz/corpus/TARGET (seeded from fuzz/seeds/TARGET), crashing inputs land in
# fuzz/artifacts/TARGET, each run's log in fuzz/logs, and every run is recorded in
# fuzz/runs.tsv, whose totals per target are printed at the end. None of those is committed.
# A crash stops that target's run (libFuzzer's rule); reproduce it with
#   fuzz/target/*/release/TARGET fuzz/artifacts/TARGET/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."

secs="${1:-120}"
shift || true
all=(frame_guard tool_params positions lsp_framing edit_plan)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")

# Release with debug assertions (overflow checks included); no sanitizer: the targets run
# safe Rust, and the cores are shared.
nice -n 19 cargo +nightly fuzz build --sanitizer none --debug-assertions
triple="$(rustc +nightly -vV | sed -n 's/^host: //p')"
bin="fuzz/target/$triple/release"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p fuzz/logs
[ -f fuzz/runs.tsv ] || printf 'date\ttarget\tseconds\texecutions\texec_per_s\tcorpus_files\tcorpus_bytes\tcrashes\tkept\n' >fuzz/runs.tsv

# corpus: what libFuzzer kept at the end (distinct coverage), inputs/size; files: the folder.
printf '%-12s %8s %12s %8s %16s %8s %8s\n' target seconds executions exec/s corpus files crashes
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
    seeds=()
    [ -d "fuzz/seeds/$t" ] && seeds=("fuzz/seeds/$t")
    dict=()
    [ -f "fuzz/dicts/$t.dict" ] && dict=("-dict=fuzz/dicts/$t.dict")
    touch "$scratch/start"
    log="fuzz/logs/$t-$(date +%Y%m%d-%H%M%S).log"
    start="$(date +%s)"
    # The plan target builds its temp root under TMPDIR; it goes with the scratch folder.
    TMPDIR="$scratch" nice -n 19 "$bin/$t" "fuzz/corpus/$t" "${seeds[@]}" "${dict[@]}" \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="fuzz/artifacts/$t/" >"$log" 2>&1 || true
    took=$(($(date +%s) - start))
    execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
    rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
    files="$(find "fuzz/corpus/$t" -type f | wc -l)"
    bytes="$(find "fuzz/corpus/$t" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')"
    crashes="$(find "fuzz/artifacts/$t" -type f -newer "$scratch/start" | wc -l)"
    kept="$(sed -n 's/^#[0-9]*[[:space:]]*DONE .* corp: \([^ ]*\) .*/\1/p' "$log" | tail -1)"
    printf '%-12s %8s %12s %8s %16s %8s %8s\n' "$t" "$took" "${execs:-?}" "${rate:-?}" \
        "${kept:-?}" "$files" "$crashes"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -Iseconds)" "$t" "$took" "${execs:-0}" \
        "${rate:-0}" "$files" "$bytes" "$crashes" "${kept:-?}" >>fuzz/runs.tsv
    if [ "$crashes" -gt 0 ]; then
        find "fuzz/artifacts/$t" -type f -newer "$scratch/start" | sed 's/^/    artifact: /'
        grep -m1 -E 'panicked at|ERROR: libFuzzer' "$log" | sed 's/^/    /' || true
    fi
done

echo
echo "totals over every run in fuzz/runs.tsv:"
awk -F'\t' 'NR > 1 {s[$2] += $3; e[$2] += $4; c[$2] += $8; f[$2] = $6; k[$2] = $9}
    END {printf "%-12s %8s %12s %8s %16s %8s %8s\n", "target", "seconds", "executions", "exec/s", "corpus", "files", "crashes";
         for (t in s) printf "%-12s %8d %12d %8d %16s %8d %8d\n", t, s[t], e[t], (s[t] ? e[t] / s[t] : 0), k[t], f[t], c[t]}' \
    fuzz/runs.tsv
