#!/usr/bin/env bash
# One measurement session for the report: every row behind the thesis tables
# (4.1-4.6, 6.1-6.3) and the report's verdicts, measured on ONE GPU
# (CUDA_VISIBLE_DEVICES, default 0) with the binaries of one commit, so that
# those floats and verdicts compare rows of one session (report/README.md,
# "One session per table"). Runs on the lent GPU machine with bin/ built on
# the development machine at a clean commit and carried (docs/gpu-machine.md).
#
#   OUT=DIR scripts/gpu_report_session.sh part1   thesis tables but 4.2, and the pooled verdicts' rows
#   OUT=DIR scripts/gpu_report_session.sh part2   thesis table 4.2 (tiling), then the profiles
#   OUT=DIR scripts/gpu_report_session.sh part1 part2   both, one after the other (no 600 s limit)
#   scripts/gpu_report_session.sh precompile      on the build machine, no GPU: every config the
#                                                 parts measure into .cache/cubin (carry it along)
#
# Each part ends within STAGE_BUDGET seconds (default 560) of its start: its
# steps run in order, each experiments/run call with the time left as its
# --deadline; a step that finds no time left, or fails, is recorded as a row
# of steps.jsonl with its reason and the next step still runs. Calling a
# part again resumes it (experiments/run skips what the same commit already
# measured into WORK; on a fresh machine, RESUME=the part's earlier archive
# unpacks it into WORK first). Each part holds whole tables and the
# verdicts' rows that go with them, so that when the two calls land on two
# cards each part is still one session (report_session_collect.py names
# both; the report checks that no table or verdict mixes them); on one card,
# both parts are one session. machine.txt is appended per part, so a change
# of GPU shows.
#
# Writes, under WORK (default /tmp/report-session):
#   machine.txt                 per part: date, nvidia-smi facts and clocks, nvcc, nproc
#   steps.jsonl                 one row per step: exit status, start, end, reason
#   results/<gpu>/...           the results files in the layout of results/<gpu>/
#   results/<gpu>/report_session.json   the session: GPU UUID, commit, clocks, parts done
#   logs/*.log                  each step's output
# and, at the end of each part, under $OUT (three files a part):
#   report-session-PART.tar.gz  all of WORK
#   PART-steps.txt, PART-machine.txt   the steps' summary and machine.txt, to read at once
# scripts/report_session_collect.py ARCHIVE... copies results/<gpu>/ into the checkout.
#
# The measurement protocol of every row is its experiment spec's (the same
# bench_args, e.g. --max-time 3) or, for the files no spec makes, the command
# results/manifest.json records for the committed file.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
# (precompile writes no OUT)
[ "${1:-}" = precompile ] || OUT=$(mkdir -p "$OUT" && cd "$OUT" && pwd)
# The session is written to W and packed into $OUT at the end of each part:
# the device machine returns a few files, at most two folders down.
W=${WORK:-/tmp/report-session}
mkdir -p "$W"
W=$(cd "$W" && pwd)
if [ -n "${RESUME:-}" ]; then
  for t in $RESUME; do tar -xzf "$t" -C "$W" || echo "RESUME: cannot unpack $t"; done
fi
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
SMI_ID=${CUDA_VISIBLE_DEVICES%%,*}   # nvidia-smi's -i for the GPU CUDA calls 0
# a cubin cache built beforehand (bench --precompile --arch sm_90 --cache .cache/cubin) and carried
# saves the kernels' compilation; otherwise the first call of each config compiles
if [ -z "${VPT_CACHE_DIR:-}" ]; then
  if [ -d .cache/cubin ]; then VPT_CACHE_DIR=$PWD/.cache/cubin; else VPT_CACHE_DIR=/tmp/vptune-cubin; fi
fi
export VPT_CACHE_DIR
STAGE_BUDGET=${STAGE_BUDGET:-560}
mkdir -p "$W/logs" "$W/results"
ROOT=$PWD

now() { date -u +%FT%TZ; }

# steprow STEP EXIT STARTED REASON: one row of steps.jsonl
steprow() {
  python3 - "$W/steps.jsonl" "$1" "$2" "$3" "$(now)" "$4" "${PART:-}" <<'EOF'
import json, sys
path, step, rc, started, ended, reason, part = sys.argv[1:8]
with open(path, "a", encoding="utf-8") as f:
    f.write(json.dumps({"kind": "step", "part": part, "step": step, "exit": int(rc), "started": started,
                        "time": ended, "reason": reason}) + "\n")
EOF
}

