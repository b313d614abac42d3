/* The search space: domains, members, and the moves strategies make. */
#include "tuner/space.h"

#include "base/error.h"
#include "base/parse.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The largest domain a space can have: enough for every value codegen allows
 * in any dimension (maxrregcount has 233), so a recorded run never overflows. */
#define DOM_MAX 256

struct VptSpace {
    int dom_n[VPT_DIM_COUNT];
    int dom[VPT_DIM_COUNT][DOM_MAX]; /* ascending */
    uint64_t stride[VPT_DIM_COUNT];
    size_t n;
    VptConfig *points;
    uint8_t (*coords)[VPT_DIM_COUNT];
    uint64_t *ids; /* ascending: member i has the i-th smallest id */
};

static const char *const dim_names[VPT_DIM_COUNT] = {
    "schedule", "maxrregcount", "ppt", "block", "grid", "threshold", "sortkey", "lookahead", "coop", "flights",
    "majorant", "density",
};

/* The default domains (issue 4). */
static const int def_maxrreg[] = {0, 32, 40, 48, 64, 80, 96, 128, 168, 255};
static const int def_ppt[] = {1, 2, 4};
static const int def_block[] = {32, 64, 128, 256, 512, 1024};
static const int def_grid[] = {0, 1, 2, 4, 8};
static const int def_threshold[] = {0, 25, 50, 75, 100};
static const int def_sortkey[] = {VPT_SORTKEY_POSITION, VPT_SORTKEY_TERMINATION};
static const int def_lookahead[] = {1, 2, 4};
static const int def_coop[] = {0, 2, 4, 8};
static const int def_flights[] = {VPT_FLIGHTS_SYNC, VPT_FLIGHTS_ASYNC};
/* The schedule space's estimator: the thesis' global majorant, f32 texels. */
static const int def_majorant[] = {0};
static const int def_density[] = {VPT_DENSITY_F32};

/* Dimensions with an "off" value that repairs may fall back to, and that
 * value. coop, ppt and flights come last and serve only spaces that hold
 * flights=async, the one value that constrains them: in a recorded space a
 * repair lands on whatever member it can, and three more ways to reach one
 * would change the moves, hence the replays, of every recording made
 * without it. */
static const VptDim repairable[] = {VPT_DIM_MAXRREGCOUNT, VPT_DIM_GRID, VPT_DIM_THRESHOLD, VPT_DIM_SORTKEY,
                                    VPT_DIM_COOP,         VPT_DIM_PPT,  VPT_DIM_FLIGHTS};
static const int repairable_off[] = {0, 0, 0, VPT_SORTKEY_POSITION, 0, 1, VPT_FLIGHTS_SYNC};
#define N_REPAIRABLE 7
#define N_REPAIRABLE_SYNC 4 /* the first four: a space without flights=async */

const char *vpt_space_dim_name(VptDim d)
{
    return (int)d >= 0 && d < VPT_DIM_COUNT ? dim_names[d] : "?";
}

int vpt_space_dim_parse(const char *name, VptDim *out)
{
    for (int d = 0; d < VPT_DIM_COUNT; d++)
        if (strcmp(name, dim_names[d]) == 0) {
            *out = (VptDim)d;
            return 0;
        }
    return vpt_fail("unknown space dimension '%s' (dimensions: schedule, maxrregcount, ppt, block, grid, "
                    "threshold, sortkey, lookahead, coop, flights, majorant, density)",
                    name);
}

static int config_value(const VptConfig *c, VptDim d)
{
    switch (d) {
    case VPT_DIM_SCHEDULE: return vpt_config_schedule_index(c);
    case VPT_DIM_MAXRREGCOUNT: return c->maxrregcount;
    case VPT_DIM_PPT: return c->ppt;
    case VPT_DIM_BLOCK: return c->block;
    case VPT_DIM_GRID: return c->grid;
    case VPT_DIM_THRESHOLD: return c->threshold;
    case VPT_DIM_SORTKEY: return (int)c->sortkey;
    case VPT_DIM_LOOKAHEAD: return c->lookahead;
    case VPT_DIM_COOP: return c->coop;
    case VPT_DIM_FLIGHTS: return (int)c->flights;
    case VPT_DIM_MAJORANT: return c->majorant;
    case VPT_DIM_DENSITY: return (int)c->density;
    default: VPT_ASSERT(0);
    }
}

