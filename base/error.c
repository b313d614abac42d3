#include "base/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VPT_ERRMSG_MAX 1024
static _Thread_local char errbuf[VPT_ERRMSG_MAX];

int vpt_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, sizeof errbuf, fmt, ap);
    va_end(ap);
    return -1;
}

int vpt_fail_errno(const char *fmt, ...)
{
    int e = errno;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(errbuf, sizeof errbuf, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof errbuf)
        snprintf(errbuf + n, sizeof errbuf - (size_t)n, ": %s", strerror(e));
    return -1;
}

void vpt_error_prefix(const char *fmt, ...)
{
    char ctx[VPT_ERRMSG_MAX], old[VPT_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx, sizeof ctx, fmt, ap);
    va_end(ap);
    memcpy(old, errbuf, sizeof old);
    size_t n = strnlen(ctx, sizeof ctx - 1);
    memcpy(errbuf, ctx, n);
    size_t rest = sizeof errbuf - n;
    if (rest > 2) {
        errbuf[n] = ':';
        errbuf[n + 1] = ' ';
        size_t m = strnlen(old, rest - 3);
        memcpy(errbuf + n + 2, old, m);
        errbuf[n + 2 + m] = '\0';
    } else {
        errbuf[sizeof errbuf - 1] = '\0';
    }
}

const char *vpt_errmsg(void) { return errbuf; }
void vpt_error_clear(void) { errbuf[0] = '\0'; }

int vpt_errno_or_unknown(void) { return errno ? errno : EIO; }

const char *vpt_errno_name(int err, char *buf, size_t n)
{
    const char *name = NULL;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    name = strerrorname_np(err);
#endif
    if (name) snprintf(buf, n, "%s", name);
    else snprintf(buf, n, "error %d", err);
    return buf;
}

int vpt_sys_result(int err, const char *call, const char *file, int line)
{
    if (err == 0) return 0;
    char name[32];
    return vpt_fail("%s failed at %s:%d: %s (%s)", call, file, line, vpt_errno_name(err, name, sizeof name),
                    strerror(err));
}

void vpt_report_error(const char *prog)
{
    fprintf(stderr, "%s: error: %s\n", prog, errbuf[0] ? errbuf : "unknown error");
}

void vpt_assert_fail(const char *what, const char *file, int line)
{
    fprintf(stderr, "vptune: internal error at %s:%d: assertion '%s' failed\n", file, line, what);
    abort();
}

void *vpt_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) vpt_fail("out of memory allocating %zu bytes", n);
    return p;
}

void *vpt_calloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) vpt_fail("out of memory allocating %zu x %zu bytes", count, size);
    return p;
}

void *vpt_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) vpt_fail("out of memory reallocating to %zu bytes", n);
    return q;
}

char *vpt_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = vpt_malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}
