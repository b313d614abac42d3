"""Shared code of the experiment runner (experiments/run) and the report
generator (report/generate.py): kernel configurations, experiment specs,
workloads and result files. Python 3 standard library only.

Configurations. parse_config/format_config/check_config mirror
codegen/config.c (vpt_config_parse, vpt_config_format, vpt_config_check):
the runner needs the canonical text of a spec's configs to know which ones a
results file already holds, and to drop combinations of a generated space
that no kernel exists for, without a GPU and before anything is built. The C
test tests/test_experiments_config.c feeds the same strings to both and fails
on any difference, so the two cannot drift apart silently.

Specs. The format is documented in experiments/README.md; load_spec() is
its only reader.

Result files. JSON lines, appended by bin/bench (harness/results.c) under an
exclusive flock with fsync; a crash can leave one last line without its
newline. read_rows() skips such a line, as vpt_results_load does;
append_row() first cuts it off, as vpt_results_append does, then appends
under the same lock.
"""

import fcntl
import json
import os
import re
import sys

# ---------------------------------------------------------------- configs

REGEN = ("none", "thread", "warp", "block", "device")
REORDER = ("none", "compact", "morton", "morton_delayed")
KERNELS = ("single", "multi")
SORTKEY = ("position", "termination")
FLIGHTS = ("sync", "async")
PATHS = ("sample", "pixel")
MAJORANT = ("global", "grid4", "grid8", "grid16", "grid32", "grid64", "grid128", "skip")
DENSITY = ("f32", "f16", "u16", "u8")
VOLUME = ("dense", "sparse")
KEYS = ("regen", "reorder", "kernels", "maxrregcount", "ppt", "block", "grid", "threshold", "sortkey", "lookahead",
        "coop", "flights", "paths", "majorant", "density", "volume")

# The nine schedules in codegen/config.c's order: name, regen, reorder,
# kernels, threshold (the thesis' regeneration point).
SCHEDULES = (
    ("naiveSK", "none", "none", "single", 0),
    ("naiveMK", "none", "none", "multi", 0),
    ("regenerationSK-thread", "thread", "none", "single", 0),
    ("regenerationSK-warp", "warp", "none", "single", 0),
    ("regenerationSK-block", "block", "none", "single", 0),
    ("streamingSK", "block", "compact", "single", 100),
    ("streamingMK", "device", "compact", "multi", 0),
    ("streamingSK-morton", "block", "morton", "single", 100),
    ("sortingSK", "block", "morton_delayed", "single", 100),
)
SCHEDULE_NAMES = tuple(s[0] for s in SCHEDULES)
_ALIASES = {s[0].lower(): s for s in SCHEDULES}
_ALIASES["regenerationsk"] = SCHEDULES[2]

SM_REGISTERS = 65536
REG_ALLOC_UNIT = 8
MAX_PATH_SLOTS = 4096
CONFIG_TEXT_MAX = 1024


class ConfigError(ValueError):
    pass


def default_config():
    return {"regen": "none", "reorder": "none", "kernels": "single", "maxrregcount": 0, "ppt": 1,
            "block": 256, "grid": 0, "threshold": 0, "sortkey": "position", "lookahead": 1, "coop": 0,
            "flights": "sync", "paths": "sample", "majorant": "global", "density": "f32", "volume": "dense"}


def _strict_int(key, v, allowed):
    # base/parse.h's vpt_parse_int: optional sign, decimal digits, nothing else.
    if not re.fullmatch(r"[+-]?[0-9]+", v):
        raise ConfigError("%s=%s: not an integer (allowed: %s)" % (key, v, allowed))
    n = int(v, 10)
    if n < -2**31 or n > 2**31 - 1:
        raise ConfigError("%s=%s: not an integer (allowed: %s)" % (key, v, allowed))
    return n


