#!/bin/sh
# Runs libFuzzer targets for a bounded time each (called by `make fuzz`).
#
#   FUZZ_BUILD=build-fuzz FUZZ_SECONDS=20 sh fuzz/run.sh config pfm ...
#
# Each target starts from fuzz/corpus/<name>/ and fuzz/regressions/<name>/
# (read only) plus what earlier local runs found (build-fuzz/corpus/<name>/,
# where new inputs go). Prints libFuzzer's final stats per target, appends
# one JSON line per target to $FUZZ_BUILD/fuzz-summary.jsonl:
#   {"target", "executions", "seconds", "execs_per_sec", "edges_covered",
#    "corpus", "new_units", "peak_rss_mb", "crashes", "exit", "passed"}
# (edges_covered: libFuzzer's "cov"; for the Python target, distinct outcomes)
# and ends with "N passed, N failed"; exits 1 if any target failed (a crash,
# a leak, a timeout, an out-of-memory, or no executions at all).
set -u
B=${FUZZ_BUILD:-build-fuzz}
S=${FUZZ_SECONDS:-20}
SUMMARY=${FUZZ_SUMMARY:-$B/fuzz-summary.jsonl}
mkdir -p "$B/logs"
: > "$SUMMARY"
# Scratch files of the targets (results_load writes and fsyncs one per
# input) go to memory where possible.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then TMPDIR=/dev/shm; export TMPDIR; fi

stat_of() { # stat_of NAME LOGFILE -> the value of libFuzzer's "stat::NAME:"
    sed -n "s/^stat::$1: *\([0-9.]*\).*/\1/p" "$2" | tail -n 1
}

passed=0
failed=0
for t in "$@"; do
    bin=$B/bin/fuzz_$t
    # a target in Python takes the same flags (fuzz_experiment_spec.py)
    [ -f "fuzz/fuzz_$t.py" ] && bin="python3 fuzz/fuzz_$t.py"
    log=$B/logs/$t.log
    work=$B/corpus/$t
    art=$B/artifacts/$t
    mkdir -p "$work" "$art"
    seeds=""
    for d in fuzz/corpus/$t fuzz/regressions/$t; do [ -d "$d" ] && seeds="$seeds $d"; done
    # results_load's code notes repairs on stderr at every input: keep the
    # target's stderr closed (libFuzzer and the sanitizers still report).
    mask=0
    [ "$t" = results_load ] && mask=2
    # Command-line values are short: long inputs only repeat pieces, slower.
    extra=""
    [ "$t" = parse_numbers ] && extra="-max_len=512"
    echo "== fuzz $t: ${S}s, seeds:${seeds:- none}"
    before=$(ls "$art" | wc -l)
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    FUZZ_BUILD=$B $bin -max_total_time="$S" -print_final_stats=1 -timeout=20 -rss_limit_mb=2048 \
        -close_fd_mask=$mask -artifact_prefix="$art/" $extra "$work" $seeds > "$log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    after=$(ls "$art" | wc -l)
    execs=$(stat_of number_of_executed_units "$log")
    eps=$(stat_of average_exec_per_sec "$log")
    newu=$(stat_of new_units_added "$log")
    rss=$(stat_of peak_rss_mb "$log")
    # edges covered and corpus size at the end ("#N DONE cov: C ft: F corp: U/S")
    cov=$(sed -n 's/^#[0-9]*[[:space:]]*DONE *cov: \([0-9]*\).*/\1/p' "$log" | tail -n 1)
    corp=$(sed -n 's/^#[0-9]*[[:space:]]*DONE .* corp: \([0-9]*\)\/.*/\1/p' "$log" | tail -n 1)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    crashes=$((after - before))
    [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ] && crashes=1
    ok=true
    if [ "$rc" -ne 0 ] || [ -z "$execs" ] || [ "${execs:-0}" -eq 0 ]; then ok=false; fi
    grep -E '^(stat::|Done [0-9]+ runs|INFO: Seed: |INFO: differential)' "$log" | sed 's/^/   /'
    if [ "$ok" = true ]; then
        passed=$((passed + 1))
        echo "   ok: $t: ${execs} executions in ${secs}s, no crashes"
    else
        failed=$((failed + 1))
        echo "   FAILED: $t (exit $rc); the end of $log:"
        tail -n 40 "$log" | sed 's/^/   | /'
        ls "$art" | sed "s|^|   artifact: $art/|"
    fi
    printf '{"target":"%s","executions":%s,"seconds":%s,"execs_per_sec":%s,"edges_covered":%s,"corpus":%s,"new_units":%s,"peak_rss_mb":%s,"crashes":%s,"exit":%s,"passed":%s}\n' \
        "$t" "${execs:-0}" "$secs" "${eps:-0}" "${cov:-0}" "${corp:-0}" "${newu:-0}" "${rss:-0}" "$crashes" "$rc" "$ok" >> "$SUMMARY"
done
echo "fuzz summary: $SUMMARY"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
