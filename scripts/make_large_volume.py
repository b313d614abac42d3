#!/usr/bin/env python3
"""Writes a large synthetic volume for timing loads: OUT.mhd and OUT.raw.

    python3 scripts/make_large_volume.py OUT NX NY NZ i16|f32

The values are a smooth pattern with a fine ripple (int16 in -1024..3071,
as a CT; f32 in [0, 1]); what they are does not change how long a load
takes, only the grid's size and type do. Slices cycle through 64 distinct
ones, so writing a GB takes seconds, not the minutes a value at a time
would. Used for the load timings of docs/large-volumes.md
(scripts/large_volume_loads.sh).
"""
import array
import math
import os
import sys


def main():
    if len(sys.argv) != 6 or sys.argv[5] not in ("i16", "f32"):
        sys.exit(__doc__)
    out, kind = sys.argv[1], sys.argv[5]
    nx, ny, nz = (int(a) for a in sys.argv[2:5])
    if min(nx, ny, nz) < 1:
        sys.exit("make_large_volume: dimensions must be positive")
    code = "h" if kind == "i16" else "f"
    slices = []
    for k in range(min(nz, 64)):
        row = [0.5 + 0.25 * math.sin(x * 0.05 + k * 0.1) for x in range(nx)]
        vals = array.array(code)
        for y in range(ny):
            c = 0.2 * math.cos(y * 0.03 + k * 0.07)
            if kind == "i16":
                vals.extend(int((r + c) * 4095) - 1024 for r in row)
            else:
                vals.extend(min(1.0, max(0.0, r + c)) for r in row)
        if sys.byteorder != "little":
            vals.byteswap()
        slices.append(vals.tobytes())
    raw = out + ".raw"
    with open(raw, "wb") as f:
        for z in range(nz):
            f.write(slices[z % len(slices)])
    with open(out + ".mhd", "w") as f:
        f.write("ObjectType = Image\nNDims = 3\nDimSize = %d %d %d\nElementType = %s\nElementDataFile = %s\n"
                % (nx, ny, nz, "MET_SHORT" if kind == "i16" else "MET_FLOAT", os.path.basename(raw)))
    print("wrote %s.mhd and %s (%d bytes)" % (out, raw, os.path.getsize(raw)))


if __name__ == "__main__":
    main()
