#!/usr/bin/env bash
# Runs on the lent GPU machine (see README, "Running on a GPU"): the binaries
# are built on the development machine and carried as bin/; this script
# records the machine, then runs the requested stages, writing logs and
# results under $OUT (or ./gpu-out when OUT is unset).
#   scripts/gpu_session.sh test bench sanitize      (SAN_TOOLS="memcheck racecheck" to choose tools)
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export VPT_CACHE_DIR=${VPT_CACHE_DIR:-/tmp/vptune-cubin}
{
  echo "date: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,uuid,driver_version,memory.total,clocks.max.sm --format=csv
  echo "nvcc: $(nvcc --version | tail -1)"
  echo "commit: $(git rev-parse --short=12 HEAD 2>/dev/null)"
  nproc
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

run() { echo "== $*"; "$@"; echo "== exit $?"; }

for stage in "$@"; do
  case "$stage" in
    test)
      run ./bin/vptune-tests -v gpu 2>&1 | tee "$OUT/gpu-tests.log" ;;
    bench)
      run ./bin/bench --thesis --roofline -o "$OUT/bench.jsonl" --max-time 3 2>&1 | tee "$OUT/bench.log" ;;
    sanitize)
      for tool in ${SAN_TOOLS:-memcheck racecheck synccheck initcheck}; do
        for c in naiveSK naiveMK regenerationSK-thread regenerationSK-warp regenerationSK-block streamingSK \
                 streamingMK streamingSK-morton sortingSK; do
          echo "== $tool $c"
          compute-sanitizer --tool "$tool" --error-exitcode 9 ./bin/render --scene bucky --config "$c" \
            --width 24 --height 16 --spp 2 -o "$OUT/san.pfm" > "$OUT/san-one.log" 2>&1
          rc=$?
          tail -3 "$OUT/san-one.log"
          echo "$tool $c exit=$rc" | tee -a "$OUT/sanitize.txt"
        done
      done 2>&1 | tee "$OUT/sanitize.log" ;;
    *)
      echo "unknown stage $stage" ;;
  esac
done
