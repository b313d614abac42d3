#!/usr/bin/env bash
# fetch_ct.sh: a real head CT that is not in ../shared/data, reproducibly, for
# the measurements that need "a user's own scan".
#
# Contract:
#   scripts/fetch_ct.sh [DIR]          (default DIR: .dev/ct, git-ignored)
#   writes DIR/cranium.mhd + DIR/cranium.raw and prints the .mhd's path.
#   Idempotent: an existing, complete DIR/cranium.mhd is kept (exit 0).
#
# Source: Debian's package invesalius-examples (3.1.99998-4, GPL-2, from the
# InVesalius project, CTI Renato Archer), file Cranium.inv3: "ProMED CT 0051",
# an int16 CT of a head, 108 axial slices of 256x256 voxels, spacing
# 0.957 x 0.957 x 1.5 mm, values -1024..3033 HU. An .inv3 is a gzip'd tar whose
# main.plist names matrix.dat, a C-order int16 array of shape (slices, rows,
# columns).
#
# Orientation: vptune's cameras look along -z with +y up (scenes/scene_builtin.c),
# so for a frontal view like the thesis' manix the volume is written as
# x = columns (left-right), y = slices (foot to head), z = rows (back to face):
# 256 x 108 x 256 voxels, spacing 0.957 x 1.5 x 0.957. Nothing else changes:
# the values are the file's HU, as int16 (MET_SHORT).
#
# Needs apt-get (for `apt-get download`; no root needed for that) and python3;
# on a machine without a registry, run it elsewhere and carry DIR.
set -euo pipefail
dir=${1:-.dev/ct}
mkdir -p "$dir"
out="$dir/cranium.mhd"
raw="$dir/cranium.raw"
if [ -f "$out" ] && [ -f "$raw" ] && [ "$(stat -c %s "$raw")" = $((256 * 108 * 256 * 2)) ]; then
    echo "$out"; exit 0
fi
command -v apt-get >/dev/null || { echo "fetch_ct.sh: apt-get is missing: run this on a Debian machine and carry $dir" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download -qq invesalius-examples=3.1.99998-4 2>/dev/null) ||
    { echo "fetch_ct.sh: apt-get download invesalius-examples=3.1.99998-4 failed (is the Debian registry reachable? try apt-get update)" >&2; exit 1; }
dpkg-deb -x "$work"/invesalius-examples_*.deb "$work/pkg"
mkdir -p "$work/inv"
tar -xzf "$work/pkg/usr/share/doc/invesalius-examples/examples/Cranium.inv3" -C "$work/inv"
matrix=$(ls "$work"/inv/*/matrix.dat)
python3 - "$matrix" "$raw.tmp" <<'PY'
import sys
from array import array
src, dst = sys.argv[1], sys.argv[2]
S, R, C = 108, 256, 256              # main.plist: shape (108, 256, 256), int16
a = array('h')
with open(src, 'rb') as f:
    a.frombytes(f.read())
if len(a) != S * R * C:
    sys.exit(f"fetch_ct.sh: {src} has {len(a)} values, expected {S*R*C}")
if sys.byteorder != 'little':
    a.byteswap()
out = array('h', bytes(2 * S * R * C))
# output index x + C*(y + S*z): x = column, y = slice, z = row
for z in range(R):
    for y in range(S):
        base_in = (y * R + z) * C
        base_out = C * (y + S * z)
        out[base_out:base_out + C] = a[base_in:base_in + C]
with open(dst, 'wb') as f:
    f.write(out.tobytes())
PY
mv "$raw.tmp" "$raw"
cat > "$out.tmp" <<MHD
ObjectType = Image
NDims = 3
DimSize = 256 108 256
ElementType = MET_SHORT
ElementSpacing = 0.9570312 1.5 0.9570312
BinaryData = True
BinaryDataByteOrderMSB = False
ElementDataFile = cranium.raw
MHD
mv "$out.tmp" "$out"
echo "$out"
