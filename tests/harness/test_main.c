/* The test runner behind `make test`; see test.h for the contract. */
#include "tests/harness/test.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    const char *name;
    VptTestFn fn;
    int timeout_s;
    const char *file;
} TestCase;

enum { MAX_TESTS = 2048, EXIT_SKIP = 77, EXIT_FAIL = 1 };
static TestCase tests[MAX_TESTS];
static int ntests;
static int failed_checks;
static int verbose;
static char tmpdir[512];
static int skip_pipe_fd = -1;

void vpt_test_register(const char *name, VptTestFn fn, int timeout_s, const char *file)
{
    if (ntests == MAX_TESTS) {
        fprintf(stderr, "too many tests\n");
        exit(2);
    }
    tests[ntests++] = (TestCase){name, fn, timeout_s, file};
}

void vpt_test_fail_at(const char *file, int line, const char *fmt, ...)
{
    failed_checks++;
    fprintf(stdout, "    %s:%d: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
}

void vpt_test_stop(void)
{
    fflush(stdout);
    _exit(EXIT_FAIL);
}

void vpt_test_skip(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (skip_pipe_fd >= 0) {
        ssize_t w = write(skip_pipe_fd, buf, strlen(buf));
        (void)w;
    }
    fflush(stdout);
    _exit(failed_checks ? EXIT_FAIL : EXIT_SKIP);
}

void vpt_test_log(const char *fmt, ...)
{
    fputs("    ", stdout);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
}

const char *vpt_test_shared_data(void)
{
    const char *env = getenv("VPT_SHARED_DATA");
    const char *dir = env && *env ? env : "../shared/data";
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? dir : NULL;
}

const char *vpt_test_tmpdir(void) { return tmpdir; }

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Arguments are substrings of test names: a test runs when its name holds
 * one of them (all tests when none is given), unless it holds one given as
 * !SUBSTRING. Options start with '-'. */
static int selected(const TestCase *t, int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (argv[i][0] == '!' && strstr(t->name, argv[i] + 1)) return 0;
    int any = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-' || argv[i][0] == '!') continue;
        any = 1;
        if (strstr(t->name, argv[i])) return 1;
    }
    return !any;
}

static int cmp_name(const void *a, const void *b)
{
    const TestCase *x = a, *y = b;
    int c = strcmp(x->file, y->file);
    return c ? c : strcmp(x->name, y->name);
}

static void rm_rf(const char *dir)
{
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-v")) verbose = 1;
        else if (!strcmp(argv[i], "-l")) {
            for (int j = 0; j < ntests; j++) printf("%s\n", tests[j].name);
            return 0;
        }
    }
    qsort(tests, (size_t)ntests, sizeof tests[0], cmp_name);
    setvbuf(stdout, NULL, _IOLBF, 0);
    int passed = 0, failed = 0, skipped = 0;
    char failures[8192] = "";
    double t_all = now();
    for (int i = 0; i < ntests; i++) {
        TestCase *t = &tests[i];
        if (!selected(t, argc, argv)) continue;
        snprintf(tmpdir, sizeof tmpdir, "/tmp/vptune-test-%ld-%d", (long)getpid(), i);
        mkdir(tmpdir, 0700);
        int pfd[2];
        if (pipe(pfd) != 0) {
            perror("pipe");
            return 2;
        }
        char logpath[600];
        snprintf(logpath, sizeof logpath, "%s.log", tmpdir);
        double t0 = now();
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            close(pfd[0]);
            skip_pipe_fd = pfd[1];
            /* The test's own output is kept and shown only if it fails (or -v). */
            if (!freopen(logpath, "w", stdout)) _exit(EXIT_FAIL);
            setvbuf(stdout, NULL, _IOLBF, 0);
            alarm((unsigned)t->timeout_s);
            t->fn();
            fflush(stdout);
            _exit(failed_checks ? EXIT_FAIL : 0);
        }
        close(pfd[1]);
        char reason[1024] = "";
        ssize_t n = 0, r;
        while ((r = read(pfd[0], reason + n, sizeof reason - 1 - (size_t)n)) > 0) n += r;
        reason[n > 0 ? n : 0] = '\0';
        close(pfd[0]);
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        double dt = now() - t0;
        rm_rf(tmpdir);
        int test_failed = !(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == EXIT_SKIP));
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            passed++;
            printf("PASS %s (%.2fs)\n", t->name, dt);
        } else if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_SKIP) {
            skipped++;
            printf("SKIP %s: %s\n", t->name, reason);
        } else {
            failed++;
            if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
                printf("FAIL %s: timed out after %d s\n", t->name, t->timeout_s);
            else if (WIFSIGNALED(status))
                printf("FAIL %s: killed by signal %d (%s)\n", t->name, WTERMSIG(status), strsignal(WTERMSIG(status)));
            else
                printf("FAIL %s (%.2fs)\n", t->name, dt);
            size_t len = strlen(failures);
            snprintf(failures + len, sizeof failures - len, "  %s (%s)\n", t->name, t->file);
        }
        FILE *lf = fopen(logpath, "r");
        if (lf) {
            if (test_failed || verbose) {
                char line[4096];
                while (fgets(line, sizeof line, lf)) fputs(line, stdout);
            }
            fclose(lf);
        }
        unlink(logpath);
    }
    if (failed) printf("\nFailed tests:\n%s", failures);
    printf("\n(%.1f s)\n%d passed, %d failed, %d skipped\n", now() - t_all, passed, failed, skipped);
    return failed ? 1 : 0;
}
