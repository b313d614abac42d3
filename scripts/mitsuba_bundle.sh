#!/usr/bin/env bash
# Builds a trimmed Mitsuba 3 + Dr.Jit bundle for a machine without internet
# (the GPU machine), small enough to travel with the repository:
#
#   scripts/mitsuba_bundle.sh [PYTHON_VERSION]        default 3.12 (the GPU machine's)
#
# Wheels: mitsuba 3.9.1 and drjit 1.5.0 for that Python (cpXY, manylinux
# x86_64) from $MITSUBA_WHEELS (default /tmp/whltest) when they are there,
# else downloaded with pip (needs PyPI). They are unpacked, trimmed to what
# experiments/mitsuba needs, and packed as .mitsuba/mitsuba-cpXY.tar.xz
# (.mitsuba/ is ignored by git; the bundle is not committed). Unpack it
# into a folder and put that folder on PYTHONPATH (scripts/gpu_mitsuba.sh
# does).
#
# Kept: the cuda_ad_rgb, llvm_ad_rgb and scalar_rgb variants; the plugins
# the exported scenes load (KEEP_PLUGINS: found by rendering every exported
# scene, the smooth-boundary controls and Mitsuba's variant check with
# LD_DEBUG=files) plus a few their neighbours may ask for (hg for g != 0, obj,
# gaussian, d65, regular); the shared libraries everything links against
# (embree, OpenEXR, libpng, libjpeg, pugixml: libmitsuba.so needs them all
# at load time). Dropped: the other variants (spectral, polarized, mono),
# the other plugins, .pyi stubs, headers, CMake and pkg-config files, the
# sunsky data, the spectral upsampling table srgb.coeff (only spectral
# variants read it), byte code, and the shared libraries' symbols.
#
# With --verify (only when the bundle's Python is the one running here),
# the bundle is unpacked into a scratch folder and, with nothing else on
# the path (python -S), imports, checks each kept variant that can run
# here and renders every scene bin/render exports (llvm_ad_rgb), so that a
# missing file shows here and not on the GPU machine. Prints the bundle's
# size; the target is under 16 MB (with the repository's tracked files it
# must fit the GPU machine's 64 MiB working tree).
set -euo pipefail
cd "$(dirname "$0")/.."

PYVER=3.12
VERIFY=0
for a in "$@"; do
    case $a in
    --verify) VERIFY=1 ;;
    [0-9].[0-9]*) PYVER=$a ;;
    *) echo "usage: scripts/mitsuba_bundle.sh [PYTHON_VERSION] [--verify]" >&2; exit 2 ;;
    esac
done
TAG=cp${PYVER/./}
MI_VERSION=3.9.1
DR_VERSION=1.5.0
WHEELS=${MITSUBA_WHEELS:-/tmp/whltest}
OUT=.mitsuba
STAGE=$OUT/stage-$TAG
BUNDLE=$OUT/mitsuba-$TAG.tar.xz
KEEP_VARIANTS="cuda_ad_rgb llvm_ad_rgb scalar_rgb"
KEEP_PLUGINS="box constant constvolume cube d65 dielectric directional gaussian gridvolume hdrfilm heterogeneous hg
              independent isotropic merge null obj perspective regular roughdielectric srgb uniform volpath"

mkdir -p "$OUT"
wheel() { # wheel NAME VERSION -> path of the cpXY wheel
    local w
    w=$(ls "$WHEELS"/"$1"-"$2"-"$TAG"-"$TAG"-*manylinux*x86_64*.whl 2>/dev/null | head -n 1 || true)
    [ -z "$w" ] && w=$(ls "$OUT"/wheels/"$1"-"$2"-"$TAG"-"$TAG"-*manylinux*x86_64*.whl 2>/dev/null | head -n 1 || true)
    echo "$w"
}
MI_WHL=$(wheel mitsuba $MI_VERSION)
DR_WHL=$(wheel drjit $DR_VERSION)
if [ -z "$MI_WHL" ] || [ -z "$DR_WHL" ]; then
    echo "bundle: downloading the $TAG wheels of mitsuba $MI_VERSION and drjit $DR_VERSION"
    python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version "$PYVER" \
        --platform manylinux_2_28_x86_64 -d "$OUT/wheels" "mitsuba==$MI_VERSION" "drjit==$DR_VERSION"
    MI_WHL=$(wheel mitsuba $MI_VERSION)
    DR_WHL=$(wheel drjit $DR_VERSION)
fi
[ -n "$MI_WHL" ] && [ -n "$DR_WHL" ] || { echo "bundle: no $TAG wheels found" >&2; exit 1; }
echo "bundle: $MI_WHL"
echo "bundle: $DR_WHL"

rm -rf "$STAGE"
mkdir -p "$STAGE"
python3 -m zipfile -e "$MI_WHL" "$STAGE"
python3 -m zipfile -e "$DR_WHL" "$STAGE"
before=$(du -sm "$STAGE" | cut -f1)

