/* Listing the visible GPUs from a child process (contract in
 * harness/gpu_list.h). */
#include "harness/gpu_list.h"

#include "base/error.h"
#include "harness/cuda_driver.h"
#include "harness/wire.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the child writes: a header, then count entries. */
typedef struct {
    int32_t count;   /* -1: failed */
    int32_t no_gpu;
    char msg[1024];
} ListHeader;

#define LIST_TIMEOUT_S 120.0

static void write_all_or_exit(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) _exit(1);
        c += w;
        n -= (size_t)w;
    }
}

static _Noreturn void child_list(int fd)
{
    ListHeader h;
    memset(&h, 0, sizeof h);
    int count = 0;
    if (vpt_cuda_load() != 0 || VPT_CU_TRY(cuDeviceGetCount, &count)) {
        h.count = -1;
        h.no_gpu = 1;
        snprintf(h.msg, sizeof h.msg, "%s", vpt_errmsg());
        write_all_or_exit(fd, &h, sizeof h);
        _exit(0);
    }
    if (count > VPT_GPU_LIST_MAX) count = VPT_GPU_LIST_MAX;
    VptGpuBrief b[VPT_GPU_LIST_MAX];
    memset(b, 0, sizeof b);
    for (int i = 0; i < count; i++) {
        CUdevice dev;
        CUuuid u;
        b[i].ordinal = i;
        if (VPT_CU_TRY(cuDeviceGet, &dev, i) || VPT_CU_TRY(cuDeviceGetName, b[i].name, (int)sizeof b[i].name, dev) ||
            VPT_CU_TRY(cuDeviceGetUuid, &u, dev)) {
            h.count = -1;
            snprintf(h.msg, sizeof h.msg, "GPU %d: %s", i, vpt_errmsg());
            write_all_or_exit(fd, &h, sizeof h);
            _exit(0);
        }
        const unsigned char *x = (const unsigned char *)u.bytes;
        snprintf(b[i].uuid, sizeof b[i].uuid,
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", x[0], x[1], x[2], x[3],
                 x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12], x[13], x[14], x[15]);
    }
    h.count = count;
    if (count == 0) {
        h.count = -1;
        h.no_gpu = 1;
        snprintf(h.msg, sizeof h.msg, "no CUDA GPU: the driver reports 0 devices");
    }
    write_all_or_exit(fd, &h, sizeof h);
    if (count > 0) write_all_or_exit(fd, b, (size_t)count * sizeof b[0]);
    _exit(0);
}

/* Reads n bytes before the deadline; 0, or -1 with a message. */
static int read_all(int fd, void *p, size_t n, double deadline)
{
    char *c = p;
    while (n > 0) {
        int ready = vpt_wire_wait(fd, POLLIN, deadline);
        if (ready < 0) return -1;
        if (ready == 0) return vpt_fail("listing the GPUs: no answer from the child process within %.0f s", LIST_TIMEOUT_S);
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return vpt_fail_errno("listing the GPUs: reading the child's answer");
        if (r == 0) return vpt_fail("listing the GPUs: the child process ended without an answer");
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

int vpt_gpu_list(VptGpuBrief *out, int max, int *no_gpu)
{
    if (no_gpu) *no_gpu = 0;
    if (vpt_cuda_loaded())
        return vpt_fail("internal error: this process has loaded the CUDA driver (vpt_gpu_list is for processes that "
                        "must not)");
    int fds[2];
    if (pipe(fds) != 0) return vpt_fail_errno("listing the GPUs: pipe");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return vpt_fail_errno("listing the GPUs: fork");
    }
    if (pid == 0) {
        close(fds[0]);
        child_list(fds[1]);
    }
    close(fds[1]);
    double deadline = vpt_wire_now() + LIST_TIMEOUT_S;
    ListHeader h;
    VptGpuBrief b[VPT_GPU_LIST_MAX];
    int rc = read_all(fds[0], &h, sizeof h, deadline);
    if (rc == 0 && (h.count > VPT_GPU_LIST_MAX || h.count < -1 || h.count == 0))
        rc = vpt_fail("listing the GPUs: malformed answer (%d devices)", (int)h.count);
    if (rc == 0 && h.count > 0) rc = read_all(fds[0], b, (size_t)h.count * sizeof b[0], deadline);
    close(fds[0]);
    if (rc != 0) kill(pid, SIGKILL);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (rc != 0) return -1;
    if (h.count < 0) {
        h.msg[sizeof h.msg - 1] = '\0';
        if (no_gpu) *no_gpu = h.no_gpu != 0;
        return vpt_fail("%s", h.msg);
    }
    for (int i = 0; i < h.count && i < max; i++) {
        out[i] = b[i];
        out[i].name[sizeof out[i].name - 1] = '\0';
        out[i].uuid[sizeof out[i].uuid - 1] = '\0';
    }
    return h.count;
}

int vpt_gpu_visible_value(int ordinal, char *buf, int size)
{
    const char *env = getenv("CUDA_VISIBLE_DEVICES");
    if (!env || !*env) {
        if (snprintf(buf, (size_t)size, "%d", ordinal) >= size) return vpt_fail("internal error: buffer too small");
        return 0;
    }
    const char *p = env;
    for (int i = 0; i < ordinal && p; i++) {
        p = strchr(p, ',');
        if (p) p++;
    }
    if (!p || !*p)
        return vpt_fail("GPU %d: CUDA_VISIBLE_DEVICES='%s' has no entry %d", ordinal, env, ordinal);
    size_t n = strcspn(p, ",");
    if ((int)n >= size) return vpt_fail("GPU %d: CUDA_VISIBLE_DEVICES entry too long", ordinal);
    memcpy(buf, p, n);
    buf[n] = '\0';
    return 0;
}