static VptConfig coords_config(const VptSpace *s, const uint8_t *co)
{
    const VptSchedule *sch;
    vpt_config_schedules(&sch);
    const VptSchedule *x = &sch[s->dom[VPT_DIM_SCHEDULE][co[VPT_DIM_SCHEDULE]]];
    VptConfig c = {
        .regen = x->regen,
        .reorder = x->reorder,
        .kernels = x->kernels,
        .maxrregcount = s->dom[VPT_DIM_MAXRREGCOUNT][co[VPT_DIM_MAXRREGCOUNT]],
        .ppt = s->dom[VPT_DIM_PPT][co[VPT_DIM_PPT]],
        .block = s->dom[VPT_DIM_BLOCK][co[VPT_DIM_BLOCK]],
        .grid = s->dom[VPT_DIM_GRID][co[VPT_DIM_GRID]],
        .threshold = s->dom[VPT_DIM_THRESHOLD][co[VPT_DIM_THRESHOLD]],
        .sortkey = (VptSortKey)s->dom[VPT_DIM_SORTKEY][co[VPT_DIM_SORTKEY]],
        .lookahead = s->dom[VPT_DIM_LOOKAHEAD][co[VPT_DIM_LOOKAHEAD]],
        .coop = s->dom[VPT_DIM_COOP][co[VPT_DIM_COOP]],
        .flights = (VptFlights)s->dom[VPT_DIM_FLIGHTS][co[VPT_DIM_FLIGHTS]],
        .majorant = s->dom[VPT_DIM_MAJORANT][co[VPT_DIM_MAJORANT]],
        .density = (VptDensityFormat)s->dom[VPT_DIM_DENSITY][co[VPT_DIM_DENSITY]],
    };
    return c;
}