_DOMAINS = {
    "maxrregcount": (lambda v: v == 0 or 24 <= v <= 255, "0 (compiler's choice) or 24..255", "out of range"),
    "ppt": (lambda v: v in (1, 2, 4), "1, 2, 4", "not allowed"),
    "block": (lambda v: 32 <= v <= 1024 and v % 32 == 0, "a multiple of 32 in 32..1024", "not allowed"),
    "grid": (lambda v: 0 <= v <= 64, "0..64 (blocks per SM; 0: all that fit)", "out of range"),
    "threshold": (lambda v: 0 <= v <= 100, "0..100 (percent)", "out of range"),
    "lookahead": (lambda v: v in (1, 2, 4), "1, 2, 4", "not allowed"),
    "coop": (lambda v: v in (0, 1, 2, 4, 8, 16), "0 (off), 1, 2, 4, 8, 16", "not allowed"),
}
_ENUMS = {"regen": REGEN, "reorder": REORDER, "kernels": KERNELS, "sortkey": SORTKEY, "flights": FLIGHTS, "paths": PATHS,
          "majorant": MAJORANT, "density": DENSITY, "volume": VOLUME}


def parse_config(text):
    """The config dict of text (thesis name first, then key=value pairs);
    ConfigError naming the offending item otherwise. Cross-field rules are
    check_config's."""
    if not text:
        raise ConfigError("empty config")
    if len(text) >= CONFIG_TEXT_MAX:
        raise ConfigError("config text too long (%d bytes)" % len(text))
    for i, ch in enumerate(text):
        if ch.isspace() or not (32 <= ord(ch) < 127):
            raise ConfigError("whitespace or control character at offset %d" % i)
    c = default_config()
    seen = set()
    for index, item in enumerate(text.split(",")):
        if not item:
            raise ConfigError("empty item at position %d (stray ',')" % (index + 1))
        if "=" not in item:
            s = _ALIASES.get(item.lower())
            if s is None:
                raise ConfigError("'%s' is neither key=value nor a thesis name" % item)
            if index > 0:
                raise ConfigError("thesis name '%s' must come first, before any key=value" % item)
            c["regen"], c["reorder"], c["kernels"], c["threshold"] = s[1], s[2], s[3], s[4]
            continue
        key, val = item.split("=", 1)
        if key not in KEYS:
            raise ConfigError("unknown key '%s'" % key)
        if key in seen:
            raise ConfigError("key %s given twice" % key)
        seen.add(key)
        if not val:
            raise ConfigError("%s=: empty value" % key)
        if key in _ENUMS:
            if val not in _ENUMS[key]:
                raise ConfigError("%s=%s: unknown value (allowed: %s)" % (key, val, ", ".join(_ENUMS[key])))
            c[key] = val
        else:
            ok, allowed, what = _DOMAINS[key]
            n = _strict_int(key, val, allowed)
            if not ok(n):
                raise ConfigError("%s=%s: %s (allowed: %s)" % (key, val, what, allowed))
            c[key] = n
    return c


def format_config(c):
    # coop, flights, paths, majorant, density and volume are written only off their defaults, as codegen/config.c does
    return ("regen=%s,reorder=%s,kernels=%s,maxrregcount=%d,ppt=%d,block=%d,grid=%d,threshold=%d,sortkey=%s,"
            "lookahead=%d" % (c["regen"], c["reorder"], c["kernels"], c["maxrregcount"], c["ppt"], c["block"],
                              c["grid"], c["threshold"], c["sortkey"], c["lookahead"])
            + (",coop=%d" % c["coop"] if c["coop"] else "")
            + (",flights=%s" % c["flights"] if c["flights"] != "sync" else "")
            + (",paths=%s" % c["paths"] if c["paths"] != "sample" else "")
            + (",majorant=%s" % c["majorant"] if c["majorant"] != "global" else "")
            + (",density=%s" % c["density"] if c["density"] != "f32" else "")
            + (",volume=%s" % c["volume"] if c["volume"] != "dense" else ""))


def canonical(text):
    return format_config(parse_config(text))


def row_config(row):
    """The canonical form of a row's config. Rows written before a field was
    added to the config (e.g. lookahead) carry a shorter text; parsing fills
    the new field's default, which is what those kernels ran with. A text
    that does not parse is returned unchanged."""
    text = row.get("config")
    if not isinstance(text, str):
        return None
    try:
        return canonical(text)
    except ConfigError:
        return text


