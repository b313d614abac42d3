/* The replay evaluator: answers from a recorded run on a simulated clock. */
#include "tuner/eval.h"

#include "base/error.h"
#include "base/file.h"
#include "tuner/rows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Recordings are JSON lines of about 1 KB per config; a space of a few ten
 * thousand configs stays far below this. */
#define REPLAY_MAX_BYTES ((size_t)1 << 30)

typedef struct {
    uint64_t key;
    size_t index;
} KeyIndex;

typedef struct {
    VptEvalRecord *rec;
    size_t n, cap;
    KeyIndex *by_key; /* sorted by key */
} RowSet;

struct VptReplay {
    char path[512];
    VptTuneProvenance prov;
    RowSet full, cheap;
    /* compiled[i]: config of full.rec[i] compiled since the reset; configs
     * recorded only at fidelity 0 use cheap_compiled. */
    unsigned char *compiled, *cheap_compiled;
    double clock;
    double cheap_fraction;
};

static int cmp_key(const void *a, const void *b)
{
    uint64_t x = ((const KeyIndex *)a)->key, y = ((const KeyIndex *)b)->key;
    if (x != y) return (x > y) - (x < y);
    size_t i = ((const KeyIndex *)a)->index, j = ((const KeyIndex *)b)->index;
    return (i > j) - (i < j);
}

static long rowset_find(const RowSet *s, uint64_t key)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->by_key[mid].key < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < s->n && s->by_key[lo].key == key ? (long)s->by_key[lo].index : -1;
}

static int rowset_push(RowSet *s, const VptEvalRecord *r)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        VptEvalRecord *p = vpt_realloc(s->rec, cap * sizeof *p);
        if (!p) return -1;
        s->rec = p;
        s->cap = cap;
    }
    s->rec[s->n++] = *r;
    return 0;
}

/* Sorts the index and drops repeated configs, keeping each one's first row. */
static int rowset_index(RowSet *s)
{
    s->by_key = vpt_malloc((s->n ? s->n : 1) * sizeof *s->by_key);
    if (!s->by_key) return -1;
    for (size_t i = 0; i < s->n; i++) {
        s->by_key[i].key = vpt_rows_config_key(&s->rec[i].config);
        s->by_key[i].index = i;
    }
    qsort(s->by_key, s->n, sizeof *s->by_key, cmp_key);
    unsigned char *drop = vpt_calloc(s->n ? s->n : 1, 1);
    if (!drop) return -1;
    for (size_t i = 1; i < s->n; i++)
        if (s->by_key[i].key == s->by_key[i - 1].key) drop[s->by_key[i].index] = 1;
    size_t *newpos = vpt_malloc((s->n ? s->n : 1) * sizeof *newpos);
    if (!newpos) {
        free(drop);
        return -1;
    }
    size_t m = 0;
    for (size_t i = 0; i < s->n; i++) {
        newpos[i] = m;
        if (!drop[i]) s->rec[m++] = s->rec[i];
    }
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++)
        if (!drop[s->by_key[i].index]) {
            s->by_key[k] = s->by_key[i];
            s->by_key[k].index = newpos[s->by_key[i].index];
            k++;
        }
    s->n = m;
    free(drop);
    free(newpos);
    return 0;
}

static void rowset_free(RowSet *s)
{
    free(s->rec);
    free(s->by_key);
}

void vpt_replay_destroy(VptReplay *r)
{
    if (!r) return;
    rowset_free(&r->full);
    rowset_free(&r->cheap);
    free(r->compiled);
    free(r->cheap_compiled);
    free(r);
}

static int parse_rows(VptReplay *r, char *data, size_t size)
{
    size_t line_no = 0;
    int have_prov = 0;
    char *p = data, *end = data + size;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *eol = nl ? nl : end;
        line_no++;
        *eol = '\0';
        char *line = p;
        p = eol + 1;
        while (*line == ' ' || *line == '\t' || *line == '\r') line++;
        if (!*line) continue;
        json_error_t jerr;
        json_t *row = json_loads(line, JSON_REJECT_DUPLICATES, &jerr);
        if (!row) return vpt_fail("%s:%zu: not valid JSON (%s)", r->path, line_no, jerr.text);
        const char *kind = json_string_value(json_object_get(row, "kind"));
        if (!json_is_object(row) || !kind) {
            json_decref(row);
            return vpt_fail("%s:%zu: not a row object with a \"kind\"", r->path, line_no);
        }
        if (strcmp(kind, "result") != 0) { /* headers, notes: not evaluations */
            json_decref(row);
            continue;
        }
        const char *schema = json_string_value(json_object_get(row, "schema"));
        if (!schema || strcmp(schema, VPT_RESULT_SCHEMA) != 0) {
            vpt_fail("%s:%zu: \"schema\" is '%.64s', expected '%s'", r->path, line_no, schema ? schema : "(none)",
                     VPT_RESULT_SCHEMA);
            json_decref(row);
            return -1;
        }
        VptTuneProvenance prov;
        VptEvalRecord rec;
        if (vpt_rows_provenance_parse(row, &prov) || vpt_rows_record_parse(row, 0, &rec)) {
            json_decref(row);
            vpt_error_prefix("%s:%zu", r->path, line_no);
            return -1;
        }
        json_decref(row);
        if (!have_prov) {
            r->prov = prov;
            have_prov = 1;
        } else if (vpt_tune_provenance_match(&r->prov, &prov)) {
            vpt_error_prefix("%s:%zu: a row of another run (never mixed)", r->path, line_no);
            return -1;
        }
        if (rowset_push(rec.fidelity == 0 ? &r->cheap : &r->full, &rec)) return -1;
    }
    if (r->full.n == 0) return vpt_fail("%s: no full-fidelity result rows", r->path);
    return 0;
}

