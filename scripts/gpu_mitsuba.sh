#!/usr/bin/env bash
# On the GPU machine: vptune against Mitsuba 3 (experiments/mitsuba) with
# Mitsuba's CUDA variant, from the repository root, the programs already
# built in bin/ (render and bench) and the bundle of scripts/mitsuba_bundle.sh
# in .mitsuba/ (the machine has no internet: nothing is installed).
#
#   OUT=/some/dir scripts/gpu_mitsuba.sh [experiments/mitsuba options...]
#
# Unpacks .mitsuba/mitsuba-cpXY.tar.xz (XY: this python3) into /tmp/site,
# checks `import mitsuba; mi.set_variant('cuda_ad_rgb')` with a tiny render
# (printing the error when it fails: OptiX or the driver may be missing) and
# falls back to llvm_ad_rgb when that works instead (drjit then needs a
# libLLVM 16+; the rows name the variant that ran), then runs the
# comparison on the thesis workloads (400x400, 100 spp; bucky 300) within
# MITSUBA_DEADLINE seconds (default 300), writing $OUT/mitsuba.jsonl (copy it
# to results/<gpu>/mitsuba.jsonl; each row names its gpu_dir) and the log
# $OUT/mitsuba.log. About 6 minutes in all.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out}
mkdir -p "$OUT"
LOG=$OUT/mitsuba.log
exec > >(tee -a "$LOG") 2>&1
export PYTHONUNBUFFERED=1
t0=$SECONDS

py=${PYTHON:-python3}
tag=cp$($py -c 'import sys; print("%d%d" % sys.version_info[:2])')
bundle=.mitsuba/mitsuba-$tag.tar.xz
echo "gpu_mitsuba: $(date -u +%FT%TZ) on $(hostname), $($py --version 2>&1), bundle $bundle"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu_mitsuba: gpu: /'
for t in render bench; do
    [ -x bin/$t ] || { echo "gpu_mitsuba: bin/$t is missing (carry bin/render and bin/bench)"; exit 1; }
done
[ -f "$bundle" ] || { echo "gpu_mitsuba: $bundle is missing: run scripts/mitsuba_bundle.sh ${tag:2:1}.${tag:3} and carry it"; exit 1; }
site=/tmp/site
rm -rf "$site"
mkdir -p "$site"
tar -C "$site" -xJf "$bundle" || { echo "gpu_mitsuba: cannot unpack $bundle"; exit 1; }
export PYTHONPATH=$site
echo "gpu_mitsuba: unpacked in $((SECONDS - t0)) s"
# the llvm fallback: drjit needs a libLLVM 16 or newer (older ones fail on its intrinsics)
if [ -z "${DRJIT_LIBLLVM_PATH:-}" ]; then
    for l in /usr/lib/x86_64-linux-gnu/libLLVM-1[6-9].so /usr/lib/x86_64-linux-gnu/libLLVM-2[0-9].so \
             /usr/lib/x86_64-linux-gnu/libLLVM.so.1[6-9]* /usr/lib/x86_64-linux-gnu/libLLVM.so.2[0-9]*; do
        [ -e "$l" ] && export DRJIT_LIBLLVM_PATH=$l
    done
fi

check() { # check VARIANT: a tiny render with nothing but the bundle on the path
    $py -S - "$1" <<'PYEOF'
import sys, drjit as dr, mitsuba as mi
v = sys.argv[1]
try:
    mi.set_variant(v)
    s = mi.load_dict({"type": "scene", "integrator": {"type": "volpath"}, "emitter": {"type": "constant"},
                      "sensor": {"type": "perspective",
                                 "film": {"type": "hdrfilm", "width": 4, "height": 4, "rfilter": {"type": "box"}}}})
    img = mi.render(s, spp=1)
    dr.eval(img)
    dr.sync_thread()
    print("gpu_mitsuba: mitsuba %s, drjit %s: %s works" % (mi.__version__, dr.__version__, v))
except Exception as e:
    print("gpu_mitsuba: %s does not work here: %s: %s" % (v, type(e).__name__, e))
    sys.exit(1)
PYEOF
}
variant=cuda_ad_rgb
if ! check cuda_ad_rgb; then
    if check llvm_ad_rgb; then
        variant=llvm_ad_rgb
        echo "gpu_mitsuba: FALLING BACK to llvm_ad_rgb: Mitsuba runs on this machine's CPU, vptune on the GPU"
    else
        echo "gpu_mitsuba: no Mitsuba variant runs here; nothing measured"
        exit 3
    fi
fi
echo "gpu_mitsuba: checks took $((SECONDS - t0)) s"

deadline=${MITSUBA_DEADLINE:-300}
$py -S experiments/mitsuba --variant "$variant" --fallback-variant llvm_ad_rgb --vptune gpu --config best \
    --scenes manix,smoke,bucky,cgg-logo,ad,manix:smooth,artifix --renders 6 --deadline "$deadline" \
    --out "$OUT/mitsuba.jsonl" --work /tmp/mitsuba-work "$@"
rc=$?
echo "gpu_mitsuba: experiments/mitsuba exit $rc, $((SECONDS - t0)) s in all; rows: $OUT/mitsuba.jsonl"
exit $rc