static int domain_pos(const VptSpace *s, VptDim d, int value)
{
    int lo = 0, hi = s->dom_n[d] - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (s->dom[d][mid] == value) return mid;
        if (s->dom[d][mid] < value) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

static void compute_strides(VptSpace *s)
{
    uint64_t st = 1;
    for (int d = VPT_DIM_COUNT - 1; d >= 0; d--) {
        s->stride[d] = st;
        st *= (uint64_t)s->dom_n[d];
    }
}

static uint64_t coords_id(const VptSpace *s, const uint8_t *co)
{
    uint64_t id = 0;
    for (int d = 0; d < VPT_DIM_COUNT; d++) id += co[d] * s->stride[d];
    return id;
}

static long find_id(const VptSpace *s, uint64_t id)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->ids[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < s->n && s->ids[lo] == id ? (long)lo : -1;
}

static long find_coords(const VptSpace *s, const uint8_t *co)
{
    return find_id(s, coords_id(s, co));
}

static VptSpace *space_alloc(size_t cap)
{
    VptSpace *s = vpt_calloc(1, sizeof *s);
    if (!s) return NULL;
    if (cap == 0) cap = 1;
    s->points = vpt_calloc(cap, sizeof *s->points);
    s->coords = vpt_calloc(cap, sizeof *s->coords);
    s->ids = vpt_calloc(cap, sizeof *s->ids);
    if (!s->points || !s->coords || !s->ids) {
        vpt_space_destroy(s);
        return NULL;
    }
    return s;
}

void vpt_space_destroy(VptSpace *s)
{
    if (!s) return;
    free(s->points);
    free(s->coords);
    free(s->ids);
    free(s);
}

static void set_domain(VptSpace *s, VptDim d, const int *vals, int n)
{
    memcpy(s->dom[d], vals, (size_t)n * sizeof *vals);
    s->dom_n[d] = n;
}

VptSpace *vpt_space_create(void)
{
    int sched[VPT_SCHEDULE_COUNT];
    for (int i = 0; i < VPT_SCHEDULE_COUNT; i++) sched[i] = i;
#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
    int n_max = VPT_SCHEDULE_COUNT * N(def_maxrreg) * N(def_ppt) * N(def_block) * N(def_grid) *
                N(def_threshold) * N(def_sortkey) * N(def_lookahead) * N(def_coop) * N(def_flights) * N(def_majorant) *
                N(def_density);
    VptSpace *s = space_alloc((size_t)n_max);
    if (!s) return NULL;
    set_domain(s, VPT_DIM_SCHEDULE, sched, VPT_SCHEDULE_COUNT);
    set_domain(s, VPT_DIM_MAXRREGCOUNT, def_maxrreg, N(def_maxrreg));
    set_domain(s, VPT_DIM_PPT, def_ppt, N(def_ppt));
    set_domain(s, VPT_DIM_BLOCK, def_block, N(def_block));
    set_domain(s, VPT_DIM_GRID, def_grid, N(def_grid));
    set_domain(s, VPT_DIM_THRESHOLD, def_threshold, N(def_threshold));
    set_domain(s, VPT_DIM_SORTKEY, def_sortkey, N(def_sortkey));
    set_domain(s, VPT_DIM_LOOKAHEAD, def_lookahead, N(def_lookahead));
    set_domain(s, VPT_DIM_COOP, def_coop, N(def_coop));
    set_domain(s, VPT_DIM_FLIGHTS, def_flights, N(def_flights));
    set_domain(s, VPT_DIM_MAJORANT, def_majorant, N(def_majorant));
    set_domain(s, VPT_DIM_DENSITY, def_density, N(def_density));
#undef N
    compute_strides(s);
    /* Walk the product in id order, keeping what codegen accepts. */
    uint8_t co[VPT_DIM_COUNT] = {0};
    for (;;) {
        VptConfig c = coords_config(s, co);
        if (vpt_config_check(&c) == 0) {
            s->points[s->n] = c;
            memcpy(s->coords[s->n], co, sizeof co);
            s->ids[s->n] = coords_id(s, co);
            s->n++;
        }
        int d = VPT_DIM_COUNT - 1;
        while (d >= 0 && ++co[d] == s->dom_n[d]) co[d--] = 0;
        if (d < 0) break;
    }
    vpt_error_clear();
    return s;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

VptSpace *vpt_space_create_from_configs(const VptConfig *configs, size_t n, size_t *rejected)
{
    size_t bad = 0;
    VptSpace *s = space_alloc(n);
    if (!s) return NULL;
    int *vals = vpt_malloc((n ? n : 1) * sizeof *vals);
    if (!vals) {
        vpt_space_destroy(s);
        return NULL;
    }
    /* Valid configs only; their values per dimension make the domains. */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (vpt_config_check(&configs[i]) != 0) {
            bad++;
            continue;
        }
        s->points[m++] = configs[i];
    }
    vpt_error_clear();
    if (rejected) *rejected = bad;
    if (m == 0) {
        free(vals);
        vpt_space_destroy(s);
        vpt_fail("no valid config among the %zu given", n);
        return NULL;
    }
    for (int d = 0; d < VPT_DIM_COUNT; d++) {
        for (size_t i = 0; i < m; i++) vals[i] = config_value(&s->points[i], (VptDim)d);
        qsort(vals, m, sizeof *vals, cmp_int);
        int k = 0;
        for (size_t i = 0; i < m; i++)
            if (i == 0 || vals[i] != vals[i - 1]) {
                VPT_ASSERT(k < DOM_MAX); /* codegen's domains are smaller */
                s->dom[d][k++] = vals[i];
            }
        s->dom_n[d] = k;
    }
    free(vals);
    compute_strides(s);
    /* Ids, sorted and deduplicated; points and coords rebuilt from ids. */
    for (size_t i = 0; i < m; i++) {
        uint8_t co[VPT_DIM_COUNT];
        for (int d = 0; d < VPT_DIM_COUNT; d++)
            co[d] = (uint8_t)domain_pos(s, (VptDim)d, config_value(&s->points[i], (VptDim)d));
        s->ids[i] = coords_id(s, co);
    }
    qsort(s->ids, m, sizeof *s->ids, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < m; i++)
        if (i == 0 || s->ids[i] != s->ids[i - 1]) s->ids[u++] = s->ids[i];
    s->n = u;
    for (size_t i = 0; i < u; i++) {
        uint64_t id = s->ids[i];
        for (int d = 0; d < VPT_DIM_COUNT; d++) {
            s->coords[i][d] = (uint8_t)(id / s->stride[d]);
            id %= s->stride[d];
        }
        s->points[i] = coords_config(s, s->coords[i]);
    }
    return s;
}

static int parse_dim_value(VptDim d, const char *tok, int *out)
{
    if (d == VPT_DIM_SCHEDULE) {
        const VptSchedule *sch;
        int n = vpt_config_schedules(&sch);
        for (int i = 0; i < n; i++)
            if (strcasecmp(tok, sch[i].name) == 0) {
                *out = i;
                return 0;
            }
        return vpt_fail("schedule '%s' is not one of naiveSK, naiveMK, regenerationSK-thread, "
                        "regenerationSK-warp, regenerationSK-block, streamingSK, streamingMK, "
                        "streamingSK-morton, sortingSK",
                        tok);
    }
    if (d == VPT_DIM_SORTKEY) {
        if (strcmp(tok, "position") == 0) *out = VPT_SORTKEY_POSITION;
        else if (strcmp(tok, "termination") == 0) *out = VPT_SORTKEY_TERMINATION;
        else return vpt_fail("sortkey '%s' is not position or termination", tok);
        return 0;
    }
    if (d == VPT_DIM_FLIGHTS) {
        if (strcmp(tok, "sync") == 0) *out = VPT_FLIGHTS_SYNC;
        else if (strcmp(tok, "async") == 0) *out = VPT_FLIGHTS_ASYNC;
        else return vpt_fail("flights '%s' is not sync or async", tok);
        return 0;
    }
    if (d == VPT_DIM_MAJORANT) {
        const int *cells;
        const int n = vpt_majorant_cells(&cells);
        for (int i = 0; i < n; i++)
            if (strcmp(tok, vpt_majorant_name(cells[i])) == 0) {
                *out = cells[i];
                return 0;
            }
        return vpt_fail("majorant '%s' is not global, grid4, grid8, ..., grid128 or skip", tok);
    }
    if (d == VPT_DIM_DENSITY) {
        VptDensityFormat f;
        if (vpt_density_format_parse(tok, &f)) return vpt_fail("density '%s' is not f32, f16, u16 or u8", tok);
        *out = (int)f;
        return 0;
    }
    return vpt_parse_int(tok, 0, 1 << 20, dim_names[d], out);
}

static void format_value(const VptSpace *s, VptDim d, int i, char *buf, size_t size)
{
    int v = s->dom[d][i];
    if (d == VPT_DIM_SCHEDULE) {
        const VptSchedule *sch;
        vpt_config_schedules(&sch);
        snprintf(buf, size, "%s", sch[v].name);
    } else if (d == VPT_DIM_SORTKEY) {
        snprintf(buf, size, "%s", vpt_sortkey_name((VptSortKey)v));
    } else if (d == VPT_DIM_FLIGHTS) {
        snprintf(buf, size, "%s", vpt_flights_name((VptFlights)v));
    } else if (d == VPT_DIM_MAJORANT) {
        snprintf(buf, size, "%s", vpt_majorant_name(v));
    } else if (d == VPT_DIM_DENSITY) {
        snprintf(buf, size, "%s", vpt_density_name((VptDensityFormat)v));
    } else {
        snprintf(buf, size, "%d", v);
    }
}

static void format_domain(const VptSpace *s, VptDim d, char *buf, size_t size)
{
    buf[0] = '\0';
    for (int i = 0; i < s->dom_n[d]; i++) {
        char v[64];
        format_value(s, d, i, v, sizeof v);
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s", i ? "," : "", v);
    }
}

int vpt_space_restrict(VptSpace *s, const char *dim, const char *values)
{
    VptDim d = VPT_DIM_SCHEDULE;
    if (vpt_space_dim_parse(dim, &d)) return -1;
    char buf[1024];
    if (!values || !*values) return vpt_fail("--space %s: empty value list", dim);
    if (strlen(values) >= sizeof buf) return vpt_fail("--space %s: value list too long", dim);
    strcpy(buf, values);
    int keep[DOM_MAX] = {0};
    int any = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int v, pos;
        if (parse_dim_value(d, tok, &v)) {
            vpt_error_prefix("--space %s", dim);
            return -1;
        }
        if ((pos = domain_pos(s, d, v)) < 0) {
            char dom[2048];
            format_domain(s, d, dom, sizeof dom);
            return vpt_fail("--space %s: %s is not in the domain (%s)", dim, tok, dom);
        }
        keep[pos] = 1;
        any = 1;
    }
    if (!any) return vpt_fail("--space %s: empty value list", dim);
    size_t left = 0;
    for (size_t i = 0; i < s->n; i++) left += keep[s->coords[i][d]];
    if (left == 0) return vpt_fail("--space %s=%s leaves no valid config in the space", dim, values);

    /* New domain and coordinates; the member order is preserved. */
    int remap[DOM_MAX], k = 0;
    for (int i = 0; i < s->dom_n[d]; i++) {
        remap[i] = keep[i] ? k : -1;
        if (keep[i]) s->dom[d][k++] = s->dom[d][i];
    }
    s->dom_n[d] = k;
    compute_strides(s);
    size_t m = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (!keep[s->coords[i][d]]) continue;
        s->points[m] = s->points[i];
        memcpy(s->coords[m], s->coords[i], sizeof s->coords[i]);
        s->coords[m][d] = (uint8_t)remap[s->coords[i][d]];
        s->ids[m] = coords_id(s, s->coords[m]);
        m++;
    }
    s->n = m;
    return 0;
}

