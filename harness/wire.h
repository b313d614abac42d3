/* The wire of vptune's worker processes (harness/eval_worker.h,
 * harness/compile_pool.h): whole messages over a socket or pipe, with time
 * limits, partial reads and writes and EINTR handled. */
#ifndef VPT_HARNESS_WIRE_H
#define VPT_HARNESS_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* A message is a 16-byte header, magic "VPTW" (u32 0x57545056), type (u32),
 * payload length (u64), then the payload; integers in host order (both
 * sides are one binary). Payloads are the binary structs of eval_worker.c
 * and compile_pool.c. */
#define VPT_WIRE_MAGIC 0x57545056u

/* Sends one message (payload a then b, either may be empty) completely:
 * retries partial writes and EINTR. timeout_s < 0: no limit. On a socket
 * it never raises SIGPIPE (on a pipe the caller must ignore SIGPIPE).
 * -1 with a message (peer gone: "... (Broken pipe)"; time limit). */
int vpt_wire_send(int fd, uint32_t type, const void *a, size_t alen, const void *b, size_t blen, double timeout_s);

typedef enum {
    VPT_WIRE_OK = 0,
    VPT_WIRE_ERROR = -1,   /* I/O error, garbage, a message cut short, one over max_len (message set) */
    VPT_WIRE_EOF = -2,     /* the peer closed the connection between messages */
    VPT_WIRE_TIMEOUT = -3  /* no whole message within timeout_s */
} VptWireStatus;

/* Receives one whole message within timeout_s (< 0: wait forever): retries
 * partial reads and EINTR. A payload over max_len is refused before any
 * allocation. On VPT_WIRE_OK *payload (malloc'd, NULL when empty; caller
 * frees), *type and *len are set. */
VptWireStatus vpt_wire_recv(int fd, size_t max_len, double timeout_s, uint32_t *type, void **payload, size_t *len);

/* CLOCK_MONOTONIC in seconds: the clock of every deadline below. */
double vpt_wire_now(void);

/* Waits until fd is ready for events (poll flags) or the deadline
 * (vpt_wire_now() time; < 0: none) passes, retrying EINTR: 1 ready (or an
 * error or hangup for the next read or write to find), 0 at the deadline,
 * -1 with a message. */
int vpt_wire_wait(int fd, short events, double deadline);

/* A worker's wait status (from waitpid; < 0: reaped elsewhere) in words for
 * error messages, e.g. "killed by signal 9 (Killed)", into buf. */
void vpt_wire_describe_exit(int status, char *buf, size_t n);

#endif
