/* The replay evaluator: answers from a recorded run on a simulated clock. */
#include "tuner/eval.h"

#include "base/error.h"
#include "base/file.h"
#include "tuner/cache.h"
#include "tuner/rows.h"
#include "tuner/tune.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Recordings are JSON lines of about 1 KB per config; a space of a few ten
 * thousand configs stays far below this. */
#define REPLAY_MAX_BYTES ((size_t)1 << 30)

typedef struct {
    uint64_t key;
    size_t index;
} KeyIndex;

typedef struct {
    VptEvalRecord *rec;
    size_t *line; /* rec[i]'s line in the file */
    size_t n, cap;
    KeyIndex *by_key; /* sorted by key */
} RowSet;

struct VptReplay {
    char path[512];
    VptTuneProvenance prov;
    RowSet full, cheap;
    /* ready[i]: simulated time at which the compile of full.rec[i]'s config
     * ends (or ended), NOT_QUEUED while it was never queued since the reset;
     * configs recorded only at fidelity 0 use cheap_ready. */
    double *ready, *cheap_ready;
    /* The simulated compile pool: when each thread is free again, and when
     * the serialized part of compiling is (VPT_COMPILE_SERIAL). */
    VptCompileModel model;
    double *thread_free;
    double section_free;
    int threads;
    /* VPT_COMPILE_SERIAL: each schedule's median recorded compile_s
     * (indexed by vpt_config_schedule_index), NaN when none is recorded. */
    double schedule_compile_s[VPT_SCHEDULE_COUNT];
    double clock;
    double cheap_fraction;
};

#define NOT_QUEUED (-1.0)

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

static int rowset_push(RowSet *s, const VptEvalRecord *r, size_t line)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        VptEvalRecord *p = vpt_realloc(s->rec, cap * sizeof *p);
        if (!p) return -1;
        s->rec = p;
        size_t *l = vpt_realloc(s->line, cap * sizeof *l);
        if (!l) return -1;
        s->line = l;
        s->cap = cap;
    }
    s->line[s->n] = line;
    s->rec[s->n++] = *r;
    return 0;
}

/* A config's key in the index: one fidelity per row set. */
static uint64_t config_key(const VptConfig *c)
{
    return vpt_cache_key(c, 1);
}

/* Sorts the index and drops repeated configs, keeping each one's first row;
 * a repeat that is another measurement is refused (eval.h). */