int vpt_space_restrict_spec(VptSpace *s, const char *spec)
{
    char dim[64];
    const char *eq = strchr(spec, '=');
    size_t n = eq ? (size_t)(eq - spec) : 0;
    if (!eq || n == 0 || n >= sizeof dim) return vpt_fail("--space: expected DIM=V1,V2,... (got '%s')", spec);
    memcpy(dim, spec, n);
    dim[n] = '\0';
    if (vpt_space_restrict(s, dim, eq + 1)) {
        vpt_error_prefix("--space %s", spec);
        return -1;
    }
    return 0;
}

size_t vpt_space_size(const VptSpace *s)
{
    return s->n;
}

const VptConfig *vpt_space_point(const VptSpace *s, size_t member)
{
    VPT_ASSERT(member < s->n);
    return &s->points[member];
}

long vpt_space_index_of(const VptSpace *s, const VptConfig *c)
{
    uint8_t co[VPT_DIM_COUNT];
    for (int d = 0; d < VPT_DIM_COUNT; d++) {
        int pos = domain_pos(s, (VptDim)d, config_value(c, (VptDim)d));
        if (pos < 0) return -1;
        co[d] = (uint8_t)pos;
    }
    long i = find_coords(s, co);
    /* the schedule dimension folds three fields: confirm the exact config */
    return i >= 0 && vpt_config_equal(&s->points[i], c) ? i : -1;
}

