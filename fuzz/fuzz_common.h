/* Shared helpers of the libFuzzer targets in fuzz/ (not a public API).
 *
 * Each target is one fuzz/fuzz_<name>.c defining LLVMFuzzerTestOneInput. The
 * same file is also compiled into the unit tests (tests/test_fuzz_regressions.c
 * includes it with LLVMFuzzerTestOneInput renamed), which replay the committed
 * corpus and every past finding without libFuzzer. So the targets use only
 * standard C and the project's headers, and they signal a broken property
 * with FUZZ_CHECK, which aborts: libFuzzer and the test runner both report an
 * abort as a failure, with the message. A target returns 0 for every input
 * the code under test handles, rejected inputs included. */
#ifndef VPT_FUZZ_COMMON_H
#define VPT_FUZZ_COMMON_H

#include "base/error.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FUZZ_CHECK(cond, ...)                                                          \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: fuzz property broken: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                              \
            fputc('\n', stderr);                                                       \
            abort();                                                                   \
        }                                                                              \
    } while (0)

/* A failed call must leave a message (the contract of base/error.h). */
#define FUZZ_CHECK_FAILED_WITH_MESSAGE(what)                                           \
    FUZZ_CHECK(vpt_errmsg()[0] != '\0', "%s failed without a message", what)

/* A NUL-terminated copy of the input (caller frees); NULL if out of memory,
 * which the targets treat as "nothing to do". */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s) return NULL;
    if (size) memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* A scratch directory for targets that need files: the test's own one when
 * replayed as a unit test (FUZZ_TMPDIR is then defined), else one made once
 * per fuzzing process under $TMPDIR (or /tmp) and removed at exit. */
#ifndef FUZZ_TMPDIR
static char fuzz_tmpdir_path[512];

static inline void fuzz_tmpdir_remove(void)
{
    if (!fuzz_tmpdir_path[0]) return;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fuzz_tmpdir_path);
    if (system(cmd) != 0) { /* best effort */ }
}

static inline const char *fuzz_tmpdir(void)
{
    if (!fuzz_tmpdir_path[0]) {
        const char *base = getenv("TMPDIR");
        if (!base || !*base) base = "/tmp";
        snprintf(fuzz_tmpdir_path, sizeof fuzz_tmpdir_path, "%s/vptune-fuzz-XXXXXX", base);
        if (!mkdtemp(fuzz_tmpdir_path)) {
            fprintf(stderr, "fuzz: cannot create a scratch directory under %s: %s\n", base, strerror(errno));
            abort();
        }
        atexit(fuzz_tmpdir_remove);
    }
    return fuzz_tmpdir_path;
}
#define FUZZ_TMPDIR() fuzz_tmpdir()
#endif

/* Writes size bytes to dir/name (replacing it); aborts on failure, which
 * here is an environment problem, not a finding. */
static inline void fuzz_write_file(const char *dir, const char *name, const void *data, size_t size,
                                   char *path, size_t pathsz)
{
    snprintf(path, pathsz, "%s/%s", dir, name);
    FILE *fp = fopen(path, "wb");
    if (!fp || (size && fwrite(data, 1, size, fp) != size) || fclose(fp) != 0) {
        fprintf(stderr, "fuzz: cannot write %s: %s\n", path, strerror(errno));
        abort();
    }
}

/* LLVMFuzzerInitialize of a target whose parser is a third-party library
 * run from a plugin behind the fault boundary (base/isolate.h): it sets
 * $shim_env to shim_path (run from the repository root) and the parser's
 * memory limit $VPT_PARSER_MEMORY to `memory`, unless the environment sets
 * them. The limit stays below libFuzzer's 2 GiB malloc limit, so that a
 * large allocation fails in the worker before libFuzzer's malloc hook would
 * count it against the input (docs/decisions/fuzz-third-party-parsers.md). */
#define FUZZ_PLUGIN_INITIALIZE(shim_env, shim_path, memory)     \
    int LLVMFuzzerInitialize(int *argc, char ***argv)           \
    {                                                           \
        (void)argc;                                             \
        (void)argv;                                             \
        setenv(shim_env, shim_path, 0);                         \
        setenv("VPT_PARSER_MEMORY", memory, 0);                 \
        return 0;                                               \
    }

/* In the fuzz build (fuzz/fuzz.mk defines VPT_FUZZ_BUILD; not where the unit
 * tests replay a target), a failed allocation returns NULL, as in the
 * programs, instead of a sanitizer report (operator new throws): the
 * library then refuses the input and the worker goes on, rather than dying
 * and being replaced at every length field beyond the limit. Read by the
 * sanitizer runtime at start-up. */
#ifdef VPT_FUZZ_BUILD
#define FUZZ_ALLOCATOR_MAY_RETURN_NULL              \
    const char *__asan_default_options(void);       \
    const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }
#else
#define FUZZ_ALLOCATOR_MAY_RETURN_NULL
#endif

#endif
