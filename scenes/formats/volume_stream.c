/* Streaming a volume's voxel data into its float grid: files read front to
 * back and hashed, byte ranges of memory or files, streaming zlib/gzip
 * inflation, and the conversion of each chunk to floats on every core while
 * the next chunk is read (see volume_format.h).
 *
 * Memory: the float grid, plus two chunks of stored data (CHUNK bytes each)
 * and the reader's buffers: a multi-GB file never has its data held whole,
 * compressed or not. */
#include "scenes/formats/volume_format.h"

#include "base/error.h"
#include "base/file.h"
#include "base/progress.h"
#include "base/threads.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define FILE_BUF ((size_t)1 << 20) /* a file's read buffer; larger reads bypass it */
#define INFLATE_IN ((size_t)1 << 20)
/* stored bytes converted at a time (a multiple of every type's size) */
static size_t CHUNK = (size_t)16 << 20;

void vptv_set_chunk_bytes(size_t n) { CHUNK = n ? (n + 7) / 8 * 8 : (size_t)16 << 20; }

/* ---------- files read front to back, hashed ---------- */

struct VptvFile {
    int fd;
    char *what;            /* "<name>" or "<name>: data file <path>", for messages */
    uint64_t size;
    uint64_t consumed;     /* bytes handed out (or skipped) so far */
    EVP_MD_CTX *sha;
    unsigned char *buf;
    size_t head, tail;     /* buffered bytes: buf[head, tail) */
};

int vptv_file_open(const char *name, const char *path, VptvFile **out)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (strcmp(name, path) == 0) return vpt_fail_errno("cannot open '%s'", path);
        return vpt_fail_errno("%s: cannot open data file '%s'", name, path);
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        if (strcmp(name, path) == 0) return vpt_fail("'%s' is not a regular file", path);
        return vpt_fail("%s: data file '%s' is not a regular file", name, path);
    }
    VptvFile *f = vpt_calloc(1, sizeof *f);
    size_t wlen = strlen(name) + strlen(path) + 16;
    if (f) f->what = vpt_malloc(wlen);
    if (f && f->what) f->buf = vpt_malloc(FILE_BUF);
    if (f && f->buf) f->sha = EVP_MD_CTX_new();
    if (!f || !f->what || !f->buf || !f->sha || EVP_DigestInit_ex(f->sha, EVP_sha256(), NULL) != 1) {
        if (f && f->buf && !f->sha) vpt_fail("%s: SHA-256 unavailable (OpenSSL)", name);
        close(fd);
        if (f) {
            EVP_MD_CTX_free(f->sha);
            free(f->buf);
            free(f->what);
            free(f);
        }
        return -1;
    }
    if (strcmp(name, path) == 0) snprintf(f->what, wlen, "%s", name);
    else snprintf(f->what, wlen, "%s: data file %s", name, path);
    f->fd = fd;
    f->size = (uint64_t)st.st_size;
    *out = f;
    return 0;
}

uint64_t vptv_file_size(const VptvFile *f) { return f->size; }

int vptv_file_head(VptvFile *f, unsigned char *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(f->fd, buf + done, n - done, (off_t)done);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return vpt_fail_errno("%s: error reading", f->what);
        if (r == 0) return vpt_fail("%s: the file ends after %zu bytes (did it change while being read?)", f->what, done);
        done += (size_t)r;
    }
    return 0;
}

