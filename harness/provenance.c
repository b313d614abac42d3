#include "harness/provenance.h"

#include "base/embedded.h"
#include "base/error.h"
#include "harness/nvrtc_compile.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

void vpt_provenance_fill(VptProvenance *p, const VptGpu *g)
{
    memset(p, 0, sizeof *p);
    if (g) {
        snprintf(p->gpu_name, sizeof p->gpu_name, "%s", g->name);
        snprintf(p->gpu_uuid, sizeof p->gpu_uuid, "%s", g->uuid);
        snprintf(p->driver_release, sizeof p->driver_release, "%s", g->driver_release);
        snprintf(p->cc, sizeof p->cc, "%d.%d", g->cc_major, g->cc_minor);
        p->sm_count = g->sm_count;
        p->cuda_driver_version = g->driver_version;
    } else {
        snprintf(p->gpu_name, sizeof p->gpu_name, "none");
        vpt_driver_release(p->driver_release, sizeof p->driver_release);
    }
    snprintf(p->nvrtc, sizeof p->nvrtc, "%s", vpt_nvrtc_version());
    snprintf(p->commit, sizeof p->commit, "%s", vpt_git_commit);
    if (gethostname(p->host, sizeof p->host) != 0) snprintf(p->host, sizeof p->host, "unknown");
    p->host[sizeof p->host - 1] = '\0';
}

json_t *vpt_provenance_json(const VptProvenance *p)
{
    json_t *gpu = json_pack("{s:s, s:s, s:i, s:s, s:s, s:i}",
                            "name", p->gpu_name, "uuid", p->gpu_uuid, "sm_count", p->sm_count,
                            "cc", p->cc, "driver", p->driver_release,
                            "cuda_driver_version", p->cuda_driver_version);
    if (!gpu) {
        vpt_fail("out of memory building provenance JSON");
        return NULL;
    }
    json_t *o = json_pack("{s:o, s:s, s:s, s:s}", "gpu", gpu, "nvrtc", p->nvrtc, "commit", p->commit,
                          "host", p->host);
    if (!o) vpt_fail("out of memory building provenance JSON");
    return o;
}

void vpt_iso8601_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    if (strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0 && n) buf[0] = '\0';
}

int vpt_gpu_dirname(const char *gpu_name, char *out, size_t n)
{
    /* Exact names of the compared models, as the driver reports them. */
    static const struct { const char *name, *dir; } known[] = {
        { "NVIDIA H100 80GB HBM3", "h100" },
        { "NVIDIA H100 SXM5 80GB", "h100" },
        { "NVIDIA H200", "h200" },
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcmp(gpu_name, known[i].name) == 0) {
            if (strlen(known[i].dir) >= n) return vpt_fail("GPU folder name buffer too small");
            snprintf(out, n, "%s", known[i].dir);
            return 0;
        }
    }
    const char *s = gpu_name;
    if (strncasecmp(s, "NVIDIA ", 7) == 0) s += 7;
    size_t len = 0;
    int dash = 0;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (isalnum(ch)) {
            if (dash && len > 0) {
                if (len + 1 >= n) return vpt_fail("GPU folder name buffer too small for '%s'", gpu_name);
                out[len++] = '-';
            }
            dash = 0;
            if (len + 1 >= n) return vpt_fail("GPU folder name buffer too small for '%s'", gpu_name);
            out[len++] = (char)tolower(ch);
        } else {
            dash = 1;
        }
    }
    if (len == 0) return vpt_fail("GPU name '%s' gives no folder name", gpu_name);
    out[len] = '\0';
    return 0;
}