static int rowset_index(RowSet *s, const char *path)
{
    s->by_key = vpt_malloc((s->n ? s->n : 1) * sizeof *s->by_key);
    if (!s->by_key) return -1;
    for (size_t i = 0; i < s->n; i++) {
        s->by_key[i].key = config_key(&s->rec[i].config);
        s->by_key[i].index = i;
    }
    qsort(s->by_key, s->n, sizeof *s->by_key, cmp_key);
    unsigned char *drop = vpt_calloc(s->n ? s->n : 1, 1);
    if (!drop) return -1;
    for (size_t i = 1, first = 0; i < s->n; i++) {
        if (s->by_key[i].key != s->by_key[i - 1].key) {
            first = i;
            continue;
        }
        const size_t a = s->by_key[first].index, b = s->by_key[i].index;
        if (!vpt_rows_same_measurement(&s->rec[a], &s->rec[b])) {
            free(drop);
            return vpt_rows_conflict(path, s->line[a], &s->rec[a], s->line[b], &s->rec[b]);
        }
        drop[b] = 1;
    }
    size_t *newpos = vpt_malloc((s->n ? s->n : 1) * sizeof *newpos);
    if (!newpos) {
        free(drop);
        return -1;
    }
    size_t m = 0;
    for (size_t i = 0; i < s->n; i++) {
        newpos[i] = m;
        if (!drop[i]) {
            s->line[m] = s->line[i];
            s->rec[m++] = s->rec[i];
        }
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
    free(s->line);
    free(s->by_key);
}

void vpt_replay_destroy(VptReplay *r)
{
    if (!r) return;
    rowset_free(&r->full);
    rowset_free(&r->cheap);
    free(r->ready);
    free(r->cheap_ready);
    free(r->thread_free);
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
        if (rowset_push(rec.fidelity == 0 ? &r->cheap : &r->full, &rec, line_no)) return -1;
    }
    if (r->full.n == 0) return vpt_fail("%s: no full-fidelity result rows", r->path);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Each schedule's median recorded compile_s over the rows of both
 * fidelities (eval.h: why per schedule). */
static int schedule_medians(VptReplay *r)
{
    size_t n = r->full.n + r->cheap.n;
    double *v = vpt_malloc((n ? n : 1) * sizeof *v);
    if (!v) return -1;
    for (int sch = 0; sch < VPT_SCHEDULE_COUNT; sch++) {
        size_t k = 0;
        for (int set = 0; set < 2; set++) {
            const RowSet *rs = set ? &r->cheap : &r->full;
            for (size_t i = 0; i < rs->n; i++)
                if (vpt_config_schedule_index(&rs->rec[i].config) == sch && isfinite(rs->rec[i].compile_s) &&
                    rs->rec[i].compile_s >= 0)
                    v[k++] = rs->rec[i].compile_s;
        }
        if (k == 0) {
            r->schedule_compile_s[sch] = NAN;
            continue;
        }
        qsort(v, k, sizeof *v, cmp_double);
        r->schedule_compile_s[sch] = k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
    }
    free(v);
    return 0;
}

/* A recording committed compressed (gzip, e.g. a 2,000-config fixture) is
 * inflated here, so that every reader of recordings takes both: when *data
 * starts with gzip's magic bytes it is replaced by its inflated content (at
 * most REPLAY_MAX_BYTES; further gzip members are read too). Anything else
 * is left as it is. */
static int gunzip_if_gzip(const char *path, char **data, size_t *size)
{
    const unsigned char *in = (const unsigned char *)*data;
    if (*size < 2 || in[0] != 0x1f || in[1] != 0x8b) return 0;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return vpt_fail("%s: zlib cannot start inflating", path);
    size_t cap = *size * 8 + 4096, n = 0;
    char *out = vpt_malloc(cap + 1);
    int rc = out ? 0 : -1, zr;
    z.next_in = (unsigned char *)*data;
    z.avail_in = (uInt)*size; /* at most REPLAY_MAX_BYTES (1 GiB): fits */
    while (rc == 0) {
        if (n == cap) {
            if (cap >= REPLAY_MAX_BYTES) {
                rc = vpt_fail("%s: inflates to more than the %zu bytes allowed", path, (size_t)REPLAY_MAX_BYTES);
                break;
            }
            size_t grown = cap * 2 < REPLAY_MAX_BYTES ? cap * 2 : REPLAY_MAX_BYTES;
            char *p = vpt_realloc(out, grown + 1);
            if (!p) {
                rc = -1;
                break;
            }
            out = p;
            cap = grown;
        }
        z.next_out = (unsigned char *)out + n;
        z.avail_out = (uInt)(cap - n);
        zr = inflate(&z, Z_NO_FLUSH);
        n = cap - z.avail_out;
        if (zr == Z_STREAM_END) {
            if (z.avail_in == 0) break;
            /* another gzip member follows (files concatenated with cat) */
            if (inflateReset(&z) != Z_OK) rc = vpt_fail("%s: zlib cannot read the next gzip member", path);
        } else if ((zr == Z_OK || zr == Z_BUF_ERROR) && z.avail_out == 0) {
            continue; /* the output is full: grow it */
        } else if ((zr == Z_OK || zr == Z_BUF_ERROR) && z.avail_in == 0) {
            rc = vpt_fail("%s: gzip data ends before its end marker (truncated)", path);
        } else if (zr != Z_OK) {
            rc = vpt_fail("%s: not valid gzip data (zlib: %s)", path, z.msg ? z.msg : "error");
        }
    }
    inflateEnd(&z);
    if (rc) {
        free(out);
        return -1;
    }
    out[n] = '\0';
    free(*data);
    *data = out;
    *size = n;
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
    if (gunzip_if_gzip(path, &data, &size)) { /* the compressed data stays ours */
        free(data);
        goto fail;
    }
    int rc = parse_rows(r, data, size);
    free(data);
    if (rc || rowset_index(&r->full, path) || rowset_index(&r->cheap, path)) goto fail;
    r->ready = vpt_malloc((r->full.n ? r->full.n : 1) * sizeof *r->ready);
    r->cheap_ready = vpt_malloc((r->cheap.n ? r->cheap.n : 1) * sizeof *r->cheap_ready);
    if (!r->ready || !r->cheap_ready) goto fail;
    if (schedule_medians(r) || vpt_replay_set_compile_model(r, VPT_COMPILE_SERIAL, VPT_REPLAY_COMPILE_THREADS))
        goto fail;
    return r;
fail:
    vpt_replay_destroy(r);
    return NULL;
}

static double nz(double x)
{
    return isfinite(x) ? x : 0;
}

/* The slot holding the compile state of the config with rows fi / ci. */
static double *ready_slot(VptReplay *r, long fi, long ci)
{
    return fi >= 0 ? &r->ready[fi] : &r->cheap_ready[ci];
}

/* Queues the compile of the config with rows fi / ci at the current clock,
 * unless it was queued since the reset. The pool takes compiles in the order
 * queued, each on the thread that is free first, starting when both the
 * clock and a thread allow; eval.h says what a compile then costs. */
static void queue_compile(VptReplay *r, long fi, long ci)
{
    double *slot = ready_slot(r, fi, ci);
    if (*slot != NOT_QUEUED) return;
    const VptEvalRecord *row = fi >= 0 ? &r->full.rec[fi] : &r->cheap.rec[ci];
    int t = 0;
    for (int i = 1; i < r->threads; i++)
        if (r->thread_free[i] < r->thread_free[t]) t = i;
    double start = r->thread_free[t] > r->clock ? r->thread_free[t] : r->clock;
    int sch = vpt_config_schedule_index(&row->config);
    double c = sch >= 0 && isfinite(r->schedule_compile_s[sch]) ? r->schedule_compile_s[sch] : nz(row->compile_s);
    double end;
    if (r->model == VPT_COMPILE_PARALLEL) {
        end = start + c;
    } else {
        double front = c < VPT_REPLAY_COMPILE_FRONT_S ? c : VPT_REPLAY_COMPILE_FRONT_S;
        double body = (c - front) / r->threads;
        double at = start + front;
        if (r->section_free > at) at = r->section_free;
        end = at + body;
        r->section_free = end;
    }
    r->thread_free[t] = end;
    *slot = end;
}

void vpt_replay_prefetch(void *ctx, const VptConfig *configs, size_t n, int fidelity)
{
    (void)fidelity; /* one compile serves both fidelities */
    VptReplay *r = ctx;
    for (size_t i = 0; i < n; i++) {
        uint64_t key = config_key(&configs[i]);
        long fi = rowset_find(&r->full, key), ci = rowset_find(&r->cheap, key);
        if (fi >= 0 || ci >= 0) queue_compile(r, fi, ci); /* unrecorded: a hint, not an error */
    }
}

/* The simulated evaluation of config key's row(s) fi / ci: its compile
 * queued unless announced (as the harness does: behind whatever the hints
 * queued), the wait for it plus measure_s as the cost, and the clock
 * advanced by that. Returns the cost. */
static double simulate(VptReplay *r, long fi, long ci, double measure_s)
{
    queue_compile(r, fi, ci);
    double ready = *ready_slot(r, fi, ci);
    double wait = ready > r->clock ? ready - r->clock : 0;
    double cost = wait + nz(measure_s);
    r->clock += cost;
    return cost;
}

/* The record of c at fidelity (eval.h: derived fidelity 0) into *out, and
 * its rows fi / ci; -1 when the recording lacks it. */
static int answer(VptReplay *r, const VptConfig *c, int fidelity, VptEvalRecord *out, long *fi_out, long *ci_out)
{
    uint64_t key = config_key(c);
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
    *fi_out = fi;
    *ci_out = ci;
    return 0;
}

int vpt_replay_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    VptReplay *r = ctx;
    long fi, ci;
    if (answer(r, c, fidelity, out, &fi, &ci)) return -1;
    out->cost_s = simulate(r, fi, ci, out->measure_s);
    return 0;
}

