/* Kernel configurations: canonical text, parser, constraint rules.
 *
 * The domains and rules live here once; the tuner's space (tuner/space.c)
 * narrows the domains to the values it searches and asks vpt_config_check
 * which combinations exist. */
#include "codegen/config.h"

#include "base/error.h"
#include "base/parse.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const regen_names[] = {"none", "thread", "warp", "block", "device"};
static const char *const reorder_names[] = {"none", "compact", "morton", "morton_delayed"};
static const char *const kernels_names[] = {"single", "multi"};
static const char *const sortkey_names[] = {"position", "termination"};
static const char *const flights_names[] = {"sync", "async"};
static const char *const paths_names[] = {"sample", "pixel"};
static const char *const transmittance_names[] = {"none", "delta", "ratio", "residual"};
/* majorant: the global one (0), a grid of C^3-voxel cells (C), or the
 * global one with empty space skipped by the distance map (-1) */
static const char *const majorant_names[] = {"global", "grid4", "grid8", "grid16", "grid32", "grid64", "grid128", "skip"};
static const int majorant_cells[] = {0, 4, 8, 16, 32, 64, 128, -1};
_Static_assert(sizeof majorant_cells / sizeof majorant_cells[0] == VPT_MAJORANT_COUNT, "VPT_MAJORANT_COUNT");
static const char *const density_names[] = {"f32", "f16", "u16", "u8"};
/* volume: the density as a dense texture or a sparse NanoVDB tree */
static const char *const volume_names[] = {"dense", "sparse"};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

const char *vpt_regen_name(VptRegen r)
{
    return (int)r >= 0 && (int)r < COUNT(regen_names) ? regen_names[r] : "?";
}

const char *vpt_reorder_name(VptReorder r)
{
    return (int)r >= 0 && (int)r < COUNT(reorder_names) ? reorder_names[r] : "?";
}

const char *vpt_kernels_name(VptKernels k)
{
    return (int)k >= 0 && (int)k < COUNT(kernels_names) ? kernels_names[k] : "?";
}

int vpt_majorant_cells(const int **cells)
{
    *cells = majorant_cells;
    return COUNT(majorant_cells);
}

const char *vpt_majorant_name(int cell)
{
    for (int i = 0; i < COUNT(majorant_cells); i++)
        if (majorant_cells[i] == cell) return majorant_names[i];
    return "?";
}

const char *vpt_volume_name(int sparse)
{
    return sparse == 0 || sparse == 1 ? volume_names[sparse] : "?";
}

const char *vpt_density_name(VptDensityFormat f)
{
    return (int)f >= 0 && (int)f < COUNT(density_names) ? density_names[f] : "?";
}

const char *vpt_sortkey_name(VptSortKey k)
{
    return (int)k >= 0 && (int)k < COUNT(sortkey_names) ? sortkey_names[k] : "?";
}

const char *vpt_flights_name(VptFlights f)
{
    return (int)f >= 0 && (int)f < COUNT(flights_names) ? flights_names[f] : "?";
}

const char *vpt_transmittance_name(VptTransmittance t)
{
    return (int)t >= 0 && (int)t < COUNT(transmittance_names) ? transmittance_names[t] : "?";
}

void vpt_config_for_scene(VptConfig *c, int sun, int env_map)
{
    c->nee_lights = !env_map ? VPT_NEE_SUN : sun ? VPT_NEE_SUN_AND_ENV_MAP : VPT_NEE_ENV_MAP;
    if (!sun && !env_map) c->transmittance = VPT_TRANSMITTANCE_NONE;
    else if (c->transmittance == VPT_TRANSMITTANCE_NONE) c->transmittance = VPT_TRANSMITTANCE_DEFAULT;
}

const char *vpt_paths_name(VptPathOrder o)
{
    return (int)o >= 0 && (int)o < COUNT(paths_names) ? paths_names[o] : "?";
}

