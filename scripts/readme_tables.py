#!/usr/bin/env python3
"""Regenerates the measured tables of the documentation from results/ (no
number in those sections is typed by hand): README.md and every Markdown
page under docs/ (the tables live in docs/findings/). Each table sits
between <!-- BEGIN name --> and <!-- END name --> markers, anywhere in any
of those pages; `--check` fails, naming the pages, when one differs from
what the results give (CI runs it through make test).

    scripts/readme_tables.py [--check] [--gpu h100]
"""
import glob
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_GPU = "h100"   # the GPU of blocks that name none, and of the figures
SCENES = ["cgg-logo", "ad", "artifix", "manix", "smoke", "bucky"]
SCHEDULES = ["naiveSK", "naiveMK", "regenerationSK-thread", "regenerationSK-warp", "regenerationSK-block",
             "streamingSK", "streamingMK", "streamingSK-morton", "sortingSK"]


# What each table reads, relative to results/ ({gpu}: the block's GPU
# folder). The tables open results files only through inputs(), and
# scripts/results_index.py counts these as the files' readers: a file no
# table, report part or test declares fails its check.
INPUTS = {
    "thesis": ["{gpu}/thesis_schedules.jsonl"],
    "roofline": ["{gpu}/best_vs_roofline.jsonl", "*/best/*.json"],
    "registers": ["{gpu}/t44_registers.jsonl"],
    "fixtures": [],   # tests/fixtures/tuner/, not results/
    "mitsuba": ["*/mitsuba.jsonl"],
    "estimator_tunes": ["{gpu}/estimators/*-winners.jsonl"],
    "manix_depths": ["{gpu}/estimators/manix-depths.jsonl"],
    "async_flights": ["{gpu}/async/flights.jsonl"],
    "async_tunes": ["{gpu}/async/*-winners.jsonl"],
    "path_order": ["{gpu}/paths/path_order.jsonl"],
    "tuner_split": ["{gpu}/estimators/tuner_split.jsonl", "{gpu}/estimators/tuner_split-caches.tar.gz",
                    "{gpu}/estimators/cranium-up4-caches.tar.gz", "{gpu}/async/head512-caches.tar.gz"],
    "estimators": ["{gpu}/estimators/table.jsonl"],
    "estimator_skip": ["{gpu}/estimators/skip.jsonl"],
    "estimators.svg": ["{gpu}/estimators/table.jsonl"],
    "tuner_compare": ["cpu-*/kernel_tuner/*.jsonl", "cpu-*/kernel_tuner/machine.txt"],
    "tuner_compare_sampled": ["cpu-*/kernel_tuner_sampled/*.jsonl", "cpu-*/kernel_tuner_sampled/machine.txt"],
    "tuner_compare_tuned": ["cpu-*/kernel_tuner_tuned/*.jsonl", "cpu-*/kernel_tuner_tuned/machine.txt"],
    "ground_truth": [],   # tests/fixtures/tuner/sampled/, not results/
    "tune_variance": ["{gpu}/tune_variance.jsonl"],
    "large_sizes": ["{gpu}/large_schedules.jsonl"],
    "large_coherence": ["{gpu}/large_coherence.jsonl"],
    "large_tunes": ["{gpu}/large_schedules.jsonl", "{gpu}/large/*.jsonl"],
    "large_cranium": ["{gpu}/large/cranium-sizes-probe-*.jsonl"],
}


def inputs(name, gpu, pattern=None):
    """The results files table name reads for gpu (absolute paths, sorted);
    pattern picks those of one declared pattern."""
    out = []
    for p in INPUTS[name]:
        if pattern is None or p == pattern:
            out += sorted(glob.glob(os.path.join(ROOT, "results", p.format(gpu=gpu))))
    return out


def one(name, gpu, pattern):
    """The one file of a declared pattern without wildcards."""
    assert pattern in INPUTS[name], (name, pattern)
    return os.path.join(ROOT, "results", pattern.format(gpu=gpu))


