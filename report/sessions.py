"""The measurement sessions: every (GPU UUID, commit) pair whose rows a
table or figure shows (pool.session_of), numbered S1, S2, ... by their first
row's time, with the GPU's maximum SM clock where results/<gpu>/machines.txt
records it, the span of their rows' times and the floats that use them
(tab_sessions.tex, the appendix). A float whose rows span more than one
session carries \\mixedsessions{N}{S..} in its caption (common.Out.finish),
since numbers of different GPUs or builds differ by more than any noise: the
reader sees which comparisons cross sessions. Runs after every other part."""

import re

from common import tex
import front


def _floats(ctx, key):
    """The labels of the floats whose rows include session key."""
    out = []
    for name, p in sorted(ctx.out.provenance.items()):
        if list(key) not in p["sessions"]:
            continue
        with open("%s/%s" % (ctx.out.dir, name), encoding="utf-8") as f:
            body = f.read()
        for m in re.finditer(r"\\label\{((?:tab|fig):[^}]+)\}", body):
            out.append(m.group(1))
    return out


def _day(t):
    return t[:10] if isinstance(t, str) else "--"


def write(ctx):
    info = ctx.pool.sessions
    ids = ctx.out.finish(info)
    table = []
    order = sorted(ids.items(), key=lambda kv: int(kv[1][1:]))
    clocks = {k: front.machine_facts(ctx, k[0]).get("clock") if k[0].startswith("GPU-") else None for k, _ in order}
    has_clock = any(clocks.values())
    head = "id & GPU UUID & commit & rows & %sdates & tables (T) and figures (F) \\\\" % ("clock & " if has_clock else "")
    rows = ["\\begingroup\\scriptsize\\setlength{\\tabcolsep}{3pt}",
            "\\begin{longtable}{@{}lllr%slp{0.24\\textwidth}@{}}" % ("l" if has_clock else ""),
            "\\caption{The measurement sessions (one GPU, one commit) of the rows the tables and figures show, "
            "numbered by their first row. A float whose rows span several sessions is marked $^\\ddagger$ with "
            "their numbers. %s Rows: the session's rows the report shows; \\emph{not recorded}: rows that do not "
            "name their GPU (Nsight Compute profiles) or, for the tuner's fixtures, their session.}"
            "\\label{tab:sessions}\\\\" % (
                "Clock: the GPU's maximum SM clock as \\texttt{results/%s/machines.txt} records it." % tex(ctx.gpu)
                if has_clock else "No session's GPU clocks are recorded (\\texttt{results/%s/machines.txt} names "
                "other GPUs), so clock differences between sessions cannot be ruled out." % tex(ctx.gpu)),
            "\\toprule", head, "\\midrule", "\\endfirsthead", "\\toprule", head, "\\midrule", "\\endhead"]
    for key, sid in order:
        uuid, commit = key
        rec = info.get(key) or {}
        clock = clocks[key] or "--"
        labels = _floats(ctx, key)
        table.append({"id": sid, "uuid": uuid, "commit": commit, "rows": rec.get("rows", 0), "clock": clock,
                      "first": rec.get("first"), "last": rec.get("last"), "floats": labels})
        refs = ", ".join(("T" if lab.startswith("tab:") else "F") + "\\ref{%s}" % lab for lab in labels)
        span = _day(rec.get("first"))
        if _day(rec.get("last")) != span:
            span += "--" + _day(rec.get("last"))[5:]
        who = "no GPU" if uuid == "-" else ("not recorded" if uuid == "?" else "\\texttt{%s}" % tex(uuid))
        rows.append("%s & %s & \\texttt{%s} & %d & %s%s & %s \\\\" % (
            sid, who, tex(commit), rec.get("rows", 0), (tex(clock) + " & ") if has_clock else "", span, refs))
    rows += ["\\bottomrule", "\\end{longtable}", "\\endgroup"]
    ctx.session_table = table
    uuids = {k[0] for k in ids if k[0].startswith("GPU-")}
    ctx.out.macro("numSessions", str(len(ids)))
    ctx.out.macro("numSessionGpus", str(len(uuids)))
    ctx.out.write("tab_sessions.tex", "\n".join(rows) + "\n")