static const VptSchedule schedules[VPT_SCHEDULE_COUNT] = {
    {"naiveSK", VPT_REGEN_NONE, VPT_REORDER_NONE, VPT_KERNELS_SINGLE, 0},
    {"naiveMK", VPT_REGEN_NONE, VPT_REORDER_NONE, VPT_KERNELS_MULTI, 0},
    {"regenerationSK-thread", VPT_REGEN_THREAD, VPT_REORDER_NONE, VPT_KERNELS_SINGLE, 0},
    {"regenerationSK-warp", VPT_REGEN_WARP, VPT_REORDER_NONE, VPT_KERNELS_SINGLE, 0},
    {"regenerationSK-block", VPT_REGEN_BLOCK, VPT_REORDER_NONE, VPT_KERNELS_SINGLE, 0},
    {"streamingSK", VPT_REGEN_BLOCK, VPT_REORDER_COMPACT, VPT_KERNELS_SINGLE, 100},
    {"streamingMK", VPT_REGEN_DEVICE, VPT_REORDER_COMPACT, VPT_KERNELS_MULTI, 0},
    {"streamingSK-morton", VPT_REGEN_BLOCK, VPT_REORDER_MORTON, VPT_KERNELS_SINGLE, 100},
    {"sortingSK", VPT_REGEN_BLOCK, VPT_REORDER_MORTON_DELAYED, VPT_KERNELS_SINGLE, 100},
};

int vpt_config_schedules(const VptSchedule **out)
{
    *out = schedules;
    return VPT_SCHEDULE_COUNT;
}

int vpt_config_schedule_index(const VptConfig *c)
{
    for (int i = 0; i < VPT_SCHEDULE_COUNT; i++)
        if (schedules[i].regen == c->regen && schedules[i].reorder == c->reorder &&
            schedules[i].kernels == c->kernels)
            return i;
    return -1;
}

const char *vpt_config_schedule_name(const VptConfig *c)
{
    int i = vpt_config_schedule_index(c);
    return i < 0 ? "custom" : schedules[i].name;
}

int vpt_config_is_persistent(const VptConfig *c)
{
    return c->regen == VPT_REGEN_THREAD || c->regen == VPT_REGEN_WARP || c->regen == VPT_REGEN_BLOCK;
}

VptConfig vpt_config_default(void)
{
    VptConfig c = {
        .regen = VPT_REGEN_NONE,
        .reorder = VPT_REORDER_NONE,
        .kernels = VPT_KERNELS_SINGLE,
        .maxrregcount = 0,
        .ppt = 1,
        .block = 256,
        .grid = 0,
        .threshold = 0,
        .sortkey = VPT_SORTKEY_POSITION,
        .lookahead = 1,
        .coop = 0,
        .flights = VPT_FLIGHTS_SYNC,
        .paths = VPT_PATHS_SAMPLE,
        .majorant = 0,
        .density = VPT_DENSITY_F32,
    };
    return c;
}

int vpt_config_equal(const VptConfig *a, const VptConfig *b)
{
    return a->regen == b->regen && a->reorder == b->reorder && a->kernels == b->kernels &&
           a->maxrregcount == b->maxrregcount && a->ppt == b->ppt && a->block == b->block &&
           a->grid == b->grid && a->threshold == b->threshold && a->sortkey == b->sortkey &&
           a->lookahead == b->lookahead && a->coop == b->coop && a->flights == b->flights && a->paths == b->paths &&
           a->majorant == b->majorant &&
           a->density == b->density && a->sparse == b->sparse && a->transmittance == b->transmittance;
}

void vpt_config_format(const VptConfig *c, char *buf, size_t size)
{
    int n = snprintf(buf, size,
                     "regen=%s,reorder=%s,kernels=%s,maxrregcount=%d,ppt=%d,block=%d,grid=%d,threshold=%d,sortkey=%s,"
                     "lookahead=%d",
                     vpt_regen_name(c->regen), vpt_reorder_name(c->reorder), vpt_kernels_name(c->kernels),
                     c->maxrregcount, c->ppt, c->block, c->grid, c->threshold, vpt_sortkey_name(c->sortkey),
                     c->lookahead);
    /* the fields added since lookahead are written only off their default */
    if (c->coop != 0 && n >= 0 && (size_t)n < size) n += snprintf(buf + n, size - (size_t)n, ",coop=%d", c->coop);
    if (c->flights != VPT_FLIGHTS_SYNC && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, ",flights=%s", vpt_flights_name(c->flights));
    if (c->paths != VPT_PATHS_SAMPLE && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, ",paths=%s", vpt_paths_name(c->paths));
    if (c->majorant != 0 && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, ",majorant=%s", vpt_majorant_name(c->majorant));
    if (c->density != VPT_DENSITY_F32 && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, ",density=%s", vpt_density_name(c->density));
    if (c->sparse && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, ",volume=%s", vpt_volume_name(c->sparse));
    if (c->transmittance != VPT_TRANSMITTANCE_NONE && n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, ",transmittance=%s", vpt_transmittance_name(c->transmittance));
}

