#include "harness/cubin_cache.h"

#include "base/error.h"
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bump when the key's inputs or the entry layout change: old entries then
 * stop matching (key) or read as stale (version) and are rebuilt. */
#define CACHE_FORMAT_VERSION 2u
#define ENTRY_MAGIC "VPTCUBIN"
#define MAGIC_LEN 8
#define HASH_LEN 32
/* magic, version, key, seconds, log length, cubin length, checksum */
#define ENTRY_MIN_SIZE (MAGIC_LEN + 4 + HASH_LEN + 8 + 8 + 8 + HASH_LEN)
/* Larger files are not entries of ours: refuse before reading them. */
#define ENTRY_MAX_SIZE ((size_t)512 << 20)

struct VptCubinCache {
    char *dir;
    atomic_uint_fast64_t hits, misses, corrupt, write_errors;
    atomic_int write_warned;
};

/* ---- hashing ---- */

typedef struct {
    EVP_MD_CTX *md;
} Hasher;

static int hasher_init(Hasher *h)
{
    h->md = EVP_MD_CTX_new();
    if (!h->md || EVP_DigestInit_ex(h->md, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(h->md);
        h->md = NULL;
        return vpt_fail("SHA-256 unavailable (OpenSSL EVP_DigestInit_ex failed)");
    }
    return 0;
}

static void put_u64le(unsigned char *b, uint64_t v)
{
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64le(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)b[i] << (8 * i);
    return v;
}

/* Every field is length-prefixed, so no two different requests can feed the
 * hash the same byte stream ("ab"+"c" vs "a"+"bc"). */
static void hash_field(Hasher *h, const void *data, size_t len)
{
    unsigned char b[8];
    put_u64le(b, (uint64_t)len);
    EVP_DigestUpdate(h->md, b, 8);
    if (len) EVP_DigestUpdate(h->md, data, len);
}

static void hash_str(Hasher *h, const char *s) { hash_field(h, s ? s : "", s ? strlen(s) : 0); }

static void hash_int(Hasher *h, long long v)
{
    unsigned char b[8];
    put_u64le(b, (uint64_t)v);
    hash_field(h, b, 8);
}

static int hasher_final(Hasher *h, unsigned char out[HASH_LEN])
{
    unsigned int n = 0;
    int ok = EVP_DigestFinal_ex(h->md, out, &n) == 1 && n == HASH_LEN;
    EVP_MD_CTX_free(h->md);
    h->md = NULL;
    return ok ? 0 : vpt_fail("SHA-256 failed (OpenSSL EVP_DigestFinal_ex)");
}

static int sha256(const void *data, size_t len, unsigned char out[HASH_LEN])
{
    unsigned int n = 0;
    if (EVP_Digest(data, len, out, &n, EVP_sha256(), NULL) != 1 || n != HASH_LEN)
        return vpt_fail("SHA-256 failed (OpenSSL EVP_Digest)");
    return 0;
}

static void to_hex(const unsigned char *b, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = '\0';
}

static int request_key(const VptCompileRequest *req, unsigned char key[HASH_LEN])
{
    const char *cccl = vpt_cccl_include_dir();
    if (!cccl) return -1;
    Hasher h;
    if (hasher_init(&h)) return -1;
    hash_str(&h, "vptune cubin cache");
    hash_int(&h, CACHE_FORMAT_VERSION);
    hash_str(&h, vpt_nvrtc_version());
    hash_str(&h, vpt_nvrtc_build());
    hash_str(&h, cccl);
    hash_int(&h, vpt_cccl_version(cccl));
    hash_str(&h, req->name);
    hash_str(&h, req->source);
    hash_int(&h, req->arch_major);
    hash_int(&h, req->arch_minor);
    hash_int(&h, req->nheaders);
    for (int i = 0; i < req->nheaders; i++) {
        hash_str(&h, req->include_names[i]);
        hash_str(&h, req->headers[i]);
    }
    hash_int(&h, req->noptions);
    for (int i = 0; i < req->noptions; i++) hash_str(&h, req->options[i]);
    return hasher_final(&h, key);
}

int vpt_cubin_cache_key(const VptCompileRequest *req, char hex[65])
{
    unsigned char key[HASH_LEN];
    if (request_key(req, key)) return -1;
    to_hex(key, HASH_LEN, hex);
    return 0;
}

/* ---- opening ---- */

static int resolve_dir(const char *dir, char *out, size_t n)
{
    const char *e;
    int len;
    if (dir && *dir) len = snprintf(out, n, "%s", dir);
    else if ((e = getenv("VPT_CACHE_DIR")) && *e) len = snprintf(out, n, "%s", e);
    else if ((e = getenv("XDG_CACHE_HOME")) && *e) len = snprintf(out, n, "%s/vptune/cubin", e);
    else if ((e = getenv("HOME")) && *e) len = snprintf(out, n, "%s/.cache/vptune/cubin", e);
    else return vpt_fail("no cubin cache directory: set VPT_CACHE_DIR (HOME and XDG_CACHE_HOME are unset)");
    if (len < 0 || (size_t)len >= n) return vpt_fail("cubin cache directory path too long");
    return 0;
}

VptCubinCache *vpt_cubin_cache_open(const char *dir)
{
    char path[4096];
    if (resolve_dir(dir, path, sizeof path - 128)) return NULL;
    if (vpt_mkdirs(path)) {
        vpt_error_prefix("cannot create the cubin cache directory '%s'", path);
        return NULL;
    }
    /* Root ignores permission bits, so access(W_OK) can lie: really create a
     * file to find out. */
    char probe[4224];
    snprintf(probe, sizeof probe, "%s/.write-probe.%ld", path, (long)getpid());
    int fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        vpt_fail_errno("cubin cache directory '%s' is not writable", path);
        return NULL;
    }
    close(fd);
    unlink(probe);
    VptCubinCache *c = vpt_calloc(1, sizeof *c);
    if (!c) return NULL;
    c->dir = vpt_strdup(path);
    if (!c->dir) {
        free(c);
        return NULL;
    }
    return c;
}

