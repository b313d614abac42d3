/* --gpus (contract in cli/gpus_arg.h). */
#include "cli/gpus_arg.h"

#include "base/error.h"

#include <stdio.h>
#include <string.h>

int vpt_gpus_parse(const char *text, VptGpuSelection *out)
{
    memset(out, 0, sizeof *out);
    out->given = 1;
    if (strcmp(text, "all") == 0) {
        out->all = 1;
        return 0;
    }
    if (!*text) return vpt_fail("--gpus: empty (give all, or GPU indices such as 0,1)");
    const char *p = text;
    for (;;) {
        const char *end = p + strcspn(p, ",");
        if (end == p) return vpt_fail("--gpus: empty item in '%.64s' (give all, or GPU indices such as 0,1)", text);
        int v = 0;
        for (const char *c = p; c < end; c++) {
            if (*c < '0' || *c > '9' || c - p >= 3)
                return vpt_fail("--gpus: '%.*s' is not a GPU index (0..%d) nor all", (int)(end - p > 32 ? 32 : end - p),
                                p, VPT_GPUS_MAX - 1);
            v = v * 10 + (*c - '0');
        }
        if (v >= VPT_GPUS_MAX) return vpt_fail("--gpus: GPU %d is out of range (0..%d)", v, VPT_GPUS_MAX - 1);
        for (int i = 0; i < out->n; i++)
            if (out->index[i] == v) return vpt_fail("--gpus: GPU %d is given twice", v);
        if (out->n == VPT_GPUS_MAX) return vpt_fail("--gpus: more than %d GPUs", VPT_GPUS_MAX);
        out->index[out->n++] = v;
        if (!*end) break;
        p = end + 1;
    }
    return 0;
}

void vpt_gpus_format(const VptGpuSelection *s, char *buf, int size)
{
    if (size <= 0) return;
    buf[0] = '\0';
    if (s->all) {
        snprintf(buf, (size_t)size, "all");
        return;
    }
    int len = 0;
    for (int i = 0; i < s->n && len < size; i++)
        len += snprintf(buf + len, (size_t)(size - len), "%s%d", i ? "," : "", s->index[i]);
}

int vpt_gpus_resolve(const VptGpuSelection *s, int available, int *out)
{
    if (available < 1) return vpt_fail("--gpus: this host has no GPU");
    if (s->all) {
        int n = available < VPT_GPUS_MAX ? available : VPT_GPUS_MAX;
        for (int i = 0; i < n; i++) out[i] = i;
        return n;
    }
    for (int i = 0; i < s->n; i++) {
        if (s->index[i] >= available)
            return vpt_fail("--gpus %d: this host has %d GPU%s (%s%d)", s->index[i], available,
                            available == 1 ? "" : "s", available == 1 ? "" : "0..", available - 1);
        out[i] = s->index[i];
    }
    return s->n;
}