def pages(root=None):
    """The pages whose generated blocks this script fills, relative to the
    repository root: README.md first, then every .md under docs/, sorted."""
    root = root or ROOT
    out = []
    for d, _, files in os.walk(os.path.join(root, "docs")):
        out += [os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/") for f in files if f.endswith(".md")]
    return ["README.md"] + sorted(out)


def blocks(text):
    """[(table name, gpu or None)] of a page's generated blocks, in order."""
    return [(m.group(1), m.group(2)) for m in MARK.finditer(text)]


MEASUREMENTS = ("result", "roofline", "cpu_reference", "profile", "mitsuba_compare")


def rows(path):
    """A results file's rows of its newest commit (that of its newest
    measurement): a file an experiment resumed at a new commit also holds
    the old commit's rows, and a table never mixes the two."""
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                out.append(json.loads(line))
    measured = [r for r in out if r.get("kind") in MEASUREMENTS and r.get("commit")]
    if not measured:
        return out
    newest = max(measured, key=lambda r: r.get("time") or "")["commit"]
    return [r for r in out if r.get("kind") not in MEASUREMENTS or r.get("commit") == newest]


def provenance(rs):
    r = rs[0]
    g = r["gpu"]
    return "%s (%d SMs, driver %s), NVRTC %s, commit %s" % (g["name"], g["sm_count"], g["driver"], r["nvrtc"],
                                                          r["commit"])


def thesis_values():
    t = json.load(open(os.path.join(ROOT, "report", "thesis_tables.json")))["tables"]
    vals = {}
    for key in ("4.3", "4.5", "4.6", "4.1", "6.2", "6.3"):
        for row in t[key]["rows"]:
            ours = row.get("ours")
            for scene, v in row.get("values", {}).items():
                try:
                    vals.setdefault((ours, scene), (float(v), key))
                except (TypeError, ValueError):
                    pass
    return vals


def table_thesis(gpu):
    rs = [r for r in rows(one("thesis", gpu, "{gpu}/thesis_schedules.jsonl")) if r.get("kind") == "result"]
    by = {}
    for r in rs:
        by[(r["schedule"], r["scene"])] = r
    th = thesis_values()
    w = rs[0]["workload"]
    lines = ["Mrays/s per schedule and scene on %s; workload %dx%d, %d spp, seed %d, each schedule with the "
             "thesis' settings (block 256, no register bound, lookahead 1). In brackets: the thesis' GT 650M figure "
             "(tables 4.1, 4.3, 4.5, 4.6, 6.2, 6.3) where it published one. `results/%s/thesis_schedules.jsonl`."
             % (provenance(rs), w["width"], w["height"], w["spp"], w["seed"], gpu), "",
             "| schedule | " + " | ".join(SCENES) + " |", "|---|" + "---:|" * len(SCENES)]
    for s in SCHEDULES:
        cells = []
        for sc in SCENES:
            r = by.get((s, sc))
            if not r:
                cells.append("")
                continue
            if r["status"] != "ok":
                cells.append(r["status"])
                continue
            c = "%.0f" % r["metrics"]["mrays_per_s"]
            if (s, sc) in th:
                c += " (%.2f)" % th[(s, sc)][0]
            cells.append(c)
        lines.append("| %s | %s |" % (s, " | ".join(cells)))
    return "\n".join(lines)


def table_roofline(gpu):
    rs = rows(one("roofline", gpu, "{gpu}/best_vs_roofline.jsonl"))
    roof = {(r["scene"], r["rays"]): r["metrics"]["gsteps_per_s"] for r in rs if r.get("kind") == "roofline"
            and r.get("majorant", "global") == "global"}  # the global probes; a grid probe never stands in
    res = [r for r in rs if r.get("kind") == "result" and r["status"] == "ok"]
    dflt = {r["scene"]: r for r in res if r["config"].startswith("regen=thread,reorder=none,kernels=single,maxrregcount=0,"
                                                                   "ppt=1,block=256,grid=0,threshold=0,")}
    tuned = {}  # the fastest configuration measured beside the default
    for r in res:
        if (r["scene"] not in dflt or r is not dflt[r["scene"]]) and (
                r["scene"] not in tuned or r["metrics"]["gsteps_per_s"] > tuned[r["scene"]]["metrics"]["gsteps_per_s"]):
            tuned[r["scene"]] = r
    # where each scene's tuned configuration was saved: results/<folder>/best/<scene>.json with the same config
    source = {}
    for scene, r in tuned.items():
        found = [f.split(os.sep)[-3] for f in inputs("roofline", gpu, "*/best/*.json")
                 if os.path.basename(f) == scene + ".json" and json.load(open(f))["config"] == r["config"]]
        key = gpu if gpu in found else (found[0] if found else None)
        source.setdefault(key, []).append(scene)
    origin = ("" if list(source) == [gpu] else "; " + "; ".join(
        ("tuned on this GPU: %s" if k == gpu else "tuned on %s: %%s" % k if k else "no saved tune: %s")
        % ", ".join(sorted(v, key=SCENES.index)) for k, v in sorted(source.items(), key=lambda kv: kv[0] != gpu)))
    w = res[0]["workload"]
    other = sorted({(r["scene"], r["workload"]["spp"]) for r in res if r["workload"]["spp"] != w["spp"]})
    note = "".join(" (%s: %d spp, its thesis workload)" % o for o in other)
    lines = ["Each scene's tuned configuration (`results/%s/best/`, from `tune --scene S`%s) and the thesis default "
             "(regenerationSK-thread), measured in one run together with the roofline probe of the same scene: the "
             "divergence-free Woodcock step loop over the same texture with random rays; with camera tiles (a warp is "
             "an 8x4-pixel tile of the scene's primary rays from where they enter the box, each lane with its own "
             "distances: the most coherent an unbiased tracer's warp can be); and with one-voxel bundles (a warp's "
             "rays share direction and distances and start within one voxel: a bound no unbiased tracer reaches, "
             "since independent paths cannot share distances). %s; %dx%d, %d spp%s. "
             "Gsteps/s counts Woodcock steps, null collisions included (on the constant-density cgg-logo and ad "
             "nearly every step is a real collision, so Mrays/s is their measure). `results/%s/best_vs_roofline.jsonl`."
             % (gpu, origin, provenance(rs), w["width"], w["height"], w["spp"], note, gpu), "",
             "| scene | roofline random | camera tiles | one-voxel bundles | thesis default Gsteps/s (Mrays/s) "
             "| tuned Gsteps/s (Mrays/s) | tuned / random | tuned / camera | tuned / bundles | speedup vs default "
             "| tuned config |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for sc in SCENES:
        if sc not in tuned or sc not in dflt:
            continue
        t, d = tuned[sc]["metrics"], dflt[sc]["metrics"]
        rr, rc, rm = roof[(sc, "random")], roof[(sc, "coherent")], roof[(sc, "camera")]
        lines.append("| %s | %.1f | %.1f | %.1f | %.1f (%.0f) | %.1f (%.0f) | %.0f%% | %.0f%% | %.0f%% | %.2fx | `%s` |"
                     % (sc, rr, rm, rc, d["gsteps_per_s"], d["mrays_per_s"], t["gsteps_per_s"], t["mrays_per_s"],
                        100 * t["gsteps_per_s"] / rr, 100 * t["gsteps_per_s"] / rm, 100 * t["gsteps_per_s"] / rc,
                        d["time_ms"] / t["time_ms"], tuned[sc]["config"]))
    return "\n".join(lines)


def table_registers(gpu):
    path = one("registers", gpu, "{gpu}/t44_registers.jsonl")
    rs = [r for r in rows(path) if r.get("kind") == "result" and r["status"] == "ok"]
    lines = ["Bounded registers (thesis table 4.4) on manix, %s; 400x400, 100 spp. The thesis found full "
             "occupancy through `maxrregcount` much slower on Kepler; here:" % provenance(rs), "",
             "| schedule | maxrregcount | registers | spill stores (B) | occupancy theor./achieved | ms | Mrays/s |",
             "|---|---:|---:|---:|---|---:|---:|"]
    for r in rs:
        if r["scene"] != "manix":
            continue
        m = r["metrics"]
        mr = [kv.split("=")[1] for kv in r["config"].split(",") if kv.startswith("maxrregcount=")][0]
        lines.append("| %s | %s | %d | %d | %.2f / %.2f | %.2f | %.0f |" % (
            r["schedule"], mr, m["registers"], max(m["spill_bytes"], 0), m["occupancy_theoretical"],
            m["occupancy_achieved"], m["time_ms"], m["mrays_per_s"]))
    return "\n".join(lines)


def table_fixtures(gpu):
    lines = ["The tuner's recorded space (`tests/fixtures/tuner/`, 336 configs: 9 schedules x maxrregcount {0,64} x "
             "block {128,256} x ppt {1,2} x lookahead {1,2,4} x threshold {0,100}), 400x400, 16 spp:", "",
             "| scene | configs | optimum ms | optimum | median ms | thesis default (regenerationSK-thread) ms |",
             "|---|---:|---:|---|---:|---:|"]
    for f in sorted(glob.glob(os.path.join(ROOT, "tests", "fixtures", "tuner", "*_exhaustive.jsonl"))):
        rs = [r for r in rows(f) if r.get("kind") == "result" and r["status"] == "ok"]
        rs.sort(key=lambda r: r["metrics"]["time_ms"])
        med = rs[len(rs) // 2]["metrics"]["time_ms"]
        dflt = [r for r in rs if r["config"].startswith("regen=thread,reorder=none,kernels=single,maxrregcount=0,ppt=1,"
                                                         "block=256,grid=0,threshold=0,sortkey=position,lookahead=1")]
        lines.append("| %s | %d | %.3f | `%s` | %.3f | %s |" % (
            rs[0]["scene"], len(rs), rs[0]["metrics"]["time_ms"], rs[0]["config"], med,
            "%.3f" % dflt[0]["metrics"]["time_ms"] if dflt else ""))
    return "\n".join(lines)


def table_mitsuba(gpu):
    """experiments/mitsuba's rows of every folder (the GPU's, results/cpu-*/):
    the newest per (scene, control)."""
    blocks = []
    for path in inputs("mitsuba", gpu):
        newest = {}
        for r in rows(path):
            if r.get("kind") != "mitsuba_compare":
                continue
            k = (r.get("scene"), r.get("control"))
            if k not in newest or r.get("time", "") >= newest[k].get("time", ""):
                newest[k] = r
        ok = [r for r in newest.values() if r.get("status") == "ok"]
        if not ok:
            continue
        r0 = max(ok, key=lambda r: r.get("time", ""))
        m, v = r0["mitsuba"], r0["vptune"]
        if v.get("backend") == "gpu":
            where = "%s (driver %s), vptune on the GPU (per-scene config, timed by bench)" % (
                r0["gpu"]["name"], r0["gpu"].get("driver", "?"))
        else:
            cpu = r0["machine"]["cpu"]
            where = "%s, %d threads (both renderers on the CPU: vptune's CPU reference)" % (cpu["model"],
                                                                                         cpu["threads"])
        rel = os.path.relpath(path, ROOT)
        lines = ["%s: Mitsuba %s (%s), drjit %s, Python %s; vptune commit %s. `%s`." % (
            where, m["versions"]["mitsuba"], m["variant"], m["versions"]["drjit"], m["versions"]["python"],
            r0["commit"], rel), "",
            "| scene | workload | renders per side | Mitsuba | vptune | Mitsuba / vptune | pixels failing at 1% "
            "| 4x4-block chi-square p | image mean, Mitsuba - vptune (p) | time to equal error, Mitsuba / vptune |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        order = {s: i for i, s in enumerate(SCENES)}
        for (scene, control), r in sorted(newest.items(), key=lambda kv: (kv[0][1] is not None,
                                                                          order.get(kv[0][0], 99), kv[0][1] or "")):
            name = scene + (" (smooth boundary, both)" if control == "smooth" else "")
            if r.get("status") != "ok":
                lines.append("| %s | %s: %s | | | | | | | | |" % (name, r.get("status"), r.get("reason", "")[:60]))
                continue
            w, c = r["workload"], r["compare"]
            tm, tv = r["mitsuba"]["time"]["median_s"], r["vptune"]["time"]["median_s"]
            fmt = lambda x: "%.1f ms" % (1e3 * x) if x < 1 else "%.2f s" % x  # noqa: E731
            lines.append("| %s | %dx%d, %d spp | %d | %s | %s | %.1fx | %.2f%% | %.2g | %+.2f%% (%.2g) | %s |" % (
                name, w["width"], w["height"], w["spp"], r["renders_per_side"], fmt(tm), fmt(tv), tm / tv,
                100 * c["fraction_failed"], c["block_chi2_p"], 100 * c["image_mean"]["rel_diff"],
                c["image_mean"]["p"], "%.1fx" % r["time_to_equal_error_ratio"]
                if r.get("time_to_equal_error_ratio") else "--"))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) if blocks else "No Mitsuba comparison results yet (`experiments/mitsuba`)."

ESTIMATOR_SCENES = [("manix", "manix"), ("artifix", "artifix"), ("cranium", "cranium: a real head CT, 256x108x256 "
                    "int16 (InVesalius' Cranium.inv3, Debian invesalius-examples 3.1.99998-4; scripts/fetch_ct.sh)"),
                    ("cranium-up4", "cranium-up4: the same CT upsampled 4x (`--upsample 4`), 1024x432x1024"),
                    ("smoke", "smoke")]


def estimator_of(config):
    m = re.search(r"majorant=(\w+)", config)
    d = re.search(r"density=(\w+)", config)
    return "%s:%s" % (m.group(1) if m else "global", d.group(1) if d else "f32")


def schedule_of(config):
    """A config's schedule in few words: experiments/vptexp.py's description
    (the thesis' name and what differs from its settings), estimator keys
    left out."""
    sys.path.insert(0, os.path.join(ROOT, "experiments"))
    import vptexp
    words = vptexp.describe_config(config).split(", ")
    return ", ".join(w for w in words if not w.startswith(("majorant=", "density=", "volume=")))


def table_estimator_tunes(gpu):
    """The default 90 s tune with every estimator against the same tune with
    the thesis' estimator only; both winners re-measured in one bench
    session (scripts/gpu_estimator_tune.sh)."""
    lines = ["| scene | tuned, every estimator: estimator | ms | steps/ray | tuned, global:f32 only: ms | steps/ray "
             "| speedup |", "|---|---|---:|---:|---:|---:|---:|"]
    prov = None
    notes = []
    cards = {}   # (GPU, commit) -> the scenes tuned there: each row is one run on one card
    for key, label in ESTIMATOR_SCENES:
        path = os.path.join(ROOT, "results", gpu, "estimators", key + "-winners.jsonl")
        if path not in inputs("estimator_tunes", gpu):
            continue
        rs = [r for r in rows(path) if r.get("kind") == "result"]
        if len(rs) != 2:
            continue
        a, g = rs[0]["metrics"], rs[1]["metrics"]
        lines.append("| %s | %s%s | %.2f | %.2f | %.2f | %.2f | %.2fx |" % (
            key, estimator_of(rs[0]["config"]), (", flights=async" if "flights=async" in rs[0]["config"] else "") +
            (", paths=pixel" if "paths=pixel" in rs[0]["config"] else ""),
            a["time_ms"], a["steps"] / a["rays"], g["time_ms"], g["steps"] / g["rays"], g["time_ms"] / a["time_ms"]))
        prov = prov or provenance(rs)
        cards.setdefault((rs[0]["gpu"]["uuid"][:12], rs[0]["commit"]), []).append(key)
        if key != label:
            notes.append(label)
        if rs[0]["commit"] != rs[1]["commit"]:
            notes.append("%s: rows of commits %s and %s" % (key, rs[0]["commit"], rs[1]["commit"]))
    if len(cards) > 1:
        notes.append("each row's two tunes and re-measurement ran on one card: " + "; ".join(
            "%s on %s at %s" % (", ".join(v), k[0], k[1]) for k, v in cards.items()))
    commits = sorted({r["commit"] for p in inputs("estimator_tunes", gpu) for r in rows(p)})
    head = ("On %s; workload 400x400, 100 spp, seed 1; `tune --budget 90s` (local search) once with "
            "`--estimators all` and once with `--estimators global`, then both winners measured again in one bench "
            "session (`scripts/gpu_estimator_tune.sh`); %s. "
            "Source: results/%s/estimators/*-winners.jsonl." % (
                prov, "commit %s" % commits[0] if len(commits) == 1 else
                "commits %s (between them the tuner's estimator stage changed and the kernels gained the paths key, "
                "and at 0381a76 the estimator stage's split of the budget changed (\"Tuning a large volume\" below); "
                "seven configs without it compile to identical machine code before and after it, nvdisasm at "
                "2ebe104 and 5df462c)" %
                ", ".join(commits), gpu)) if prov else "no data"
    return head + "\n\n" + "\n".join(lines) + ("\n\n" + "; ".join(notes) if notes else "")


def table_manix_depths(gpu):
    """Where manix's time goes: the same configs with paths cut after their
    first flight (--max-depth 2: the camera ray and the first flight), after
    one more extension (3), and whole; the difference is what the
    extensions after the first flight cost."""
    rs = rows(one("manix_depths", gpu, "{gpu}/estimators/manix-depths.jsonl"))
    res = [r for r in rs if r.get("kind") == "result" and r["status"] == "ok"]
    by = {}
    order = []
    for r in res:
        c = r["config"]
        if c not in order:
            order.append(c)
        by[(c, r["workload"]["max_depth"])] = r["metrics"]
    lines = ["| estimator | schedule | whole path: ms | Msteps | first flight (depth <= 2): ms | Msteps | share of "
             "the time | depth <= 3: ms | after the first flight: ms | Msteps | Mrays |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for c in order:
        full, d2, d3 = by.get((c, 0)), by.get((c, 2)), by.get((c, 3))
        if not (full and d2 and d3):
            continue
        lines.append("| %s | %s | %.2f | %.0f | %.2f | %.0f | %.0f%% | %.2f | %.2f | %.0f | %.1f |" % (
            estimator_of(c), schedule_of(c), full["time_ms"], full["steps"] / 1e6, d2["time_ms"], d2["steps"] / 1e6,
            100 * d2["time_ms"] / full["time_ms"], d3["time_ms"], full["time_ms"] - d2["time_ms"],
            (full["steps"] - d2["steps"]) / 1e6, (full["rays"] - d2["rays"]) / 1e6))
    head = ("On %s; manix, 400x400, 100 spp, seed 1, `bench --max-depth 2` (each path's camera ray, its refraction "
            "into the box and its first flight), `--max-depth 3` and whole paths, one bench session each. Source: "
            "results/%s/estimators/manix-depths.jsonl." % (provenance(res), gpu))
    return head + "\n\n" + "\n".join(lines)


def table_path_order(gpu):
    """The same configs with paths=sample and paths=pixel, per scene
    (experiments/path_order.spec): time of each order, their ratio, and
    whether both traced the same number of steps (they trace the same
    paths, so they must)."""
    import vptexp
    rs = rows(one("path_order", gpu, "{gpu}/paths/path_order.jsonl"))
    res = [r for r in rs if r.get("kind") == "result"]
    t, keys = {}, []
    for r in res:
        c = r["config"]
        order = "pixel" if "paths=pixel" in c else "sample"
        k = (r["scene"], c.replace(",paths=pixel", ""))
        t[(k, order)] = r
        if k not in keys:
            keys.append(k)
    lines = ["| scene | config | estimator | paths=sample: ms | paths=pixel: ms | sample / pixel | same steps |",
             "|---|---|---|---:|---:|---:|---|"]
    for k in keys:
        a, b = t.get((k, "sample")), t.get((k, "pixel"))
        if not a or not b:
            continue
        sa = "" if a["status"] == "ok" else " (%s)" % a["status"]
        sb = "" if b["status"] == "ok" else " (%s)" % b["status"]
        same = "yes" if a["metrics"]["steps"] == b["metrics"]["steps"] else "NO"
        lines.append("| %s | %s | %s | %.2f%s | %.2f%s | %.2fx | %s |" % (
            k[0], vptexp.describe_config(re.sub(r",majorant=\w+|,density=\w+", "", k[1])), estimator_of(k[1]),
            a["metrics"]["time_ms"], sa, b["metrics"]["time_ms"], sb,
            a["metrics"]["time_ms"] / b["metrics"]["time_ms"], same))
    head = ("On %s; workload 400x400, 100 spp, seed 1; `experiments/run path_order`: each config with the thesis' "
            "sample-major path order and with `paths=pixel` (a pixel's samples handed out one after another), "
            "in one bench session per scene; \"sample / pixel\" > 1 where pixel-major wins; a status other than "
            "ok is the gate's (u8 texels change smoke's image, issue 16). Source: results/%s/paths/path_order.jsonl."
            % (provenance(res), gpu))
    return head + "\n\n" + "\n".join(lines)

# tuner_split.jsonl's rows per scene, in order: what tuned each winner, and
# the tune's cache (a tarball of results/{gpu}/ and its member).
TUNER_SPLIT_TUNES = [
    "this tune (0381a76): a quarter of the budget for the global:f32 search, the first screening's contenders "
    "screened again",
    "the tune before (3e30e82): half and half, a whole second screening",
    "the committed 90 s tune of results/h100/async/ (94ec145, before the path-order screening)",
]
TUNER_SPLIT_CACHES = {
    ("cranium.mhd@up4", 0): ("estimators/cranium-up4-caches.tar.gz", "tune-all.jsonl"),
    ("cranium.mhd@up4", 1): ("estimators/tuner_split-caches.tar.gz", "cranium-up4-old.jsonl"),
    ("head512", 0): ("estimators/tuner_split-caches.tar.gz", "head512-new.jsonl"),
    ("head512", 1): ("estimators/tuner_split-caches.tar.gz", "head512-old.jsonl"),
    ("head512", 2): ("async/head512-caches.tar.gz", "tune-all.jsonl"),
}


def tune_cache_use(gpu, tarball, member):
    """(evaluations, charged seconds, commit) of one tune's cache: its eval
    rows and the sum of their cost_s (one GPU: the time budget's charge)."""
    import tarfile
    with tarfile.open(os.path.join(ROOT, "results", gpu, tarball)) as t:
        m = next(m for m in t.getmembers() if m.isfile() and os.path.basename(m.name) == member)
        rs = [json.loads(l) for l in t.extractfile(m).read().decode("utf-8").splitlines() if l.strip()]
    ev = [r for r in rs if r.get("kind") == "eval"]
    return len(ev), sum(r.get("cost_s") or 0 for r in ev), rs[0].get("commit", "?")[:7]


def table_tuner_split(gpu):
    """The default 90 s tune of the large volumes with the estimator stage
    as it is and as it was (tuner/tune.c: FIRST_SHARE and the contenders),
    their winners measured again in one bench session per scene."""
    import vptexp
    res = [r for r in rows(one("tuner_split", gpu, "{gpu}/estimators/tuner_split.jsonl")) if r.get("kind") == "result"]
    by, scenes = {}, []
    for r in res:
        if r["scene"] not in by:
            scenes.append(r["scene"])
        by.setdefault(r["scene"], []).append(r)
    lines = ["| scene | tuned by | its evaluations | charged s | winner | ms | this tune's speed-up |",
             "|---|---|---:|---:|---|---:|---:|"]
    for sc in scenes:
        first = by[sc][0]["metrics"]["time_ms"]
        for i, r in enumerate(by[sc]):
            n, charged, commit = tune_cache_use(gpu, *TUNER_SPLIT_CACHES[(sc, i)])
            assert commit in TUNER_SPLIT_TUNES[i], (sc, i, commit)
            lines.append("| %s | %s | %d | %.1f | %s | %.2f | %s |" % (
                sc, TUNER_SPLIT_TUNES[i], n, charged, vptexp.describe_config(r["config"]), r["metrics"]["time_ms"],
                "" if i == 0 else "%.2fx" % (r["metrics"]["time_ms"] / first)))
    head = ("On %s; workload 400x400, 100 spp, seed 1; `tune --budget 90s` with every estimator (the default), "
            "the winners measured again in one bench session per scene on %s. cranium.mhd@up4: the real head CT "
            "upsampled 4x (1024x432x1024, `--volume .dev/ct/cranium.mhd --like manix --upsample 4`); head512: the "
            "built-in 512^3 head; evaluations and charged seconds: the eval rows of each tune's cache and the sum of "
            "their cost (the first screenings' evaluations included; the last screening's may be answered by the "
            "cache). Source: results/%s/estimators/tuner_split.jsonl; the tunes' caches in tuner_split-caches.tar.gz, "
            "cranium-up4-caches.tar.gz (tune-all) and async/head512-caches.tar.gz (tune-all)." % (provenance(res), res[0]["gpu"]["uuid"][:12],
                                                                          gpu))
    return head + "\n\n" + "\n".join(lines)


def table_async_flights(gpu):
    """Asynchronous flights against the thesis' rounds (with and without
    cooperative flights) per scene and estimator, one schedule family
    (experiments/async_flights.spec)."""
    rs = rows(one("async_flights", gpu, "{gpu}/async/flights.jsonl"))
    res = [r for r in rs if r.get("kind") == "result"]
    t = {}
    scenes, ests = [], []
    for r in res:
        c = r["config"]
        e = estimator_of(c)
        mode = "async" if "flights=async" in c else "coop" if "coop=4" in c else "rounds"
        thr = int(re.search(r"threshold=(\d+)", c).group(1))
        t[(r["scene"], e, mode, thr)] = r
        if r["scene"] not in scenes:
            scenes.append(r["scene"])
        if e not in ests:
            ests.append(e)
    thrs = sorted({k[3] for k in t})
    head_cols = ["rounds", "rounds, coop=4", "async"]
    lines = ["| scene | estimator | " + " | ".join("%s: ms (threshold %s)" % (m, "/".join(map(str, thrs)))
                                                 for m in head_cols) +
             " | async SIMD | async vs the best round |", "|---|---|---|---|---|---:|---:|"]
    bad = []
    for sc in scenes:
        for e in ests:
            cells, best = [], {}
            for mode in ("rounds", "coop", "async"):
                vals = []
                for th in thrs:
                    r = t.get((sc, e, mode, th))
                    if not r or r["status"] != "ok":
                        vals.append("--")
                        if r:
                            bad.append("%s %s %s threshold %d: %s" % (sc, e, mode, th, r["status"]))
                        continue
                    vals.append("%.2f" % r["metrics"]["time_ms"])
                    if mode not in best or r["metrics"]["time_ms"] < best[mode]["metrics"]["time_ms"]:
                        best[mode] = r
                cells.append(" / ".join(vals))
            if "async" not in best:
                continue
            sync = min((best[m] for m in ("rounds", "coop") if m in best), key=lambda r: r["metrics"]["time_ms"])
            lines.append("| %s | %s | %s | %.0f%% | %.2fx |" % (
                sc, e, " | ".join(cells), 100 * best["async"]["metrics"]["simd_efficiency"],
                sync["metrics"]["time_ms"] / best["async"]["metrics"]["time_ms"]))
    sched = sorted({re.sub(r",threshold=\d+|,coop=\d+|,flights=\w+|,majorant=\w+|,density=\w+", "", r["config"])
                    for r in res})
    head = ("On %s; workload 400x400, 100 spp, seed 1; `experiments/run async_flights`: the schedule `%s` with "
            "threshold %s, as the thesis' rounds, with cooperative flights (`coop=4`) and with `flights=async`. "
            "\"async SIMD\": the fraction of lanes in flight in its batch rounds (the metric's meaning under "
            "asynchronous flights, see Metrics); \"async vs the best round\": the fastest round (with or without "
            "coop) over the fastest async, >1 where async wins. Source: results/%s/async/flights.jsonl." % (
                provenance(res), "; ".join(sched), " and ".join(map(str, thrs)), gpu))
    return head + "\n\n" + "\n".join(lines) + ("\n\nNot ok: " + "; ".join(bad) if bad else "")


def table_async_tunes(gpu):
    """The default 90 s tune with every estimator over the whole space
    against the same tune with flights=sync only, both winners re-measured
    in one bench session (TUNES="all sync" scripts/gpu_estimator_tune.sh)."""
    lines = ["| scene | tuned, whole space: winner | ms | tuned, flights=sync only: winner | ms | "
             "ratio | what the ratio measures |", "|---|---|---:|---|---:|---:|---|"]
    prov, allrows = None, []
    for path in inputs("async_tunes", gpu):
        scene = os.path.basename(path)[:-len("-winners.jsonl")]
        rs = [r for r in rows(path) if r.get("kind") == "result"]
        if len(rs) != 2:
            continue
        allrows += rs
        a, b = rs
        why = ("asynchronous flights" if "flights=async" in a["config"] else
               "the two tunes' search (both winners are rounds)" if a["config"] != b["config"] else "nothing: one winner")
        lines.append("| %s | %s, %s | %.2f | %s, %s | %.2f | %.2fx | %s |" % (
            scene, estimator_of(a["config"]), schedule_of(a["config"]), a["metrics"]["time_ms"],
            estimator_of(b["config"]), schedule_of(b["config"]), b["metrics"]["time_ms"],
            b["metrics"]["time_ms"] / a["metrics"]["time_ms"], why))
        prov = prov or provenance(rs)
    commits = sorted({r["commit"] for r in allrows})
    head = ("On %s; workload 400x400, 100 spp, seed 1; `TUNES=\"all sync\" scripts/gpu_estimator_tune.sh OUT 90s "
            "--scene S`: `tune --budget 90s --estimators all` over the whole space and with `--space flights=sync`, "
            "then both winners measured again in one bench session; commit%s %s. Source: "
            "results/%s/async/*-winners.jsonl." % (prov, "s" if len(commits) > 1 else "", ", ".join(commits), gpu)
            ) if prov else "no data"
    return head + "\n\n" + "\n".join(lines)


def table_estimator_skip(gpu):
    """majorant=skip beside the global majorant and the grid
    (scripts/gpu_skip.sh): per scene, each estimator's fastest of the three
    schedules measured, and the Woodcock steps per second of skip:u8 over its
    own camera-tile roofline probe."""
    path = one("estimator_skip", gpu, "{gpu}/estimators/skip.jsonl")
    rs = rows(path)
    res = [r for r in rs if r.get("kind") == "result"]
    probes = {(r["scene_label"], r["majorant"], r.get("density", "f32")): r["metrics"]["gsteps_per_s"]
              for r in rs if r.get("kind") == "roofline" and r["rays"] == "camera"}
    ests = ("global:f32", "global:u8", "grid8:u8", "grid32:u8", "skip:f32", "skip:u8")
    lines = ["| scene | voxels | " + " | ".join("%s ms" % e for e in ests) +
             " | steps/ray: global / grid32 / skip | fastest | vs global:f32 | skip:u8 share of its camera probe |",
             "|---|---|" + "---:|" * len(ests) + "---|---|---:|---:|"]
    labels = []
    for r in res:
        if r["scene_label"] not in labels:
            labels.append(r["scene_label"])
    invalid = []
    for lab in labels:
        best = {}
        for r in res:
            if r["scene_label"] != lab:
                continue
            e = estimator_of(r["config"])
            if r["status"] != "ok":
                invalid.append("%s %s: %s" % (lab, e, r["status"]))
                continue
            if e not in best or r["metrics"]["time_ms"] < best[e]["metrics"]["time_ms"]:
                best[e] = r
        dims = next(r for r in res if r["scene_label"] == lab)["volume"]["dims"]
        spr = lambda e: "%.2f" % (best[e]["metrics"]["steps"] / best[e]["metrics"]["rays"]) if e in best else "--"
        fastest = min(best, key=lambda e: best[e]["metrics"]["time_ms"])
        sk = best.get("skip:u8")
        probe = probes.get((lab, "skip", "u8"))
        share = "%.0f%%" % (100 * sk["metrics"]["gsteps_per_s"] / probe) if sk and probe else "--"
        lines.append("| %s | %s | %s | %s / %s / %s | %s | %.2fx | %s |" % (
            lab, "x".join(str(d) for d in dims),
            " | ".join("%.2f" % best[e]["metrics"]["time_ms"] if e in best else "--" for e in ests),
            spr("global:u8"), spr("grid32:u8"), spr("skip:u8"), fastest,
            best["global:f32"]["metrics"]["time_ms"] / best[fastest]["metrics"]["time_ms"], share))
    scheds = sorted({re.sub(r",majorant=\w+|,density=\w+", "", r["config"]) for r in res})
    head = ("On %s; workload 400x400, 100 spp, seed 1; one bench session per scene (`scripts/gpu_skip.sh`), each "
            "estimator's fastest of the schedules %s; not tuned. cranium: a real head CT (InVesalius' Cranium, "
            "`scripts/fetch_ct.sh`), cranium-up4 the same upsampled 4x (`--upsample 4`). Source: results/%s/"
            "estimators/skip.jsonl." % (provenance(res), ", ".join("`%s`" % x for x in scheds), gpu))
    return head + "\n\n" + "\n".join(lines) + ("\n\nNot ok: " + "; ".join(invalid) if invalid else "")


def table_estimators(gpu):
    """Every estimator on every built-in scene with one schedule
    (experiments/run estimators): time per density format, steps per ray."""
    path = one("estimators", gpu, "{gpu}/estimators/table.jsonl")
    rs = [r for r in rows(path) if r.get("kind") == "result"]
    by = {}
    for r in rs:
        by[(r["scene"], estimator_of(r["config"]))] = r
    sched = re.sub(r",majorant=\w+|,density=\w+", "", rs[0]["config"])
    lines = ["| scene | majorant | steps/ray | f32 ms | f16 ms | u16 ms | u8 ms |", "|---|---|---:|---:|---:|---:|---:|"]
    rejected = 0
    for scene in SCENES:
        for m in ("global", "grid4", "grid8", "grid16", "grid32"):
            cells = []
            spr = None
            for d in ("f32", "f16", "u16", "u8"):
                r = by.get((scene, "%s:%s" % (m, d)))
                if not r:
                    cells.append("-")
                    continue
                x = r["metrics"]
                if spr is None and x.get("rays"):
                    spr = x["steps"] / x["rays"]
                if r["status"] == "ok":
                    cells.append("%.2f" % x["time_ms"])
                else:
                    z = re.search(r"max block \|z\| ([0-9.]+)", r.get("reason", ""))
                    cells.append("rejected (z %s)" % z.group(1) if z else r["status"])
                    rejected += 1
            lines.append("| %s | %s | %s | %s |" % (scene, m, "%.2f" % spr if spr is not None else "-", " | ".join(cells)))
    head = ("On %s; workload 400x400, 100 spp, seed 1; schedule `%s` for every scene; steps/ray: Woodcock steps "
            "(null collisions included) per extension. \"rejected\": the estimator's image differs from the global "
            "f32 one beyond the noise (the gate's per-block z-test, harness/evaluator.c), so it is invalid_output "
            "and never ranked. Source: results/%s/estimators/table.jsonl." % (provenance(rs), sched, gpu))
    return head + "\n\n" + "\n".join(lines)



def svg_estimators(gpu):
    """docs/images/estimators.svg: each scene's time with each majorant
    (f32, and the global majorant with u8 where the gate passed it),
    relative to the global majorant with f32, from the estimators table."""
    rs = [r for r in rows(one("estimators.svg", gpu, "{gpu}/estimators/table.jsonl")) if r.get("kind") == "result"]
    by = {(r["scene"], estimator_of(r["config"])): r for r in rs}
    bars = [("global:f32", "#4d4d4d"), ("global:u8", "#999999"), ("grid4:f32", "#08519c"), ("grid8:f32", "#3182bd"),
            ("grid16:f32", "#6baed6"), ("grid32:f32", "#bdd7e7")]
    W, H, left, top, bottom = 760, 300, 50, 30, 50
    ymax = 3.0
    gw = (W - left - 10) / len(SCENES)
    bw = gw / (len(bars) + 1)
    y = lambda v: top + (H - top - bottom) * (1 - min(v, ymax) / ymax)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">'
           % (W, H), '<rect width="100%%" height="100%%" fill="white"/>',
           '<text x="%d" y="16" font-size="12">time relative to the global majorant with f32 (lower is faster; '
           'bars cut at %.0f; %s)</text>' % (left, ymax, provenance(rs).split(",")[0])]
    for v in (0.5, 1.0, 1.5, 2.0, 2.5, 3.0):
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s"/>' % (left, W - 10, y(v), y(v),
                                                                             "#000" if v == 1.0 else "#ddd"))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%.1f</text>' % (left - 4, y(v) + 4, v))
    for i, scene in enumerate(SCENES):
        base = by.get((scene, "global:f32"))
        if not base or base["status"] != "ok":
            continue
        t0 = base["metrics"]["time_ms"]
        for j, (est, color) in enumerate(bars):
            r = by.get((scene, est))
            if not r or r["status"] != "ok":
                continue
            v = r["metrics"]["time_ms"] / t0
            x = left + i * gw + (j + 0.5) * bw
            out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %.2f ms, %.2f '
                       'steps/ray</title></rect>' % (x, y(v), bw * 0.9, y(0) - y(v), color, scene, est,
                                                     r["metrics"]["time_ms"], r["metrics"]["steps"] / r["metrics"]["rays"]))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (left + i * gw + gw / 2, H - bottom + 16,
                                                                           scene))
    for j, (est, color) in enumerate(bars):
        x = left + j * 115
        out.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d">%s</text>'
                   % (x, H - 18, color, x + 14, H - 9, est))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def kernel_tuner_run(which):
    """report/tuner_compare.py (the module) and what both Kernel Tuner tables
    say of results/cpu-*/<which>/, or None for the second when it has not run:
    its rows, folder (relative to the repository), per-scene summary, Kernel
    Tuner versions, failed strategies and their count, the strategies that
    ran, seed counts and machine.txt's fields."""
    sys.path.insert(0, os.path.join(ROOT, "report"))
    sys.dont_write_bytecode = True
    import tuner_compare as tc
    loaded = tc.load(os.path.join(ROOT, "results"), which)
    if not loaded:
        return tc, None
    d, rows_, machine = loaded
    failed, n_strategies = tc.failures(rows_)
    seq = [r for r in rows_ if r.get("mode") == "sequence"]
    return tc, {"rows": rows_, "rel": os.path.relpath(d, ROOT), "summary": tc.summary(rows_),
                "kt": sorted({r["tuner"] for r in seq}), "failed": failed, "n_strategies": n_strategies,
                "ran": sorted({r["strategy"] for r in seq}),
                "seeds": sorted({r["seeds"] for r in rows_ if "seeds" in r}),
                "info": dict(l.split(": ", 1) for l in machine if ": " in l)}


