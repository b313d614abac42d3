/* The length-prefixed messages of vptune's worker processes: one wire for
 * the evaluation workers (eval_worker.c) and the compile pool. */
#include "harness/wire.h"

#include "base/error.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double vpt_wire_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double now_s(void) { return vpt_wire_now(); }

/* Milliseconds left until deadline for poll(): -1 for none (deadline < 0),
 * 0 once passed, rounded up so that a wait never ends early. */
static int ms_left(double deadline)
{
    if (deadline < 0) return -1;
    double left = deadline - now_s();
    if (left <= 0) return 0;
    double ms = left * 1000.0 + 1.0;
    return ms > (double)INT_MAX ? INT_MAX : (int)ms;
}

int vpt_wire_wait(int fd, short events, double deadline)
{
    for (;;) {
        struct pollfd p = {fd, events, 0};
        int ms = ms_left(deadline);
        int r = poll(&p, 1, ms);
        if (r > 0) return 1;
        if (r == 0) {
            if (ms_left(deadline) == 0) return 0;
            continue;
        }
        if (errno == EINTR) continue;
        return vpt_fail_errno("waiting for the worker connection");
    }
}

int vpt_wire_send(int fd, uint32_t type, const void *a, size_t alen, const void *b, size_t blen, double timeout_s)
{
    if (alen > SIZE_MAX - blen) return vpt_fail("worker message too large");
    double deadline = timeout_s < 0 ? -1.0 : now_s() + timeout_s;
    unsigned char hdr[16];
    uint32_t magic = VPT_WIRE_MAGIC;
    uint64_t len = (uint64_t)alen + blen;
    memcpy(hdr, &magic, 4);
    memcpy(hdr + 4, &type, 4);
    memcpy(hdr + 8, &len, 8);
    struct iovec iov[3] = {{hdr, sizeof hdr}, {(void *)a, a ? alen : 0}, {(void *)b, b ? blen : 0}};
    if ((!a && alen) || (!b && blen)) return vpt_fail("internal error: worker message payload missing");
    int i = 0, is_socket = 1;
    while (i < 3) {
        if (iov[i].iov_len == 0) {
            i++;
            continue;
        }
        int ready = vpt_wire_wait(fd, POLLOUT, deadline);
        if (ready < 0) return -1;
        if (ready == 0) return vpt_fail("sending a worker message: no progress within %.1f s", timeout_s);
        ssize_t n = -1;
        if (is_socket) {
            struct msghdr mh;
            memset(&mh, 0, sizeof mh);
            mh.msg_iov = iov + i;
            mh.msg_iovlen = (size_t)(3 - i);
            n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n < 0 && errno == ENOTSOCK) {
                is_socket = 0;
                continue;
            }
        } else {
            n = writev(fd, iov + i, 3 - i);
        }
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
            return vpt_fail_errno("sending a worker message");
        }
        size_t done = (size_t)n;
        while (i < 3 && done >= iov[i].iov_len) {
            done -= iov[i].iov_len;
            iov[i].iov_len = 0;
            i++;
        }
        if (i < 3) {
            iov[i].iov_base = (char *)iov[i].iov_base + done;
            iov[i].iov_len -= done;
        }
    }
    return 0;
}

/* Reads exactly n bytes. *got counts what arrived (to tell a clean end
 * between messages from one inside a message). */
static VptWireStatus read_full(int fd, void *buf, size_t n, double deadline, size_t *got)
{
    *got = 0;
    while (*got < n) {
        int ready = vpt_wire_wait(fd, POLLIN, deadline);
        if (ready < 0) return VPT_WIRE_ERROR;
        if (ready == 0) return VPT_WIRE_TIMEOUT;
        ssize_t r = read(fd, (char *)buf + *got, n - *got);
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
            vpt_fail_errno("reading a worker message");
            return VPT_WIRE_ERROR;
        }
        if (r == 0) return VPT_WIRE_EOF;
        *got += (size_t)r;
    }
    return VPT_WIRE_OK;
}

VptWireStatus vpt_wire_recv(int fd, size_t max_len, double timeout_s, uint32_t *type, void **payload, size_t *len)
{
    *payload = NULL;
    *len = 0;
    double deadline = timeout_s < 0 ? -1.0 : now_s() + timeout_s;
    unsigned char hdr[16];
    size_t got;
    VptWireStatus st = read_full(fd, hdr, sizeof hdr, deadline, &got);
    if (st == VPT_WIRE_EOF && got > 0) {
        vpt_fail("worker connection closed in the middle of a message header (%zu of 16 bytes)", got);
        return VPT_WIRE_ERROR;
    }
    if (st == VPT_WIRE_TIMEOUT) vpt_fail("no worker message within %.1f s", timeout_s);
    if (st != VPT_WIRE_OK) return st;
    uint32_t magic;
    uint64_t n;
    memcpy(&magic, hdr, 4);
    memcpy(type, hdr + 4, 4);
    memcpy(&n, hdr + 8, 8);
    if (magic != VPT_WIRE_MAGIC) {
        vpt_fail("not a worker message: bad magic 0x%08x (expected 0x%08x)", magic, VPT_WIRE_MAGIC);
        return VPT_WIRE_ERROR;
    }
    if (n > max_len) {
        vpt_fail("worker message of type %u has %llu bytes, more than the %zu allowed", *type, (unsigned long long)n,
                 max_len);
        return VPT_WIRE_ERROR;
    }
    if (n == 0) return VPT_WIRE_OK;
    void *p = vpt_malloc((size_t)n);
    if (!p) return VPT_WIRE_ERROR;
    st = read_full(fd, p, (size_t)n, deadline, &got);
    if (st != VPT_WIRE_OK) {
        free(p);
        if (st == VPT_WIRE_EOF) {
            vpt_fail("worker connection closed in the middle of a message (%zu of %llu bytes)", got,
                     (unsigned long long)n);
            return VPT_WIRE_ERROR;
        }
        if (st == VPT_WIRE_TIMEOUT)
            vpt_fail("a worker message was not complete within %.1f s (%zu of %llu bytes)", timeout_s, got,
                     (unsigned long long)n);
        return st;
    }
    *payload = p;
    *len = (size_t)n;
    return VPT_WIRE_OK;
}

void vpt_wire_describe_exit(int status, char *buf, size_t n)
{
    if (status < 0) snprintf(buf, n, "its exit status is unknown (reaped elsewhere)");
    else if (WIFSIGNALED(status))
        snprintf(buf, n, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status)) snprintf(buf, n, "exited with status %d", WEXITSTATUS(status));
    else snprintf(buf, n, "wait status 0x%x", (unsigned)status);
}
