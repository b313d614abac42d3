"""The report's shared pieces: scenes, colours, number formatting (which
check_report.py relies on: Mrays/s with one decimal, Gsteps/s with two,
percentages without decimals, ratios with one decimal), LaTeX escaping,
macro names, the output folder (files, macros, figures) and the boxes and
float environments every part uses. No results are read here."""

import math
import os
import re

SCENES = ("cgg-logo", "ad", "artifix", "manix", "smoke", "bucky")
SCENE_INFO = {
    # name: (grid, what it is). Facts of scenes/scene_builtin.c.
    "cgg-logo": ("100x100x100", "solid unit cube, density 100, logo printed 10 voxels deep (3D printing)"),
    "ad": ("320x320x100", "slab, density 100, advertisement printed 10 voxels deep (3D printing)"),
    "artifix": ("128x87x128", "CT torso with the thesis' CT transfer (stand-in for OsiriX ARTIFIX)"),
    "manix": ("128x115x128", "CT head and neck with the thesis' CT transfer (stand-in for OsiriX MANIX)"),
    "smoke": ("128x128x50", "smoke plume, density scale 800, no boundary (stand-in for Mitsuba's smoke.vol)"),
    "bucky": ("32x32x32", "C60 buckyball density up to 40, green/red/blue transfer (stand-in for the volvis.org file)"),
}
SCHEDULE_COLORS = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666",
                   "#1f78b4")
SCENE_COLORS = ("#e41a1c", "#377eb8", "#4daf4a", "#984ea3", "#ff7f00", "#a65628")
STRATEGY_COLORS = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d")



# ------------------------------------------------------------ formatting

def f_mrays(x):
    return "%.1f" % x


def f_gsteps(x):
    return "%.2f" % x


def f_pct(x):
    return "%.0f" % (100.0 * x)


def pct_or(x, dash="--"):
    return f_pct(x) if isinstance(x, (int, float)) else dash


def f_ratio(x):
    return "%.1f" % x


def f_time(x):
    return "%.3f" % x


def f_sec(x):
    """A render time: milliseconds below a second."""
    return "%.1f ms" % (1e3 * x) if x < 1.0 else "%.2f s" % x


def tex(s):
    """Escapes text for LaTeX."""
    s = str(s)
    out = []
    for ch in s:
        if ch in "&%$#_{}":
            out.append("\\" + ch)
        elif ch == "~":
            out.append("\\textasciitilde{}")
        elif ch == "^":
            out.append("\\textasciicircum{}")
        elif ch == "\\":
            out.append("\\textbackslash{}")
        else:
            out.append(ch)
    return "".join(out)


def tt(s):
    return "\\texttt{%s}" % tex(s)


# The thesis schedules' words in number macros: \mrManixThread is
# regenerationSK-thread's Mrays/s on manix.
SCHEDULE_WORDS = {"naiveSK": "NaiveSK", "naiveMK": "NaiveMK", "regenerationSK-thread": "Thread",
                  "regenerationSK-warp": "Warp", "regenerationSK-block": "Block", "streamingSK": "StreamingSK",
                  "streamingMK": "StreamingMK", "streamingSK-morton": "Morton", "sortingSK": "SortingSK"}


def camel(scene):
    return "".join(p.capitalize() for p in re.split(r"[^A-Za-z0-9]+", scene) if p)


def macro_name(*parts):
    name = "".join(camel(p) if i else p for i, p in enumerate(parts))
    if not re.fullmatch(r"[A-Za-z]+", name):
        # digits cannot be in a macro name: spell them
        digits = "Zero One Two Three Four Five Six Seven Eight Nine".split()
        name = re.sub(r"[0-9]", lambda m: digits[int(m.group())], name)
        name = re.sub(r"[^A-Za-z]", "", name)
    return name


def spelled(text):
    """Digits as words, for macro names: "100" -> "OneZeroZero"."""
    digits = "Zero One Two Three Four Five Six Seven Eight Nine".split()
    return re.sub(r"[0-9]", lambda m: digits[int(m.group())], str(text))


def gp_str(s):
    return '"%s"' % str(s).replace("\\", "\\\\").replace('"', '\\"')