def check_config(c):
    """None when c obeys codegen/config.h's rules 1-11 (and the skip's
    dense volume), else the first rule it breaks, in the same order as
    vpt_config_check."""
    for key, (ok, allowed, _) in _DOMAINS.items():
        if not ok(c[key]):
            return "%s=%d: outside its domain (%s)" % (key, c[key], allowed)
    regen, reorder, multi = c["regen"], c["reorder"], c["kernels"] == "multi"
    if regen == "device" and not multi:
        return "regen=device needs kernels=multi"
    if multi and regen not in ("none", "device"):
        return "kernels=multi allows regen none|device only"
    if multi and reorder not in ("none", "compact"):
        return "kernels=multi allows reorder none|compact only"
    if multi and (regen == "device") != (reorder == "compact"):
        return "kernels=multi needs regen=device and reorder=compact together or neither"
    if not multi and reorder != "none" and regen != "block":
        return "reorder=%s needs regen=block with kernels=single" % reorder
    if c["threshold"] > 0 and regen not in ("warp", "block"):
        return "threshold=%d needs regen warp|block" % c["threshold"]
    if c["sortkey"] == "termination" and reorder not in ("morton", "morton_delayed"):
        return "sortkey=termination needs reorder morton|morton_delayed"
    if c["grid"] > 0 and regen not in ("thread", "warp", "block"):
        return "grid=%d needs a persistent kernel" % c["grid"]
    if c["majorant"] == "skip" and c["volume"] == "sparse":
        return "majorant=skip needs volume=dense"
    if c["maxrregcount"] > 0:
        per = (c["maxrregcount"] + REG_ALLOC_UNIT - 1) // REG_ALLOC_UNIT * REG_ALLOC_UNIT
        if per * c["block"] > SM_REGISTERS:
            return "maxrregcount=%d x block=%d does not fit one SM's register file" % (c["maxrregcount"], c["block"])
    if reorder != "none" and c["ppt"] * c["block"] > MAX_PATH_SLOTS:
        return "ppt x block exceeds %d path slots" % MAX_PATH_SLOTS
    if c["flights"] == "async" and regen not in ("thread", "warp"):
        return "flights=async needs regen thread|warp"
    if c["flights"] == "async" and c["coop"] != 0:
        return "flights=async needs coop=0"
    if c["flights"] == "async" and c["ppt"] != 1:
        return "flights=async needs ppt=1"
    return None


def schedule_name(c):
    """The thesis name of c's (regen, reorder, kernels) triple, or "custom"."""
    if isinstance(c, str):
        c = parse_config(c)
    for s in SCHEDULES:
        if (c["regen"], c["reorder"], c["kernels"]) == s[1:4]:
            return s[0]
    return "custom"


def describe_config(canon):
    """Short human form: the schedule name plus the fields that differ from
    that schedule's thesis settings (bench --thesis), e.g.
    "streamingSK, block=128, maxrregcount=64"."""
    c = parse_config(canon)
    name = schedule_name(c)
    base = parse_config(name) if name != "custom" else default_config()
    diff = ["%s=%s" % (k, c[k]) for k in KEYS if c[k] != base[k]]
    if name == "custom":
        return ",".join("%s=%s" % (k, c[k]) for k in KEYS)
    return ", ".join([name] + diff)


# ---------------------------------------------------------------- specs

SPEC_KINDS = ("bench", "tune", "profile")
LIST_KEYS = ("configs", "space", "scenes", "strategies", "seeds", "metrics", "sweep", "configs_from")
SCALAR_KEYS = ("name", "title", "kind", "status", "reason", "thesis_table", "workload", "roofline", "bench_args",
               "output", "cpu_reference", "cpu_workload", "cpu_args", "budget", "command", "kernel",
               "ncu_args", "description", "report", "pool")
WORKLOAD_KEYS = ("width", "height", "spp", "seed", "max_depth", "rr_depth", "tiles")
WORKLOAD_DEFAULTS = {"max_depth": 0, "rr_depth": -1, "tiles": 1}
NAME_RE = re.compile(r"[a-z0-9][a-z0-9_]*")
# an output may sit one folder down (estimators/table: results/<gpu>/estimators/table.jsonl)
OUTPUT_RE = re.compile(r"[a-z0-9][a-z0-9_]*(/[a-z0-9][a-z0-9_]*)?")
SCENE_RE = re.compile(r"[a-z0-9][a-z0-9-]*")


