#!/usr/bin/env python3
"""scripts/plot_tune.py: a tune's convergence as an SVG plot, from its cache.

    python3 scripts/plot_tune.py CACHE.jsonl -o PLOT.svg

CACHE.jsonl is a tuner cache (`tune --cache FILE`, or the default
results/<gpu>/tune/<scene>.jsonl): a header row and one "eval" row per
evaluation, in the order they ran. The plot shows each passing evaluation's
kernel time (dots) and the best time so far (a step line) against the
evaluation number, with the scene and GPU from the header. Python's standard
library only (no plotting package needed). Exit status: 0 done, 1 a file that
cannot be read or holds no passing evaluation (the message names it), 2 bad
usage.
"""
import argparse
import json
import os
import sys
import tempfile
from xml.sax.saxutils import escape


def read_cache(path):
    header, times = None, []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError("%s:%d: not JSON (%s)" % (path, n, e.msg)) from None
            if not isinstance(row, dict):
                raise ValueError("%s:%d: not a JSON object" % (path, n))
            if row.get("kind") == "header":
                header = row
            elif row.get("kind") == "eval" and row.get("status") == "ok":
                t = (row.get("metrics") or {}).get("time_ms")
                if isinstance(t, (int, float)) and t > 0:
                    times.append(float(t))
    if header is None:
        raise ValueError("%s: no header row: not a tuner cache" % path)
    if not times:
        raise ValueError("%s: no passing evaluation to plot" % path)
    return header, times


def svg(header, times, title_path):
    W, H, L, R, T, B = 720, 400, 70, 20, 50, 50
    n = len(times)
    lo, hi = min(times), max(times)
    if hi == lo:
        hi = lo * 1.1 + 1e-9
    x = lambda i: L + (W - L - R) * (i / max(n - 1, 1))
    y = lambda t: T + (H - T - B) * (1 - (t - lo) / (hi - lo))
    best, run = [], float("inf")
    for t in times:
        run = min(run, t)
        best.append(run)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">'
           % (W, H), '<rect width="100%" height="100%" fill="white"/>']
    gpu = (header.get("gpu") or {}).get("name", "?")
    out.append('<text x="%d" y="20" font-size="14">%s</text>' % (L, escape(
        "tuning %s on %s: best %.4g ms after %d evaluations" % (header.get("scene", "?"), gpu, best[-1], n))))
    out.append('<text x="%d" y="36" fill="#555">%s</text>' % (L, escape(os.path.basename(title_path))))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, H - B, W - R, H - B))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, T, L, H - B))
    for k in range(5):
        t = lo + (hi - lo) * k / 4
        out.append('<text x="%d" y="%.1f" text-anchor="end">%.3g</text>' % (L - 6, y(t) + 4, t))
    out.append('<text x="%d" y="%d" text-anchor="middle">evaluation</text>' % ((L + W - R) // 2, H - 12))
    out.append('<text x="16" y="%d" transform="rotate(-90 16 %d)" text-anchor="middle">kernel time (ms)</text>'
               % ((T + H - B) // 2, (T + H - B) // 2))
    out.append('<text x="%d" y="%d" text-anchor="middle">1</text>' % (L, H - B + 16))
    out.append('<text x="%d" y="%d" text-anchor="middle">%d</text>' % (W - R, H - B + 16, n))
    for i, t in enumerate(times):
        out.append('<circle cx="%.1f" cy="%.1f" r="2.5" fill="#7aa6d8"/>' % (x(i), y(t)))
    pts = " ".join("%.1f,%.1f %.1f,%.1f" % (x(i), y(b), x(i + 1) if i + 1 < n else x(i), y(b))
                   for i, b in enumerate(best))
    out.append('<polyline points="%s" fill="none" stroke="#c0392b" stroke-width="2"/>' % pts)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(prog="plot_tune.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("cache", help="a tuner cache (.jsonl)")
    ap.add_argument("-o", "--output", required=True, help="the SVG file to write")
    a = ap.parse_args(argv)
    try:
        header, times = read_cache(a.cache)
    except OSError as e:
        print("plot_tune.py: error: cannot read '%s': %s" % (a.cache, e.strerror), file=sys.stderr)
        return 1
    except UnicodeDecodeError:
        print("plot_tune.py: error: %s: not text (not a tuner cache)" % a.cache, file=sys.stderr)
        return 1
    except ValueError as e:
        print("plot_tune.py: error: %s" % e, file=sys.stderr)
        return 1
    text = svg(header, times, a.cache)
    d = os.path.dirname(os.path.abspath(a.output))
    try:  # atomically: no half-written plot
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".plot_tune.")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, a.output)
    except OSError as e:
        print("plot_tune.py: error: -o %s: %s" % (a.output, e.strerror), file=sys.stderr)
        return 1
    print("wrote %s (%d evaluations, best %.4g ms)" % (a.output, len(times), min(times)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