left() { echo $(( STAGE_END - $(date +%s) )); }

# machine: the GPU's facts and clocks, appended per part. Each nvidia-smi
# field is queried on its own: a field the driver does not know fails alone.
machine() {
  {
    echo "== part ${PART:-?} date: $(now)"
    echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
    for f in name uuid driver_version memory.total pci.bus_id clocks.max.sm clocks.max.memory \
             clocks.applications.graphics clocks.applications.memory \
             clocks.default_applications.graphics clocks.default_applications.memory \
             clocks.sm clocks.mem power.limit persistence_mode \
             clocks_event_reasons.active clocks_throttle_reasons.active \
             clocks_event_reasons.applications_clocks_setting clocks_throttle_reasons.applications_clocks_setting; do
      v=$(nvidia-smi -i "$SMI_ID" --query-gpu="$f" --format=csv,noheader 2>&1 | head -1)
      echo "$f: $v"
    done
    # Locked clocks (nvidia-smi -lgc) have no query field: application
    # clocks away from their defaults are the queryable sign; the raw
    # CLOCK and PERFORMANCE sections follow for the rest.
    a=$(nvidia-smi -i "$SMI_ID" --query-gpu=clocks.applications.graphics --format=csv,noheader,nounits 2>/dev/null | head -1)
    d=$(nvidia-smi -i "$SMI_ID" --query-gpu=clocks.default_applications.graphics --format=csv,noheader,nounits 2>/dev/null | head -1)
    if [ -n "$a" ] && [ -n "$d" ] && [ "$a" = "$d" ]; then
      echo "clocks locked: no (application clocks at their default; an -lgc lock shows only in the raw sections)"
    elif [ -n "$a" ] && [ -n "$d" ]; then
      echo "clocks locked: yes (application graphics clock $a, default $d)"
    else
      echo "clocks locked: unknown (application clocks not queryable)"
    fi
    echo "-- nvidia-smi -q -d CLOCK,PERFORMANCE"
    nvidia-smi -i "$SMI_ID" -q -d CLOCK,PERFORMANCE 2>&1 | sed -n '1,80p'
    echo "-- nvidia-smi -L"
    nvidia-smi -L 2>&1
    echo "nvcc: $(nvcc --version 2>&1 | tail -1)"
    echo "bench: $(./bin/bench --version 2>&1 | head -3 | tr '\n' ' ')"
    echo "nproc: $(nproc)"
    echo "VPT_CACHE_DIR=$VPT_CACHE_DIR ($(ls "$VPT_CACHE_DIR" 2>/dev/null | wc -l) entries)"
  } >> "$W/machine.txt" 2>&1
}

# experiments NAME...: experiments/run into $W/results, bounded by the part's time left
experiments() {
  local step="experiments:$*" started rc t
  started=$(now)
  t=$(left)
  if [ "$t" -le 5 ]; then
    steprow "$step" 4 "$started" "not started: the part's $STAGE_BUDGET s were spent; run the part again"
    return
  fi
  echo "== $step (deadline ${t}s)"
  python3 experiments/run --results "$W/results" --deadline "$t" "$@" > "$W/logs/${1}.log" 2>&1
  rc=$?
  tail -4 "$W/logs/${1}.log"
  case $rc in
    0) steprow "$step" 0 "$started" "" ;;
    4) steprow "$step" 4 "$started" "stopped at the deadline: run the part again (it resumes)" ;;
    *) steprow "$step" "$rc" "$started" "experiments/run failed: logs/${1}.log" ;;
  esac
}

# gpudir: the results folder bench names this GPU (set after the first experiments/run)
gpudir() {
  local d
  d=$(cd "$W/results" 2>/dev/null && ls -d */ 2>/dev/null | head -1)
  echo "${d%/}"
}

