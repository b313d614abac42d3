/* A fault boundary for third-party parsers (GDCM, OpenVDB): the parse runs
 * in a child process of its own, so that an abort, a failed assertion, a
 * crash, a runaway allocation or a hang inside a library we do not control
 * becomes an error message naming the file and the limit, while the caller's
 * process (its caches, its open outputs, its other threads) goes on.
 *
 * The child is a fork of the caller: it inherits the already loaded shim and
 * calls it directly (no exec, no helper program to install). Before calling
 * `fn` it
 *   - limits the private writable memory it may add to what it inherited to
 *     `memory` bytes (RLIMIT_DATA over the inherited VmData: a CUDA context's
 *     address-space reservations and the caller's own heap do not count), so
 *     an allocation beyond the limit fails inside the library (std::bad_alloc,
 *     a NULL malloc) instead of exhausting the machine;
 *   - sends its stdout and stderr to a pipe the parent reads (a library's
 *     assertion text becomes part of the message; nothing the child prints
 *     reaches the caller's outputs), and writes no core file;
 *   - dies with the parent (PR_SET_PDEATHSIG).
 * The parent waits at most `seconds` of wall-clock time, then kills it.
 *
 * What crosses back is bytes, through a pipe: a head of exactly the size the
 * caller expects, and a body of at most `max_body` bytes (refused before the
 * parent allocates it). The caller validates every field of both before it
 * uses them: the boundary only guarantees their sizes. */
#ifndef VPT_BASE_ISOLATE_H
#define VPT_BASE_ISOLATE_H

#include <stddef.h>
#include <stdint.h>

/* The limits of one isolated parse. */
typedef struct {
    size_t memory;  /* bytes the child may allocate beyond what it inherits */
    double seconds; /* wall-clock time before the child is killed */
} VptIsolateLimits;

/* The default limit on memory: 2 GiB, or 16 times the input's size when that
 * is larger (a parser holds the file, its decoded values and their copy),
 * never more than this machine's physical memory. Time: 600 s. The
 * environment variables VPT_PARSER_MEMORY (bytes, or with a suffix K, M, G:
 * powers of 1024) and VPT_PARSER_SECONDS override them; a malformed value is
 * an error naming the variable. input_bytes: the size of what is parsed (a
 * series folder: all its files). */
int vpt_isolate_limits(uint64_t input_bytes, VptIsolateLimits *out);

/* What the child sends back: head[0, head_size) and body[0, body_size).
 * owned: what a worker frees after sending (NULL: nothing). */
typedef struct {
    const void *head;
    size_t head_size;
    const void *body;
    size_t body_size;
    void *owned;
} VptIsolateReply;

/* The child's work: 0 with *reply filled (its pointers into the child's own
 * memory), or -1 with a message in err[0, err_size). */
typedef int (*VptIsolateFn)(void *ctx, VptIsolateReply *reply, char *err, size_t err_size);

/* Runs fn(ctx) in a child under lim. On success copies the reply's head into
 * head (it must be exactly head_size bytes) and its body into a new buffer
 * *body (malloc'd, *body_size bytes; NULL when empty; the caller frees it),
 * and returns 0. Otherwise returns -1 with a message naming `name` (the
 * file), `parser` (the library, for the message) and, where a limit was
 * the cause or may have been, the limit and the variable that sets it: the
 * child's own error, a crash (its signal and the last lines it printed), an
 * exit without a reply, the time limit, or a reply larger than max_body. */
int vpt_isolate_run(const char *name, const char *parser, const VptIsolateLimits *lim, VptIsolateFn fn, void *ctx,
                    void *head, size_t head_size, size_t max_body, unsigned char **body, size_t *body_size);

/* A worker: one child that serves many requests, for callers that parse
 * many small inputs (the fuzz targets), where a fork per input would cost
 * more than the parse. The same limits hold for its whole life: memory
 * counts from its start, so it is replaced after 1000 requests (what a
 * parser leaks stays bounded), and after any failure that ends it (a crash,
 * the time limit, a refused reply), the next call starts a fresh one. The
 * request crosses as bytes: fn gets a copy of req[0, req_size) and sets
 * reply->owned to what is to be freed once sent. */
typedef int (*VptIsolateServeFn)(const void *req, size_t req_size, VptIsolateReply *reply, char *err,
                                 size_t err_size);
typedef struct VptIsolateWorker VptIsolateWorker;

/* As vpt_isolate_run, in the worker *w (NULL: none yet; a new one is
 * started, as after a failure that ended the previous one). Not
 * thread-safe for one *w. */
int vpt_isolate_worker_call(VptIsolateWorker **w, const char *name, const char *parser, const VptIsolateLimits *lim,
                            VptIsolateServeFn fn, const void *req, size_t req_size, void *head, size_t head_size,
                            size_t max_body, unsigned char **body, size_t *body_size);

/* Ends the worker (if any) and sets *w to NULL. */
void vpt_isolate_worker_stop(VptIsolateWorker **w);

#endif