void vpt_cubin_cache_close(VptCubinCache *c)
{
    if (!c) return;
    free(c->dir);
    free(c);
}

const char *vpt_cubin_cache_dir(const VptCubinCache *c) { return c->dir; }

void vpt_cubin_cache_stats(const VptCubinCache *c, VptCubinCacheStats *s)
{
    s->hits = atomic_load(&c->hits);
    s->misses = atomic_load(&c->misses);
    s->corrupt = atomic_load(&c->corrupt);
    s->write_errors = atomic_load(&c->write_errors);
}

void vpt_cubin_cache_entry_path(const VptCubinCache *c, const char *hex, char *out, size_t n)
{
    snprintf(out, n, "%s/%.2s/%s.cubin", c->dir, hex, hex);
}

/* ---- reading ---- */

typedef enum { ENTRY_HIT, ENTRY_MISSING, ENTRY_CORRUPT } EntryState;

/* Validates the bytes of an entry; on failure writes the reason. */
static EntryState parse_entry(const unsigned char *b, size_t size, const unsigned char key[HASH_LEN],
                              VptCompileResult *out, char *why, size_t whyn)
{
    if (size < ENTRY_MIN_SIZE) {
        snprintf(why, whyn, "truncated: %zu bytes", size);
        return ENTRY_CORRUPT;
    }
    if (memcmp(b, ENTRY_MAGIC, MAGIC_LEN) != 0) {
        snprintf(why, whyn, "bad magic");
        return ENTRY_CORRUPT;
    }
    uint32_t version = (uint32_t)b[8] | (uint32_t)b[9] << 8 | (uint32_t)b[10] << 16 | (uint32_t)b[11] << 24;
    if (version != CACHE_FORMAT_VERSION) {
        snprintf(why, whyn, "format version %u, expected %u", version, CACHE_FORMAT_VERSION);
        return ENTRY_CORRUPT;
    }
    if (memcmp(b + 12, key, HASH_LEN) != 0) {
        snprintf(why, whyn, "key mismatch");
        return ENTRY_CORRUPT;
    }
    size_t pos = 12 + HASH_LEN;
    uint64_t sbits = get_u64le(b + pos);
    double seconds;
    memcpy(&seconds, &sbits, sizeof seconds);
    pos += 8;
    uint64_t log_len = get_u64le(b + pos);
    pos += 8;
    /* Room left for the log, the cubin length and the checksum. */
    if (log_len > size - pos - 8 - HASH_LEN) {
        snprintf(why, whyn, "truncated: log of %llu bytes does not fit", (unsigned long long)log_len);
        return ENTRY_CORRUPT;
    }
    const unsigned char *log = b + pos;
    pos += (size_t)log_len;
    uint64_t cubin_len = get_u64le(b + pos);
    pos += 8;
    if (cubin_len != size - pos - HASH_LEN) {
        snprintf(why, whyn, "truncated or padded: cubin length %llu, %zu bytes left",
                 (unsigned long long)cubin_len, size - pos - HASH_LEN);
        return ENTRY_CORRUPT;
    }
    const unsigned char *cubin = b + pos;
    pos += (size_t)cubin_len;
    unsigned char sum[HASH_LEN];
    if (sha256(b, pos, sum)) {
        snprintf(why, whyn, "%s", vpt_errmsg());
        return ENTRY_CORRUPT;
    }
    if (memcmp(sum, b + pos, HASH_LEN) != 0) {
        snprintf(why, whyn, "checksum mismatch");
        return ENTRY_CORRUPT;
    }
    if (cubin_len < 4 || memcmp(cubin, "\177ELF", 4) != 0 || !isfinite(seconds) || seconds < 0) {
        snprintf(why, whyn, "not a CUBIN");
        return ENTRY_CORRUPT;
    }
    out->cubin = malloc((size_t)cubin_len);
    out->log = malloc((size_t)log_len + 1);
    if (!out->cubin || !out->log) {
        free(out->cubin);
        free(out->log);
        out->cubin = NULL;
        out->log = NULL;
        snprintf(why, whyn, "out of memory");
        return ENTRY_MISSING;
    }
    memcpy(out->cubin, cubin, (size_t)cubin_len);
    memcpy(out->log, log, (size_t)log_len);
    out->log[log_len] = '\0';
    out->cubin_size = (size_t)cubin_len;
    out->seconds = seconds;
    out->from_cache = 1;
    return ENTRY_HIT;
}

