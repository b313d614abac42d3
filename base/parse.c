#include "base/parse.h"

#include "base/error.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad_start(const char *s)
{
    return !s || !*s || isspace((unsigned char)s[0]);
}

int vpt_parse_i64(const char *s, int64_t min, int64_t max, const char *what, int64_t *out)
{
    if (bad_start(s)) return vpt_fail("%s: expected an integer, got '%s'", what, s ? s : "");
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end) return vpt_fail("%s: '%s' is not an integer", what, s);
    if (errno == ERANGE || v < min || v > max)
        return vpt_fail("%s: %s is out of range [%lld, %lld]", what, s, (long long)min, (long long)max);
    *out = v;
    return 0;
}

int vpt_parse_int(const char *s, int min, int max, const char *what, int *out)
{
    int64_t v;
    if (vpt_parse_i64(s, min, max, what, &v)) return -1;
    *out = (int)v;
    return 0;
}

int vpt_parse_u64(const char *s, uint64_t max, const char *what, uint64_t *out)
{
    if (bad_start(s) || s[0] == '-' || s[0] == '+')
        return vpt_fail("%s: expected a non-negative integer, got '%s'", what, s ? s : "");
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end) return vpt_fail("%s: '%s' is not an integer", what, s);
    if (errno == ERANGE || v > max)
        return vpt_fail("%s: %s is out of range [0, %llu]", what, s, (unsigned long long)max);
    *out = v;
    return 0;
}

int vpt_parse_double(const char *s, double min, double max, const char *what, double *out)
{
    if (bad_start(s)) return vpt_fail("%s: expected a number, got '%s'", what, s ? s : "");
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end) return vpt_fail("%s: '%s' is not a number", what, s);
    if (!isfinite(v) || errno == ERANGE)
        return vpt_fail("%s: '%s' is not a finite number", what, s);
    if (v < min || v > max)
        return vpt_fail("%s: %s is out of range [%g, %g]", what, s, min, max);
    *out = v;
    return 0;
}

int vpt_parse_float(const char *s, float min, float max, const char *what, float *out)
{
    double v;
    if (vpt_parse_double(s, min, max, what, &v)) return -1;
    *out = (float)v;
    return 0;
}

int vpt_parse_vec3(const char *s, char sep, const char *what, float out[3])
{
    if (!s) return vpt_fail("%s: expected three numbers", what);
    char buf[256];
    if (strlen(s) >= sizeof buf) return vpt_fail("%s: value too long", what);
    strcpy(buf, s);
    char *p = buf;
    for (int i = 0; i < 3; i++) {
        if (sep == ' ') while (*p == ' ' || *p == '\t') p++;
        char *q = p;
        while (*q && *q != sep && !(sep == ' ' && *q == '\t')) q++;
        int last = (*q == '\0');
        if (i < 2 && last) return vpt_fail("%s: expected three numbers separated by '%c', got '%s'", what, sep, s);
        *q = '\0';
        double v;
        if (vpt_parse_double(p, -1e30, 1e30, what, &v)) return -1;
        out[i] = (float)v;
        p = last ? q : q + 1;
    }
    if (sep == ' ') while (*p == ' ' || *p == '\t' || *p == '\r') p++;
    if (*p) return vpt_fail("%s: expected exactly three numbers, got '%s'", what, s);
    return 0;
}

int vpt_parse_duration(const char *s, const char *what, double *seconds)
{
    if (bad_start(s)) return vpt_fail("%s: expected a duration such as 90s or 2m, got '%s'", what, s ? s : "");
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v) || v <= 0)
        return vpt_fail("%s: '%s' is not a positive duration (e.g. 90s, 2m, 500ms)", what, s);
    double scale;
    if (!*end || !strcmp(end, "s")) scale = 1;
    else if (!strcmp(end, "ms")) scale = 1e-3;
    else if (!strcmp(end, "m") || !strcmp(end, "min")) scale = 60;
    else if (!strcmp(end, "h")) scale = 3600;
    else return vpt_fail("%s: unknown unit in '%s' (use ms, s, m or h)", what, s);
    double t = v * scale;
    if (!isfinite(t)) return vpt_fail("%s: '%s' is too long a duration", what, s);
    if (!(t > 0)) return vpt_fail("%s: '%s' is too short a duration (it rounds to 0 s)", what, s);
    *seconds = t;
    return 0;
}

void vpt_format_double(double v, char *buf, size_t size)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v && (!strchr(buf, 'e') || fabs(v) < 1e-4 || fabs(v) >= 1e15)) return;
    }
}

void vpt_format_vec3_short(const double v[3], char *buf, size_t size)
{
    vpt_format_double(v[0], buf, size);
    for (int k = 1; k < 3 && (v[1] != v[0] || v[2] != v[0]); k++) {
        const size_t len = strlen(buf);
        if (len + 1 >= size) return;
        buf[len] = ',';
        vpt_format_double(v[k], buf + len + 1, size - len - 1);
    }
}