/* ---- domains ---------------------------------------------------------- */

static int maxrreg_ok(int v) { return v == 0 || (v >= 24 && v <= 255); }
static int ppt_ok(int v) { return v == 1 || v == 2 || v == 4; }
static int block_ok(int v) { return v >= 32 && v <= 1024 && v % 32 == 0; }
static int grid_ok(int v) { return v >= 0 && v <= 64; }
static int threshold_ok(int v) { return v >= 0 && v <= 100; }
static int coop_ok(int v) { return v == 0 || v == 1 || v == 2 || v == 4 || v == 8 || v == 16; }
static int majorant_ok(int v)
{
    for (int i = 0; i < COUNT(majorant_cells); i++)
        if (majorant_cells[i] == v) return 1;
    return 0;
}

#define MAXRREG_ALLOWED "0 (compiler's choice) or 24..255"
#define PPT_ALLOWED "1, 2, 4"
#define BLOCK_ALLOWED "a multiple of 32 in 32..1024"
#define GRID_ALLOWED "0..64 (blocks per SM; 0: all that fit)"
#define THRESHOLD_ALLOWED "0..100 (percent)"
#define LOOKAHEAD_ALLOWED "1, 2, 4"
#define COOP_ALLOWED "0 (off), 1, 2, 4, 8, 16"

/* ---- parser ----------------------------------------------------------- */

enum {
    K_REGEN,
    K_REORDER,
    K_KERNELS,
    K_MAXRREG,
    K_PPT,
    K_BLOCK,
    K_GRID,
    K_THRESHOLD,
    K_SORTKEY,
    K_LOOKAHEAD,
    K_COOP,
    K_FLIGHTS,
    K_PATHS,
    K_MAJORANT,
    K_DENSITY,
    K_VOLUME,
    K_TRANSMITTANCE,
    K_COUNT
};
static const char *const key_names[K_COUNT] = {
    "regen", "reorder", "kernels", "maxrregcount", "ppt", "block", "grid", "threshold", "sortkey", "lookahead", "coop",
    "flights", "paths", "majorant", "density", "volume", "transmittance",
};
#define KEYS_LIST                                                                                                   \
    "regen, reorder, kernels, maxrregcount, ppt, block, grid, threshold, sortkey, lookahead, coop, flights, paths, "    \
    "majorant, density, volume, transmittance"

/* Thesis names accepted as the first token, with "regenerationSK" (the thesis'
 * default regeneration, thread level) as an extra spelling. */
static const struct {
    const char *name;
    int schedule;
} aliases[] = {
    {"naiveSK", 0}, {"naiveMK", 1}, {"regenerationSK", 2}, {"regenerationSK-thread", 2},
    {"regenerationSK-warp", 3}, {"regenerationSK-block", 4}, {"streamingSK", 5},
    {"streamingMK", 6}, {"streamingSK-morton", 7}, {"sortingSK", 8},
};
#define ALIAS_LIST                                                                              \
    "naiveSK, naiveMK, regenerationSK, regenerationSK-thread, regenerationSK-warp, "           \
    "regenerationSK-block, streamingSK, streamingMK, streamingSK-morton, sortingSK"

static int find_alias(const char *tok)
{
    for (int i = 0; i < COUNT(aliases); i++)
        if (strcasecmp(tok, aliases[i].name) == 0) return aliases[i].schedule;
    return -1;
}

static int find_name(const char *const *names, int n, const char *v)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], v) == 0) return i;
    return -1;
}