static EntryState read_entry(const char *path, const unsigned char key[HASH_LEN], VptCompileResult *out,
                             char *why, size_t whyn)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT) return ENTRY_MISSING;
        snprintf(why, whyn, "cannot stat: %s", strerror(errno));
        return ENTRY_CORRUPT;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, whyn, "not a regular file");
        return ENTRY_CORRUPT;
    }
    if ((uint64_t)st.st_size > ENTRY_MAX_SIZE) {
        snprintf(why, whyn, "%lld bytes, larger than any entry", (long long)st.st_size);
        return ENTRY_CORRUPT;
    }
    char *data = NULL;
    size_t size = 0;
    char saved[1024];
    snprintf(saved, sizeof saved, "%s", vpt_errmsg());
    if (vpt_read_file(path, ENTRY_MAX_SIZE, &data, &size) != 0) {
        /* Gone between stat and open (another process rebuilt it): a miss. */
        int gone = access(path, F_OK) != 0;
        snprintf(why, whyn, "%s", vpt_errmsg());
        vpt_fail("%s", saved);
        return gone ? ENTRY_MISSING : ENTRY_CORRUPT;
    }
    EntryState s = parse_entry((const unsigned char *)data, size, key, out, why, whyn);
    free(data);
    return s;
}

/* ---- writing ---- */