# --- trim
keep_variant() { for v in $KEEP_VARIANTS; do [ "$1" = "$v" ] && return 0; done; return 1; }
for f in "$STAGE"/mitsuba/*.cpython-*.so; do
    v=$(basename "$f"); v=${v%%.cpython-*}
    case $v in mitsuba_ext|mitsuba_alias) continue ;; esac
    keep_variant "$v" || rm -f "$f"
done
for f in "$STAGE"/mitsuba/plugins/*.so; do
    p=$(basename "$f" .so)
    case " $(echo $KEEP_PLUGINS) " in *" $p "*) ;; *) rm -f "$f" ;; esac
done
rm -rf "$STAGE"/mitsuba/include "$STAGE"/mitsuba/cmake "$STAGE"/mitsuba/pkgconfig "$STAGE"/mitsuba/mitsuba_stubs \
       "$STAGE"/mitsuba/data/sunsky "$STAGE"/mitsuba/data/srgb.coeff "$STAGE"/drjit/include "$STAGE"/drjit/cmake "$STAGE"/share "$STAGE"/*.data
find "$STAGE" \( -name '*.pyi' -o -name '__pycache__' -o -name 'py.typed' \) -prune -exec rm -rf {} +
# symbols (libembree3 and libmitsuba ship theirs): a third of the packed size
find "$STAGE" -name '*.so*' -type f -exec strip --strip-unneeded {} +
# The variant list Mitsuba reports: the kept ones.
python3 - "$STAGE/mitsuba/config.py" $KEEP_VARIANTS <<'EOF'
import re, sys
path, keep = sys.argv[1], sys.argv[2:]
text = open(path).read()
m = re.search(r"MI_VARIANTS = \[(.*?)\]", text)
have = re.findall(r"'([^']+)'", m.group(1))
kept = [v for v in have if v in keep]
text = text[:m.start()] + "MI_VARIANTS = %r" % kept + text[m.end():]
open(path, "w").write(text)
EOF
after=$(du -sm "$STAGE" | cut -f1)
echo "bundle: unpacked $before MB, trimmed to $after MB"

tmp=$BUNDLE.tmp.$$
tar -C "$STAGE" -cf - . | xz -T0 -9e > "$tmp"
mv "$tmp" "$BUNDLE"
size=$(du -m "$BUNDLE" | cut -f1)
echo "bundle: $BUNDLE, $(stat -c %s "$BUNDLE") bytes (${size} MB), sha256 $(sha256sum "$BUNDLE" | cut -c1-16)"

[ "$VERIFY" = 1 ] || exit 0
here=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
if [ "$here" != "$PYVER" ]; then
    echo "bundle: --verify needs Python $PYVER here (this is $here)" >&2
    exit 1
fi
site=$(mktemp -d)
trap 'rm -rf "$site"' EXIT
tar -C "$site" -xJf "$BUNDLE"
scenes=$(mktemp -d)
for s in cgg-logo ad artifix manix smoke bucky; do
    ./bin/render --scene "$s" --export-mitsuba "$scenes/$s.xml" --width 8 --height 8 --spp 1 --quiet
done
cat > "$scenes/verify.py" <<'EOF'
import glob, os, re, sys
import drjit as dr
import mitsuba as mi
print("mitsuba", mi.__version__, "drjit", dr.__version__, "from", os.path.dirname(mi.__file__))
assert os.path.realpath(mi.__file__).startswith(os.path.realpath(sys.argv[1])), "not the bundle's mitsuba"
for v in sys.argv[3].split():
    try:
        mi.set_variant(v)
        s = mi.load_dict({"type": "scene", "integrator": {"type": "volpath"}, "emitter": {"type": "constant"},
                          "sensor": {"type": "perspective",
                                     "film": {"type": "hdrfilm", "width": 4, "height": 4, "rfilter": {"type": "box"}}}})
        img = mi.render(s, spp=1)
        dr.eval(img)
        print("variant %s: ok" % v)
    except Exception as e:
        print("variant %s: cannot run here (%s)" % (v, str(e).splitlines()[0] if str(e) else type(e).__name__))
mi.set_variant("llvm_ad_rgb")
for x in sorted(glob.glob(os.path.join(sys.argv[2], "*.xml"))):
    for control in (False, True):
        path = x
        if control:
            t = open(x).read()
            m = re.search(r'<bsdf type="roughdielectric">.*?</bsdf>', t, re.S)
            if not m:
                continue
            path = x[:-4] + "_smooth.xml"
            open(path, "w").write(t[:m.start()] + '<bsdf type="dielectric"/>' + t[m.end():])
        img = mi.render(mi.load_file(path), seed=1)
        mi.Bitmap(img).write(path[:-4] + ".pfm")
        print("rendered %s" % os.path.basename(path))
print("verify: ok")
EOF
if [ -z "${DRJIT_LIBLLVM_PATH:-}" ]; then
    for l in /usr/lib/x86_64-linux-gnu/libLLVM-1[6-9].so /usr/lib/x86_64-linux-gnu/libLLVM-2[0-9].so; do
        [ -e "$l" ] && export DRJIT_LIBLLVM_PATH=$l
    done
fi
PYTHONPATH=$site python3 -S "$scenes/verify.py" "$site" "$scenes" "$KEEP_VARIANTS"
rm -rf "$scenes"
