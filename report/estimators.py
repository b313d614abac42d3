"""The report's estimators part (issue 16): tables, a figure and number
macros from results/<gpu>/estimators/, nothing else; the argument is prose in
report.tex, which cites the macros. One module per part of the report
(generate.py calls `write(ctx)`).

    table.jsonl          every (majorant, density) on every built-in scene,
                         one schedule (experiments/run estimators)
    <scene>-winners.jsonl  the default tune with every estimator and the
                         thesis-estimator tune, winners re-measured together
                         (scripts/gpu_estimator_tune.sh)
    skip.jsonl           majorant=skip beside the global majorant and the
                         grid, three schedules, one session per scene
                         (scripts/gpu_skip.sh)
    manix-depths.jsonl   manix's paths cut after the first flight
                         (bench --max-depth 2) and whole: where the time goes
and from results/<gpu>/async/ (asynchronous flights):
    flights.jsonl        flights=async beside the rounds, per estimator
                         (experiments/run async_flights)
    <scene>-winners.jsonl  the tune over the whole space against the tune
                         with flights=sync only, winners re-measured together
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "experiments"))
import vptexp as vx  # noqa: E402
from common import figure_env, gp_header, macro_name, row_noise  # noqa: E402
from pool import session_of  # noqa: E402

SCENES = ["cgg-logo", "ad", "artifix", "manix", "smoke", "bucky"]
MAJORANTS = ["global", "grid4", "grid8", "grid16", "grid32"]
DENSITIES = ["f32", "f16", "u16", "u8"]
TUNED = ["manix", "artifix", "cranium", "cranium-up4", "smoke"]
INPUTS = {"report: estimators": ["{gpu}/estimators/table.jsonl", "{gpu}/estimators/*-winners.jsonl",
                                  "{gpu}/estimators/skip.jsonl", "{gpu}/estimators/manix-depths.jsonl",
                                  "{gpu}/async/flights.jsonl", "{gpu}/async/*-winners.jsonl",
                                  "{gpu}/paths/path_order.jsonl"]}
# The numbers of the prose's paragraph on where manix's time goes and on
# asynchronous flights (\depManix..., \async...): each a time in ms.
DEPTH_NUMBERS = ["depManixRestGlobalMs", "depManixRestSkipMs", "depManixFirstGlobalMs", "depManixFirstSkipMs"]
ASYNC_NUMBERS = ["asyncHeadGridSixteenMs", "asyncHeadGridSixteenRoundMs", "asyncManixGlobalMs",
                 "asyncManixGlobalRoundMs", "asyncSmokeMs", "asyncSmokeSyncMs"]
PATHS_NUMBERS = ["pathsHeadGlobalPixelMs", "pathsHeadGlobalSampleMs", "pathsManixWarpPixelMs",
                 "pathsManixWarpSampleMs"]
SKIP_ESTIMATORS = [("global", "f32"), ("global", "u8"), ("grid32", "u8"), ("skip", "u8")]


# the report's named sessions (pool.report_session's keys), set by write()
_SESSION = {"keys": None}


def _rows(path):
    """The file's rows; only the report's named sessions' when the file holds
    any of them (the other sessions' rows stay in the file as evidence of the
    noise between sessions, report/noise.py)."""
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    keys = _SESSION["keys"]
    if keys and any(session_of(r) in keys for r in rows):
        rows = [r for r in rows if session_of(r) in keys]
    return rows


def estimator_of(config):
    m = re.search(r"majorant=(\w+)", config)
    d = re.search(r"density=(\w+)", config)
    return (m.group(1) if m else "global", d.group(1) if d else "f32")


def _camel(s):
    return "".join(p.capitalize() for p in re.split(r"[^A-Za-z]+", s) if p)


def write(ctx):
    """Writes tab_estimators.tex, fig_estimators.{tex,gp,dat} and
    tab_estimator_tunes.tex into ctx.out, with macros est<Scene>Speedup etc.
    and the numbers the prose's verdicts cite (est<Scene><Majorant>Ms and
    est<Scene><Majorant>Steps, f32; est<Scene>GlobalUEightMs; digits spelled:
    estManixGridFourMs). Returns the
    result files read (relative to results/<gpu>)."""
    out = ctx.out
    base = os.path.join(ctx.root, "results", ctx.gpu, "estimators")
    _SESSION["keys"] = ctx.pool.session["keys"] if ctx.pool.session else None
    used = []
    # the macros the prose cites, "--" when there is nothing to cite
    macros = {"estTableCommit": "--", "estSkipCommit": "--", "estSkipCloudSpeedup": "--", "estSkipCloudVsGrid": "--",
              "estManixSkipSteps": "--", "depManixFirstStepShare": "--", "depManixFirstTimeShare": "--",
              "depCommit": "--", "asyncCommit": "--", "asyncSmokeChosen": "--", "pathsCommit": "--"}
    numbers = {name: (None, 0.0, "lower") for name in DEPTH_NUMBERS + ASYNC_NUMBERS + PATHS_NUMBERS}
    for scene in TUNED:
        macros["est%sSpeedup" % _camel(scene)] = "--"
        macros["est%sChosen" % _camel(scene)] = "--"
    for scene in SCENES:
        for m in MAJORANTS:
            numbers[macro_name("est", scene, m, "ms")] = (None, 0.0, "lower")
            numbers[macro_name("est", scene, m, "steps")] = (None, 0.0, "lower")
        numbers[macro_name("est", scene, "global", "u8", "ms")] = (None, 0.0, "lower")
    try:
        _write(ctx, out, base, used, macros, numbers)
    finally:
        for name, value in macros.items():
            out.macro(name, value)
        for name, (value, noise, better, *rest) in numbers.items():
            rows = rest[0] if rest else None
            out.number(name, value, lambda x: "%.2f" % x, noise, better, rows=rows)
    return used


def _write(ctx, out, base, used, macros, numbers):
    path = os.path.join(base, "table.jsonl")
    if not os.path.exists(path):
        # the prose's references still resolve, to a float that says why it is empty
        for name, env, label in (("tab_estimators.tex", "table", "tab:estimators"),
                                 ("fig_estimators.tex", "figure", "fig:estimators"),
                                 ("tab_estimator_tunes.tex", "table", "tab:esttunes")):
            out.write(name, "\\begin{%s}[tbp]\\centering\\caption{Not measured on this GPU: no "
                      "results/.../estimators/ (scripts/gpu\\_estimators.sh, scripts/gpu\\_estimator\\_tune.sh)."
                      "}\\label{%s}\\end{%s}\n" % (env, label, env))
        # the other files stand on their own: each part writes its float or numbers, or says why not
        _write_skip(ctx, out, base, used, macros)
        _depths(ctx, base, used, macros, numbers)
        _async(ctx, used, macros, numbers)
        _paths(ctx, used, macros, numbers)
        return
    used.append("estimators/table.jsonl")
    rs = [r for r in _rows(path) if r.get("kind") == "result"]
    ctx.touch(rs)
    by = {(r["scene"],) + estimator_of(r["config"]): r for r in rs}
    for (scene, m, d), r in by.items():
        x = r.get("metrics", {})
        if scene not in SCENES or r.get("status") != "ok" or m not in MAJORANTS:
            continue
        if d == "f32":
            numbers[macro_name("est", scene, m, "ms")] = (x["time_ms"], row_noise(r), "lower", [r])
            if x.get("rays"):
                numbers[macro_name("est", scene, m, "steps")] = (x["steps"] / x["rays"], 0.0, "lower", [r])
        elif d == "u8" and m == "global":
            numbers[macro_name("est", scene, "global", "u8", "ms")] = (x["time_ms"], row_noise(r), "lower", [r])
    commits = sorted({r["commit"] for r in rs})
    macros["estTableCommit"] = ", ".join(commits)
    lines = ["\\begin{table}[tbp]\\centering\\small",
             "\\caption{Every estimator on every scene (one schedule, 400$\\times$400, 100\\,spp): time in ms per "
             "density format and Woodcock steps per ray; ``rej.'': the image differs from the global f32 one beyond "
             "the noise, so the gate rejects the format. Commit %s.}\\label{tab:estimators}" % ", ".join(commits),
             "\\begin{tabular}{llrrrrr}", "\\toprule",
             "scene & majorant & steps/ray & f32 & f16 & u16 & u8 \\\\", "\\midrule"]
    dat = []
    for scene in SCENES:
        base_r = by.get((scene, "global", "f32"))
        for m in MAJORANTS:
            cells, spr = [], None
            for d in DENSITIES:
                r = by.get((scene, m, d))
                if not r:
                    cells.append("--")
                    continue
                x = r["metrics"]
                if spr is None and x.get("rays"):
                    spr = x["steps"] / x["rays"]
                cells.append("%.2f" % x["time_ms"] if r["status"] == "ok" else "rej.")
            lines.append("%s & %s & %s & %s \\\\" % (scene if m == "global" else "", m,
                                                     "%.2f" % spr if spr is not None else "--", " & ".join(cells)))
            r = by.get((scene, m, "f32"))
            if base_r and r and r["status"] == "ok" and base_r["status"] == "ok":
                dat.append("%s\t%s\t%.4f" % (scene, m, r["metrics"]["time_ms"] / base_r["metrics"]["time_ms"]))
        lines.append("\\addlinespace")
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    out.write("tab_estimators.tex", "\n".join(lines) + "\n")
    # figure: time relative to global f32 per scene and majorant (f32)
    blocks = []
    for m in MAJORANTS:
        b = ["# %s" % m]
        for i, scene in enumerate(SCENES):
            v = [l.split("\t")[2] for l in dat if l.startswith(scene + "\t" + m + "\t")]
            b.append("%d\t%s\t%s" % (i, scene, v[0] if v else "NaN"))
        blocks.append("\n".join(b))
    out.write("fig_estimators.dat", "\n\n\n".join(blocks) + "\n")
    gp = gp_header("fig_estimators", h="2.4in")
    gp += ("set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.9 noborder\n"
           "set ylabel 'time / global majorant (f32)'\nset yrange [0:3]\nset key outside top center horizontal font ',7' title ''\n"
           "set xtics nomirror\n")
    colors = ["#4d4d4d", "#08519c", "#3182bd", "#6baed6", "#bdd7e7"]
    plots = ["'fig_estimators.dat' index %d using 3:xtic(2) title '%s' lc rgb '%s'" % (k, m, colors[k])
             for k, m in enumerate(MAJORANTS)]
    gp += "plot " + ", ".join(plots) + "\n"
    out.figure("fig_estimators", gp)
    ctx.begin()
    ctx.touch(rs)
    out.write("fig_estimators.tex", figure_env(
        "fig_estimators", "Time of each majorant (f32 density) relative to the global majorant, per scene "
        "(Table~\\ref{tab:estimators}; bars cut at 3).", "fig:estimators"))
    # tuned with and without the estimators
    ctx.begin()
    t = ["\\begin{table}[tbp]\\centering\\small",
         "\\caption{The default 90\\,s tune with every estimator against the same tune with the thesis' "
         "estimator (global majorant, f32); both winners measured again in one session.}\\label{tab:esttunes}",
         "\\begin{tabular}{llrrrr}", "\\toprule",
         "scene & chosen estimator & ms & global f32 ms & speedup & commit \\\\", "\\midrule"]
    for scene in TUNED:
        p = os.path.join(base, scene + "-winners.jsonl")
        if not os.path.exists(p):
            continue
        used.append("estimators/%s-winners.jsonl" % scene)
        w = [r for r in _rows(p) if r.get("kind") == "result"]
        if len(w) != 2:
            continue
        ctx.touch(w)
        ctx.tuned_shown(scene)
        a, g = w[0]["metrics"]["time_ms"], w[1]["metrics"]["time_ms"]
        est = "%s:%s" % estimator_of(w[0]["config"])
        t.append("%s & %s & %.2f & %.2f & %.2f$\\times$ & \\texttt{%s} \\\\" % (scene, est, a, g, g / a,
                                                                                 w[0]["commit"][:7]))
        macros["est%sSpeedup" % _camel(scene)] = "%.2f" % (g / a)
        macros["est%sChosen" % _camel(scene)] = est.replace("_", "\\_")
    t += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    out.write("tab_estimator_tunes.tex", "\n".join(t) + "\n")
    _write_skip(ctx, out, base, used, macros)
    _depths(ctx, base, used, macros, numbers)
    _async(ctx, used, macros, numbers)
    _paths(ctx, used, macros, numbers)


def _time(r):
    return (r["metrics"]["time_ms"], row_noise(r), "lower", [r])


def _depths(ctx, base, used, macros, numbers):
    """manix-depths.jsonl: the first and last configs of the file (global:u8
    and the tuned skip:u8 schedule are the rows 1 and 3 of the manix_depths table in
    docs/findings/estimators.md) cut after
    the first flight and whole."""
    p = os.path.join(base, "manix-depths.jsonl")
    if not os.path.exists(p):
        return
    used.append("estimators/manix-depths.jsonl")
    rs = [r for r in _rows(p) if r.get("kind") == "result" and r.get("status") == "ok"]
    by = {(r["config"], r["workload"]["max_depth"]): r for r in rs}
    glob_u8 = next((c for c, d in by if d == 0 and estimator_of(c) == ("global", "u8")), None)
    skips = sorted((r for r in rs if r["workload"]["max_depth"] == 0 and estimator_of(r["config"]) == ("skip", "u8")),
                   key=lambda r: r["metrics"]["time_ms"])
    if not glob_u8 or not skips or (glob_u8, 2) not in by or (skips[0]["config"], 2) not in by:
        return
    g0, g2 = by[(glob_u8, 0)], by[(glob_u8, 2)]
    s0, s2 = skips[0], by[(skips[0]["config"], 2)]
    # the rest's noise: the two times' noises, relative to their difference
    def rest(a, b):
        ta, tb = a["metrics"]["time_ms"], b["metrics"]["time_ms"]
        noise = (row_noise(a) * ta + row_noise(b) * tb) / (ta - tb)
        return (ta - tb, noise, "lower", [a, b])
    numbers["depManixRestGlobalMs"] = rest(g0, g2)
    numbers["depManixRestSkipMs"] = rest(s0, s2)
    numbers["depManixFirstGlobalMs"] = _time(g2)
    numbers["depManixFirstSkipMs"] = _time(s2)
    macros["depManixFirstStepShare"] = "%.0f" % (100.0 * g2["metrics"]["steps"] / g0["metrics"]["steps"])
    macros["depManixFirstTimeShare"] = "%.0f" % (100.0 * g2["metrics"]["time_ms"] / g0["metrics"]["time_ms"])
    macros["depCommit"] = g0["commit"][:7]


def _async(ctx, used, macros, numbers):
    """async/flights.jsonl and async/smoke-winners.jsonl: the numbers of the
    prose's paragraph on asynchronous flights."""
    base = os.path.join(ctx.root, "results", ctx.gpu, "async")
    p = os.path.join(base, "flights.jsonl")
    if os.path.exists(p):
        used.append("async/flights.jsonl")
        rs = [r for r in _rows(p) if r.get("kind") == "result" and r.get("status") == "ok"]
        def best(scene, est, asyn):
            c = [r for r in rs if r["scene"] == scene and estimator_of(r["config"]) == est and
                 ("flights=async" in r["config"]) == asyn]
            return min(c, key=lambda r: r["metrics"]["time_ms"]) if c else None
        for key, scene, est in (("HeadGridSixteen", "head512", ("grid16", "u8")),
                                ("ManixGlobal", "manix", ("global", "u8"))):
            a, b = best(scene, est, True), best(scene, est, False)
            if a and b:
                numbers["async%sMs" % key] = _time(a)
                numbers["async%sRoundMs" % key] = _time(b)
        if rs:
            macros["asyncCommit"] = ", ".join(sorted({r["commit"][:7] for r in rs}))
    p = os.path.join(base, "smoke-winners.jsonl")
    if os.path.exists(p):
        used.append("async/smoke-winners.jsonl")
        w = [r for r in _rows(p) if r.get("kind") == "result"]
        if len(w) == 2:
            numbers["asyncSmokeMs"] = _time(w[0])
            numbers["asyncSmokeSyncMs"] = _time(w[1])
            macros["asyncSmokeChosen"] = "%s:%s%s" % (estimator_of(w[0]["config"]) + (
                ", async" if "flights=async" in w[0]["config"] else "",))