def table_tuner_compare(gpu):
    """experiments/kernel_tuner's rows (results/cpu-*/kernel_tuner/, a
    simulation on the recorded spaces): leave one scene out, and Kernel
    Tuner's strategies scored by the same scorer (report/tuner_compare.py
    reads and summarizes them for the report and this table alike)."""
    tc, x = kernel_tuner_run("kernel_tuner")
    if not x:
        return "Not run yet (`experiments/kernel_tuner`)."
    rows, rel, summ, kt, failed, n_strategies, ran, seeds, info = (
        x[k] for k in ("rows", "rel", "summary", "kt", "failed", "n_strategies", "ran", "seeds", "info"))
    def reason(text):
        return "a run over the 30 s limit" if text.startswith("RunTimeout") else text

    why = ", ".join("%s (%s, %s)" % (st, ", ".join(sorted(sc)) if len(sc) < 6 else "every scene",
                                      reason(sorted(set(sc.values()))[0]))
                    for st, sc in sorted(failed.items()))
    lines = ["Replay of the six recorded spaces (`tests/fixtures/tuner/`), %s seeds; scores after Willemsen et al. "
             "by time (by evaluations in brackets): 0 = random search, 1 = the optimum at once. \"default\": "
             "`tune`'s local search from the thesis' prior (regenerationSK-thread, known before any measurement, "
             "fitted on no fixture; on a GPU `tune` now adds the transfer prior, as \"chosen\" does); "
             "\"chosen\": the strategy and start chosen on the other five scenes "
             "(`bin/tune-score --leave-one-out`: the transfer prior, the other scenes' fastest configs, and the "
             "choice of strategy are fitted without the scene); \"2%% at 90 s\": seeds whose 90 s run ends "
             "within 2%% of the optimum. Kernel Tuner: %s in its simulation mode on vptune's T4 export; of its %d "
             "strategies, %d ran (%s); %s. Its best strategy on each scene is picked in hindsight, exhaustive "
             "search (brute_force) left out as on vptune's side. %s, %s; commit %s. `%s/`."
             % (", ".join(str(x) for x in seeds), ", ".join(kt), n_strategies, len(ran), ", ".join(ran),
                "did not run: " + why if why else "all ran", info.get("cpu", "?"), info.get("python", "?"),
                info.get("commit", "?"), rel), "",
             "| scene | default | 2% at 90 s | chosen without the scene | its score | 2% at 90 s | local, no prior "
             "| Kernel Tuner best (time) | its score | default - KT best |",
             "|---|---:|---:|---|---:|---:|---:|---|---:|---:|"]
    for x in summ:
        dflt, ch, npr, k = x["default"], x["chosen"], x["noprior"], x["kt_time"]
        if not (dflt and ch and npr and k):
            continue
        lines.append("| %s | %+.2f (%+.2f) | %.0f%% | %s | %+.2f (%+.2f) | %.0f%% | %+.2f (%+.2f) | %s | "
                     "%+.2f (%+.2f) | %+.2f (%+.2f) |" % (
                         x["scene"], dflt["score_seconds"], dflt["score_evals"], 100 * dflt["within_2pct_at_90s"],
                         tc.label(ch), ch["score_seconds"], ch["score_evals"], 100 * ch["within_2pct_at_90s"],
                         npr["score_seconds"], npr["score_evals"], k["strategy"], k["score_seconds"],
                         k["score_evals"], dflt["score_seconds"] - k["score_seconds"],
                         dflt["score_evals"] - x["kt_evals"]["score_evals"]))
    return "\n".join(lines)