int vpt_space_domain_size(const VptSpace *s, VptDim d)
{
    return s->dom_n[d];
}

int vpt_space_domain_value(const VptSpace *s, VptDim d, int i)
{
    VPT_ASSERT(i >= 0 && i < s->dom_n[d]);
    return s->dom[d][i];
}

void vpt_space_describe(const VptSpace *s, char *buf, size_t size)
{
    if (size == 0) return;
    buf[0] = '\0';
    for (int d = 0; d < VPT_DIM_COUNT; d++) {
        char dom[2048];
        format_domain(s, (VptDim)d, dom, sizeof dom);
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%-13s %s\n", dim_names[d], dom);
    }
    size_t len = strlen(buf);
    snprintf(buf + len, size - len, "%zu valid configs\n", s->n);
}

/* ---- moves -------------------------------------------------------------- */

/* Member for co, repaired without touching the dimensions in `fixed` (a bit
 * mask over VptDim), or -1. */
static long repair(const VptSpace *s, const uint8_t *co, unsigned fixed)
{
    long m = find_coords(s, co);
    if (m >= 0) return m;
    const int nrep = s->dom_n[VPT_DIM_FLIGHTS] > 1 ? N_REPAIRABLE : N_REPAIRABLE_SYNC;
    int off[N_REPAIRABLE];
    for (int r = 0; r < nrep; r++) off[r] = domain_pos(s, repairable[r], repairable_off[r]);
    /* the non-empty subsets of the repairable dimensions, fewest first, then
     * in increasing order (for the first four alone, the order of the table
     * repairs took before flights existed) */
    for (int k = 1; k <= nrep; k++) {
        for (unsigned mask = 1; mask < (1u << nrep); mask++) {
            if (__builtin_popcount(mask) != k) continue;
            uint8_t c2[VPT_DIM_COUNT];
            memcpy(c2, co, sizeof c2);
            int usable = 1;
            for (int r = 0; r < nrep && usable; r++) {
                if (!(mask & (1u << r))) continue;
                VptDim d = repairable[r];
                /* a dimension already off, fixed, or without an off value cannot help */
                if ((fixed & (1u << d)) || off[r] < 0 || c2[d] == off[r]) usable = 0;
                else c2[d] = (uint8_t)off[r];
            }
            if (usable && (m = find_coords(s, c2)) >= 0) return m;
        }
    }
    return -1;
}

