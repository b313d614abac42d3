"""The appendix: the commands, the data files read (Table tab:data) and where
the thesis' numbers were transcribed from. What each experiment runs is its
spec; experiments/run --dry-run prints it, so it is not repeated here."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "experiments"))
import vptexp as vx  # noqa: E402
import pool  # noqa: E402
from common import SCENES, tex, tt  # noqa: E402



def appendix(ctx):
    o = ctx.out
    lines = ["{\\scriptsize\\begin{verbatim}"]
    lines.append("# build (no GPU needed), then run the experiments on a GPU machine")
    lines.append("make -j")
    lines.append("experiments/run --list")
    lines.append("make experiments            # every part of experiments/experiments.mk, at one commit")
    lines.append("make experiments-part PART=thesis   # one part, within 10 minutes; repeat until done")
    for name in vx.run_order(ctx.specs):
        sp = ctx.specs[name]
        lines.append("experiments/run %-18s# %s%s" % (name, sp.get("title"),
                                                      "" if sp.implemented else " [not implemented]"))
    lines.append("")
    lines.append("# scene images for Figure 1 (GPU)")
    for s in SCENES:
        lines.append("bin/render --scene %s --config regenerationSK-thread -o docs/images/%s.png" % (s, s))
    lines.append("")
    lines.append("# this report (no GPU)")
    lines.append("make report                 # report/report.pdf")
    lines.append("python3 report/check_report.py")
    lines.append("\\end{verbatim}}")
    o.write("appendix_commands.tex", "\n".join(_wrap(x) if not x.startswith("{") else x for x in lines) + "\n")
    # the data files: every one a part declares and this GPU has
    rows = []
    for f in [f for g in getattr(ctx, "folders", [ctx.gpu]) for f in pool.files_read(ctx.root, g, ctx.specs)]:
        fr = vx.read_rows(os.path.join(ctx.root, "results", f)) if f.endswith(".jsonl") else []
        kinds = {}
        for r in fr:
            kinds[r.get("kind")] = kinds.get(r.get("kind"), 0) + 1
        commits = sorted({r.get("commit") for r in fr if r.get("commit") and r.get("kind") != "run"})
        times = sorted(vx.row_time(r) for r in fr if vx.row_time(r))
        rows.append("%s & %s & %s & %s \\\\" % (
            tt("results/" + f), ", ".join("%d %s" % (n, tex(k)) for k, n in sorted(kinds.items(), key=str)),
            ", ".join(tt(c) for c in commits) or "--",
            tex("%s..%s" % (times[0][:10], times[-1][5:10])) if times else "--"))
    o.write("appendix_data.tex", "\n".join(
        ["\\begin{table}[htbp]\\centering\\scriptsize\\setlength{\\tabcolsep}{3pt}",
         "\\caption{The files of \\texttt{results/} this report reads (rows by kind; commits; "
         "time span, UTC); \\texttt{results/README.md} says which command made each.}\\label{tab:data}",
         "\\begin{tabular}{@{}lp{0.17\\linewidth}p{0.17\\linewidth}l@{}}", "\\toprule",
         "File & Rows & Commits & Measured \\\\", "\\midrule"] + rows +
        ["\\bottomrule", "\\end{tabular}", "\\end{table}"]) + "\n")
    notes = []
    for tid in sorted(ctx.thesis["tables"]):
        T = ctx.thesis["tables"][tid]
        src = T["source"] if T["source"].endswith(".") else T["source"] + "."
        notes.append("\\item Table %s (%s): %s%s" % (tid, tex(T["title"]), tex(src),
                                                     (" " + " ".join(tex(n) for n in T["notes"]))
                                                     if T.get("notes") else ""))
    o.write("appendix_thesis.tex", "\\begin{itemize}\\small\n" + "\n".join(notes) + "\n\\end{itemize}\n")


def _wrap(line, width=118):
    """Breaks long command lines for verbatim, shell style (the width fits
    \\scriptsize on the page); a word longer than a line breaks after its
    commas."""
    if len(line) <= width:
        return line
    words = []
    for word in line.split(" "):
        while len(word) > width - 8 and "," in word[:width - 8]:
            cut = word[:width - 8].rindex(",") + 1
            words.append(word[:cut])
            word = word[cut:]
        words.append(word)
    out, cur = [], ""
    for word in words:
        if cur and len(cur) + 1 + len(word) > width - 2:
            out.append(cur + " \\")
            cur = "    " + word
        else:
            cur = (cur + " " + word) if cur else word
    out.append(cur)
    return "\n".join(out)