def table_tuner_compare_sampled(gpu):
    """experiments/kernel_tuner on the samples of the full space
    (tests/fixtures/tuner/sampled/): the scene left out, tune's default as
    it runs on a GPU, and Kernel Tuner's best strategy in hindsight."""
    tc, x = kernel_tuner_run("kernel_tuner_sampled")
    if not x:
        return "Not run yet (`experiments/kernel_tuner --fixtures tests/fixtures/tuner/sampled ...`)."
    failed, n_strategies, ran, seeds, info = (x[k] for k in ("failed", "n_strategies", "ran", "seeds", "info"))
    lines = ["Replay of the four recorded samples of the full space (`tests/fixtures/tuner/sampled/`), %s seeds, "
             "the replay's clock from the recordings (compiles as bench's 15 worker processes made them). "
             "\"thesis\": local search from the thesis' prior alone; \"tune\": local search from the thesis' "
             "prior and the transfer prior (`tune`'s starts on a GPU), the transfer prior fitted on the other "
             "three scenes, searching schedules and estimators as one space (the replay does not run `tune`'s "
             "estimator stage, tuner/estimators.h: a recording holds every estimator only around its fastest "
             "configs); \"chosen\": the candidate `--leave-one-out` picks on the other scenes. Kernel Tuner: "
             "%s; of its %d strategies, %d ran (%s), its best on each scene picked in hindsight; did not run: %s. "
             "%s; commit %s. `%s/`." % (
                 ", ".join(str(x) for x in seeds),
                 ", ".join(x["kt"]), n_strategies,
                 len(ran), ", ".join(ran),
                 "; ".join("%s (%s)" % (st, ", ".join("%s: %s" % (sc, why[:90]) for sc, why in sorted(v.items())))
                           for st, v in sorted(failed.items())) or "none",
                 info.get("cpu", "?"), info.get("commit", "?"), x["rel"]), "",
             "| held-out scene | thesis: score | 2% at 90 s | tune: score | 2% at 90 s | chosen | its 2% at 90 s "
             "| local, no prior | Kernel Tuner best (time) | its score | tune - KT best |",
             "|---|---:|---:|---:|---:|---|---:|---:|---|---:|---:|"]
    for y in x["summary"]:
        dflt, gd, ch, npr, k = y["default"], y["gpu_default"], y["chosen"], y["noprior"], y["kt_time"]
        if not (dflt and gd and ch and npr and k):
            continue
        lines.append("| %s | %+.2f (%+.2f) | %.0f%% | %+.2f (%+.2f) | %.0f%% | %s | %.0f%% | %+.2f (%+.2f) | %s | "
                     "%+.2f (%+.2f) | %+.2f (%+.2f) |" % (
                         y["scene"], dflt["score_seconds"], dflt["score_evals"], 100 * dflt["within_2pct_at_90s"],
                         gd["score_seconds"], gd["score_evals"], 100 * gd["within_2pct_at_90s"], tc.label(ch),
                         100 * ch["within_2pct_at_90s"], npr["score_seconds"], npr["score_evals"], k["strategy"],
                         k["score_seconds"], k["score_evals"], gd["score_seconds"] - k["score_seconds"],
                         gd["score_evals"] - y["kt_evals"]["score_evals"]))
    return "\n".join(lines)