/* Dimensions whose every other value is one step away. coop is one: its
 * time is not unimodal in the number of lanes per flight (on manix, H100,
 * coop=2 measured slower than none where coop=4 is the best known), so a
 * step to the adjacent value alone would leave coop=4 out of every
 * descent's reach from a schedule without cooperative flights
 * (docs/decisions/coop-categorical.md). */
static int is_categorical(VptDim d)
{
    return d == VPT_DIM_SCHEDULE || d == VPT_DIM_SORTKEY || d == VPT_DIM_COOP || d == VPT_DIM_FLIGHTS ||
           d == VPT_DIM_MAJORANT || d == VPT_DIM_DENSITY;
}

size_t vpt_space_neighbours_in(const VptSpace *s, size_t member, unsigned dims, size_t *out, size_t max)
{
    VPT_ASSERT(member < s->n);
    const uint8_t *co = s->coords[member];
    /* At most 8 other schedules, 1 other sort key, 3 other coop values, 1
     * other flights, 4 other majorants, 3 other formats and 2 steps in each
     * of the 6 ordered dimensions: 32 candidates, always below the buffer's
     * size. */
    size_t found[VPT_SPACE_MAX_NEIGHBOURS];
    size_t count = 0;
    for (int d = 0; d < VPT_DIM_COUNT; d++) {
        if (!(dims & (1u << d))) continue;
        int n = s->dom_n[d];
        for (int v = 0; v < n; v++) {
            if (v == co[d]) continue;
            if (!is_categorical((VptDim)d) && v != co[d] - 1 && v != co[d] + 1) continue;
            uint8_t c2[VPT_DIM_COUNT];
            memcpy(c2, co, sizeof c2);
            c2[d] = (uint8_t)v;
            long m = repair(s, c2, 1u << d);
            if (m < 0 || (size_t)m == member) continue;
            int dup = 0;
            for (size_t i = 0; i < count && !dup; i++) dup = found[i] == (size_t)m;
            if (dup) continue;
            VPT_ASSERT(count < VPT_SPACE_MAX_NEIGHBOURS);
            found[count++] = (size_t)m;
        }
    }
    memcpy(out, found, (count < max ? count : max) * sizeof *out);
    return count;
}

size_t vpt_space_neighbours(const VptSpace *s, size_t member, size_t *out, size_t max)
{
    return vpt_space_neighbours_in(s, member, VPT_SPACE_ALL_DIMS, out, max);
}

long vpt_space_register_cap(const VptSpace *s, size_t member, double registers)
{
    VPT_ASSERT(member < s->n);
    const int d = VPT_DIM_MAXRREGCOUNT;
    const uint8_t *co = s->coords[member];
    const int now = s->dom[d][co[d]];
    if (!(registers > 0) || (now != 0 && now <= registers)) return -1; /* unknown, or the cap binds */
    int pick = -1;
    for (int v = 0; v < s->dom_n[d]; v++) {
        const int cap = s->dom[d][v];
        if (cap > 0 && cap < registers && (pick < 0 || cap > s->dom[d][pick])) pick = v;
    }
    if (pick < 0) return -1;
    uint8_t c2[VPT_DIM_COUNT];
    memcpy(c2, co, sizeof c2);
    c2[d] = (uint8_t)pick;
    long m = repair(s, c2, 1u << d);
    return m >= 0 && (size_t)m != member ? m : -1;
}