def spearman(xs, ys):
    """Spearman's rank correlation (average ranks for ties), or None."""
    n = len(xs)
    if n < 3:
        return None

    def ranks(v):
        order = sorted(range(n), key=lambda i: v[i])
        r = [0.0] * n
        i = 0
        while i < n:
            j = i
            while j + 1 < n and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2.0
            i = j + 1
        return r

    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / n, sum(ry) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def metric(r, name):
    if r is None:
        return None
    v = r.get("metrics", {}).get(name)
    return v if isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v)) else None


# ------------------------------------------------------------ output helpers

def row_noise(r):
    """A measurement's relative noise: the half-width of its 95% confidence
    interval over the time (a rate has the same relative noise); 0 when the
    row has none. report/verdicts.py adds the floor between sessions."""
    t, ci = metric(r, "time_ms"), metric(r, "time_ms_ci95")
    return ci / t if t and ci is not None else 0.0


class Out:
    """The output folder: files, macros, the numbers verdicts may cite, and
    the sessions each float's rows came from.

    source, when set, is a callable giving the sessions ((GPU UUID, commit)
    pairs, pool.session_of) of the rows the part being written has looked up
    (pool.Context sets it). Every .tex written with a \\caption whose rows
    include a commit other than self.commit gets \\othercommit{...} at the
    start of each caption; one whose rows span more than one session gets
    \\mixedsessions{N}{S1, S4, ...} there too, the session numbers being
    those of the provenance table (finish() numbers the sessions by their
    first row's time, once every float is written). provenance records the
    commits and sessions of every such file; check_report.py checks the
    marks."""

    def __init__(self, directory):
        self.dir = directory
        os.makedirs(directory, exist_ok=True)
        for f in os.listdir(directory):
            p = os.path.join(directory, f)
            if os.path.isfile(p):
                os.unlink(p)
        self.macros = []
        self.values = {}
        self.numbers = {}
        self.figures = []
        self.provenance = {}
        self.commit = None
        self.source = None
        self.marked = {}
        self.tuned_source = None
        self.session_key = None   # row -> (GPU UUID, commit): pool.session_of, set by pool.Context
        self.other_tool_source = None
        self.spreads = {}
        self.folder = None        # the results folder of the floats being written, when not the report's
        self.folder_note = None   # and the caption note that says so

    def write(self, name, text):
        if self.source is not None and name.endswith(".tex") and "\\caption{" in text:
            sessions = sorted(self.source())
            commits = sorted({c for _, c in sessions})
            self.provenance[name] = {"commits": commits, "sessions": [list(x) for x in sessions]}
            if self.folder is not None:
                self.provenance[name]["folder"] = self.folder
                text = with_caption_note(text, self.folder_note)
            other_tool = sorted(self.other_tool_source()) if self.other_tool_source is not None else []
            if other_tool:
                # sessions of another renderer's rows (Mitsuba): marked like any other, and
                # told apart by check_report.py's one-session rule
                self.provenance[name]["other_tool_sessions"] = [list(x) for x in other_tool]
            self.marked.pop(name, None)
            tuned = sorted(self.tuned_source()) if self.tuned_source is not None else []
            if tuned:
                self.provenance[name]["tuned"] = tuned
                spreads = [self.spreads[s] for s in tuned if s in self.spreads]
                if spreads:
                    # a float of another folder: its own tunes, which the report's table does not list
                    where = ("Table~\\ref{tab:tunevariance}" if self.folder is None else
                             "\\texttt{results/%s/tune\\_variance.jsonl}" % tex(self.folder))
                    text = with_caption_note(text, "Seed spread of the default 90\\,s tune's winner on the same "
                                             "scene: %s (%s)." % ("; ".join(spreads), where))
            other = [c for c in commits if c != self.commit]
            if other:
                text = text.replace("\\caption{", "\\caption{\\othercommit{%s}" % ", ".join(tex(c) for c in other))
            if len(sessions) > 1:
                self.marked[name] = text
        with open(os.path.join(self.dir, name), "w", encoding="utf-8") as f:
            f.write(text)

    def session_ids(self, info):
        """{session: "S<n>"}, numbered by first row time (info: the pool's
        per-session records), over the sessions any float shows."""
        used = {tuple(x) for p in self.provenance.values() for x in p["sessions"]}
        order = sorted(used, key=lambda k: ((info.get(k) or {}).get("first") or "~", k))
        return {k: "S%d" % (i + 1) for i, k in enumerate(order)}

    def finish(self, info):
        """Writes the session marks of the floats whose rows span more than
        one session; returns the session numbering."""
        ids = self.session_ids(info)
        for name, text in self.marked.items():
            sess = [tuple(x) for x in self.provenance[name]["sessions"]]
            mark = "\\mixedsessions{%d}{%s}" % (len(sess), ", ".join(sorted((ids[k] for k in sess),
                                                                            key=lambda x: int(x[1:]))))
            self.provenance[name]["mark"] = mark
            with open(os.path.join(self.dir, name), "w", encoding="utf-8") as f:
                f.write(text.replace("\\caption{", "\\caption{" + mark))
        return ids

    def macro(self, name, value, key=None):
        assert re.fullmatch(r"[A-Za-z]+", name), name
        assert name not in self.numbers or self.numbers[name]["text"] == value, name
        self.macros.append("\\newcommand{\\%s}{%s}" % (name, value))
        if key is not None:
            self.values[key] = value

    def number(self, name, value, fmt, noise=0.0, better="higher", key=None, rows=None):
        """A measured number the prose may cite, and a \\verdict compare:
        its macro (value formatted by fmt, "--" when None) and its entry in
        numbers.json (value, relative noise, which way is better, and the
        sessions of the rows it was computed from: rows, through
        self.session_key; None when the caller does not say, so that
        verdicts.py can tell a verdict within one session from one across
        sessions)."""
        assert better in ("higher", "lower"), better
        text = fmt(value) if value is not None else "--"
        self.numbers[name] = {"value": value, "noise": noise, "better": better, "text": text}
        if self.folder is not None:
            self.numbers[name]["folder"] = self.folder
        if rows is not None and self.session_key is not None:
            keys = {tuple(self.session_key(r)) for r in rows if r is not None}
            self.numbers[name]["sessions"] = [list(k) for k in sorted(keys)]
        self.macro(name, text, key)

    def figure(self, name, script):
        self.write(name + ".gp", script)
        self.figures.append(name)


