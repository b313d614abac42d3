/* A compile worker process of the pool (compile_pool.h): started by the
 * pool as a fresh exec of the same program, it loads NVRTC, says hello
 * (the protocol version and its NVRTC), and compiles each request it gets
 * on its socket (compile_protocol.h), answering with the status, the NVRTC
 * time, the log and the cubin, until the pool stops it or closes the
 * socket. It never touches CUDA or the parent's state, and dies with the
 * process that started it.
 *
 * Tests can make a worker fail on purpose: VPT_COMPILE_INJECT=abort, segv,
 * kill, exit, hang or garbage (answer bytes that are no message), for every
 * request or, with "@TEXT", for requests whose source contains TEXT. */
#ifndef VPT_HARNESS_COMPILE_WORKER_H
#define VPT_HARNESS_COMPILE_WORKER_H

/* The worker's life, on socket VPT_COMPILE_WORKER_FD; `parent` is the pid
 * of the process that started it (it exits at once if that one is already
 * gone, and is killed when it dies). Never returns. */
_Noreturn void vpt_compile_worker_main(long parent);

#endif
