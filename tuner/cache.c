/* The results cache (JSON lines, resumable). */
#include "tuner/cache.h"

#include "base/error.h"
#include "base/file.h"
#include "tuner/rows.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* A cache row is under 1 KB; a tune of a whole space is some 25 MB. */
#define CACHE_MAX_BYTES ((size_t)1 << 30)

struct VptCache {
    char path[1024];
    char moved_to[1100];
    unsigned flags;
    int fd;
    VptTuneProvenance prov;
    VptEvalRecord *rec; /* rec[i] is line i + 2 of the file: the header, then one row a line */
    size_t n, cap;
    /* open addressing: slot holds record index + 1, 0 = empty */
    size_t *slots;
    size_t n_slots;
    size_t dropped;
    /* the retrace (cache.h): rows [0, loaded) came from the file; those
     * before cursor were reached again by this run */
    size_t loaded, cursor;
    int retrace_over;
    int conflict; /* opening failed on two rows that disagree */
};

/* The majorant's position in codegen's list of cell sizes (its values, up
 * to 128, do not fit a narrow field: 64 & 0x3F was 0, global's key). */
static uint64_t majorant_index(int cell)
{
    const int *cells;
    const int n = vpt_majorant_cells(&cells);
    for (int i = 0; i < n; i++)
        if (cells[i] == cell) return (uint64_t)i;
    return 15;
}

uint64_t vpt_cache_key(const VptConfig *c, int fidelity)
{
    /* widths cover codegen's domains: 3+2+1+8+3+11+7+7+1+3+5+1+4+2+1 = 59
     * bits, then the fidelity's; the majorant as its index */
    _Static_assert(VPT_MAJORANT_COUNT <= 15, "the majorant's key field holds 0..15");
    uint64_t k = (uint64_t)c->regen;
    k = (k << 2) | (uint64_t)c->reorder;
    k = (k << 1) | (uint64_t)c->kernels;
    k = (k << 8) | (uint64_t)(c->maxrregcount & 0xFF);
    k = (k << 3) | (uint64_t)(c->ppt & 0x7);
    k = (k << 11) | (uint64_t)(c->block & 0x7FF);
    k = (k << 7) | (uint64_t)(c->grid & 0x7F);
    k = (k << 7) | (uint64_t)(c->threshold & 0x7F);
    k = (k << 1) | (uint64_t)c->sortkey;
    k = (k << 3) | (uint64_t)(c->lookahead & 0x7);
    k = (k << 5) | (uint64_t)(c->coop & 0x1F);
    k = (k << 1) | (uint64_t)(c->flights != VPT_FLIGHTS_SYNC);
    k = (k << 4) | majorant_index(c->majorant);
    k = (k << 2) | (uint64_t)(c->density & 0x3);
    k = (k << 1) | (uint64_t)(c->sparse != 0);
    /* paths=pixel above them all, so that every key from before it existed
     * (paths=sample) stays what it was */
    k |= (uint64_t)(c->paths != VPT_PATHS_SAMPLE) << 59;
    /* the transmittance estimator (0 without a sun) likewise, in bits 60-61 */
    k |= (uint64_t)(c->transmittance & 0x3) << 60;
    return (k << 1) | (uint64_t)(fidelity != 0);
}

static size_t hash64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x;
}

static uint64_t row_key(const VptEvalRecord *r)
{
    return vpt_cache_key(&r->config, r->fidelity);
}

/* The first row of key, as an index into rec, or SIZE_MAX. */
static size_t index_find(const VptCache *c, uint64_t key)
{
    if (c->n_slots == 0) return SIZE_MAX;
    size_t mask = c->n_slots - 1;
    for (size_t h = hash64(key) & mask; c->slots[h]; h = (h + 1) & mask)
        if (row_key(&c->rec[c->slots[h] - 1]) == key) return c->slots[h] - 1;
    return SIZE_MAX;
}

/* Indexes row idx unless its key is already indexed (the first row of a
 * key is the one looked up; a later one is an identical repeat). */
static void index_insert(VptCache *c, size_t idx)
{
    const uint64_t key = row_key(&c->rec[idx]);
    size_t mask = c->n_slots - 1;
    for (size_t h = hash64(key) & mask;; h = (h + 1) & mask) {
        if (c->slots[h] == 0) {
            c->slots[h] = idx + 1;
            return;
        }
        if (row_key(&c->rec[c->slots[h] - 1]) == key) return;
    }
}