class SpecError(ValueError):
    pass


class Spec:
    """One experiment. Attributes mirror the keys of experiments/README.md;
    list keys are lists, scalars strings (or None when absent)."""

    def __init__(self, path):
        self.path = path
        self.values = {}
        self.per_scene = {}   # "workload.bucky" -> {"bucky": "spp=300"}
        self.lines = []       # (lineno, text) of the file, for the appendix

    def get(self, key, default=None):
        return self.values.get(key, default)

    @property
    def name(self):
        return self.values["name"]

    @property
    def kind(self):
        return self.values.get("kind", "bench")

    @property
    def output(self):
        return self.values.get("output") or self.name

    @property
    def pooled(self):
        """Whether the report pools this output's rows (pool = no: a part of
        the report reads it itself, and its rows must not compete for the
        pool's 'fastest configuration')."""
        return self.values.get("pool", "yes") == "yes"

    @property
    def implemented(self):
        return self.values.get("status", "ready") == "ready"

    @property
    def scenes(self):
        return self.values.get("scenes", [])

    def flag(self, key):
        return self.values.get(key, "no") == "yes"


def _split_list(key, value):
    if key == "space":
        return [value]          # one product per line, kept whole
    return value.split()


def load_spec(path):
    spec = Spec(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError as e:
        raise SpecError("%s: not UTF-8 text (byte %d)" % (path, e.start)) from None
    for lineno, raw in enumerate(text.splitlines(), 1):
        spec.lines.append((lineno, raw))
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if "=" not in line:
            raise SpecError("%s:%d: expected 'key = value', got '%s'" % (path, lineno, line))
        key, value = (s.strip() for s in line.split("=", 1))
        base, _, scene = key.partition(".")
        if scene:
            if base not in ("workload", "cpu_workload"):
                raise SpecError("%s:%d: only workload.SCENE and cpu_workload.SCENE take a scene" % (path, lineno))
            spec.per_scene.setdefault(base, {})[scene] = value
            continue
        if key in LIST_KEYS:
            spec.values.setdefault(key, []).extend(_split_list(key, value))
        elif key in SCALAR_KEYS:
            if key in spec.values:
                raise SpecError("%s:%d: %s given twice" % (path, lineno, key))
            spec.values[key] = value
        else:
            raise SpecError("%s:%d: unknown key '%s' (keys: %s)"
                            % (path, lineno, key, ", ".join(SCALAR_KEYS + LIST_KEYS)))
    _validate(spec)
    return spec


def _validate(spec):
    p = spec.path
    name = spec.values.get("name")
    if not name:
        raise SpecError("%s: no 'name'" % p)
    stem = os.path.splitext(os.path.basename(p))[0]
    if name != stem:
        raise SpecError("%s: name '%s' differs from the file name '%s'" % (p, name, stem))
    if not NAME_RE.fullmatch(name) or not OUTPUT_RE.fullmatch(spec.output):
        raise SpecError("%s: name must be [a-z0-9_]+, output [a-z0-9_]+ or [a-z0-9_]+/[a-z0-9_]+" % p)
    if not spec.values.get("title"):
        raise SpecError("%s: no 'title'" % p)
    if spec.kind not in SPEC_KINDS:
        raise SpecError("%s: kind '%s' is not one of %s" % (p, spec.kind, ", ".join(SPEC_KINDS)))
    if spec.values.get("status", "ready") not in ("ready", "not_implemented"):
        raise SpecError("%s: status must be ready or not_implemented" % p)
    if not spec.implemented and not spec.values.get("reason"):
        raise SpecError("%s: status not_implemented needs a 'reason'" % p)
    for k in ("roofline", "cpu_reference", "pool"):
        if spec.values.get(k, "no") not in ("yes", "no"):
            raise SpecError("%s: %s must be yes or no" % (p, k))
    if not spec.scenes:
        raise SpecError("%s: no 'scenes'" % p)
    for s in spec.scenes:
        if not SCENE_RE.fullmatch(s):
            raise SpecError("%s: bad scene name '%s'" % (p, s))
    for s in list(spec.per_scene.get("workload", {})) + list(spec.per_scene.get("cpu_workload", {})):
        if s not in spec.scenes:
            raise SpecError("%s: workload.%s names a scene not in 'scenes'" % (p, s))
    # Workloads must parse (and be complete) for every scene.
    for s in spec.scenes:
        workloads(spec, s)
        if spec.flag("cpu_reference"):
            cpu_workload(spec, s)
    if spec.kind in ("bench", "profile"):
        static_configs(spec)   # raises on a malformed config or space
        if not spec.values.get("configs") and not spec.values.get("space") and not spec.values.get("configs_from"):
            raise SpecError("%s: kind %s needs configs, space or configs_from" % (p, spec.kind))
    for src in spec.values.get("configs_from", []):
        if src != "tuned" and not re.fullmatch(r"best:[a-z0-9_]+", src):
            raise SpecError("%s: configs_from '%s' is not best:EXPERIMENT or tuned" % (p, src))
    if spec.kind == "tune":
        for k in ("strategies", "seeds", "command"):
            if not spec.values.get(k):
                raise SpecError("%s: kind tune needs '%s'" % (p, k))
    if spec.kind == "profile" and not spec.values.get("metrics"):
        raise SpecError("%s: kind profile needs 'metrics'" % p)


def _parse_assignments(text, where):
    out = {}
    for item in text.split():
        if "=" not in item:
            raise SpecError("%s: '%s' is not key=value" % (where, item))
        k, v = item.split("=", 1)
        if k not in WORKLOAD_KEYS:
            raise SpecError("%s: unknown workload key '%s' (keys: %s)" % (where, k, ", ".join(WORKLOAD_KEYS)))
        try:
            out[k] = int(v, 10)
        except ValueError:
            raise SpecError("%s: %s=%s is not an integer" % (where, k, v)) from None
    return out


def base_workload(spec, scene, key="workload"):
    """The spec's workload for scene: 'workload' overridden by workload.SCENE,
    with max_depth 0 and rr_depth -1 unless given. width, height, spp and
    seed are required, so that rows can be matched exactly."""
    w = dict(WORKLOAD_DEFAULTS)
    w.update(_parse_assignments(spec.values.get("workload", ""), spec.path + ": workload"))
    w.update(_parse_assignments(spec.per_scene.get("workload", {}).get(scene, ""),
                                "%s: workload.%s" % (spec.path, scene)))
    if key == "cpu_workload":
        w.update(_parse_assignments(spec.values.get("cpu_workload", ""), spec.path + ": cpu_workload"))
        w.update(_parse_assignments(spec.per_scene.get("cpu_workload", {}).get(scene, ""),
                                    "%s: cpu_workload.%s" % (spec.path, scene)))
    missing = [k for k in ("width", "height", "spp", "seed") if k not in w]
    if missing:
        raise SpecError("%s: the workload of %s lacks %s" % (spec.path, scene, ", ".join(missing)))
    return w


def workloads(spec, scene):
    """Every workload the spec measures on scene: the base workload times the
    'sweep' axes (e.g. sweep = max_depth=1,2,3)."""
    points = [base_workload(spec, scene)]
    for axis in spec.values.get("sweep", []):
        if "=" not in axis:
            raise SpecError("%s: sweep '%s' is not key=v1,v2,..." % (spec.path, axis))
        k, vals = axis.split("=", 1)
        if k not in WORKLOAD_KEYS:
            raise SpecError("%s: sweep over unknown workload key '%s'" % (spec.path, k))
        try:
            values = [int(v, 10) for v in vals.split(",")]
        except ValueError:
            raise SpecError("%s: sweep %s: values must be integers" % (spec.path, axis)) from None
        points = [dict(p, **{k: v}) for p in points for v in values]
    return points


def cpu_workload(spec, scene):
    return base_workload(spec, scene, "cpu_workload")


def workload_key(w):
    return tuple(int(w.get(k, WORKLOAD_DEFAULTS.get(k, 0))) for k in WORKLOAD_KEYS)


def format_workload(w):
    s = "%dx%d, %d spp, seed %d" % (w["width"], w["height"], w["spp"], w["seed"])
    if w.get("max_depth", 0):
        s += ", max depth %d" % w["max_depth"]
    if w.get("rr_depth", -1) >= 0:
        s += ", RR from %d" % w["rr_depth"]
    if w.get("tiles", 1) > 1:
        s += ", %dx%d tiles" % (w["tiles"], w["tiles"])
    return s


def expand_space(line, where):
    """The configs of one 'space' line: the product of its axes, each
    'key=v1,v2,...' separated by ';'. The axis 'schedule' takes thesis names
    and comes first in each config text."""
    axes = []
    for part in line.split(";"):
        part = part.strip()
        if not part:
            continue
        if "=" not in part:
            raise SpecError("%s: space axis '%s' is not key=v1,v2,..." % (where, part))
        k, vals = (s.strip() for s in part.split("=", 1))
        values = [v.strip() for v in vals.split(",") if v.strip()]
        if not values:
            raise SpecError("%s: space axis '%s' has no values" % (where, k))
        if k != "schedule" and k not in KEYS:
            raise SpecError("%s: space axis '%s' is not schedule or a config key" % (where, k))
        axes.append((k, values))
    axes.sort(key=lambda a: a[0] != "schedule")
    texts = [[]]
    for k, values in axes:
        texts = [t + [v if k == "schedule" else "%s=%s" % (k, v)] for t in texts for v in values]
    return [",".join(t) for t in texts]


def static_configs(spec):
    """(configs, dropped): canonical configs of 'configs' and 'space' in
    order, duplicates removed; dropped lists (canonical, rule) for generated
    combinations that break a rule. A listed config that breaks a rule is
    an error: the spec asked for something that does not exist."""
    out, dropped, seen = [], [], set()
    for text in spec.values.get("configs", []):
        try:
            c = parse_config(text)
        except ConfigError as e:
            raise SpecError("%s: config '%s': %s" % (spec.path, text, e)) from None
        err = check_config(c)
        if err:
            raise SpecError("%s: config '%s' breaks a rule: %s" % (spec.path, text, err))
        canon = format_config(c)
        if canon not in seen:
            seen.add(canon)
            out.append(canon)
    for line in spec.values.get("space", []):
        for text in expand_space(line, spec.path):
            try:
                c = parse_config(text)
            except ConfigError as e:
                raise SpecError("%s: space config '%s': %s" % (spec.path, text, e)) from None
            canon = format_config(c)
            err = check_config(c)
            if err:
                dropped.append((canon, err))
            elif canon not in seen:
                seen.add(canon)
                out.append(canon)
    return out, dropped


def load_specs(directory):
    specs = {}
    for fn in sorted(os.listdir(directory)):
        if fn.endswith(".spec"):
            s = load_spec(os.path.join(directory, fn))
            specs[s.name] = s
    for s in specs.values():
        for dep in dependencies(s):
            if dep not in specs:
                raise SpecError("%s: configs_from names unknown experiment '%s'" % (s.path, dep))
    return specs


def dependencies(spec):
    """The experiments whose results spec's configs_from reads (best:NAME);
    'tuned' reads results/<gpu>/best/, which no experiment writes."""
    return [src.split(":", 1)[1] for src in spec.values.get("configs_from", []) if src.startswith("best:")]


def run_order(specs):
    """Spec names with every configs_from source before its users."""
    order, state = [], {}

    def visit(n, chain):
        if state.get(n) == "done":
            return
        if state.get(n) == "busy":
            raise SpecError("configs_from cycle: %s" % " -> ".join(chain + [n]))
        state[n] = "busy"
        for d in dependencies(specs[n]):
            visit(d, chain + [n])
        state[n] = "done"
        order.append(n)

    for n in sorted(specs):
        visit(n, [])
    return order


# ---------------------------------------------------------------- results

def read_rows(path, warn=None):
    """Rows of a JSON-lines file in file order, each with '_line' and '_file'
    added and its 'config' in today's canonical form (row_config). A missing
    file has none. A final line without its newline (an
    interrupted append) is skipped; so is any line that is not a JSON object,
    with a note through warn(msg)."""
    rows = []
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return rows
    lines = data.split(b"\n")
    complete = lines[:-1]   # the part after the last newline is incomplete (or empty)
    if lines[-1].strip() and warn:
        warn("%s: skipping an incomplete last line" % path)
    for i, raw in enumerate(complete, 1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as e:
            if warn:
                warn("%s:%d: not JSON (%s); skipped" % (path, i, e))
            continue
        if not isinstance(row, dict):
            if warn:
                warn("%s:%d: not a JSON object; skipped" % (path, i))
            continue
        if isinstance(row.get("config"), str):
            row["config"] = row_config(row)
        row["_line"] = i
        row["_file"] = path
        rows.append(row)
    return rows


def append_row(path, row):
    """Appends row as one line under an exclusive flock, then fsyncs; cuts
    off an incomplete last line first (harness/results.c does the same)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    line = (json.dumps({k: v for k, v in row.items() if not k.startswith("_")}, separators=(",", ":"),
                       sort_keys=False) + "\n").encode()
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.lseek(fd, 0, os.SEEK_END)
        if size > 0:
            os.lseek(fd, max(0, size - 65536), os.SEEK_SET)
            tail = os.read(fd, 65536)
            if not tail.endswith(b"\n"):
                cut = tail.rfind(b"\n")
                keep = size - len(tail) + cut + 1 if cut >= 0 else (size - len(tail) if size > 65536 else 0)
                print("note: %s: cutting off an incomplete last line" % path, file=sys.stderr)
                os.ftruncate(fd, keep)
        os.lseek(fd, 0, os.SEEK_END)
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def row_time(row):
    return row.get("time") or ""


def newest_by(rows, keyfn):
    """{key: row} keeping, for each key, the row with the latest 'time'
    (ISO-8601 UTC, so text order is time order); ties go to the later row
    in reading order."""
    best = {}
    for r in rows:
        k = keyfn(r)
        if k is None:
            continue
        old = best.get(k)
        if old is None or row_time(r) >= row_time(old):
            best[k] = r
    return best


def result_key(row):
    """(scene, canonical config, workload key) of a result row, or None."""
    if row.get("kind") != "result" or "config" not in row or "scene" not in row:
        return None
    return (row["scene"], row_config(row), workload_key(row.get("workload", {})))


def best_configs(rows, scenes=None, workload_filter=None):
    """{scene: newest ok row with the most Mrays/s} over result rows; ties
    go to the canonical config text that sorts first, so the choice is a
    function of the data alone."""
    latest = newest_by(rows, result_key)
    best = {}
    for (scene, canon, wk), r in sorted(latest.items()):
        if scenes is not None and scene not in scenes:
            continue
        if workload_filter is not None and not workload_filter(scene, r.get("workload", {})):
            continue
        if r.get("status") != "ok":
            continue
        m = r.get("metrics", {}).get("mrays_per_s")
        if not isinstance(m, (int, float)):
            continue
        if scene not in best or m > best[scene]["metrics"]["mrays_per_s"]:
            best[scene] = r
    return best


def gpu_dirs(results_dir):
    """GPU folders under results/ holding at least one .jsonl file (CPU
    machines' folders, results/cpu-*/, are not GPU folders)."""
    out = []
    try:
        names = sorted(os.listdir(results_dir))
    except FileNotFoundError:
        return out
    for n in names:
        d = os.path.join(results_dir, n)
        if n.startswith("cpu-"):
            continue
        if os.path.isdir(d) and any(f.endswith(".jsonl") for f in os.listdir(d)):
            out.append(n)
    return out


def _main(argv):
    """Command line for tests: 'canon' reads one config text per line on
    stdin and prints 'ok CANON', 'invalid CANON' (parses, breaks a rule) or
    'error' (does not parse) for each."""
    if len(argv) == 2 and argv[1] == "canon":
        for line in sys.stdin:
            text = line.rstrip("\n")
            try:
                c = parse_config(text)
            except ConfigError:
                print("error")
                continue
            print("%s %s" % ("invalid" if check_config(c) else "ok", format_config(c)))
        return 0
    print("usage: vptexp.py canon  < configs", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
