#include "harness/nvrtc_compile.h"

#include "base/error.h"

#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef VPT_CUDA_HOME
#define VPT_CUDA_HOME "/usr/local/cuda"
#endif

/* How much of a failed compile's log goes into the error message; the whole
 * log stays in the result. */
#define LOG_LINES_IN_MESSAGE 8
#define LOG_CHARS_IN_MESSAGE 640

int vpt_nvrtc_result(nvrtcResult r, const char *call, const char *file, int line)
{
    if (r == NVRTC_SUCCESS) return 0;
    return vpt_fail("%s failed at %s:%d: %s", call, file, line, nvrtcGetErrorString(r));
}

static pthread_once_t version_once = PTHREAD_ONCE_INIT;
static char version_text[32];

static void version_init(void)
{
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) == NVRTC_SUCCESS) snprintf(version_text, sizeof version_text, "%d.%d", major, minor);
    else snprintf(version_text, sizeof version_text, "unknown");
}

const char *vpt_nvrtc_version(void)
{
    pthread_once(&version_once, version_init);
    return version_text;
}

/* ---- the NVRTC build ---- */

static pthread_once_t build_once = PTHREAD_ONCE_INIT;
static char build_text[160];

static int find_libnvrtc(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const char *name = info->dlpi_name;
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name;
    if (!base || strncmp(base, "libnvrtc.", 9) != 0 || strstr(base, "builtins")) return 0;
    snprintf(data, 4096, "%s", name);
    return 1;
}

/* The version line in the library's read-only data, e.g. "Cuda compilation
 * tools, release 13.0, V13.0.88". 0 when found. */
static int read_build_line(const char *path, char *out, size_t n)
{
    static const char needle[] = "Cuda compilation tools, release ";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st;
    int rc = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        size_t size = (size_t)st.st_size;
        void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map != MAP_FAILED) {
            const char *hit = memmem(map, size, needle, sizeof needle - 1);
            if (hit) {
                size_t left = size - (size_t)(hit - (const char *)map), k = 0;
                while (k < left && k + 1 < n && hit[k] >= 0x20 && hit[k] < 0x7f) {
                    out[k] = hit[k];
                    k++;
                }
                out[k] = '\0';
                rc = 0;
            }
            munmap(map, size);
        }
    }
    close(fd);
    return rc;
}

static void build_init(void)
{
    char path[4096] = "";
    if (dl_iterate_phdr(find_libnvrtc, path) == 1 && read_build_line(path, build_text, sizeof build_text) == 0) return;
    snprintf(build_text, sizeof build_text, "NVRTC %s", vpt_nvrtc_version());
}

const char *vpt_nvrtc_build(void)
{
    pthread_once(&build_once, build_init);
    return build_text;
}

long vpt_cccl_version(const char *cccl_dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/cuda/std/__cccl/version.h", cccl_dir);
    FILE *fp = fopen(path, "re");
    if (!fp) return -1;
    char line[256];
    long v = -1;
    while (v < 0 && fgets(line, sizeof line, fp)) {
        long x;
        if (sscanf(line, " # define CCCL_VERSION %ld", &x) == 1 && x > 0) v = x;
    }
    fclose(fp);
    return v;
}

const char *vpt_cuda_home(void)
{
    const char *h = getenv("VPT_CUDA_HOME");
    if (!h || !*h) h = getenv("CUDA_HOME");
    if (!h || !*h) h = VPT_CUDA_HOME;
    return h;
}