static void join_names(const char *const *names, int n, char *out, size_t size)
{
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        size_t len = strlen(out);
        snprintf(out + len, size - len, "%s%s", i ? ", " : "", names[i]);
    }
}

static int bad_enum(const char *key, const char *v, const char *const *names, int n)
{
    char allowed[128];
    join_names(names, n, allowed, sizeof allowed);
    return vpt_fail("%s=%s: unknown value (allowed: %s)", key, v, allowed);
}

/* Integer value of key=v within [lo, hi] after a strict parse; the domain's
 * finer rule (multiples, gaps) is the caller's. */
static int parse_num(const char *key, const char *v, const char *allowed, int *out)
{
    if (vpt_parse_int(v, INT_MIN, INT_MAX, key, out))
        return vpt_fail("%s=%s: not an integer (allowed: %s)", key, v, allowed);
    return 0;
}

static int set_field(VptConfig *c, int key, const char *v)
{
    const char *k = key_names[key];
    int i;
    switch (key) {
    case K_REGEN:
        if ((i = find_name(regen_names, COUNT(regen_names), v)) < 0)
            return bad_enum(k, v, regen_names, COUNT(regen_names));
        c->regen = (VptRegen)i;
        return 0;
    case K_REORDER:
        if ((i = find_name(reorder_names, COUNT(reorder_names), v)) < 0)
            return bad_enum(k, v, reorder_names, COUNT(reorder_names));
        c->reorder = (VptReorder)i;
        return 0;
    case K_KERNELS:
        if ((i = find_name(kernels_names, COUNT(kernels_names), v)) < 0)
            return bad_enum(k, v, kernels_names, COUNT(kernels_names));
        c->kernels = (VptKernels)i;
        return 0;
    case K_SORTKEY:
        if ((i = find_name(sortkey_names, COUNT(sortkey_names), v)) < 0)
            return bad_enum(k, v, sortkey_names, COUNT(sortkey_names));
        c->sortkey = (VptSortKey)i;
        return 0;
    case K_MAXRREG:
        if (parse_num(k, v, MAXRREG_ALLOWED, &i)) return -1;
        if (!maxrreg_ok(i)) return vpt_fail("%s=%s: out of range (allowed: %s)", k, v, MAXRREG_ALLOWED);
        c->maxrregcount = i;
        return 0;
    case K_PPT:
        if (parse_num(k, v, PPT_ALLOWED, &i)) return -1;
        if (!ppt_ok(i)) return vpt_fail("%s=%s: not allowed (allowed: %s)", k, v, PPT_ALLOWED);
        c->ppt = i;
        return 0;
    case K_BLOCK:
        if (parse_num(k, v, BLOCK_ALLOWED, &i)) return -1;
        if (!block_ok(i)) return vpt_fail("%s=%s: not allowed (allowed: %s)", k, v, BLOCK_ALLOWED);
        c->block = i;
        return 0;
    case K_GRID:
        if (parse_num(k, v, GRID_ALLOWED, &i)) return -1;
        if (!grid_ok(i)) return vpt_fail("%s=%s: out of range (allowed: %s)", k, v, GRID_ALLOWED);
        c->grid = i;
        return 0;
    case K_THRESHOLD:
        if (parse_num(k, v, THRESHOLD_ALLOWED, &i)) return -1;
        if (!threshold_ok(i)) return vpt_fail("%s=%s: out of range (allowed: %s)", k, v, THRESHOLD_ALLOWED);
        c->threshold = i;
        return 0;
    case K_LOOKAHEAD:
        if (parse_num(k, v, LOOKAHEAD_ALLOWED, &i)) return -1;
        if (!ppt_ok(i)) return vpt_fail("%s=%s: not allowed (allowed: %s)", k, v, LOOKAHEAD_ALLOWED);
        c->lookahead = i;
        return 0;
    case K_COOP:
        if (parse_num(k, v, COOP_ALLOWED, &i)) return -1;
        if (!coop_ok(i)) return vpt_fail("%s=%s: not allowed (allowed: %s)", k, v, COOP_ALLOWED);
        c->coop = i;
        return 0;
    case K_FLIGHTS:
        if ((i = find_name(flights_names, COUNT(flights_names), v)) < 0)
            return bad_enum(k, v, flights_names, COUNT(flights_names));
        c->flights = (VptFlights)i;
        return 0;
    case K_PATHS:
        if ((i = find_name(paths_names, COUNT(paths_names), v)) < 0)
            return bad_enum(k, v, paths_names, COUNT(paths_names));
        c->paths = (VptPathOrder)i;
        return 0;
    case K_MAJORANT:
        if ((i = find_name(majorant_names, COUNT(majorant_names), v)) < 0)
            return bad_enum(k, v, majorant_names, COUNT(majorant_names));
        c->majorant = majorant_cells[i];
        return 0;
    case K_DENSITY:
        if ((i = find_name(density_names, COUNT(density_names), v)) < 0)
            return bad_enum(k, v, density_names, COUNT(density_names));
        c->density = (VptDensityFormat)i;
        return 0;
    case K_VOLUME:
        if ((i = find_name(volume_names, COUNT(volume_names), v)) < 0)
            return bad_enum(k, v, volume_names, COUNT(volume_names));
        c->sparse = i;
        return 0;
    case K_TRANSMITTANCE:
        if ((i = find_name(transmittance_names, COUNT(transmittance_names), v)) < 0)
            return bad_enum(k, v, transmittance_names, COUNT(transmittance_names));
        c->transmittance = (VptTransmittance)i;
        return 0;
    }
    VPT_ASSERT(0);
}