static int index_grow(VptCache *c)
{
    size_t n = c->n_slots ? 2 * c->n_slots : 1024;
    size_t *s = vpt_calloc(n, sizeof *s);
    if (!s) return -1;
    free(c->slots);
    c->slots = s;
    c->n_slots = n;
    for (size_t i = 0; i < c->n; i++) index_insert(c, i);
    return 0;
}

/* Refuses r, to be row `line` of the file, when the file already holds
 * another measurement of its config and fidelity (cache.h). */
static int check_conflict(const VptCache *c, const VptEvalRecord *r, size_t line)
{
    size_t first = index_find(c, row_key(r));
    if (first == SIZE_MAX || vpt_rows_same_measurement(&c->rec[first], r)) return 0;
    return vpt_rows_conflict(c->path, first + 2, &c->rec[first], line, r);
}

/* Adds r, already checked. */
static int add_record(VptCache *c, const VptEvalRecord *r)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 256;
        VptEvalRecord *p = vpt_realloc(c->rec, cap * sizeof *p);
        if (!p) return -1;
        c->rec = p;
        c->cap = cap;
    }
    c->rec[c->n++] = *r;
    /* keep the load factor under 1/2 */
    if (2 * c->n > c->n_slots) return index_grow(c);
    index_insert(c, c->n - 1);
    return 0;
}

/* Row idx is seen by vpt_cache_find: the retrace is over, has passed it, or
 * it was appended by this run. */
static int visible(const VptCache *c, size_t idx)
{
    return c->retrace_over || idx < c->cursor || idx >= c->loaded;
}

const VptEvalRecord *vpt_cache_find(const VptCache *c, const VptConfig *cfg, int fidelity)
{
    size_t idx = index_find(c, vpt_cache_key(cfg, fidelity));
    return idx != SIZE_MAX && visible(c, idx) ? &c->rec[idx] : NULL;
}

int vpt_cache_has(const VptCache *c, const VptConfig *cfg, int fidelity)
{
    return index_find(c, vpt_cache_key(cfg, fidelity)) != SIZE_MAX;
}

VptCacheHit vpt_cache_lookup(VptCache *c, const VptConfig *cfg, int fidelity, VptEvalRecord *out)
{
    size_t idx = index_find(c, vpt_cache_key(cfg, fidelity));
    if (idx == SIZE_MAX) {
        /* a new evaluation before the earlier run's rows were all reached:
         * not a retrace of them */
        c->retrace_over = 1;
        return VPT_CACHE_MISS;
    }
    *out = c->rec[idx];
    if (visible(c, idx)) return VPT_CACHE_HIT;
    if (idx != c->cursor) { /* out of the file's order: another run */
        c->retrace_over = 1;
        return VPT_CACHE_HIT;
    }
    /* the next row of the interrupted run: reached; identical repeats of
     * rows already reached are passed over */
    c->cursor++;
    while (c->cursor < c->loaded && index_find(c, row_key(&c->rec[c->cursor])) < c->cursor) c->cursor++;
    return VPT_CACHE_RETRACED;
}

void vpt_cache_close(VptCache *c)
{
    if (!c) return;
    if (c->fd >= 0) close(c->fd); /* releases the lock */
    free(c->rec);
    free(c->slots);
    free(c);
}

const VptTuneProvenance *vpt_cache_provenance(const VptCache *c)
{
    return &c->prov;
}

size_t vpt_cache_count(const VptCache *c)
{
    return c->n;
}

const VptEvalRecord *vpt_cache_record(const VptCache *c, size_t i)
{
    VPT_ASSERT(i < c->n);
    return &c->rec[i];
}

size_t vpt_cache_dropped_bytes(const VptCache *c)
{
    return c->dropped;
}

const char *vpt_cache_moved_to(const VptCache *c)
{
    return c->moved_to;
}

