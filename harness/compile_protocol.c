/* The compile pool's messages (see compile_protocol.h): requests and
 * results to and from bytes. A decoder trusts nothing: a payload cut short,
 * with counts beyond its bytes or bytes left over, is malformed. */
#include "harness/compile_protocol.h"

#include "base/error.h"

#include <stdlib.h>
#include <string.h>

int vpt_compile_buf_put(VptCompileBuf *b, const void *p, size_t n)
{
    if (n > SIZE_MAX - b->len) return vpt_fail("compile request too large");
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n) cap = cap > SIZE_MAX / 2 ? b->len + n : cap * 2;
        unsigned char *d = vpt_realloc(b->data, cap);
        if (!d) return -1;
        b->data = d;
        b->cap = cap;
    }
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

static int buf_str(VptCompileBuf *b, const char *s)
{
    uint64_t n = strlen(s);
    return vpt_compile_buf_put(b, &n, sizeof n) || vpt_compile_buf_put(b, s, (size_t)n);
}

int vpt_compile_request_encode(const VptCompileRequest *req, VptCompileBuf *b)
{
    VptCompileWireRequest h;
    memset(&h, 0, sizeof h);
    h.arch_major = req->arch_major;
    h.arch_minor = req->arch_minor;
    h.nheaders = req->nheaders;
    h.noptions = req->noptions;
    h.has_name = req->name != NULL;
    if (vpt_compile_buf_put(b, &h, sizeof h) || (req->name && buf_str(b, req->name)) || buf_str(b,
                                                                                                req->source)) return -1;
    for (int i = 0; i < req->nheaders; i++)
        if (buf_str(b, req->include_names[i]) || buf_str(b, req->headers[i])) return -1;
    for (int i = 0; i < req->noptions; i++)
        if (buf_str(b, req->options[i])) return -1;
    return 0;
}

typedef struct {
    const unsigned char *p;
    size_t left;
} Reader;

static int take(Reader *r, void *out, size_t n)
{
    if (n > r->left) return -1;
    memcpy(out, r->p, n);
    r->p += n;
    r->left -= n;
    return 0;
}

/* A NUL-terminated copy of the next string (malloc'd), NULL when the
 * payload is cut short. */
static char *take_str(Reader *r)
{
    uint64_t n;
    if (take(r, &n, sizeof n) || n > r->left) return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s) return NULL;
    memcpy(s, r->p, (size_t)n);
    s[n] = '\0';
    r->p += n;
    r->left -= (size_t)n;
    return s;
}

void vpt_compile_request_free(VptCompileRequest *r)
{
    free((char *)r->name);
    free((char *)r->source);
    for (int i = 0; i < r->nheaders; i++) {
        if (r->headers) free((char *)r->headers[i]);
        if (r->include_names) free((char *)r->include_names[i]);
    }
    free((void *)r->headers);
    free((void *)r->include_names);
    for (int i = 0; i < r->noptions; i++)
        if (r->options) free((char *)r->options[i]);
    free((void *)r->options);
    memset(r, 0, sizeof *r);
}

static int copy_list(int n, const char *const *src, const char *const **dst)
{
    *dst = NULL;
    if (n == 0) return 0;
    char **d = vpt_calloc((size_t)n, sizeof *d);
    if (!d) return -1;
    *dst = (const char *const *)d;
    for (int i = 0; i < n; i++) {
        if (!src[i]) return vpt_fail("compile request: entry %d of a list is NULL", i);
        if (!(d[i] = vpt_strdup(src[i]))) return -1;
    }
    return 0;
}

int vpt_compile_request_copy(const VptCompileRequest *src, VptCompileRequest *dst)
{
    memset(dst, 0, sizeof *dst);
    if (!src->source) return vpt_fail("compile request %s has no source", src->name ? src->name : "(unnamed)");
    if (src->nheaders < 0 || src->noptions < 0 || (src->nheaders && (!src->headers || !src->include_names)) ||
        (src->noptions && !src->options))
        return vpt_fail("compile request %s: bad header or option list", src->name ? src->name : "(unnamed)");
    dst->arch_major = src->arch_major;
    dst->arch_minor = src->arch_minor;
    /* Counts are set before the lists so vpt_compile_request_free frees partial copies. */
    dst->nheaders = src->nheaders;
    dst->noptions = src->noptions;
    if ((src->name && !(dst->name = vpt_strdup(src->name))) || !(dst->source = vpt_strdup(src->source)) ||
        copy_list(src->nheaders, src->headers, &dst->headers) ||
        copy_list(src->nheaders, src->include_names, &dst->include_names) ||
        copy_list(src->noptions, src->options, &dst->options)) {
        vpt_compile_request_free(dst);
        return -1;
    }
    return 0;
}