int vpt_space_register_bound(const VptSpace *s, size_t member)
{
    VPT_ASSERT(member < s->n);
    const uint8_t *co = s->coords[member];
    const int cap = s->dom[VPT_DIM_MAXRREGCOUNT][co[VPT_DIM_MAXRREGCOUNT]];
    if (cap > 0) return cap;
    const int bound = VPT_SM_REGISTERS / s->dom[VPT_DIM_BLOCK][co[VPT_DIM_BLOCK]];
    return bound < VPT_SPACE_MAX_REGISTERS ? bound : VPT_SPACE_MAX_REGISTERS;
}

/* The threads of blocks of `block` an SM holds at `cap` registers a lane:
 * as many blocks as its register file holds (VPT_SM_REGISTERS), at most
 * VPT_SPACE_SM_BLOCKS. */
static int resident_threads(int cap, int block)
{
    int blocks = VPT_SM_REGISTERS / (cap * block);
    if (blocks > VPT_SPACE_SM_BLOCKS) blocks = VPT_SPACE_SM_BLOCKS;
    return blocks * block;
}

long vpt_space_cap_lifted(const VptSpace *s, size_t member, int steps)
{
    VPT_ASSERT(member < s->n && steps > 0);
    const int d = VPT_DIM_MAXRREGCOUNT, b = VPT_DIM_BLOCK;
    const int bound = vpt_space_register_bound(s, member);
    int first = 0; /* the domain is increasing: the smallest cap above the bound */
    while (first < s->dom_n[d] && s->dom[d][first] <= bound) first++;
    if (bound >= VPT_SPACE_MAX_REGISTERS || first + steps - 1 >= s->dom_n[d]) return -1;
    uint8_t c2[VPT_DIM_COUNT];
    memcpy(c2, s->coords[member], sizeof c2);
    c2[d] = (uint8_t)(first + steps - 1);
    const int cap = s->dom[d][c2[d]];
    long pick = -1;
    int pick_threads = 0;
    for (int v = c2[b]; v >= 0; v--) { /* the block's domain is increasing too */
        c2[b] = (uint8_t)v;
        const long m = find_coords(s, c2);
        const int threads = resident_threads(cap, s->dom[b][v]);
        if (m >= 0 && threads > pick_threads) {
            pick = m;
            pick_threads = threads;
        }
    }
    return pick;
}

/* Dimensions whose value only matters for some schedules. */
static const VptDim dependent[] = {VPT_DIM_GRID, VPT_DIM_THRESHOLD, VPT_DIM_SORTKEY};
#define N_DEPENDENT 3

/* 1 when dimension d of member m can take another value (all else equal). */
static int can_vary(const VptSpace *s, size_t m, VptDim d)
{
    uint8_t c2[VPT_DIM_COUNT];
    memcpy(c2, s->coords[m], sizeof c2);
    for (int v = 0; v < s->dom_n[d]; v++) {
        if (v == s->coords[m][d]) continue;
        c2[d] = (uint8_t)v;
        if (find_coords(s, c2) >= 0) return 1;
    }
    return 0;
}

static size_t push_unique(size_t *found, size_t count, size_t max, size_t m)
{
    for (size_t i = 0; i < count; i++)
        if (found[i] == m) return count;
    VPT_ASSERT(count < max);
    found[count] = m;
    return count + 1;
}

size_t vpt_space_schedule_moves(const VptSpace *s, size_t member, size_t *out, size_t max)
{
    VPT_ASSERT(member < s->n);
    size_t found[VPT_SPACE_MAX_SCHEDULE_MOVES];
    size_t count = 0;
    size_t plain[VPT_SPACE_MAX_NEIGHBOURS];
    size_t n = vpt_space_neighbours_in(s, member, 1u << VPT_DIM_SCHEDULE, plain, VPT_SPACE_MAX_NEIGHBOURS);
    int fixed_here[N_DEPENDENT];
    for (int k = 0; k < N_DEPENDENT; k++) fixed_here[k] = !can_vary(s, member, dependent[k]);
    for (size_t i = 0; i < n; i++) {
        size_t m = plain[i];
        count = push_unique(found, count, VPT_SPACE_MAX_SCHEDULE_MOVES, m);
        for (int k = 0; k < N_DEPENDENT; k++) {
            VptDim d = dependent[k];
            if (!fixed_here[k] || !can_vary(s, m, d)) continue;
            uint8_t c2[VPT_DIM_COUNT];
            memcpy(c2, s->coords[m], sizeof c2);
            for (int v = 0; v < s->dom_n[d]; v++) {
                if (v == s->coords[m][d]) continue;
                c2[d] = (uint8_t)v;
                long x = find_coords(s, c2);
                if (x >= 0 && (size_t)x != member) count = push_unique(found, count, VPT_SPACE_MAX_SCHEDULE_MOVES, (size_t)x);
            }
        }
    }
    memcpy(out, found, (count < max ? count : max) * sizeof *out);
    return count;
}