/* Writes all of buf at the end of the file (O_APPEND), then syncs. */
static int write_all(VptCache *c, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(c->fd, buf, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return vpt_fail_errno("cache %s: write failed", c->path);
        }
        buf += w;
        n -= (size_t)w;
    }
    if (!(c->flags & VPT_CACHE_NOSYNC) && fsync(c->fd) != 0)
        return vpt_fail_errno("cache %s: fsync failed", c->path);
    return 0;
}

static int write_row(VptCache *c, json_t *row)
{
    char *line = vpt_rows_dump_line(row);
    json_decref(row);
    if (!line) return -1;
    int rc = write_all(c, line, strlen(line));
    free(line);
    return rc;
}

int vpt_cache_append(VptCache *c, const VptEvalRecord *r, const char *line)
{
    if (c->flags & VPT_CACHE_READONLY) return vpt_fail("cache %s: opened read-only", c->path);
    if (check_conflict(c, r, c->n + 2) || write_all(c, line, strlen(line))) return -1;
    return add_record(c, r);
}

/* Parses one complete line: line 1 the header, the rest eval rows. */
static int parse_line(VptCache *c, const char *line, size_t line_no, const VptTuneProvenance *want)
{
    json_error_t jerr;
    json_t *row = json_loads(line, JSON_REJECT_DUPLICATES, &jerr);
    if (!row) return vpt_fail("not valid JSON (%s)", jerr.text);
    const char *kind = json_string_value(json_object_get(row, "kind"));
    int rc = 0;
    if (!json_is_object(row) || !kind) {
        rc = vpt_fail("not a row object with a \"kind\"");
    } else if (line_no == 1) {
        const char *schema = json_string_value(json_object_get(row, "schema"));
        if (strcmp(kind, "header") != 0) rc = vpt_fail("expected the header row, got kind \"%s\"", kind);
        else if (!schema || strcmp(schema, VPT_TUNE_SCHEMA) != 0)
            rc = vpt_fail("header schema is '%.64s', expected '%s'", schema ? schema : "(none)", VPT_TUNE_SCHEMA);
        else if (vpt_rows_provenance_parse(row, &c->prov)) rc = -1;
        else if (want && vpt_tune_provenance_match(&c->prov, want)) {
            char why[512];
            snprintf(why, sizeof why, "%s", vpt_errmsg());
            rc = vpt_fail("recorded by another run (%s); rows of another GPU, commit, NVRTC version, scene or "
                          "workload are never mixed in: use another cache file, or start a new one",
                          why);
        }
    } else if (strcmp(kind, "eval") != 0) {
        rc = vpt_fail("expected an eval row, got kind \"%s\"", kind);
    } else {
        VptEvalRecord r;
        rc = vpt_rows_record_parse(row, 1, &r);
        if (rc == 0) {
            if (check_conflict(c, &r, line_no)) {
                c->conflict = 1; /* the message names both lines */
                rc = -1;
            } else {
                rc = add_record(c, &r);
            }
        }
    }
    json_decref(row);
    return rc;
}