/* The request a worker received; 0, or -1 when the payload is malformed. */
int vpt_compile_request_decode(const void *payload, size_t len, VptCompileRequest *req)
{
    memset(req, 0, sizeof *req);
    Reader r = {payload, len};
    VptCompileWireRequest h;
    if (take(&r, &h, sizeof h) || h.nheaders < 0 || h.noptions < 0 || h.nheaders > 4096 || h.noptions > 4096)
        return -1;
    req->arch_major = h.arch_major;
    req->arch_minor = h.arch_minor;
    req->nheaders = h.nheaders;
    req->noptions = h.noptions;
    char **hdr = h.nheaders ? calloc((size_t)h.nheaders, sizeof *hdr) : NULL;
    char **inc = h.nheaders ? calloc((size_t)h.nheaders, sizeof *inc) : NULL;
    char **opt = h.noptions ? calloc((size_t)h.noptions, sizeof *opt) : NULL;
    req->headers = (const char *const *)hdr;
    req->include_names = (const char *const *)inc;
    req->options = (const char *const *)opt;
    if ((h.nheaders && (!hdr || !inc)) || (h.noptions && !opt)) goto bad;
    if (h.has_name && !(req->name = take_str(&r))) goto bad;
    if (!(req->source = take_str(&r))) goto bad;
    for (int i = 0; i < h.nheaders; i++)
        if (!(inc[i] = take_str(&r)) || !(hdr[i] = take_str(&r))) goto bad;
    for (int i = 0; i < h.noptions; i++)
        if (!(opt[i] = take_str(&r))) goto bad;
    if (r.left) goto bad;
    return 0;
bad:
    vpt_compile_request_free(req);
    return -1;
}

/* The worker's answer into *out: 0 compiled, -1 failed (message set), -3
 * malformed. */
int vpt_compile_result_decode(const void *payload, size_t len, VptCompileResult *out)
{
    Reader r = {payload, len};
    VptCompileWireResult h;
    if (take(&r, &h, sizeof h) || h.msg_len > r.left || h.log_len > r.left - h.msg_len ||
        h.cubin_len != r.left - h.msg_len - h.log_len || (h.rc == 0 && h.cubin_len == 0)) {
        return -3;
    }
    out->seconds = h.seconds;
    out->from_cache = 0;
    if (h.has_log) {
        out->log = vpt_malloc((size_t)h.log_len + 1);
        if (!out->log) return -1;
        memcpy(out->log, r.p + h.msg_len, (size_t)h.log_len);
        out->log[h.log_len] = '\0';
    }
    if (h.rc != 0) return vpt_fail("%.*s", (int)(h.msg_len < 1000 ? h.msg_len : 1000), (const char *)r.p);
    out->cubin = vpt_malloc((size_t)h.cubin_len);
    if (!out->cubin) return -1;
    memcpy(out->cubin, r.p + h.msg_len + h.log_len, (size_t)h.cubin_len);
    out->cubin_size = (size_t)h.cubin_len;
    return 0;
}

int vpt_compile_result_encode(int rc, double seconds, const char *msg, const VptCompileResult *res,
                              VptCompileBuf *b)
{
    VptCompileWireResult h;
    memset(&h, 0, sizeof h);
    h.rc = rc;
    h.seconds = seconds;
    h.has_log = res->log != NULL;
    h.msg_len = msg ? strlen(msg) : 0;
    h.log_len = res->log ? strlen(res->log) : 0;
    h.cubin_len = rc == 0 ? res->cubin_size : 0;
    if (vpt_compile_buf_put(b, &h, sizeof h) || vpt_compile_buf_put(b, msg, (size_t)h.msg_len) ||
        vpt_compile_buf_put(b, res->log, (size_t)h.log_len) || vpt_compile_buf_put(b, res->cubin, (size_t)h.cubin_len))
        return -1;
    return 0;
}