const char *vpt_cccl_include_dir(void)
{
    static _Thread_local char dir[4096];
    const char *home = vpt_cuda_home();
    int n = snprintf(dir, sizeof dir, "%s/include/cccl", home);
    if (n < 0 || (size_t)n >= sizeof dir - 32) {
        vpt_fail("CUDA toolkit path too long: '%s'", home);
        return NULL;
    }
    char probe[4096 + 32];
    snprintf(probe, sizeof probe, "%s/cub/cub.cuh", dir);
    struct stat st;
    if (stat(probe, &st) != 0 || !S_ISREG(st.st_mode)) {
        vpt_fail("CUB headers not found: no %s (the CUDA toolkit's CCCL headers); "
                 "set VPT_CUDA_HOME or CUDA_HOME to a CUDA 12+ toolkit (built for %s)",
                 probe, VPT_CUDA_HOME);
        return NULL;
    }
    return dir;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void vpt_compile_result_free(VptCompileResult *r)
{
    if (!r) return;
    free(r->cubin);
    free(r->log);
    memset(r, 0, sizeof *r);
}

/* Appends the first lines of the log to the current message. */
static void message_with_log(const char *name, nvrtcResult r, const char *log)
{
    char head[LOG_CHARS_IN_MESSAGE + 1];
    size_t n = 0;
    int lines = 0;
    for (const char *p = log; *p && n < LOG_CHARS_IN_MESSAGE && lines < LOG_LINES_IN_MESSAGE; p++) {
        if (*p == '\n') {
            lines++;
            if (!p[1] || lines == LOG_LINES_IN_MESSAGE) break;
        }
        head[n++] = *p;
    }
    head[n] = '\0';
    if (n) vpt_fail("NVRTC compile of %s failed: %s (see log):\n%s", name, nvrtcGetErrorString(r), head);
    else vpt_fail("NVRTC compile of %s failed: %s (empty log)", name, nvrtcGetErrorString(r));
}

int vpt_nvrtc_compile(const VptCompileRequest *req, VptCompileResult *out)
{
    memset(out, 0, sizeof *out);
    const char *name = req->name ? req->name : "(unnamed program)";
    if (!req->source) return vpt_fail("NVRTC compile of %s: no source", name);
    if (req->arch_major < 3 || req->arch_major > 99 || req->arch_minor < 0 || req->arch_minor > 9)
        return vpt_fail("NVRTC compile of %s: bad architecture sm_%d%d", name, req->arch_major, req->arch_minor);
    if (req->nheaders < 0 || req->noptions < 0 || (req->nheaders && (!req->headers || !req->include_names)) ||
        (req->noptions && !req->options))
        return vpt_fail("NVRTC compile of %s: bad header or option list", name);
    const char *cccl = vpt_cccl_include_dir();
    if (!cccl) {
        vpt_error_prefix("NVRTC compile of %s", name);
        return -1;
    }

    char arch[32], inc_cccl[4200], inc_cuda[4200];
    snprintf(arch, sizeof arch, "-arch=sm_%d%d", req->arch_major, req->arch_minor);
    snprintf(inc_cccl, sizeof inc_cccl, "-I%s", cccl);
    snprintf(inc_cuda, sizeof inc_cuda, "-I%s/include", vpt_cuda_home());
    const char *fixed[] = { "-std=c++17", arch, inc_cccl, inc_cuda };
    const int nfixed = (int)(sizeof fixed / sizeof fixed[0]);
    const char **opts = vpt_calloc((size_t)(nfixed + req->noptions), sizeof *opts);
    if (!opts) return -1;
    for (int i = 0; i < nfixed; i++) opts[i] = fixed[i];
    for (int i = 0; i < req->noptions; i++) opts[nfixed + i] = req->options[i];

    double t0 = now_seconds();
    nvrtcProgram prog = NULL;
    int rc = -1;
    if (VPT_NVRTC_TRY(nvrtcCreateProgram, &prog, req->source, name, req->nheaders,
                      (const char *const *)req->headers, (const char *const *)req->include_names)) {
        vpt_error_prefix("NVRTC compile of %s", name);
        prog = NULL;
        goto done;
    }
    nvrtcResult cr = nvrtcCompileProgram(prog, nfixed + req->noptions, opts);

    /* The log is kept whatever the outcome: warnings matter on success too. */
    size_t log_size = 0;
    if (VPT_NVRTC_TRY(nvrtcGetProgramLogSize, prog, &log_size)) goto fail_prefix;
    out->log = vpt_malloc(log_size + 1);
    if (!out->log) goto done;
    out->log[0] = '\0';
    if (log_size > 0 && VPT_NVRTC_TRY(nvrtcGetProgramLog, prog, out->log)) goto fail_prefix;
    out->log[log_size] = '\0';

    if (cr != NVRTC_SUCCESS) {
        message_with_log(name, cr, out->log);
        goto done;
    }
    size_t cubin_size = 0;
    if (VPT_NVRTC_TRY(nvrtcGetCUBINSize, prog, &cubin_size)) goto fail_prefix;
    if (cubin_size == 0) {
        vpt_fail("NVRTC compile of %s produced no CUBIN (options: %s ...)", name, arch);
        goto done;
    }
    out->cubin = vpt_malloc(cubin_size);
    if (!out->cubin) goto done;
    if (VPT_NVRTC_TRY(nvrtcGetCUBIN, prog, out->cubin)) goto fail_prefix;
    out->cubin_size = cubin_size;
    rc = 0;
    goto done;

fail_prefix:
    vpt_error_prefix("NVRTC compile of %s", name);
done:
    if (prog) nvrtcDestroyProgram(&prog);
    free(opts);
    out->seconds = now_seconds() - t0;
    if (rc != 0) {
        free(out->cubin);
        out->cubin = NULL;
        out->cubin_size = 0;
        if (!out->log) out->log = calloc(1, 1);
    }
    return rc;
}