static int load(VptCache *c, const char *path, const VptTuneProvenance *want)
{
    char *data = NULL;
    size_t size = 0;
    if (vpt_read_file(path, CACHE_MAX_BYTES, &data, &size)) return -1;
    int readonly = (c->flags & VPT_CACHE_READONLY) != 0;

    /* complete lines end at the last newline; what follows is a crash's tail */
    size_t complete = 0;
    for (size_t i = size; i > 0; i--)
        if (data[i - 1] == '\n') {
            complete = i;
            break;
        }
    size_t line_no = 0;
    int rc = 0;
    for (size_t p = 0; p < complete && rc == 0;) {
        char *nl = memchr(data + p, '\n', complete - p);
        *nl = '\0';
        line_no++;
        if (memchr(data + p, '\0', (size_t)(nl - (data + p))))
            rc = vpt_fail("NUL byte in the line");
        else
            rc = parse_line(c, data + p, line_no, want);
        p = (size_t)(nl - data) + 1;
    }
    if (rc) {
        free(data);
        if ((line_no == 1 && strncmp(vpt_errmsg(), "recorded by another run", 23) == 0) || c->conflict)
            vpt_error_prefix("cache %s", path);
        else
            vpt_error_prefix("cache %s:%zu", path, line_no);
        return -1;
    }

    /* The tail after the last newline. Only a write cut short by a crash
     * leaves one, and a cut-short JSON object is never valid JSON; so a tail
     * that is valid JSON is a whole row that only lost its newline (kept if
     * it is a valid row, an error if not), anything else is dropped. */
    size_t tail = size - complete;
    int keep_tail = 0;
    if (tail > 0 && !memchr(data + complete, '\0', tail)) {
        json_t *probe = json_loads(data + complete, 0, NULL);
        if (probe) {
            json_decref(probe);
            if (parse_line(c, data + complete, line_no + 1, want)) {
                free(data);
                if (c->conflict) vpt_error_prefix("cache %s", path);
                else vpt_error_prefix("cache %s:%zu", path, line_no + 1);
                return -1;
            }
            keep_tail = 1;
            line_no++;
        }
    }
    /* No complete line and a tail that cannot be a header cut short (every
     * row, the header too, starts with '{'): some other file, not a cache
     * whose first write was interrupted. Refused, never truncated. */
    if (line_no == 0 && tail > 0 && !keep_tail && data[0] != '{') {
        free(data);
        return vpt_fail("cache %s: not a vptune tuner cache (no header line; it starts with other data)", path);
    }
    vpt_error_clear();
    free(data);
    if (!keep_tail) c->dropped = tail;
    c->loaded = c->n;
    c->retrace_over = readonly || c->n == 0;
    if (readonly) {
        if (line_no == 0) return vpt_fail("cache %s: no header (empty or truncated file)", path);
        return 0;
    }
    if (keep_tail) {
        if (write_all(c, "\n", 1)) return -1;
    } else if (tail > 0) {
        if (ftruncate(c->fd, (off_t)complete) != 0) return vpt_fail_errno("cache %s: cannot truncate", path);
    }
    if (line_no == 0) { /* no header survived: a new file */
        if (ftruncate(c->fd, 0) != 0) return vpt_fail_errno("cache %s: cannot truncate", path);
        c->prov = *want;
        json_t *h = vpt_rows_header_json(want);
        if (!h || write_row(c, h)) return -1;
    }
    return 0;
}

/* Renames an existing cache to <path>.prev<N>, holding its lock meanwhile so
 * that a tune still writing to it is not robbed of its file. */
static int move_aside(VptCache *c, const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        if (errno == ENOENT) return 0; /* nothing to move */
        return vpt_fail_errno("cache %s: cannot open", path);
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return vpt_fail("cache %s: in use by another process", path);
    }
    int rc = vpt_fail("cache %s: no free name to move it aside", path);
    for (int n = 1; n < 10000; n++) {
        snprintf(c->moved_to, sizeof c->moved_to, "%s.prev%d", path, n);
        if (access(c->moved_to, F_OK) == 0) continue;
        if (rename(path, c->moved_to) != 0) {
            rc = vpt_fail_errno("cache %s: cannot move it to %s", path, c->moved_to);
            c->moved_to[0] = '\0';
        } else {
            rc = 0;
        }
        break;
    }
    close(fd);
    return rc;
}

VptCache *vpt_cache_open(const char *path, const VptTuneProvenance *prov, unsigned flags)
{
    int readonly = (flags & VPT_CACHE_READONLY) != 0;
    if (!prov && !readonly) {
        vpt_fail("cache %s: a provenance is required to write", path);
        return NULL;
    }
    if (strlen(path) >= sizeof ((VptCache *)0)->path) {
        vpt_fail("cache path too long: %.100s...", path);
        return NULL;
    }
    VptCache *c = vpt_calloc(1, sizeof *c);
    if (!c) return NULL;
    strcpy(c->path, path);
    c->flags = flags;
    c->fd = -1;
    if (!readonly && (flags & VPT_CACHE_FRESH) && move_aside(c, path)) goto fail;
    c->fd = open(path, readonly ? O_RDONLY : (O_RDWR | O_APPEND | O_CREAT), 0644);
    if (c->fd < 0) {
        vpt_fail_errno("cache %s: cannot open", path);
        goto fail;
    }
    if (flock(c->fd, (readonly ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK) vpt_fail("cache %s: in use by another process", path);
        else vpt_fail_errno("cache %s: cannot lock", path);
        goto fail;
    }
    if (load(c, path, prov)) goto fail;
    return c;
fail:
    vpt_cache_close(c);
    return NULL;
}