#define CONFIG_TEXT_MAX 1024

static int parse(const char *text, VptConfig *out)
{
    if (!text || !*text)
        return vpt_fail("empty config (give key=value pairs, keys: %s; or a thesis name: %s)", KEYS_LIST,
                        ALIAS_LIST);
    size_t len = strlen(text);
    if (len >= CONFIG_TEXT_MAX) return vpt_fail("config text too long (%zu bytes, at most %d)", len, CONFIG_TEXT_MAX - 1);
    for (size_t i = 0; i < len; i++)
        if (isspace((unsigned char)text[i]) || !isprint((unsigned char)text[i]))
            return vpt_fail("whitespace or control character at offset %zu (write key=value,key=value)", i);

    char buf[CONFIG_TEXT_MAX];
    memcpy(buf, text, len + 1);
    VptConfig c = vpt_config_default();
    int seen[K_COUNT] = {0};
    int index = 0;
    char *p = buf;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        if (!*p) return vpt_fail("empty item at position %d (stray ',')", index + 1);
        char *eq = strchr(p, '=');
        if (!eq) {
            int s = find_alias(p);
            if (s < 0)
                return vpt_fail("'%s' is neither key=value (keys: %s) nor a thesis name (%s)", p, KEYS_LIST,
                                ALIAS_LIST);
            if (index > 0) return vpt_fail("thesis name '%s' must come first, before any key=value", p);
            c.regen = schedules[s].regen;
            c.reorder = schedules[s].reorder;
            c.kernels = schedules[s].kernels;
            c.threshold = schedules[s].threshold;
        } else {
            *eq = '\0';
            const char *key = p, *val = eq + 1;
            int k = find_name(key_names, K_COUNT, key);
            if (k < 0) return vpt_fail("unknown key '%s' (keys: %s)", key, KEYS_LIST);
            if (seen[k]) return vpt_fail("key %s given twice", key);
            seen[k] = 1;
            if (!*val) return vpt_fail("%s=: empty value", key);
            if (set_field(&c, k, val)) return -1;
        }
        index++;
        if (!comma) break;
        p = comma + 1;
    }
    *out = c;
    return 0;
}

int vpt_config_parse(const char *text, VptConfig *out)
{
    if (parse(text, out) == 0) return 0;
    vpt_error_prefix("config '%.200s'", text ? text : "");
    return -1;
}

/* ---- constraints ------------------------------------------------------ */

