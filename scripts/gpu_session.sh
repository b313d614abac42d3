#!/usr/bin/env bash
# Runs on the lent GPU machine (see docs/gpu-machine.md): the binaries
# are built on the development machine and carried as bin/; this script
# records the machine, then runs the requested stages, writing logs and
# results under $OUT (or ./gpu-out when OUT is unset).
#   scripts/gpu_session.sh test bench sanitize      (SAN_TOOLS="memcheck racecheck" to choose tools)
#   scripts/gpu_session.sh roofline tiling profile  (best vs roofline; thesis 4.2; Nsight Compute)
#   FIXTURE_SCENES="ad cgg-logo" scripts/gpu_session.sh fixture   (configs: tests/fixtures/tuner/space.configs)
#   MPI_BUDGET=60s scripts/gpu_session.sh mpi       (issue 18: a tune as one process, with --gpus all, and as
#                                                   two MPI ranks; carry .mpi from scripts/openmpi_carry.sh)
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export VPT_CACHE_DIR=${VPT_CACHE_DIR:-/tmp/vptune-cubin}
{
  echo "date: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,uuid,driver_version,memory.total,clocks.max.sm --format=csv
  echo "nvcc: $(nvcc --version | tail -1)"
  echo "commit: in every row (the binaries' build; this copy's git metadata may be stale)"
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
    roofline)
      run experiments/run --results "$OUT/results" best_vs_roofline 2>&1 | tee "$OUT/best_vs_roofline.log" ;;
    tiling)
      run experiments/run --results "$OUT/results" t42_tiling 2>&1 | tee "$OUT/t42_tiling.log" ;;
    profile)
      # the spec's metrics must exist on this GPU: list the chip's metrics once
      ncu --query-metrics-mode all --chip gh100 > "$OUT/ncu_metrics.txt" 2>&1
      for m in $(sed -n 's/^metrics *= *//p' experiments/sorting_coherence.spec); do
        grep -q -- "$m" "$OUT/ncu_metrics.txt" && echo "metric $m: listed" || echo "metric $m: NOT listed"
      done | tee "$OUT/ncu_metric_check.txt"
      run experiments/run --results "$OUT/results" sorting_coherence 2>&1 | tee "$OUT/sorting_coherence.log" ;;
    fixture)
      run scripts/gpu_fixture.sh "${FIXTURE_CONFIGS:-tests/fixtures/tuner/space.configs}" "$OUT/exhaustive" ${FIXTURE_SCENES:-ad cgg-logo} \
        2>&1 | tee "$OUT/fixture.log" ;;
    mpi)
      # The same tune three ways on this machine's GPUs: one process; --gpus
      # all (one process, one worker per GPU; with one GPU exactly the first
      # way); and mpirun -np 2 (two ranks: on one GPU they take turns, on two
      # each has its own). OpenMPI is the carried runtime when .mpi is there.
      [ -x .mpi/usr/bin/mpirun ] && eval "$(scripts/openmpi_carry.sh .mpi)"
      export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
      mkdir -p "$OUT/mpi"
      b=${MPI_BUDGET:-60s}
      run ./bin/tune --scene manix --budget "$b" --cache "$OUT/mpi/one.jsonl" --no-save 2>&1 | tee "$OUT/mpi/one.log"
      run ./bin/tune --scene manix --budget "$b" --cache "$OUT/mpi/gpus-all.jsonl" --no-save --gpus all 2>&1 |
        tee "$OUT/mpi/gpus-all.log"
      run mpirun --oversubscribe -np 2 ./bin/tune --scene manix --budget "$b" --cache "$OUT/mpi/np2.jsonl" --no-save \
        2>&1 | tee "$OUT/mpi/np2.log"
      run ./bin/bench --scene manix --thesis --gpus all -o "$OUT/mpi/bench-gpus-all.jsonl" --max-time 3 2>&1 |
        tee "$OUT/mpi/bench-gpus-all.log"
      run ./bin/vptune-tests -v tuner_pool tuner_mpi gpu_tune gpu_bench 2>&1 | tee "$OUT/mpi/tests.log" ;;
    *)
      echo "unknown stage $stage" ;;
  esac
done