/* One read(2) of at most n bytes into dst, hashed; 0 bytes at the end. */
static int raw_read(VptvFile *f, unsigned char *dst, size_t n, size_t *got)
{
    if (n > ((size_t)1 << 30)) n = (size_t)1 << 30;
    for (;;) {
        ssize_t r = read(f->fd, dst, n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return vpt_fail_errno("%s: error reading", f->what);
        if (r > 0) EVP_DigestUpdate(f->sha, dst, (size_t)r);
        *got = (size_t)r;
        return 0;
    }
}

/* Refills the empty buffer; tail 0 at the end of the file. */
static int fill(VptvFile *f)
{
    size_t got;
    f->head = f->tail = 0;
    if (raw_read(f, f->buf, FILE_BUF, &got)) return -1;
    f->tail = got;
    return 0;
}

int vptv_file_read(VptvFile *f, void *buf, size_t n, size_t *got)
{
    unsigned char *dst = buf;
    size_t done = 0;
    while (done < n) {
        if (f->head < f->tail) {
            size_t k = f->tail - f->head < n - done ? f->tail - f->head : n - done;
            memcpy(dst + done, f->buf + f->head, k);
            f->head += k;
            done += k;
            continue;
        }
        size_t k;
        if (n - done >= FILE_BUF) { /* large reads go straight to their destination */
            if (raw_read(f, dst + done, n - done, &k)) return -1;
            if (k == 0) break;
            done += k;
            continue;
        }
        if (fill(f)) return -1;
        if (f->tail == 0) break;
    }
    f->consumed += done;
    *got = done;
    return 0;
}

/* Skips forward to offset `to` (reading, so the hash sees every byte). */
static int file_skip_to(VptvFile *f, uint64_t to)
{
    while (f->consumed < to) {
        if (f->head == f->tail) {
            if (fill(f)) return -1;
            if (f->tail == 0)
                return vpt_fail("%s: the file ends at %llu bytes, before offset %llu (did it change while being "
                                "read?)",
                                f->what, (unsigned long long)f->consumed, (unsigned long long)to);
        }
        uint64_t k = f->tail - f->head;
        if (k > to - f->consumed) k = to - f->consumed;
        f->head += (size_t)k;
        f->consumed += k;
    }
    return 0;
}

int vptv_file_finish(VptvFile *f, char hex[65])
{
    f->head = f->tail;
    for (;;) {
        if (fill(f)) return -1;
        if (f->tail == 0) break;
        f->consumed += f->tail;
        f->head = f->tail;
    }
    unsigned char sum[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(f->sha, sum, &len) != 1 || len != 32) return vpt_fail("%s: SHA-256 failed (OpenSSL)", f->what);
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", sum[i]);
    return 0;
}

void vptv_file_close(VptvFile *f)
{
    if (!f) return;
    close(f->fd);
    EVP_MD_CTX_free(f->sha);
    free(f->buf);
    free(f->what);
    free(f);
}

/* ---------- inputs ---------- */

void vptv_input_memory(VptvInput *in, const char *name, const char *dir, const unsigned char *buf, size_t size,
                       size_t max_bytes)
{
    memset(in, 0, sizeof *in);
    in->name = name;
    in->dir = dir;
    in->buf = buf;
    in->len = size;
    in->size = size;
    in->max_bytes = max_bytes;
}

int vptv_input_header_end(const VptvInput *in, size_t data_off)
{
    if (in->len < in->size && data_off >= in->len)
        return vpt_fail("%s: the header does not end within the first %zu bytes (not a volume header, or a corrupt "
                        "one)",
                        in->name, in->len);
    return 0;
}

int vptv_input_finish(VptvInput *in, int ok, VptVolume *out)
{
    int rc = 0;
    if (ok && in->file) rc = vptv_file_finish(in->file, out->sha256);
    if (ok && rc == 0 && in->data_file) rc = vptv_file_finish(in->data_file, out->data_sha256);
    vptv_file_close(in->data_file);
    in->data_file = NULL;
    return rc;
}

void vptv_input_range(VptvInput *in, uint64_t off, VptvRange *r)
{
    memset(r, 0, sizeof *r);
    if (in->file) r->file = in->file;
    else r->mem = in->buf;
    r->pos = off;
    r->end = in->size;
}

int vptv_input_data_file(VptvInput *in, const char *path, VptvRange *r)
{
    memset(r, 0, sizeof *r);
    vptv_file_close(in->data_file);
    in->data_file = NULL;
    if (vptv_file_open(in->name, path, &in->data_file)) return -1;
    snprintf(in->data_path, sizeof in->data_path, "%s", path);
    r->file = in->data_file;
    r->end = vptv_file_size(in->data_file);
    return 0;
}

/* ---------- byte ranges ---------- */

uint64_t vptv_range_left(const VptvRange *r) { return r->end > r->pos ? r->end - r->pos : 0; }

/* Up to n bytes of the range; fewer only when it or its file ends. */
static int range_read(VptvRange *r, unsigned char *dst, size_t n, size_t *got)
{
    uint64_t left = vptv_range_left(r);
    if (n > left) n = (size_t)left;
    if (r->mem) {
        memcpy(dst, r->mem + r->pos, n);
        *got = n;
    } else {
        if (file_skip_to(r->file, r->pos) || vptv_file_read(r->file, dst, n, got)) return -1;
    }
    r->pos += *got;
    return 0;
}

int vptv_range_skip(VptvRange *r, uint64_t n)
{
    VPT_ASSERT(n <= vptv_range_left(r));
    r->pos += n;
    return r->file ? file_skip_to(r->file, r->pos) : 0;
}

int vptv_range_skip_lines(VptvRange *r, const char *where, int64_t lines)
{
    for (int64_t i = 0; i < lines; i++) {
        for (;;) {
            uint64_t left = vptv_range_left(r);
            if (left == 0) return vpt_fail("%s: line skip %lld goes past the end of the data", where, (long long)lines);
            const unsigned char *p;
            size_t avail;
            if (r->mem) {
                p = r->mem + r->pos;
                avail = left > SIZE_MAX ? SIZE_MAX : (size_t)left;
            } else {
                VptvFile *f = r->file;
                if (file_skip_to(f, r->pos)) return -1;
                if (f->head == f->tail && fill(f)) return -1;
                if (f->tail == 0) return vpt_fail("%s: line skip %lld goes past the end of the data", where, (long long)lines);
                p = f->buf + f->head;
                avail = f->tail - f->head < left ? f->tail - f->head : (size_t)left;
            }
            const unsigned char *nl = memchr(p, '\n', avail);
            size_t k = nl ? (size_t)(nl - p) + 1 : avail;
            r->pos += k;
            if (r->file) {
                r->file->head += k;
                r->file->consumed += k;
            }
            if (nl) break;
        }
    }
    return 0;
}

/* ---------- streaming inflation ---------- */

typedef struct {
    z_stream zs;
    VptvRange *src;
    unsigned char *in;
    const char *where, *kind;
    int gzip;               /* concatenated gzip members are allowed */
    uint64_t expected, produced;
    int ended;              /* the stream ended with nothing after it */
} Inflater;

static int inflater_init(Inflater *f, VptvRange *src, int window_bits, uint64_t expected, const char *where)
{
    memset(f, 0, sizeof *f);
    f->src = src;
    f->where = where;
    f->kind = window_bits > 31 ? "compressed" : window_bits > 15 ? "gzip" : "zlib";
    f->gzip = window_bits > 15;
    f->expected = expected;
    if (!(f->in = vpt_malloc(INFLATE_IN))) return -1;
    if (inflateInit2(&f->zs, window_bits) != Z_OK) {
        free(f->in);
        f->in = NULL;
        return vpt_fail("%s: cannot initialize zlib", where);
    }
    return 0;
}

static void inflater_end(Inflater *f)
{
    if (!f->in) return;
    inflateEnd(&f->zs);
    free(f->in);
    f->in = NULL;
}

static int refill(Inflater *f)
{
    if (f->zs.avail_in || vptv_range_left(f->src) == 0) return 0;
    size_t got;
    if (range_read(f->src, f->in, INFLATE_IN, &got)) return -1;
    f->zs.next_in = f->in;
    f->zs.avail_in = (uInt)got;
    return 0;
}

/* Inflates exactly n more bytes into dst; with dst NULL, checks that the
 * stream ends here (nothing more inflates, nothing but further gzip
 * members follows). */
static int inflater_run(Inflater *f, unsigned char *dst, size_t n)
{
    const int finishing = dst == NULL;
    unsigned char spare[64];
    size_t done = 0;
    while (!f->ended && (finishing || done < n)) {
        if (refill(f)) return -1;
        if (finishing) {
            f->zs.next_out = spare;
            f->zs.avail_out = sizeof spare;
        } else {
            f->zs.next_out = dst + done;
            f->zs.avail_out = n - done > (1u << 30) ? (1u << 30) : (uInt)(n - done);
        }
        const uInt before = f->zs.avail_out;
        const int z = inflate(&f->zs, Z_NO_FLUSH);
        const size_t made = before - f->zs.avail_out;
        if (finishing && made)
            return vpt_fail("%s: %s data inflates to more than the expected %llu bytes", f->where, f->kind,
                            (unsigned long long)f->expected);
        done += made;
        f->produced += made;
        if (z == Z_STREAM_END) {
            if (f->produced != f->expected)
                return vpt_fail("%s: %s data inflates to %llu bytes, expected %llu", f->where, f->kind,
                                (unsigned long long)f->produced, (unsigned long long)f->expected);
            if (refill(f)) return -1;
            uint64_t rest = f->zs.avail_in + vptv_range_left(f->src);
            if (rest == 0) {
                f->ended = 1;
                break;
            }
            /* gzip allows concatenated members; anything else is junk. */
            if (f->gzip && f->zs.next_in[0] == 0x1f) {
                if (inflateReset(&f->zs) != Z_OK) return vpt_fail("%s: cannot reset zlib", f->where);
                continue;
            }
            return vpt_fail("%s: %llu bytes of junk after the end of the %s stream", f->where,
                            (unsigned long long)rest, f->kind);
        }
        if (z == Z_BUF_ERROR && f->zs.avail_in == 0 && vptv_range_left(f->src) == 0) {
            if (f->produced == f->expected)
                return vpt_fail("%s: %s data is truncated: the stream's end and checksum are missing", f->where,
                                f->kind);
            return vpt_fail("%s: %s data is truncated: the stream stops after %llu of the expected %llu bytes",
                            f->where, f->kind, (unsigned long long)f->produced, (unsigned long long)f->expected);
        }
        if (z == Z_NEED_DICT || z == Z_DATA_ERROR || z == Z_MEM_ERROR || z == Z_STREAM_ERROR)
            return vpt_fail("%s: corrupt %s data (%s) after %llu of the expected %llu bytes", f->where, f->kind,
                            f->zs.msg ? f->zs.msg : z == Z_NEED_DICT ? "needs a dictionary" : "zlib error",
                            (unsigned long long)f->produced, (unsigned long long)f->expected);
    }
    return 0;
}

/* ---------- conversion to float ---------- */

typedef struct {
    const unsigned char *src;
    float *dst;
    VptScalarType t;
    int big;
    float scale;
    atomic_int bad; /* some value was not finite (or beyond the float range) */
    pthread_mutex_t *lock;
    float *min, *max; /* the grid's so far (under lock) */
} Convert;

/* Assembles an n-byte unsigned integer from p, in either byte order
 * (compilers turn this into a load, and a byte swap for big endian). */
static inline uint64_t load_u(const unsigned char *p, size_t n, int big)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) v |= (uint64_t)p[big ? n - 1 - i : i] << (8 * i);
    return v;
}