def table_tuner_compare_tuned(gpu):
    """experiments/kernel_tuner --tune-hyper on the samples of the full
    space: vptune beside Kernel Tuner with its default hyperparameters (best
    strategy in hindsight) and with hyperparameters and strategy chosen on
    the other scenes, and Kernel Tuner from vptune's start; every score with
    its standard error over the seeds (report/tuner_compare.py)."""
    sys.path.insert(0, os.path.join(ROOT, "report"))
    sys.dont_write_bytecode = True
    import tuner_compare as tc
    loaded = tc.load_tuned(os.path.join(ROOT, "results"))
    if not loaded:
        return "Not run yet (`experiments/kernel_tuner --tune-hyper ...`)."
    d, rows_, machine = loaded
    info = dict(l.split(": ", 1) for l in machine if ": " in l)
    summ = tc.tuned_summary(rows_)
    grid = {}
    for r in rows_:
        if r.get("mode") == "grid":
            grid.setdefault(r["strategy"], [])
            if r["label"] not in grid[r["strategy"]]:
                grid[r["strategy"]].append(r["label"])
    sel = sorted({len(r["seeds"]) for r in rows_ if r.get("mode") == "grid"})
    ev = sorted({len(r["seeds"]) for r in rows_ if r.get("mode") in ("tuned_loo", "vptune_loo", "same_start",
                                                                    "default_hindsight")})
    commits = sorted({r["commit"] for r in rows_ if r.get("commit")})
    errors = [r for r in rows_ if r.get("mode") == "error"]
    nostart = [r for r in rows_ if r.get("mode") == "no_start"]
    lines = ["Replay of the four recorded samples of the full space (`tests/fixtures/tuner/sampled/`), the same "
             "clock and compile model for both tuners (the recordings' compile and measurement times, compiles as "
             "bench's 15 worker processes made them; Kernel Tuner charged each config's compile when it evaluates "
             "it, as its sequential runner does, vptune compiling ahead as its harness does; a repeat free for "
             "both); scores after Willemsen et al. by time, by evaluations in brackets, each the mean over the "
             "seeds ± its standard error (sample sd / sqrt(n), n = %s seeds). \"tune\": vptune's local search from "
             "the thesis' and the transfer prior (fitted on the other three scenes), `tune`'s default on a GPU; "
             "\"KT default, hindsight\": Kernel Tuner's strategy with the best time score on the scene at its "
             "default hyperparameters, picked after the fact (seeds 1-20, the runs of `kernel_tuner_sampled/` "
             "again); \"KT tuned\": for each of %d strategies (%s) the grid point (%d points in all, Kernel "
             "Tuner's defaults among them) with the best mean time score on the other three scenes (%s seeds "
             "each, seeds 101-), and the strategy whose choice scored best there, both chosen without the scene, "
             "then run on it with new seeds (201-220). Simulated on %s (the clock is the recordings', so that machine changes no score), %s, Kernel Tuner 1.5.0; %s; commit %s (bin/tune-score "
             "built from it plus `--first-seed`, the only C change of the commit that adds that option). `%s/`." % (
                 "/".join(str(x) for x in ev), len(grid), ", ".join(sorted(grid)),
                 sum(len(v) for v in grid.values()), "/".join(str(x) for x in sel),
                 info.get("cpu", "?"), info.get("python", "?"),
                 "%d runs failed" % len(errors) if errors else "no run failed",
                 ", ".join(commits), os.path.relpath(d, ROOT)), "",
             "| held-out scene | tune | thesis prior only | KT default, hindsight | its score | KT tuned "
             "(chosen without the scene) | its score | tune - KT tuned |",
             "|---|---:|---:|---|---:|---|---:|---:|"]
    for y in summ:
        t, th, h, b = y["tune"], y["thesis"], y["hindsight"], y["tuned_best"]
        if not (t and th and h and b):
            continue
        diff = t["score_seconds"] - b["score_seconds"]
        se = (t["se_seconds"] ** 2 + b["se_seconds"] ** 2) ** 0.5
        lines.append("| %s | %s (%s) | %s (%s) | %s | %s (%s) | %s | %s (%s) | %+.2f ± %.2f |" % (
            y["scene"], tc.pm(t), tc.pm(t, "evals"), tc.pm(th), tc.pm(th, "evals"), h["strategy"], tc.pm(h),
            tc.pm(h, "evals"), b["label"], tc.pm(b), tc.pm(b, "evals"), diff, se))
    lines += ["", "Each strategy tuned without the held-out scene: its chosen point (the first of each strategy's "
              "grid is its defaults: %s), and its time score on the held-out scene (20 new seeds):" % "; ".join(
                  "%s: %s" % (k, ", ".join(v)) for k, v in sorted(grid.items())), "",
              "| strategy | " + " | ".join(y["scene"] for y in summ) + " |",
              "|---|" + "---:|" * len(summ)]
    strategies = sorted({r["strategy"] for y in summ for r in y["tuned"]})
    for st in strategies:
        cells = []
        for y in summ:
            m = [r for r in y["tuned"] if r["strategy"] == st]
            cells.append("%s: %s" % (m[0]["label"], tc.pm(m[0])) if m else "-")
        lines.append("| %s | %s |" % (st, " | ".join(cells)))
    starts = sorted({r["strategy"] for y in summ for r in y["start"]})
    if starts:
        x0 = next(r["x0"] for y in summ for r in y["start"])
        lines += ["", "Kernel Tuner from vptune's start (strategy_options x0 = the thesis' regenerationSK-thread, "
                  "recorded on every scene: `%s`), default hyperparameters, seeds 1-20, time score (evaluation score) "
                  "and the share of runs whose first evaluation was that config; beside it, `thesis` above is "
                  "vptune from the same config. %s" % (
                      ",".join("%s=%s" % kv for kv in x0.items()),
                      "Not given the start: " + "; ".join("%s %s" % kv for kv in sorted(nostart[0]["strategies"].items()))
                      + "." if nostart else ""), "",
                  "| strategy | " + " | ".join(y["scene"] for y in summ) + " |",
                  "|---|" + "---:|" * len(summ)]
        for st in starts:
            cells = []
            for y in summ:
                m = [r for r in y["start"] if r["strategy"] == st]
                cells.append("%s (%s), %.0f%% first" % (tc.pm(m[0]), tc.pm(m[0], "evals"), 100 * m[0]["x0_first"])
                             if m else "-")
            lines.append("| %s | %s |" % (st, " | ".join(cells)))
    return "\n".join(lines)