def with_caption_note(text, note):
    """text with note appended to its first caption (before its \\label)."""
    i = text.find("\\caption{")
    j = text.find("}\\label{", i)
    if i < 0 or j < 0:
        return text.replace("\\caption{", "\\caption{" + note + " ", 1)
    return text[:j] + " " + note + text[j:]


def note_box(text):
    return ("\\begin{center}\\fbox{\\parbox{0.92\\linewidth}{\\small %s}}\\end{center}\n" % text)


def not_run_note(spec_names, gpu, what, env=None, label=None, caption=None):
    """A visible 'not measured yet' box; inside a figure or table
    environment with its caption and label when env is given, so that
    every reference the prose makes still resolves."""
    cmds = ", ".join("\\texttt{experiments/run %s}" % tex(n) for n in spec_names)
    box = note_box("\\textbf{No results yet.} %s: \\texttt{results/%s/} holds no rows for it. Run %s on a GPU "
                   "and rebuild the report." % (what, tex(gpu), cmds))
    if env is None:
        return box
    return ("\\begin{%s}[htbp]\n\\centering\n%s\\caption{%s (not measured yet).}\\label{%s}\n\\end{%s}\n"
            % (env, box, caption, label, env))


def figure_env(name, caption, label, width="\\linewidth"):
    return ("\\begin{figure}[tbp]\n\\centering\n\\includegraphics[width=%s]{generated/%s.pdf}\n"
            "\\caption{%s}\\label{%s}\n\\end{figure}\n" % (width, name, caption, label))


def gp_header(name, w="6.5in", h="3.2in"):
    return ("set terminal pdfcairo size %s,%s font \",8\" enhanced\nset output '%s.pdf'\n"
            "set datafile separator '\\t'\nset key noautotitle\nset grid ytics lc rgb '#dddddd'\n" % (w, h, name))