# remeasure NAME SOURCE DEST BENCH_ARGS...: bench again, in this session, the
# configs of a committed results file (its result rows, in their order), on
# its scene, with the bench arguments its manifest line records.
remeasure() {
  local name=$1 src=$2 dest=$3 started rc t scene cfg
  shift 3
  started=$(now)
  t=$(left)
  if grep -q "\"step\": \"$name\", \"exit\": 0," "$W/steps.jsonl" 2>/dev/null; then
    echo "== $name: done in an earlier call"; return
  fi
  if [ ! -f "$src" ]; then steprow "$name" 2 "$started" "no $src to take the configs from"; return; fi
  if [ "$t" -le 10 ]; then steprow "$name" 4 "$started" "not started: the part's time was spent"; return; fi
  cfg="$W/logs/$name.configs"
  scene=$(python3 - "$src" "$cfg" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
res = [r for r in rows if r.get("kind") == "result" and r.get("config")]
with open(sys.argv[2], "w", encoding="utf-8") as f:
    for c in dict.fromkeys(r["config"] for r in res):
        f.write(c + "\n")
print(res[0]["scene"] if res else "")
EOF
)
  if [ -z "$scene" ]; then steprow "$name" 2 "$started" "$src holds no result row"; return; fi
  mkdir -p "$(dirname "$dest")"
  echo "== $name: bench --scene $scene --configs ($(wc -l < "$cfg") configs) $*"
  timeout --kill-after=5 "$t" ./bin/bench --scene "$scene" --configs "$cfg" "$@" -o "$dest" --quiet \
    > "$W/logs/$name.log" 2>&1
  rc=$?
  tail -3 "$W/logs/$name.log"
  case $rc in
    0) steprow "$name" 0 "$started" "" ;;
    124|137) steprow "$name" "$rc" "$started" "stopped at the part's deadline (rows appended so far stay)" ;;
    *) steprow "$name" "$rc" "$started" "bench failed: logs/$name.log" ;;
  esac
}

# session: report_session.json from the rows measured so far (every GPU UUID
# and commit they name: one of each is one session)
session() {
  local g
  g=$(gpudir)
  [ -n "$g" ] || return
  python3 - "$W" "$g" "${PART:-}" <<'EOF'
import glob, json, os, sys
out, gpu, part = sys.argv[1:4]
base = os.path.join(out, "results", gpu)
uuids, commits, first, last = {}, {}, None, None
for p in glob.glob(os.path.join(base, "**", "*.jsonl"), recursive=True):
    for line in open(p, encoding="utf-8"):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("kind") not in ("result", "roofline", "profile", "cpu_reference"):
            continue
        g = r.get("gpu") or r.get("host_gpu")
        if isinstance(g, dict) and g.get("uuid"):
            uuids[g["uuid"]] = g
        if r.get("commit"):
            commits[r["commit"]] = commits.get(r["commit"], 0) + 1
        t = r.get("time")
        if isinstance(t, str):
            first = t if first is None or t < first else first
            last = t if last is None or t > last else last
path = os.path.join(base, "report_session.json")
old = {}
if os.path.exists(path):
    with open(path, encoding="utf-8") as f:
        old = json.load(f)
parts = old.get("parts", [])
if part and part not in parts:
    parts.append(part)
machine = ""
if os.path.exists(os.path.join(out, "machine.txt")):
    with open(os.path.join(out, "machine.txt"), encoding="utf-8") as f:
        machine = f.read()
def fact(key):
    v = None
    for line in machine.splitlines():
        if line.startswith(key + ": "):
            v = line[len(key) + 2:].strip()   # the last part's
    return v
s = {"schema": "vptune.session/1", "gpu_dir": gpu,
     "uuid": sorted(uuids)[0] if len(uuids) == 1 else None, "uuids": sorted(uuids),
     "commit": sorted(commits)[0] if len(commits) == 1 else None, "commits": commits,
     "name": next(iter(uuids.values())).get("name") if uuids else None,
     "clocks": {k: fact(k) for k in ("clocks.max.sm", "clocks.applications.graphics",
                                     "clocks.default_applications.graphics", "clocks locked")},
     "first": first, "last": last, "parts": parts,
     "one_session": len(uuids) == 1 and len(commits) == 1}
with open(path, "w", encoding="utf-8") as f:
    json.dump(s, f, indent=1)
    f.write("\n")
print("session: %s" % json.dumps({k: s[k] for k in ("uuids", "commits", "one_session", "parts")}))
EOF
}

# The experiments each part runs, and the committed files whose configs it measures again.
PART1_EXPERIMENTS="roofline t41_kernels t43_regeneration t45_compaction t46_sorting t61_gpu_vs_cpu t62_smoke t63_bucky
                   t44_registers best_vs_roofline compaction_depth path_order async_flights estimators"
PART2_EXPERIMENTS="t42_tiling sorting_coherence"
REMEASURED="results/h100/estimators/manix-depths.jsonl results/h100/async/smoke-winners.jsonl"

