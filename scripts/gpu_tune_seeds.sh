#!/usr/bin/env bash
# On a GPU machine: the default tune over seeds on every GPU of the host side
# by side, then the best known config of the scene on this card.
#   scripts/gpu_tune_seeds.sh OUTDIR NAME "SEEDS" [KNOWN_CONFIGS] [SCENE OPTIONS...]
#   scripts/gpu_tune_seeds.sh out manix "1 2 3 4" known.configs --scene manix
# The seeds go round-robin to the GPUs (nvidia-smi -L); each GPU runs its
# seeds one after another through scripts/gpu_variance.sh (a fresh cache and
# an empty cubin cache per seed, the default strategy, estimators and
# budget), so OUTDIR/gpuK/tune_variance.jsonl holds one row per seed, each
# naming its GPU. Then one bench session on GPU 0 re-measures every seed's
# winner and the configs of KNOWN_CONFIGS (one per line; "-" or absent:
# none) side by side: OUTDIR/best_known.jsonl. "Within 2% of the best known"
# is then judged against the fastest row of that one session, on one GPU.
set -uo pipefail
out=${1:?usage: gpu_tune_seeds.sh OUTDIR NAME SEEDS [KNOWN_CONFIGS] [SCENE OPTIONS...]}
name=${2:?usage: gpu_tune_seeds.sh OUTDIR NAME SEEDS [KNOWN_CONFIGS] [SCENE OPTIONS...]}
seeds=${3:?usage: gpu_tune_seeds.sh OUTDIR NAME SEEDS [KNOWN_CONFIGS] [SCENE OPTIONS...]}
known=${4:--}
shift 3
[ $# -gt 0 ] && shift
scene=("$@")
[ ${#scene[@]} -gt 0 ] || scene=(--scene "$name")
here=$(cd "$(dirname "$0")" && pwd)
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "$ngpu" -gt 0 ] || { echo "gpu_tune_seeds: no GPU (nvidia-smi -L lists none)"; exit 3; }
mkdir -p "$out"
declare -a per
k=0
for s in $seeds; do per[$((k % ngpu))]+="$s "; k=$((k + 1)); done
for g in $(seq 0 $((ngpu - 1))); do
  [ -n "${per[$g]:-}" ] || continue
  CUDA_VISIBLE_DEVICES=$g "$here/gpu_variance.sh" "$out/gpu$g" "$name" "${per[$g]}" "${scene[@]}" > "$out/gpu$g.log" 2>&1 &
done
wait
cat "$out"/gpu*/tune_variance.jsonl > "$out/tune_variance.jsonl"
python3 - "$out/tune_variance.jsonl" "$known" > "$out/known.configs" <<'PY'
import json, sys
seen = []
for line in open(sys.argv[1]):
    c = json.loads(line).get("config")
    if c and c not in seen:
        seen.append(c)
if sys.argv[2] != "-":
    for line in open(sys.argv[2]):
        c = line.strip()
        if c and not c.startswith("#") and c not in seen:
            seen.append(c)
print("\n".join(seen))
PY
CUDA_VISIBLE_DEVICES=0 ./bin/bench "${scene[@]}" --configs "$out/known.configs" -o "$out/best_known.jsonl" --quiet \
  > "$out/best_known.log" 2>&1
echo "gpu_tune_seeds: bench exit $?"
python3 - "$out/tune_variance.jsonl" "$out/best_known.jsonl" <<'PY'
import json, sys
tv = [json.loads(l) for l in open(sys.argv[1])]
bk = [json.loads(l) for l in open(sys.argv[2])] if sys.argv[2] else []
ok = [r for r in bk if r.get("status") == "ok" and r.get("metrics", {}).get("time_ms")]
best = min(ok, key=lambda r: r["metrics"]["time_ms"]) if ok else None
bt = best["metrics"]["time_ms"] if best else None
print("best known: %s ms %s" % ((bt, best["config"]) if best else (None, None)))
for r in sorted(tv, key=lambda r: r["seed"]):
    t = r.get("time_ms")
    gap = (t / bt - 1) * 100 if (t and bt) else float("nan")
    print("seed %d on %s: %s ms (%+.2f%% of best known), %s evaluations" % (r["seed"], r["gpu"].split(",")[1].strip() if "," in r["gpu"] else r["gpu"], t, gap, r.get("evaluations")))
PY