def table_ground_truth(gpu):
    """tests/fixtures/tuner/sampled/: what each recording holds."""
    import gzip
    folder = os.path.join(ROOT, "tests", "fixtures", "tuner", "sampled")
    lines = ["| scene | configs | ok | optimum ms | optimum | median ms | rho (4 vs 16 spp) | top-20 overlap |",
             "|---|---:|---:|---:|---|---:|---:|---:|"]
    prov = set()
    for f in sorted(glob.glob(os.path.join(folder, "*_sampled.jsonl.gz"))):
        with gzip.open(f, "rt") as fp:
            rs = [json.loads(l) for l in fp if l.strip()]
        rs = [r for r in rs if r.get("kind") == "result"]
        ok = sorted((r for r in rs if r["status"] == "ok"), key=lambda r: r["metrics"]["time_ms"])
        prov |= {(r["gpu"]["name"], r["gpu"]["uuid"], r["commit"], r["workload"]["width"], r["workload"]["height"],
                  r["workload"]["spp"]) for r in rs}
        corr = {}
        c = f.replace("_sampled.jsonl.gz", "_correlation.txt")
        if os.path.exists(c):
            corr = dict(l.strip().split(": ", 1) for l in open(c) if ": " in l)
        lines.append("| %s | %d | %d | %.3f | `%s` | %.3f | %s | %s |" % (
            ok[0]["scene"], len(rs), len(ok), ok[0]["metrics"]["time_ms"], ok[0]["config"],
            ok[len(ok) // 2]["metrics"]["time_ms"], corr.get("spearman_rho", ""), corr.get("top 20 overlap", "")))
    head = "; ".join("%s %s, commit %s, %dx%d at %d spp" % p for p in sorted(prov))
    return "Recorded on %s (`tests/fixtures/tuner/sampled/`):\n\n" % head + "\n".join(lines)


def table_tune_variance(gpu):
    """results/<gpu>/tune_variance.jsonl: the default 90 s tune, one row per
    seed (scripts/gpu_variance.sh), per scene the spread of the winners'
    re-measured times."""
    files = inputs("tune_variance", gpu)
    if not files:
        return "Not measured on this GPU yet (`scripts/gpu_variance.sh`)."
    rs = [r for r in rows(files[0]) if r.get("kind") == "tune_variance"]
    commits = sorted({r["commit"] for r in rs})
    gpus = sorted({r["gpu"] for r in rs})
    # the seeds of one scene may come from several sessions: each GPU and
    # commit is named once above the table and again, shortened, on its seeds
    gpu_id = {g: "GPU-" + g.split("GPU-")[1][:8] if "GPU-" in g else g for g in gpus}
    lines = ["`bin/tune` with its defaults (local search, thesis + transfer prior, every estimator, 90 s), one run "
             "per seed, each with a fresh evaluation cache and an empty cubin cache; %s; commit %s; `results/%s/"
             "tune_variance.jsonl`:" % ("; ".join(gpus), ", ".join(commits), gpu), "",
             "| scene | scene options | seeds | winners' time ms (by seed) | spread (max/min - 1) | evaluations | "
             "winners | runs (GPU at commit: seeds) |", "|---|---|---:|---|---:|---|---|---|"]
    for scene in sorted({r["scene"] for r in rs}, key=lambda s: (s != "manix", s)):
        x = sorted((r for r in rs if r["scene"] == scene and r.get("time_ms")), key=lambda r: r["seed"])
        t = [r["time_ms"] for r in x]
        configs = sorted({r["config"] for r in x})
        runs = sorted({(r["gpu"], r["commit"]) for r in x}, key=lambda gc: min(r["seed"] for r in x
                                                                               if (r["gpu"], r["commit"]) == gc))
        lines.append("| %s | `%s` | %d | %s | %.2f%% | %s | %d distinct; all `%s` | %s |" % (
            scene, x[0]["scene_args"], len(x), ", ".join("%.3f" % v for v in t), 100 * (max(t) / min(t) - 1),
            "-".join(str(v) for v in (min(r["evaluations"] for r in x), max(r["evaluations"] for r in x))),
            len(configs), ",".join(sorted({r["schedule"] for r in x})),
            "; ".join("%s at %s: %s" % (gpu_id[g], c, ", ".join(str(r["seed"]) for r in x
                                                               if (r["gpu"], r["commit"]) == (g, c)))
                      for g, c in runs)))
    return "\n".join(lines)


def large_module():
    """report/large.py: the tables of the large-volume results, shared with
    the report (it computes; this file writes Markdown)."""
    sys.path.insert(0, os.path.join(ROOT, "report"))
    sys.dont_write_bytecode = True
    import large
    return large


def table_large_sizes(gpu):
    """One head at 128^3 .. 1024^3 (experiments/run large_schedules)."""
    lv = large_module()
    rs = rows(one("large_sizes", gpu, "{gpu}/large_schedules.jsonl"))
    sz = lv.Sizes(rs)
    head, body = lv.sizes_table(sz)
    w = sz.used[0]["workload"]
    return ("On %s; %dx%d, %d spp, seed %d; `head<N>` is one content band-limited to each grid (see \"Scalable "
            "scenes\"). Roofline rows: Gsteps/s of the divergence-free step loop (random rays, camera tiles, "
            "one-voxel bundles = the coherent bound) over the f32 and the u8 texture; the other rows: ms per "
            "image. Shares of the coherent roofline, two ways: the config's own Woodcock steps per second over the "
            "u8 bundle probe's; and the steps the thesis' estimator takes on that volume (regenerationSK-thread, "
            "f32, global majorant) per the config's time, over the f32 bundle probe's. Source: "
            "results/%s/large_schedules.jsonl (`scripts/gpu_large.sh`: `experiments/run large_schedules`)."
            % (provenance(sz.used), w["width"], w["height"], w["spp"], w["seed"], gpu)
            + "\n\n" + lv.to_markdown(head, body))


def table_large_coherence(gpu):
    """Nsight Compute at head256 and head1024 (experiments/run large_coherence)."""
    lv = large_module()
    rs = rows(one("large_coherence", gpu, "{gpu}/large_coherence.jsonl"))
    head, body, used = lv.coherence_table(rs)
    r0 = used[0]
    w = r0["workload"]
    return ("Nsight Compute (%s) on one launch of `vpt_render`, %dx%d, %d spp; commit %s; "
            "threads per instruction: active threads per executed warp instruction (of 32). Source: "
            "results/%s/large_coherence.jsonl." % (r0["ncu"].split(" (")[0], w["width"], w["height"], w["spp"],
                                                   r0["commit"], gpu)
            + "\n\n" + lv.to_markdown(head, body))


def table_large_tunes(gpu):
    """The tunes of 1024-wide volumes with every estimator and with the
    thesis' (results/<gpu>/large/), their share of the coherent roofline,
    and the side-by-side and cell-size benches."""
    lv = large_module()
    sz = lv.Sizes(rows(one("large_tunes", gpu, "{gpu}/large_schedules.jsonl")))
    files = {p: rows(p) for p in inputs("large_tunes", gpu, "{gpu}/large/*.jsonl")}
    ts = lv.tunes(files)
    bench = {p: rs for p, rs in files.items() if not lv.TUNE_FILE.match(os.path.basename(p))}
    roofs = lv.rooflines(sz.rows + [r for rs in bench.values() for r in rs])
    head, body = lv.tunes_table(ts)
    rhead, rbody, _ = lv.roofline_table(ts, sz, roofs)
    commits = sorted({t.commit for t in ts} | {r["commit"] for rs in bench.values() for r in rs if r.get("commit")})
    out = ["On %s; 400x400, 100 spp, seed 1; commits %s. `cranium.mhd@up4`: a real head CT (InVesalius' "
           "Cranium, 256x108x256 int16, `scripts/fetch_ct.sh`) upsampled 4x to 1024x432x1024 (`--upsample 4`). "
           "Each row: the best ok evaluation in the tune cache of `tune --estimators all` (every majorant and "
           "format) beside that of the thesis' estimator (global majorant, f32: the space before issue 16) on "
           "the same volume. At d328053 and 321cd47 a bug in the tune cache's config key (fixed in eba7d8f) "
           "answered grid64 and grid128 with the global estimator's row, so those tunes never measured them; "
           "every row shown is a true measurement of its own config. head1024's global tune was stopped by its "
           "stage's time limit after the evaluations shown. Source: results/%s/large/*-tune-*.jsonl."
           % (lv.provenance(ts[0].header), ", ".join(commits), gpu), "", lv.to_markdown(head, body), "",
           "Share of the coherent roofline (one-voxel bundles) of the tuned configs, two ways: their own Woodcock "
           "steps per second over the bundle probe of their majorant and density format (for a grid config "
           "measured before the grid probes existed, the global-majorant probe of its format); and the "
           "global-majorant-equivalent "
           "rate (the steps regenerationSK-thread takes with the thesis' estimator on that volume, from the same "
           "tune cache, per the config's time) over the f32 probe. Probes: results/%s/large_schedules.jsonl "
           "(head1024) and the newest `bench --roofline` on cranium.mhd@up4 (the winners file); none on "
           "cloud1024." % gpu, "", lv.to_markdown(rhead, rbody)]
    for p, rs in sorted(bench.items()):
        res = lv.bench_rows(rs)
        name = os.path.basename(p)
        if "-winners-" in name and len(res) == 2:
            a, g = res
            out += ["", "Side by side (`%s`, both winners re-measured in one bench session, commit %s): every "
                    "estimator `%s` %.2f ms (%.2f steps/ray), global:f32 `%s` %.2f ms: %.2fx."
                    % (name, a["commit"], a["config"], a["metrics"]["time_ms"], lv.steps_per_ray(a), g["config"],
                       g["metrics"]["time_ms"], g["metrics"]["time_ms"] / a["metrics"]["time_ms"])]
        elif "-cell-sizes-" in name:
            out += ["", "Majorant cell sizes on that winner's schedule (`%s`, commit %s): %s." % (
                name, res[0]["commit"], "; ".join("%s%s %.2f ms (%.2f steps/ray)" % (
                    lv.estimator_of(r["config"]), ", coop=4" if ",coop=4" in r["config"] else "",
                    r["metrics"]["time_ms"], lv.steps_per_ray(r)) for r in res))]
    return "\n".join(out)


def table_large_cranium(gpu):
    """The real CT at 1x, 2x, 4x: each estimator and four thesis schedules."""
    lv = large_module()
    path = inputs("large_cranium", gpu)[-1]
    rs = rows(path)
    head, body = lv.probe_table(rs)
    res = lv.bench_rows(rs)
    return ("On %s; 400x400, 100 spp; `bench --volume cranium.mhd --like manix --upsample 1|2|4 --roofline` "
            "(256x108x256, 512x216x512, 1024x432x1024). ms (Woodcock steps per ray). Source: results/%s."
            % (provenance(res), os.path.relpath(path, os.path.join(ROOT, "results")))
            + "\n\n" + lv.to_markdown(head, body))


GENERATED = {os.path.join("docs", "images", "estimators.svg"): svg_estimators}

TABLES = {"thesis": table_thesis, "roofline": table_roofline, "registers": table_registers,
          "fixtures": table_fixtures, "mitsuba": table_mitsuba, "estimator_tunes": table_estimator_tunes,
          "tuner_split": table_tuner_split,
          "estimators": table_estimators, "estimator_skip": table_estimator_skip, "tuner_compare": table_tuner_compare, "large_sizes": table_large_sizes,
          "large_coherence": table_large_coherence, "large_tunes": table_large_tunes,
          "large_cranium": table_large_cranium, "tuner_compare_sampled": table_tuner_compare_sampled,
          "tuner_compare_tuned": table_tuner_compare_tuned,
          "ground_truth": table_ground_truth, "tune_variance": table_tune_variance,
          "manix_depths": table_manix_depths, "async_flights": table_async_flights, "async_tunes": table_async_tunes,
          "path_order": table_path_order}


MARK = re.compile(r"<!-- BEGIN (\w+)(?: (\w+))? -->")


def render(text, gpu):
    """Fills every <!-- BEGIN name [gpu] --> ... <!-- END name [gpu] --> block
    from results/<gpu> (the block's own gpu, else the command's)."""
    pos = 0
    while True:
        m = MARK.search(text, pos)
        if not m:
            return text
        name, g = m.group(1), m.group(2) or gpu
        end = "<!-- END %s -->" % (name if not m.group(2) else name + " " + m.group(2))
        j = text.index(end, m.end())
        body = "\n" + TABLES[name](g) + "\n"
        text = text[:m.end()] + body + text[j:]
        pos = m.end() + len(body) + len(end)


def stale(gpu, root=None):
    """{page: its text with every block filled} for each page (README.md or
    docs/**.md) whose blocks differ from what results/ gives, and
    [generated figure] for each figure that differs."""
    root = root or ROOT
    out = {}
    for rel in pages(root):
        path = os.path.join(root, rel)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            old = f.read()
        new = render(old, gpu)
        if new != old:
            out[rel] = new
    figures = []
    for rel, fn in GENERATED.items():
        path = os.path.join(root, rel)
        text = fn(gpu)
        if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
            figures.append((rel, text))
    return out, figures


def main():
    check = "--check" in sys.argv
    gpu = sys.argv[sys.argv.index("--gpu") + 1] if "--gpu" in sys.argv else DEFAULT_GPU
    changed, figures = stale(gpu)
    if check:
        if changed or figures:
            print("tables or figures differ from results/%s: %s: run scripts/readme_tables.py"
                  % (gpu, ", ".join(list(changed) + [rel for rel, _ in figures])))
            return 1
        print("the tables and figures of README.md and docs/ match results/%s" % gpu)
        return 0
    for rel, text in list(changed.items()) + figures:
        path = os.path.join(ROOT, rel)
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