def _paths(ctx, used, macros, numbers):
    """paths/path_order.jsonl: the numbers of the prose's paragraph on the
    order paths are handed out in (the same configs, paths=sample and
    paths=pixel)."""
    p = os.path.join(ctx.root, "results", ctx.gpu, "paths", "path_order.jsonl")
    if not os.path.exists(p):
        return
    used.append("paths/path_order.jsonl")
    rs = [r for r in _rows(p) if r.get("kind") == "result" and r.get("status") == "ok"]
    def one(scene, text, pixel):
        want = vx.canonical(text + (",paths=pixel" if pixel else ""))
        c = [r for r in rs if r["scene"] == scene and r["config"] == want]
        return c[0] if c else None
    for key, scene, text in (("HeadGlobal", "head512", "regenerationSK-thread"),
                             ("ManixWarp", "manix",
                              "regenerationSK-warp,block=64,threshold=50,lookahead=4,coop=4,density=u8")):
        a, b = one(scene, text, True), one(scene, text, False)
        if a and b:
            numbers["paths%sPixelMs" % key] = _time(a)
            numbers["paths%sSampleMs" % key] = _time(b)
    if rs:
        macros["pathsCommit"] = ", ".join(sorted({r["commit"][:7] for r in rs}))


def _write_skip(ctx, out, base, used, macros):
    """tab_estimator_skip.tex: each estimator's fastest of gpu_skip.sh's
    schedules per scene, and the macros the prose cites."""
    ctx.begin()   # a float of its own: not the tune table's rows
    p = os.path.join(base, "skip.jsonl")
    if not os.path.exists(p):
        out.write("tab_estimator_skip.tex", "\\begin{table}[tbp]\\centering\\caption{Not measured on this GPU: no "
                  "results/.../estimators/skip.jsonl (scripts/gpu\\_skip.sh).}\\label{tab:estskip}\\end{table}\n")
        return
    used.append("estimators/skip.jsonl")
    rs = [r for r in _rows(p) if r.get("kind") == "result"]
    ctx.touch(rs)
    labels = []
    for r in rs:
        if r["scene_label"] not in labels:
            labels.append(r["scene_label"])
    t = ["\\begin{table}[tbp]\\centering\\small",
         "\\caption{Empty-space skipping (\\texttt{majorant=skip}) beside the global majorant and the 32-voxel "
         "grid: ms per image (400$\\times$400, 100\\,spp), each estimator's fastest of three fixed schedules, not "
         "tuned; steps per ray of the global majorant and of skip. cranium: a real head CT, cranium-up4 the same "
         "upsampled 4$\\times$. Commit \\texttt{%s}.}\\label{tab:estskip}" % ", ".join(sorted({r["commit"] for r in rs})),
         "\\begin{tabular}{lrrrrrrl}", "\\toprule",
         "scene & global f32 & global u8 & grid32 u8 & skip u8 & steps/ray global & skip & fastest \\\\", "\\midrule"]
    for lab in labels:
        best = {}
        for r in rs:
            if r["scene_label"] != lab or r.get("status") != "ok":
                continue
            e = estimator_of(r["config"])
            if e not in best or r["metrics"]["time_ms"] < best[e]["metrics"]["time_ms"]:
                best[e] = r
        cells = ["%.2f" % best[e]["metrics"]["time_ms"] if e in best else "--" for e in SKIP_ESTIMATORS]
        spr = lambda e: "%.2f" % (best[e]["metrics"]["steps"] / best[e]["metrics"]["rays"]) if e in best else "--"
        fastest = min(best, key=lambda e: best[e]["metrics"]["time_ms"])
        t.append("%s & %s & %s & %s & %s \\\\" % (lab, " & ".join(cells), spr(("global", "u8")), spr(("skip", "u8")),
                                                  "%s:%s" % fastest))
        if lab == "cloud512" and ("skip", "u8") in best:
            sk = best[("skip", "u8")]["metrics"]["time_ms"]
            macros["estSkipCloudSpeedup"] = "%.2f" % (best[("global", "f32")]["metrics"]["time_ms"] / sk)
            macros["estSkipCloudVsGrid"] = "%.2f" % (best[("grid32", "u8")]["metrics"]["time_ms"] / sk)
        if lab == "manix" and ("skip", "u8") in best:
            macros["estManixSkipSteps"] = spr(("skip", "u8"))
    macros["estSkipCommit"] = ", ".join(sorted({r["commit"][:7] for r in rs}))
    t += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    out.write("tab_estimator_skip.tex", "\n".join(t) + "\n")