long vpt_space_nearest(const VptSpace *s, const VptConfig *c, VptRng *rng)
{
    int pos[VPT_DIM_COUNT];
    for (int d = 0; d < VPT_DIM_COUNT; d++) pos[d] = domain_pos(s, (VptDim)d, config_value(c, (VptDim)d));
    if (vpt_config_schedule_index(c) < 0) pos[VPT_DIM_SCHEDULE] = -1;
    long best = -1;
    int best_dist = VPT_DIM_COUNT + 1;
    uint64_t ties = 0;
    for (size_t i = 0; i < s->n; i++) {
        int dist = 0;
        for (int d = 0; d < VPT_DIM_COUNT; d++) dist += s->coords[i][d] != pos[d];
        if (dist < best_dist) {
            best_dist = dist;
            best = (long)i;
            ties = 1;
        } else if (dist == best_dist && rng && vpt_rng_below(rng, ++ties) == 0) {
            best = (long)i; /* reservoir sampling: uniform among the ties */
        }
    }
    return best;
}

size_t vpt_space_random(const VptSpace *s, VptRng *rng)
{
    return (size_t)vpt_rng_below(rng, s->n);
}

size_t vpt_space_mutate(const VptSpace *s, size_t member, double rate, VptRng *rng)
{
    VPT_ASSERT(member < s->n);
    int movable[VPT_DIM_COUNT], n_movable = 0;
    for (int d = 0; d < VPT_DIM_COUNT; d++)
        if (s->dom_n[d] > 1) movable[n_movable++] = d;
    if (n_movable == 0) return member;
    for (int attempt = 0; attempt < 16; attempt++) {
        uint8_t c2[VPT_DIM_COUNT];
        memcpy(c2, s->coords[member], sizeof c2);
        unsigned changed = 0;
        for (int i = 0; i < n_movable; i++) {
            int d = movable[i];
            if (vpt_rng_uniform(rng) >= rate) continue;
            int v = (int)vpt_rng_below(rng, (uint64_t)s->dom_n[d] - 1);
            c2[d] = (uint8_t)(v >= c2[d] ? v + 1 : v);
            changed |= 1u << d;
        }
        if (!changed) {
            int d = movable[vpt_rng_below(rng, (uint64_t)n_movable)];
            int v = (int)vpt_rng_below(rng, (uint64_t)s->dom_n[d] - 1);
            c2[d] = (uint8_t)(v >= c2[d] ? v + 1 : v);
            changed |= 1u << d;
        }
        long m = repair(s, c2, changed);
        if (m >= 0) return (size_t)m;
    }
    return vpt_space_random(s, rng);
}

size_t vpt_space_crossover(const VptSpace *s, size_t a, size_t b, VptRng *rng)
{
    VPT_ASSERT(a < s->n && b < s->n);
    uint8_t c2[VPT_DIM_COUNT];
    for (int d = 0; d < VPT_DIM_COUNT; d++) {
        /* flights draws only where it varies, so that a space without it
         * (every recorded one) crosses over with the draws it took before */
        if (d == VPT_DIM_FLIGHTS && s->dom_n[d] < 2) c2[d] = s->coords[a][d];
        else c2[d] = (vpt_rng_next(rng) >> 63) ? s->coords[b][d] : s->coords[a][d];
    }
    long m = repair(s, c2, 0);
    if (m >= 0) return (size_t)m;
    return (vpt_rng_next(rng) >> 63) ? b : a;
}
