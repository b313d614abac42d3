/* Error reporting for all of vptune's host code.
 *
 * Contract: a fallible function returns -1 (or NULL) and leaves a message that
 * names what was wrong (the file, flag or value and why) in a per-thread
 * buffer; it returns 0 (or non-NULL) on success and leaves the buffer alone.
 * The caller that gives up prints vpt_errmsg(); a caller that adds context
 * calls vpt_error_prefix() before returning -1 itself. Messages never end in a
 * newline. Nothing here allocates, so it works after an out-of-memory error. */
#ifndef VPT_BASE_ERROR_H
#define VPT_BASE_ERROR_H

#include <stddef.h>

#define VPT_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Sets the message; always returns -1 so `return vpt_fail(...)` reads well. */
int vpt_fail(const char *fmt, ...) VPT_PRINTF(1, 2);
/* Like vpt_fail, with ": <strerror(errno)>" appended (errno read on entry). */
int vpt_fail_errno(const char *fmt, ...) VPT_PRINTF(1, 2);
/* Prepends "<context>: " to the current message. */
void vpt_error_prefix(const char *fmt, ...) VPT_PRINTF(1, 2);
/* The current thread's message ("" if none was set). */
const char *vpt_errmsg(void);
void vpt_error_clear(void);

/* Checks a system call, as VPT_NVRTC_TRY and VPT_CU_TRY check NVRTC and the
 * driver: 0 on success, else -1 with the message
 *   "<call as written> failed at <file>:<line>: <ERRNO NAME> (<strerror>)".
 * VPT_SYS_TRY is for calls that return -1 and set errno (close, socketpair,
 * kill, ...); VPT_ERRNO_TRY for those that return 0 or an error number
 * (posix_spawn, pthread_create, ...). VPT_SYS_FAIL(text) reports errno for a
 * call whose result was checked by hand (an fd, a pid). */
#define VPT_SYS_TRY(fn, ...) \
    vpt_sys_result((fn(__VA_ARGS__)) == -1 ? vpt_errno_or_unknown() : 0, #fn "(" #__VA_ARGS__ ")", __FILE__, __LINE__)
#define VPT_ERRNO_TRY(fn, ...) vpt_sys_result(fn(__VA_ARGS__), #fn "(" #__VA_ARGS__ ")", __FILE__, __LINE__)
#define VPT_SYS_FAIL(call_text) vpt_sys_result(vpt_errno_or_unknown(), call_text, __FILE__, __LINE__)
int vpt_sys_result(int err, const char *call, const char *file, int line);
/* errno, or EIO when a failing call left it 0 (never "success"). */
int vpt_errno_or_unknown(void);
/* "ENOENT" for ENOENT; "error 1234" for numbers without a name. Never NULL. */
const char *vpt_errno_name(int err, char *buf, size_t n);

/* Prints "<prog>: error: <vpt_errmsg()>" to stderr. */
void vpt_report_error(const char *prog);

/* Aborts the process with file:line when an internal invariant breaks (a bug,
 * never bad input). */
#define VPT_ASSERT(cond) \
    do { if (!(cond)) vpt_assert_fail(#cond, __FILE__, __LINE__); } while (0)
_Noreturn void vpt_assert_fail(const char *what, const char *file, int line);

/* malloc/calloc/realloc that set the error message on failure. */
void *vpt_malloc(size_t n);
void *vpt_calloc(size_t count, size_t size);
void *vpt_realloc(void *p, size_t n);
char *vpt_strdup(const char *s);

#endif