static int write_entry(VptCubinCache *c, const char *path, const unsigned char key[HASH_LEN],
                       const VptCompileResult *r)
{
    size_t log_len = r->log ? strlen(r->log) : 0;
    size_t size = ENTRY_MIN_SIZE + log_len + r->cubin_size;
    unsigned char *b = vpt_malloc(size);
    if (!b) return -1;
    size_t pos = 0;
    memcpy(b, ENTRY_MAGIC, MAGIC_LEN);
    pos += MAGIC_LEN;
    for (int i = 0; i < 4; i++) b[pos + (size_t)i] = (unsigned char)(CACHE_FORMAT_VERSION >> (8 * i));
    pos += 4;
    memcpy(b + pos, key, HASH_LEN);
    pos += HASH_LEN;
    uint64_t sbits;
    memcpy(&sbits, &r->seconds, sizeof sbits);
    put_u64le(b + pos, sbits);
    pos += 8;
    put_u64le(b + pos, log_len);
    pos += 8;
    if (log_len) memcpy(b + pos, r->log, log_len);
    pos += log_len;
    put_u64le(b + pos, r->cubin_size);
    pos += 8;
    memcpy(b + pos, r->cubin, r->cubin_size);
    pos += r->cubin_size;
    int rc = sha256(b, pos, b + pos);
    if (rc == 0) {
        char sub[4096];
        vpt_dirname(path, sub, sizeof sub);
        rc = vpt_mkdirs(sub);
        if (rc == 0) rc = vpt_write_file_atomic(path, b, size);
    }
    free(b);
    (void)c;
    return rc;
}

/* The entry's path for req, and its key. */
static int entry_of(const VptCubinCache *c, const VptCompileRequest *req, unsigned char key[HASH_LEN], char *path,
                    size_t n)
{
    if (request_key(req, key)) {
        vpt_error_prefix("NVRTC compile of %s", req->name ? req->name : "(unnamed program)");
        return -1;
    }
    char hex[2 * HASH_LEN + 1];
    to_hex(key, HASH_LEN, hex);
    vpt_cubin_cache_entry_path(c, hex, path, n);
    return 0;
}

int vpt_cubin_cache_lookup(VptCubinCache *c, const VptCompileRequest *req, VptCompileResult *out)
{
    memset(out, 0, sizeof *out);
    unsigned char key[HASH_LEN];
    char path[4400];
    if (entry_of(c, req, key, path, sizeof path)) return -1;
    char why[1100] = "";
    EntryState s = read_entry(path, key, out, why, sizeof why);
    if (s == ENTRY_HIT) {
        atomic_fetch_add(&c->hits, 1);
        return 1;
    }
    if (s == ENTRY_CORRUPT) {
        atomic_fetch_add(&c->corrupt, 1);
        fprintf(stderr, "cubin cache: corrupt entry %s (%s), rebuilding\n", path, why);
        unlink(path);
    }
    atomic_fetch_add(&c->misses, 1);
    return 0;
}

void vpt_cubin_cache_store(VptCubinCache *c, const VptCompileRequest *req, const VptCompileResult *r)
{
    /* A cache that cannot be written costs time, not correctness: warn once
     * and keep the caller's message buffer. */
    char saved[1024];
    snprintf(saved, sizeof saved, "%s", vpt_errmsg());
    unsigned char key[HASH_LEN];
    char path[4400];
    if (entry_of(c, req, key, path, sizeof path) || write_entry(c, path, key, r) != 0) {
        atomic_fetch_add(&c->write_errors, 1);
        if (atomic_exchange(&c->write_warned, 1) == 0)
            fprintf(stderr, "cubin cache: cannot store %s: %s (results are not being cached)\n", path, vpt_errmsg());
    }
    vpt_fail("%s", saved);
}

int vpt_compile_cached(VptCubinCache *c, const VptCompileRequest *req, VptCompileResult *out)
{
    if (!c) return vpt_nvrtc_compile(req, out);
    int hit = vpt_cubin_cache_lookup(c, req, out);
    if (hit != 0) return hit > 0 ? 0 : -1;
    if (vpt_nvrtc_compile(req, out) != 0) return -1;
    vpt_cubin_cache_store(c, req, out);
    return 0;
}