VptReplay *vpt_replay_open(const char *path)
{
    VptReplay *r = vpt_calloc(1, sizeof *r);
    if (!r) return NULL;
    snprintf(r->path, sizeof r->path, "%s", path);
    r->cheap_fraction = 0.125;
    char *data = NULL;
    size_t size = 0;
    if (vpt_read_file(path, REPLAY_MAX_BYTES, &data, &size)) goto fail;
    int rc = parse_rows(r, data, size);
    free(data);
    if (rc || rowset_index(&r->full) || rowset_index(&r->cheap)) goto fail;
    r->compiled = vpt_calloc(r->full.n ? r->full.n : 1, 1);
    r->cheap_compiled = vpt_calloc(r->cheap.n ? r->cheap.n : 1, 1);
    if (!r->compiled || !r->cheap_compiled) goto fail;
    return r;
fail:
    vpt_replay_destroy(r);
    return NULL;
}

static double nz(double x)
{
    return isfinite(x) ? x : 0;
}

int vpt_replay_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    VptReplay *r = ctx;
    uint64_t key = vpt_rows_config_key(c);
    long fi = rowset_find(&r->full, key), ci = rowset_find(&r->cheap, key);
    char text[VPT_CONFIG_STR_MAX];
    if (fidelity == 1 && fi < 0) {
        vpt_config_format(c, text, sizeof text);
        return vpt_fail("replay %s: config %s was not recorded", r->path, text);
    }
    if (fidelity == 0 && fi < 0 && ci < 0) {
        vpt_config_format(c, text, sizeof text);
        return vpt_fail("replay %s: config %s was not recorded at any fidelity", r->path, text);
    }
    int compiled = (fi >= 0 && r->compiled[fi]) || (ci >= 0 && r->cheap_compiled[ci]);
    if (fidelity == 1 || ci >= 0) {
        *out = fidelity == 1 ? r->full.rec[fi] : r->cheap.rec[ci];
    } else {
        /* derived fidelity 0: see eval.h */
        *out = r->full.rec[fi];
        out->fidelity = 0;
        double f = r->cheap_fraction;
        out->time_ms *= f;
        out->time_ms_spread *= f;
        out->measure_s *= f;
        if (out->status == VPT_STATUS_OK) snprintf(out->reason, sizeof out->reason, "derived fidelity 0");
    }
    out->cost_s = (compiled ? 0 : nz(out->compile_s)) + nz(out->measure_s);
    if (fi >= 0) r->compiled[fi] = 1;
    if (ci >= 0) r->cheap_compiled[ci] = 1;
    r->clock += out->cost_s;
    return 0;
}

double vpt_replay_clock(const VptReplay *r)
{
    return r->clock;
}

void vpt_replay_reset(VptReplay *r)
{
    r->clock = 0;
    memset(r->compiled, 0, r->full.n ? r->full.n : 1);
    memset(r->cheap_compiled, 0, r->cheap.n ? r->cheap.n : 1);
}

void vpt_replay_set_cheap_fraction(VptReplay *r, double fraction)
{
    VPT_ASSERT(fraction > 0 && fraction <= 1);
    r->cheap_fraction = fraction;
}

const VptTuneProvenance *vpt_replay_provenance(const VptReplay *r)
{
    return &r->prov;
}

size_t vpt_replay_count(const VptReplay *r)
{
    return r->full.n;
}

const VptEvalRecord *vpt_replay_record(const VptReplay *r, size_t i)
{
    VPT_ASSERT(i < r->full.n);
    return &r->full.rec[i];
}

const VptEvalRecord *vpt_replay_find(const VptReplay *r, const VptConfig *c)
{
    long i = rowset_find(&r->full, vpt_rows_config_key(c));
    return i < 0 ? NULL : &r->full.rec[i];
}

VptSpace *vpt_replay_space(const VptReplay *r, size_t *rejected)
{
    VptConfig *cfgs = vpt_malloc(r->full.n * sizeof *cfgs);
    if (!cfgs) return NULL;
    for (size_t i = 0; i < r->full.n; i++) cfgs[i] = r->full.rec[i].config;
    VptSpace *s = vpt_space_create_from_configs(cfgs, r->full.n, rejected);
    free(cfgs);
    if (!s) vpt_error_prefix("replay %s", r->path);
    return s;
}
