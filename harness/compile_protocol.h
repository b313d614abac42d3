/* The messages between the compile pool (compile_pool.h) and its worker
 * processes (compile_worker.h): the protocol version and how a worker is
 * recognised at its start, the message types and layouts, and the encoding
 * of a compile request and of its result. Internal to those two; both
 * sides of one build speak the same version, and a worker of another build
 * refuses to start (VPT_COMPILE_EXIT_NOT_OURS). */
#ifndef VPT_HARNESS_COMPILE_PROTOCOL_H
#define VPT_HARNESS_COMPILE_PROTOCOL_H

#include "harness/nvrtc_compile.h"

#include <stddef.h>
#include <stdint.h>

/* NVRTC's front end recurses deeply on template-heavy code (CUB): give the
 * threads that may run it more stack than a thread's default. */
#define VPT_COMPILE_WORKER_STACK_BYTES ((size_t)64 << 20)

/* Bump when a message layout changes: a worker of another build refuses. */
#define VPT_COMPILE_PROTOCOL 1u
#define VPT_COMPILE_WORKER_ENV "VPT_COMPILE_WORKER"
#define VPT_COMPILE_INJECT_ENV "VPT_COMPILE_INJECT"
#define VPT_COMPILE_WORKER_FD 3
/* Exit status of a program started as a worker of another build. */
#define VPT_COMPILE_EXIT_NOT_OURS 127

enum {
    VPT_COMPILE_MSG_HELLO = 64,   /* worker -> pool: VptCompileHello */
    VPT_COMPILE_MSG_COMPILE = 65, /* pool -> worker: VptCompileWireRequest, then the strings */
    VPT_COMPILE_MSG_RESULT = 66,  /* worker -> pool: VptCompileWireResult, then message, log, cubin */
    VPT_COMPILE_MSG_STOP = 67     /* pool -> worker: empty */
};

typedef struct {
    uint32_t protocol;
    int32_t pid;
    char nvrtc[32];
} VptCompileHello;

/* Followed by name (when has_name), source, nheaders x (include name,
 * header), noptions x option; each string a u64 length and its bytes. */
typedef struct {
    int32_t arch_major, arch_minor;
    int32_t nheaders, noptions;
    int32_t has_name;
    int32_t pad;
} VptCompileWireRequest;

typedef struct {
    int32_t rc;
    int32_t has_log;
    double seconds;
    uint64_t msg_len, log_len, cubin_len;
} VptCompileWireResult;

#define VPT_COMPILE_REQUEST_MAX ((size_t)256 << 20)
#define VPT_COMPILE_REPLY_MAX ((size_t)640 << 20)

/* A growing byte buffer; data is malloc'd (free it). */
typedef struct {
    unsigned char *data;
    size_t len, cap;
} VptCompileBuf;

/* Appends n bytes; -1 (message set) when out of memory or too large. */
int vpt_compile_buf_put(VptCompileBuf *b, const void *p, size_t n);

/* A request as VPT_COMPILE_MSG_COMPILE's payload, appended to b. */
int vpt_compile_request_encode(const VptCompileRequest *req, VptCompileBuf *b);

/* The request a worker received, every string malloc'd (free with
 * vpt_compile_request_free); 0, or -1 when the payload is malformed. */
int vpt_compile_request_decode(const void *payload, size_t len, VptCompileRequest *req);

/* A deep copy of src (the pool keeps its own); 0, or -1 with a message when
 * src has no source or a bad list, or memory ran out. */
int vpt_compile_request_copy(const VptCompileRequest *src, VptCompileRequest *dst);

/* Frees what a decoded or copied request owns; zeroes it. */
void vpt_compile_request_free(VptCompileRequest *r);

/* A worker's answer (rc 0 compiled, the NVRTC seconds, the error message,
 * the log and cubin of res) as VPT_COMPILE_MSG_RESULT's payload, appended
 * to b. */
int vpt_compile_result_encode(int rc, double seconds, const char *msg, const VptCompileResult *res,
                              VptCompileBuf *b);

/* The worker's answer into *out: 0 compiled, -1 failed (message set), -3
 * malformed. */
int vpt_compile_result_decode(const void *payload, size_t len, VptCompileResult *out);

#endif