static int check_domains(const VptConfig *c)
{
    if ((int)c->regen < 0 || (int)c->regen >= COUNT(regen_names))
        return vpt_fail("regen=%d is not a regeneration level", (int)c->regen);
    if ((int)c->reorder < 0 || (int)c->reorder >= COUNT(reorder_names))
        return vpt_fail("reorder=%d is not a reordering", (int)c->reorder);
    if ((int)c->kernels < 0 || (int)c->kernels >= COUNT(kernels_names))
        return vpt_fail("kernels=%d is not single or multi", (int)c->kernels);
    if ((int)c->sortkey < 0 || (int)c->sortkey >= COUNT(sortkey_names))
        return vpt_fail("sortkey=%d is not a sort key", (int)c->sortkey);
    if (!maxrreg_ok(c->maxrregcount))
        return vpt_fail("maxrregcount=%d: out of range (allowed: %s)", c->maxrregcount, MAXRREG_ALLOWED);
    if (!ppt_ok(c->ppt)) return vpt_fail("ppt=%d: not allowed (allowed: %s)", c->ppt, PPT_ALLOWED);
    if (!block_ok(c->block)) return vpt_fail("block=%d: not allowed (allowed: %s)", c->block, BLOCK_ALLOWED);
    if (!grid_ok(c->grid)) return vpt_fail("grid=%d: out of range (allowed: %s)", c->grid, GRID_ALLOWED);
    if (!threshold_ok(c->threshold))
        return vpt_fail("threshold=%d: out of range (allowed: %s)", c->threshold, THRESHOLD_ALLOWED);
    if (!ppt_ok(c->lookahead))
        return vpt_fail("lookahead=%d: not allowed (allowed: %s)", c->lookahead, LOOKAHEAD_ALLOWED);
    if (!coop_ok(c->coop)) return vpt_fail("coop=%d: not allowed (allowed: %s)", c->coop, COOP_ALLOWED);
    if ((int)c->flights < 0 || (int)c->flights >= COUNT(flights_names))
        return vpt_fail("flights=%d is not sync or async", (int)c->flights);
    if ((int)c->paths < 0 || (int)c->paths >= COUNT(paths_names))
        return vpt_fail("paths=%d is not sample or pixel", (int)c->paths);
    if (!majorant_ok(c->majorant))
        return vpt_fail("majorant %d is not one of 0 (global), 4, 8, 16, 32, 64, 128 (grids), -1 (skip)", c->majorant);
    if ((int)c->density < 0 || (int)c->density >= COUNT(density_names))
        return vpt_fail("density=%d is not a density format", (int)c->density);
    if (c->sparse != 0 && c->sparse != 1) return vpt_fail("volume=%d is not 0 (dense) or 1 (sparse)", c->sparse);
    if ((int)c->transmittance < 0 || (int)c->transmittance >= COUNT(transmittance_names))
        return vpt_fail("transmittance=%d is not none, delta, ratio or residual", (int)c->transmittance);
    return 0;
}