int vpt_replay_remeasure(void *ctx, const VptConfig *configs, size_t n, VptEvalRecord *out)
{
    VptReplay *r = ctx;
    for (int round = 0; round < VPT_REMEASURE_ROUNDS; round++)
        for (size_t i = 0; i < n; i++) {
            long fi, ci;
            if (answer(r, &configs[i], 1, &out[i], &fi, &ci)) return -1;
            simulate(r, fi, ci, out[i].measure_s);
        }
    return 0;
}

void vpt_replay_retrace(void *ctx, const VptEvalRecord *rec)
{
    VptReplay *r = ctx;
    VptEvalRecord out;
    long fi, ci;
    if (answer(r, &rec->config, rec->fidelity, &out, &fi, &ci) == 0) simulate(r, fi, ci, out.measure_s);
    else vpt_error_clear(); /* not recorded: nothing to simulate */
}

double vpt_replay_clock(const VptReplay *r)
{
    return r->clock;
}

void vpt_replay_reset(VptReplay *r)
{
    r->clock = 0;
    for (size_t i = 0; i < r->full.n; i++) r->ready[i] = NOT_QUEUED;
    for (size_t i = 0; i < r->cheap.n; i++) r->cheap_ready[i] = NOT_QUEUED;
    for (int i = 0; i < r->threads; i++) r->thread_free[i] = 0;
    r->section_free = 0;
}

int vpt_replay_set_compile_model(VptReplay *r, VptCompileModel model, int threads)
{
    if (model != VPT_COMPILE_SERIAL && model != VPT_COMPILE_PARALLEL)
        return vpt_fail("replay: unknown compile model %d", (int)model);
    if (threads < 1 || threads > VPT_REPLAY_MAX_COMPILE_THREADS)
        return vpt_fail("replay: %d compile threads (1..%d)", threads, VPT_REPLAY_MAX_COMPILE_THREADS);
    double *tf = vpt_malloc((size_t)threads * sizeof *tf);
    if (!tf) return -1;
    free(r->thread_free);
    r->thread_free = tf;
    r->threads = threads;
    r->model = model;
    vpt_replay_reset(r);
    return 0;
}

VptCompileModel vpt_replay_compile_model(const VptReplay *r, int *threads)
{
    if (threads) *threads = r->threads;
    return r->model;
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
    long i = rowset_find(&r->full, config_key(c));
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