static inline float as_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline double as_f64(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* One loop per type and byte order, so that each vectorizes. */
#define CONVERT_LOOP(N, BIG, EXPR)                                                                                     \
    for (size_t i = lo; i < hi; i++) {                                                                                 \
        const uint64_t u = load_u(c->src + i * (N), (N), (BIG));                                                       \
        d[i] = (EXPR);                                                                                                 \
    }

static void convert_range(void *arg, size_t lo, size_t hi)
{
    Convert *c = arg;
    float *d = c->dst;
    int bad = 0;
#define BOTH(N, EXPR)                                                                                                  \
    do {                                                                                                               \
        if (c->big) CONVERT_LOOP(N, 1, EXPR) else CONVERT_LOOP(N, 0, EXPR)                                             \
    } while (0)
    switch (c->t) {
    case VPT_SCALAR_U8: CONVERT_LOOP(1, 0, (float)(uint8_t)u) break;
    case VPT_SCALAR_I8: CONVERT_LOOP(1, 0, (float)(int8_t)(uint8_t)u) break;
    case VPT_SCALAR_U16: BOTH(2, (float)(uint16_t)u); break;
    case VPT_SCALAR_I16: BOTH(2, (float)(int16_t)(uint16_t)u); break;
    case VPT_SCALAR_U32: BOTH(4, (float)(uint32_t)u); break;
    case VPT_SCALAR_I32: BOTH(4, (float)(int32_t)(uint32_t)u); break;
    case VPT_SCALAR_F32:
        BOTH(4, as_f32((uint32_t)u));
        for (size_t i = lo; i < hi; i++) bad |= !isfinite(d[i]);
        break;
    case VPT_SCALAR_F64:
        for (size_t i = lo; i < hi; i++) {
            const double g = as_f64(load_u(c->src + i * 8, 8, c->big));
            bad |= !isfinite(g) || fabs(g) > (double)FLT_MAX;
            d[i] = (float)g;
        }
        break;
    }
#undef BOTH
    if (bad) {
        atomic_store(&c->bad, 1);
        return;
    }
    if (c->scale != 0.0f && c->scale != 1.0f)
        for (size_t i = lo; i < hi; i++) d[i] *= c->scale;
    /* the range, while the values are in the cache */
    float a = d[lo], b = d[lo];
    for (size_t i = lo + 1; i < hi; i++) {
        a = d[i] < a ? d[i] : a;
        b = d[i] > b ? d[i] : b;
    }
    pthread_mutex_lock(c->lock);
    *c->min = a < *c->min ? a : *c->min;
    *c->max = b > *c->max ? b : *c->max;
    pthread_mutex_unlock(c->lock);
}

/* The message for the first bad value among n voxels at src, of which the
 * first is voxel `base` of the grid. */
static int bad_value(const char *name, const unsigned char *src, size_t n, size_t base, VptScalarType t, int big,
                     const VptvShape *s)
{
    for (size_t i = 0; i < n; i++) {
        const double v = t == VPT_SCALAR_F32 ? (double)as_f32((uint32_t)load_u(src + 4 * i, 4, big))
                                             : as_f64(load_u(src + 8 * i, 8, big));
        if (isfinite(v) && fabs(v) <= (double)FLT_MAX) continue;
        const size_t k = base + i, x = k % (size_t)s->dims[0], y = k / (size_t)s->dims[0] % (size_t)s->dims[1],
                     z = k / ((size_t)s->dims[0] * (size_t)s->dims[1]);
        return vpt_fail("%s: %s value %g at voxel %zu (x %zu, y %zu, z %zu)", name,
                        isfinite(v) ? "out-of-float-range" : "non-finite", v, k, x, y, z);
    }
    return vpt_fail("%s: a non-finite value (internal error: not found again)", name);
}

/* The range of the values converted so far. */
typedef struct {
    pthread_mutex_t lock;
    float min, max;
} Range;

/* Converts the n voxels at src, the first being voxel `base`, on every
 * core, widening *range. */
static int convert_chunk(const char *name, const unsigned char *src, size_t n, size_t base, VptScalarType t,
                         const VptvEncoding *enc, const VptvShape *shape, float *grid, Range *range)
{
    Convert c = {src,  grid + base, t, enc->big_endian && vpt_scalar_type_size(t) > 1, enc->scale, 0, &range->lock,
                 &range->min, &range->max};
    vpt_parallel_for(n, 0, convert_range, &c);
    if (atomic_load(&c.bad)) return bad_value(name, src, n, base, t, c.big, shape);
    return 0;
}

/* ---------- the reading pipeline ---------- */

/* One thread reads (and inflates, and hashes) chunk k + 1 while the caller
 * converts chunk k. */
typedef struct {
    VptvRange *range;
    Inflater *inf;          /* NULL: raw bytes */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    unsigned char *buf[2];
    size_t len[2];
    int full[2];
    int failed, stop;
    char msg[1024];         /* the reader's message (errors are per thread) */
    uint64_t total;
    size_t chunk;
} Pipe;

/* Exactly n bytes of stored data. */
static int produce(Pipe *p, unsigned char *dst, size_t n, const char *where)
{
    if (p->inf) return inflater_run(p->inf, dst, n);
    size_t got;
    if (range_read(p->range, dst, n, &got)) return -1;
    if (got != n)
        return vpt_fail("%s: the data ends after %zu of %zu bytes (did the file change while being read?)", where,
                        got, n);
    return 0;
}

typedef struct {
    Pipe *p;
    const char *where;
} ReaderArg;

static void *reader_main(void *arg)
{
    ReaderArg *a = arg;
    Pipe *p = a->p;
    uint64_t off = 0;
    for (int k = 0; off < p->total; k ^= 1) {
        pthread_mutex_lock(&p->lock);
        while (p->full[k] && !p->stop) pthread_cond_wait(&p->cond, &p->lock);
        const int stop = p->stop;
        pthread_mutex_unlock(&p->lock);
        if (stop) break;
        const size_t n = p->total - off < p->chunk ? (size_t)(p->total - off) : p->chunk;
        const int rc = produce(p, p->buf[k], n, a->where);
        pthread_mutex_lock(&p->lock);
        if (rc) {
            p->failed = 1;
            snprintf(p->msg, sizeof p->msg, "%s", vpt_errmsg());
        } else {
            p->len[k] = n;
            p->full[k] = 1;
        }
        pthread_cond_broadcast(&p->cond);
        pthread_mutex_unlock(&p->lock);
        if (rc) break;
        off += n;
    }
    return NULL;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}

/* Streams nbytes of stored data through the pipe into grid. */
static int stream_voxels(VptvInput *in, const char *where, Pipe *p, const VptvShape *shape, VptScalarType t,
                         const VptvEncoding *enc, float *grid, Range *range)
{
    const size_t esz = vpt_scalar_type_size(t);
    /* memory, raw: convert in place, no copy */
    if (!p->inf && p->range->mem) {
        VPT_ASSERT(vptv_range_left(p->range) >= shape->nbytes);
        const unsigned char *src = p->range->mem + p->range->pos;
        for (size_t off = 0; off < shape->nbytes; off += CHUNK) {
            size_t n = shape->nbytes - off < CHUNK ? shape->nbytes - off : CHUNK;
            if (convert_chunk(in->name, src + off, n / esz, off / esz, t, enc, shape, grid, range)) return -1;
            vpt_progress_update((double)(off + n) / (double)shape->nbytes);
        }
        p->range->pos += shape->nbytes;
        return 0;
    }
    p->chunk = shape->nbytes < CHUNK ? shape->nbytes : CHUNK;
    p->total = shape->nbytes;
    for (int k = 0; k < 2; k++)
        if (!(p->buf[k] = vpt_malloc(p->chunk ? p->chunk : 1))) return -1;
    if (shape->nbytes <= CHUNK) { /* one chunk: no thread */
        if (produce(p, p->buf[0], shape->nbytes, where)) return -1;
        return convert_chunk(in->name, p->buf[0], shape->count, 0, t, enc, shape, grid, range);
    }
    pthread_t tid;
    ReaderArg arg = {p, where};
    int err = pthread_create(&tid, NULL, reader_main, &arg);
    if (err) {
        errno = err;
        return vpt_fail_errno("%s: cannot start the reading thread", in->name);
    }
    int rc = 0;
    uint64_t off = 0;
    for (int k = 0; off < shape->nbytes; k ^= 1) {
        pthread_mutex_lock(&p->lock);
        while (!p->full[k] && !p->failed) pthread_cond_wait(&p->cond, &p->lock);
        const int have = p->full[k];
        pthread_mutex_unlock(&p->lock);
        if (!have) {
            rc = vpt_fail("%s", p->msg);
            break;
        }
        rc = convert_chunk(in->name, p->buf[k], p->len[k] / esz, (size_t)(off / esz), t, enc, shape, grid, range);
        pthread_mutex_lock(&p->lock);
        off += p->len[k];
        p->full[k] = 0;
        if (rc) p->stop = 1;
        pthread_cond_broadcast(&p->cond);
        pthread_mutex_unlock(&p->lock);
        if (rc) break;
        vpt_progress_update((double)off / (double)shape->nbytes);
    }
    pthread_join(tid, NULL);
    return rc;
}

int vptv_read_voxels(VptvInput *in, const char *where, VptvRange *r, const VptvShape *shape, VptScalarType t,
                     const VptvEncoding *enc, VptVolume *out)
{
    memset(out, 0, sizeof *out);
    if (in->opt && in->opt->admit && in->opt->admit(in->opt->admit_ctx, in->name, shape->dims, t, 0)) return -1;
    float *grid = vpt_malloc(shape->count * sizeof(float));
    if (!grid) {
        vpt_error_prefix("%s", in->name);
        return -1;
    }
    char what[300];
    snprintf(what, sizeof what, "reading %.280s", base_name(in->name));
    vpt_progress_begin(what);
    Inflater inf;
    Pipe p;
    memset(&p, 0, sizeof p);
    pthread_mutex_init(&p.lock, NULL);
    pthread_cond_init(&p.cond, NULL);
    p.range = r;
    int rc = 0;
    if (enc->window_bits) {
        rc = inflater_init(&inf, r, enc->window_bits, enc->skip + (uint64_t)shape->nbytes, where);
        if (rc == 0) p.inf = &inf;
        /* the inflated bytes before the voxels (NRRD's byte skip) */
        for (uint64_t left = enc->skip; rc == 0 && left > 0;) {
            unsigned char scratch[65536];
            size_t n = left < sizeof scratch ? (size_t)left : sizeof scratch;
            rc = inflater_run(&inf, scratch, n);
            left -= n;
        }
    }
    Range range = {PTHREAD_MUTEX_INITIALIZER, INFINITY, -INFINITY};
    if (rc == 0) rc = stream_voxels(in, where, &p, shape, t, enc, grid, &range);
    if (rc == 0 && p.inf) rc = inflater_run(&inf, NULL, 0);
    if (enc->window_bits) inflater_end(&inf);
    free(p.buf[0]);
    free(p.buf[1]);
    pthread_mutex_destroy(&p.lock);
    pthread_cond_destroy(&p.cond);
    vpt_progress_end();
    if (rc) {
        free(grid);
        return -1;
    }
    out->nx = shape->dims[0];
    out->ny = shape->dims[1];
    out->nz = shape->dims[2];
    out->data = grid;
    out->stored = t;
    out->has_range = 1;
    out->range_min = range.min;
    out->range_max = range.max;
    for (int k = 0; k < 3; k++) out->spacing[k] = 1.0f;
    return 0;
}

/* ---------- loaders ---------- */

/* Reads, finishes (hashes) and tidies up after one reader over in. */
static int run_reader(VptvReader read, VptvInput *in, VptVolume *out)
{
    int rc = read(in, out);
    if (vptv_input_finish(in, rc == 0, out)) rc = -1;
    if (rc) { /* (not vpt_volume_free: no format calls back into volume.c) */
        free(out->data);
        memset(out, 0, sizeof *out);
    }
    return rc;
}

int vptv_parse_memory(VptvReader read, const char *name, const char *dir, const unsigned char *buf, size_t size,
                      size_t max_bytes, VptVolume *out)
{
    VptvInput in;
    vptv_input_memory(&in, name, dir, buf, size, max_bytes);
    return run_reader(read, &in, out);
}

int vptv_load_streamed(const char *path, const VptVolumeLoadOptions *opt, VptvReader read, size_t head_bytes,
                       VptVolume *out)
{
    memset(out, 0, sizeof *out);
    VptvInput in;
    memset(&in, 0, sizeof in);
    in.name = path;
    in.max_bytes = vptv_max_bytes(opt ? opt->max_bytes : 0);
    in.opt = opt;
    if (vptv_file_open(path, path, &in.file)) return -1;
    in.size = vptv_file_size(in.file);
    char dir[4096];
    vpt_dirname(path, dir, sizeof dir);
    in.dir = dir;
    /* the header's bytes, read ahead of (and again by) the hashed stream */
    in.len = in.size < head_bytes ? (size_t)in.size : head_bytes;
    unsigned char *head = vpt_malloc(in.len + 1);
    int rc = head ? vptv_file_head(in.file, head, in.len) : -1;
    in.buf = head;
    if (rc == 0) rc = run_reader(read, &in, out);
    free(head);
    vptv_file_close(in.file);
    return rc;
}
