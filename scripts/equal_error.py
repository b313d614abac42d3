#!/usr/bin/env python3
"""equal_error.py: the transmittance estimators at equal error, from committed renders.

Contract:
  scripts/equal_error.py REF.pfm[.gz] BENCH.jsonl IMG_delta.pfm[.gz] IMG_ratio.pfm[.gz] IMG_residual.pfm[.gz]
  prints, per estimator, the MSE of its image (equal spp, one seed) against the
  converged reference, that MSE over ratio tracking's (the measured
  equal-error factor), the evaluator's equal_error_factor from its bench row
  (matched on the image's config: majorant=skip), its time, and the time to
  ratio tracking's error (time x MSE ratio); writes the same as JSON to
  stdout's last line. Reads PFM (little- or big-endian, RGB) with the standard
  library only.
"""
import array
import gzip
import json
import sys


def pfm(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        if f.readline().strip() != b"PF":
            raise SystemExit("%s: not an RGB PFM" % path)
        w, h = map(int, f.readline().split())
        scale = float(f.readline())
        a = array.array("f")
        a.frombytes(f.read())
        if (scale > 0) != (sys.byteorder == "big"):
            a.byteswap()
        if len(a) != 3 * w * h:
            raise SystemExit("%s: %d floats for %dx%d" % (path, len(a), w, h))
        return a


def main(argv):
    if len(argv) != 6:
        raise SystemExit(__doc__)
    ref = pfm(argv[1])
    rows = {}
    for line in open(argv[2]):
        r = json.loads(line)
        c = r["config"]
        if "majorant=skip" in c and "transmittance=" in c and r["status"] == "ok":
            rows[c.split("transmittance=")[1]] = r
    out = {}
    for name, path in zip(("delta", "ratio", "residual"), argv[3:6]):
        img = pfm(path)
        if len(img) != len(ref):
            raise SystemExit("%s: not the reference's size" % path)
        out[name] = {"mse": sum((x - y) ** 2 for x, y in zip(img, ref)) / len(ref),
                     "mean": sum(img) / len(img)}
    for name, o in out.items():
        m = rows[name]["metrics"]
        o["mse_over_ratio"] = o["mse"] / out["ratio"]["mse"]
        o["equal_error_factor"] = m.get("equal_error_factor")
        o["time_ms"] = m["time_ms"]
        o["time_to_ratio_error_ms"] = m["time_ms"] * o["mse_over_ratio"]
        o["config"] = rows[name]["config"]
    print("%-9s %11s %9s %11s %9s %9s" % ("estimator", "MSE", "MSE/ratio", "gate factor", "time ms", "eq. err ms"))
    for name, o in out.items():
        print("%-9s %11.4e %9.3f %11.4f %9.3f %9.3f" % (name, o["mse"], o["mse_over_ratio"], o["equal_error_factor"],
                                                      o["time_ms"], o["time_to_ratio_error_ms"]))
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv)