if [ "${1:-}" = precompile ]; then
  # The kernels are keyed by config, NVRTC build and architecture, not by
  # scene: one list covers every part. The tuned configs are those of any
  # results/*/best/ (best_vs_roofline takes this GPU's, else another's).
  mkdir -p .cache/cubin
  # shellcheck disable=SC2086
  python3 - $PART1_EXPERIMENTS $PART2_EXPERIMENTS -- $REMEASURED > "$W/precompile.configs" <<'EOF2'
import glob, json, sys
sys.path.insert(0, "experiments")
import vptexp as vx
args = sys.argv[1:]
names, files = args[:args.index("--")], args[args.index("--") + 1:]
specs = vx.load_specs("experiments")
out = []
for n in names:
    out += vx.static_configs(specs[n])[0]
for p in sorted(glob.glob("results/*/best/*.json")):
    with open(p, encoding="utf-8") as f:
        out.append(vx.canonical(json.load(f)["config"]))
for p in files:
    for r in vx.read_rows(p):
        if r.get("kind") == "result" and r.get("config"):
            out.append(r["config"])
print("\n".join(dict.fromkeys(out)))
EOF2
  echo "precompile: $(wc -l < "$W/precompile.configs") configs into .cache/cubin"
  exec ./bin/bench --precompile --arch "${ARCH:-sm_90}" --configs "$W/precompile.configs" --roofline \
    --cache .cache/cubin --jobs "$(nproc)"
fi

for PART in "$@"; do
  STAGE_END=$(( $(date +%s) + STAGE_BUDGET ))
  machine
  grep -E "^(== part|name|uuid|clocks.max.sm|clocks.applications.graphics|clocks locked|bench)" "$W/machine.txt" | tail -7
  case "$PART" in
    part1)
      # The pooled rows (report/pool.py): the thesis schedules, the roofline,
      # the CPU reference (tables 4.1, 4.3, 4.5, 4.6, 6.1-6.3), the register
      # sweep (4.4), the tuned configs beside the roofline, compaction depth.
      # (the same experiments as PART1_EXPERIMENTS, in this order, one deadline each)
      experiments roofline t41_kernels t43_regeneration t45_compaction t46_sorting t61_gpu_vs_cpu t62_smoke t63_bucky
      experiments t44_registers
      experiments best_vs_roofline
      experiments compaction_depth
      # The verdicts' rows outside the pool (report/estimators.py).
      experiments path_order
      experiments async_flights
      g=$(gpudir)
      if [ -n "$g" ]; then
        remeasure manix-depths "$ROOT/results/h100/estimators/manix-depths.jsonl" \
          "$W/results/$g/estimators/manix-depths.jsonl" --roofline --max-time 2
        remeasure manix-depths-2 "$ROOT/results/h100/estimators/manix-depths.jsonl" \
          "$W/results/$g/estimators/manix-depths.jsonl" --max-depth 2 --no-gate --max-time 1
        remeasure manix-depths-3 "$ROOT/results/h100/estimators/manix-depths.jsonl" \
          "$W/results/$g/estimators/manix-depths.jsonl" --max-depth 3 --no-gate --max-time 1
        remeasure smoke-winners "$ROOT/results/h100/async/smoke-winners.jsonl" \
          "$W/results/$g/async/smoke-winners.jsonl" --roofline --max-time 4
      else
        steprow remeasure 2 "$(now)" "no results folder yet: every experiment above failed"
      fi
      experiments estimators ;;
    part2)
      # Thesis table 4.2 alone takes most of a call; the profiles after it.
      experiments t42_tiling
      experiments sorting_coherence ;;
    *)
      steprow "$PART" 2 "$(now)" "unknown part (part1, part2)" ;;
  esac
  session
  echo "== $PART done: $(now); steps:"
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r['part']==sys.argv[2]: print('  %-60s exit %-3d %s' % (r['step'][:60], r['exit'], r['reason']))
" "$W/steps.jsonl" "$PART" | tee "$OUT/$PART-steps.txt"
  cp "$W/machine.txt" "$OUT/$PART-machine.txt"
  # everything so far (rows, logs, machine.txt, steps.jsonl): the part's one archive
  tar -czf "$OUT/report-session-$PART.tar.gz" -C "$W" . && echo "== packed $OUT/report-session-$PART.tar.gz"
done
