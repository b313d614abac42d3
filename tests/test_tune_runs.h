/* What a `tune` run left, for the CLI tests that compare tunes on several
 * GPUs or MPI ranks with one process's (test_tuner_pool.c,
 * test_tuner_mpi.c); not a test file itself. */
#ifndef VPT_TESTS_TEST_TUNE_RUNS_H
#define VPT_TESTS_TEST_TUNE_RUNS_H

#include "tests/test_tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The sorted "(config, fidelity)" keys of a cache file, one per line, into
 * buf; *dups: how many keys occur twice. */
static inline void vpt_test_cache_keys(const char *path, char *buf, size_t size, int *dups)
{
    char cmd[1200], n[64];
    snprintf(cmd, sizeof cmd, "grep -o '\"config\":\"[^\"]*\",\"schedule\":\"[^\"]*\",\"fidelity\":[01]' %s | sort",
             path);
    vpt_test_sh(cmd, buf, size);
    snprintf(cmd, sizeof cmd, "grep -o '\"config\":\"[^\"]*\",\"schedule\":\"[^\"]*\",\"fidelity\":[01]' %s | sort | "
             "uniq -d | wc -l", path);
    vpt_test_sh(cmd, n, sizeof n);
    *dups = atoi(n);
}

static inline int vpt_test_count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* Whether the sorted key lines of `got` hold every line of `ref` (1) or
 * not (0); *extra counts the lines only `got` has, *extra_full those of
 * them at fidelity 1. */
static inline int vpt_test_keys_cover(const char *ref, const char *got, int *extra, int *extra_full)
{
    *extra = *extra_full = 0;
    const char *a = ref, *b = got;
    while (*a || *b) {
        const char *ae = strchr(a, '\n'), *be = strchr(b, '\n');
        size_t al = *a ? (ae ? (size_t)(ae - a) + 1 : strlen(a)) : 0;
        size_t bl = *b ? (be ? (size_t)(be - b) + 1 : strlen(b)) : 0;
        int c = !al ? 1 : !bl ? -1 : strncmp(a, b, al < bl ? al : bl);
        if (c == 0 && al != bl) c = al < bl ? -1 : 1;
        if (c == 0) {
            a += al;
            b += bl;
        } else if (c < 0) {
            return 0; /* a line of ref that got lacks */
        } else {
            (*extra)++;
            if (bl >= 2 && b[bl - 2] == '1') (*extra_full)++;
            b += bl;
        }
    }
    return 1;
}

/* The report's table of finalists, from "rank" to the line after it that
 * starts the run's summary. */
static inline void vpt_test_tune_table(const char *text, char *buf, size_t size)
{
    const char *t = strstr(text, "\nrank ");
    snprintf(buf, size, "%s", t ? t : "(no table)");
    char *end = strstr(buf, "\nsimulat");
    if (!end) end = strstr(buf, "\nevaluations measured");
    if (end) *end = '\0';
}

/* "random: 150 evaluations" of "random: 150 evaluations (0 from the cache), ...". */
static inline void vpt_test_tune_count(const char *text, const char *strategy, char *buf, size_t size)
{
    char key[64];
    snprintf(key, sizeof key, "%s: ", strategy);
    const char *p = strstr(text, key);
    snprintf(buf, size, "%s", p ? p : "(none)");
    char *c = strstr(buf, " (");
    if (c) *c = '\0';
}

#endif