static int check_rules(const VptConfig *c)
{
    const char *regen = vpt_regen_name(c->regen), *reorder = vpt_reorder_name(c->reorder);
    int multi = c->kernels == VPT_KERNELS_MULTI;

    if (c->regen == VPT_REGEN_DEVICE && !multi)
        return vpt_fail("regen=device needs kernels=multi (got kernels=single)");
    if (multi && c->regen != VPT_REGEN_NONE && c->regen != VPT_REGEN_DEVICE)
        return vpt_fail("kernels=multi allows regen none|device only (got regen=%s)", regen);
    if (multi && c->reorder != VPT_REORDER_NONE && c->reorder != VPT_REORDER_COMPACT)
        return vpt_fail("kernels=multi allows reorder none|compact only (got reorder=%s)", reorder);
    if (multi && (c->regen == VPT_REGEN_DEVICE) != (c->reorder == VPT_REORDER_COMPACT))
        return vpt_fail("kernels=multi needs regen=device and reorder=compact together (streamingMK) or "
                        "neither (naiveMK) (got regen=%s, reorder=%s)",
                        regen, reorder);
    if (!multi && c->reorder != VPT_REORDER_NONE && c->regen != VPT_REGEN_BLOCK)
        return vpt_fail("reorder=%s needs regen=block with kernels=single (got regen=%s)", reorder, regen);
    if (c->threshold > 0 && c->regen != VPT_REGEN_WARP && c->regen != VPT_REGEN_BLOCK)
        return vpt_fail("threshold=%d needs regen warp|block (got regen=%s)", c->threshold, regen);
    if (c->sortkey == VPT_SORTKEY_TERMINATION && c->reorder != VPT_REORDER_MORTON &&
        c->reorder != VPT_REORDER_MORTON_DELAYED)
        return vpt_fail("sortkey=termination needs reorder morton|morton_delayed (got reorder=%s)", reorder);
    if (c->grid > 0 && !vpt_config_is_persistent(c))
        return vpt_fail("grid=%d needs a persistent kernel, regen thread|warp|block (got regen=%s, kernels=%s)",
                        c->grid, regen, vpt_kernels_name(c->kernels));
    if (vpt_majorant_skips(c->majorant) && c->sparse)
        return vpt_fail("majorant=skip reads its distance map from the dense texture's second channel: it needs "
                        "volume=dense (got volume=sparse)");
    if (c->maxrregcount > 0) {
        long per_thread = (c->maxrregcount + VPT_REG_ALLOC_UNIT - 1) / VPT_REG_ALLOC_UNIT * VPT_REG_ALLOC_UNIT;
        long total = per_thread * c->block;
        if (total > VPT_SM_REGISTERS) {
            /* Name what would fit: the largest block at this budget, the
             * largest budget at this block. */
            long max_block = VPT_SM_REGISTERS / per_thread / 32 * 32;
            long max_regs = VPT_SM_REGISTERS / c->block / VPT_REG_ALLOC_UNIT * VPT_REG_ALLOC_UNIT;
            return vpt_fail("maxrregcount x block must fit the %d-register file of one SM (got maxrregcount=%d, "
                            "allocated as %ld per thread, x block=%d = %ld registers); allowed: block=32..%ld at "
                            "maxrregcount=%d, or maxrregcount=24..%ld (or 0) at block=%d",
                            VPT_SM_REGISTERS, c->maxrregcount, per_thread, c->block, total, max_block,
                            c->maxrregcount, max_regs, c->block);
        }
    }
    if (c->reorder != VPT_REORDER_NONE && (long)c->ppt * c->block > VPT_MAX_PATH_SLOTS)
        return vpt_fail("ppt x block must be at most %d path slots with reorder=%s (got ppt=%d x block=%d)",
                        VPT_MAX_PATH_SLOTS, reorder, c->ppt, c->block);
    if (c->flights == VPT_FLIGHTS_ASYNC && c->regen != VPT_REGEN_THREAD && c->regen != VPT_REGEN_WARP)
        return vpt_fail("flights=async needs regen thread|warp: each lane takes its own next path (got regen=%s)",
                        regen);
    if (c->flights == VPT_FLIGHTS_ASYNC && c->coop != 0)
        return vpt_fail("flights=async needs coop=0: cooperative flights are the tail of a synchronous round (got "
                        "coop=%d)",
                        c->coop);
    if (c->flights == VPT_FLIGHTS_ASYNC && c->ppt != 1)
        return vpt_fail("flights=async needs ppt=1: a lane flies one path (got ppt=%d)", c->ppt);
    return 0;
}

int vpt_config_check(const VptConfig *c)
{
    if (check_domains(c) == 0 && check_rules(c) == 0) return 0;
    char text[VPT_CONFIG_STR_MAX];
    vpt_config_format(c, text, sizeof text);
    vpt_error_prefix("config %s", text);
    return -1;
}

/* ---- the thesis' variants --------------------------------------------- */

int vpt_config_thesis_set(VptConfig *out, int max)
{
    int n = 0;
    for (int i = 0; i < VPT_SCHEDULE_COUNT && n < max; i++) {
        VptConfig c = vpt_config_default(); /* block 256, ppt 1, maxrregcount 0, grid 0 */
        c.regen = schedules[i].regen;
        c.reorder = schedules[i].reorder;
        c.kernels = schedules[i].kernels;
        c.threshold = schedules[i].threshold;
        out[n++] = c;
    }
    return n;
}
