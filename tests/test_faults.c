/* Fault injection without a GPU: results directories that cannot be written
 * and disks that fill up, for the results log (harness/results.h), atomic
 * outputs (base/file.h, and the image and volume writers through it) and
 * bin/render. Each fault must give an error naming the path, and lose
 * nothing already written: earlier results rows load intact, an older file
 * under an output's name stays as it was, and no partial or temporary file
 * is left behind.
 *
 * A full disk is simulated with RLIMIT_FSIZE in a child process (SIGXFSZ
 * ignored, so writes fail with EFBIG the way they fail with ENOSPC) and with
 * /dev/full; an unwritable directory with a path through a regular file and
 * with permissions (when run as root, the test drops to the "nobody" user
 * first, since root ignores permissions). */
#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include "base/error.h"
#include "base/file.h"
#include "harness/results.h"
#include "image/image.h"
#include "scenes/volume.h"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------ helpers */

/* Runs fn(ctx) in a child process whose files may not grow past `limit`
 * bytes; returns fn's result (0 or -1) and copies the child's error message
 * into msg. The limit never touches this process, whose output the test
 * runner logs to a file. */
static int with_file_size_limit(rlim_t limit, int (*fn)(void *), void *ctx, char *msg, size_t msgsz)
{
    int pfd[2];
    REQUIRE(pipe(pfd) == 0);
    fflush(stdout);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        close(pfd[0]);
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl;
        if (getrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(3);
        rl.rlim_cur = limit;
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(3);
        vpt_error_clear();
        int rc = fn(ctx);
        const char *m = vpt_errmsg();
        ssize_t w = write(pfd[1], m, strlen(m));
        (void)w;
        _exit(rc == 0 ? 0 : 1);
    }
    close(pfd[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < msgsz && (r = read(pfd[0], msg + n, msgsz - 1 - n)) > 0) n += (size_t)r;
    msg[n] = '\0';
    close(pfd[0]);
    int st;
    REQUIRE(waitpid(pid, &st, 0) == pid);
    REQUIRE_MSG(WIFEXITED(st) && WEXITSTATUS(st) != 3, "the child could not set RLIMIT_FSIZE (status %d)", st);
    return WEXITSTATUS(st) == 0 ? 0 : -1;
}

typedef struct {
    size_t rows;
    int bad;
} RowCount;

static int count_row(json_t *row, size_t line, void *ctx)
{
    RowCount *c = ctx;
    json_t *i = json_object_get(row, "i");
    if (!json_is_integer(i) || (size_t)json_integer_value(i) != c->rows || line != c->rows + 1) c->bad++;
    c->rows++;
    return 0;
}

/* Appends rows i = from..to-1 (each with some padding). */
static int append_rows(VptResultsFile *f, int from, int to, size_t pad)
{
    char *p = malloc(pad + 1);
    if (!p) return vpt_fail("out of memory");
    memset(p, 'x', pad);
    p[pad] = '\0';
    int rc = 0;
    for (int i = from; i < to && rc == 0; i++) {
        json_t *row = json_pack("{s:i, s:s}", "i", i, "pad", p);
        rc = vpt_results_append(f, row);
        json_decref(row);
    }
    free(p);
    return rc;
}

static long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* Entries of dir besides . and .. */
static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static int file_equals(const char *path, const char *text)
{
    char *d;
    size_t n;
    if (vpt_read_file(path, 1 << 20, &d, &n)) return 0;
    int eq = n == strlen(text) && memcmp(d, text, n) == 0;
    free(d);
    return eq;
}

/* ------------------------------------------------------------ full disk: results */

typedef struct {
    const char *path;
    int from, to;
    size_t pad;
} AppendJob;

static int append_job(void *ctx)
{
    AppendJob *j = ctx;
    VptResultsFile *f = vpt_results_open(j->path);
    if (!f) return -1;
    int rc = append_rows(f, j->from, j->to, j->pad);
    vpt_results_close(f);
    return rc;
}

TEST(faults_results_full_disk_keeps_rows)
{
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s/results/gpu", vpt_test_tmpdir());
    snprintf(path, sizeof path, "%s/bench.jsonl", dir);
    VptResultsFile *f = vpt_results_open(path);
    REQUIRE_MSG(f, "%s", vpt_errmsg());
    REQUIRE(append_rows(f, 0, 3, 10) == 0);
    vpt_results_close(f);
    long long size = file_size(path);
    REQUIRE(size > 0);

    /* The disk fills up part way through a row: the row must fail with the
     * path in the message and leave no part of itself behind. */
    char msg[1024];
    AppendJob big = {path, 3, 4, 4000};
    CHECK_EQ_INT(with_file_size_limit((rlim_t)size + 100, append_job, &big, msg, sizeof msg), -1);
    CHECK_STR_CONTAINS(msg, path);
    CHECK_STR_CONTAINS(msg, "cannot append");
    vpt_test_log("disk full mid-row: %s", msg);
    CHECK_EQ_INT(file_size(path), size);
    /* A disk that is already full: the same. */
    CHECK_EQ_INT(with_file_size_limit((rlim_t)size, append_job, &big, msg, sizeof msg), -1);
    CHECK_STR_CONTAINS(msg, path);
    CHECK_EQ_INT(file_size(path), size);
    /* Room for some rows but not all: the ones that fit are kept whole. */
    AppendJob several = {path, 3, 50, 100};
    CHECK_EQ_INT(with_file_size_limit((rlim_t)size + 1000, append_job, &several, msg, sizeof msg), -1);
    CHECK_STR_CONTAINS(msg, path);
    RowCount c = {0, 0};
    CHECK_EQ_INT(vpt_results_load(path, count_row, &c), 0);
    CHECK(c.rows >= 3 && c.rows < 50);
    CHECK_EQ_INT(c.bad, 0);
    /* With room again, appending goes on where it stopped. */
    AppendJob more = {path, (int)c.rows, (int)c.rows + 2, 10};
    CHECK_EQ_INT(with_file_size_limit(RLIM_INFINITY, append_job, &more, msg, sizeof msg), 0);
    RowCount c2 = {0, 0};
    CHECK_EQ_INT(vpt_results_load(path, count_row, &c2), 0);
    CHECK_EQ_INT(c2.rows, c.rows + 2);
    CHECK_EQ_INT(c2.bad, 0);
    CHECK_EQ_INT(count_files(dir), 1);
}

TEST(faults_results_dev_full)
{
    /* A results file that is /dev/full: every write fails with ENOSPC. */
    char path[700];
    snprintf(path, sizeof path, "%s/full.jsonl", vpt_test_tmpdir());
    if (access("/dev/full", W_OK) != 0) SKIP("no writable /dev/full here");
    REQUIRE(symlink("/dev/full", path) == 0);
    VptResultsFile *f = vpt_results_open(path);
    REQUIRE_MSG(f, "%s", vpt_errmsg());
    vpt_error_clear();
    CHECK_EQ_INT(append_rows(f, 0, 1, 10), -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), path);
    CHECK_STR_CONTAINS(vpt_errmsg(), strerror(ENOSPC));
    vpt_test_log("/dev/full: %s", vpt_errmsg());
    vpt_results_close(f);
}

/* ------------------------------------------------------------ full disk: atomic outputs */

typedef struct {
    const char *path;
    int kind; /* 0 raw bytes, 1 PFM, 2 PNG, 3 Mitsuba VOL */
} WriteJob;

static int write_job(void *ctx)
{
    WriteJob *j = ctx;
    if (j->kind == 0) {
        static char big[1 << 16];
        memset(big, 'y', sizeof big);
        return vpt_write_file_atomic(j->path, big, sizeof big);
    }
    if (j->kind == 3) {
        VptVolume v;
        memset(&v, 0, sizeof v);
        v.nx = v.ny = v.nz = 32;
        v.data = calloc(32 * 32 * 32, sizeof(float));
        for (int k = 0; k < 3; k++) v.spacing[k] = 1.0f;
        if (!v.data) return vpt_fail("out of memory");
        int rc = vpt_volume_save_mitsuba(j->path, &v);
        free(v.data);
        return rc;
    }
    VptImage *img = vpt_image_create(128, 128);
    if (!img) return -1;
    /* noise: no PNG compresses it below the limit */
    uint32_t s = 12345;
    for (size_t i = 0; i < 128 * 128 * 3; i++) {
        s = s * 1664525u + 1013904223u;
        img->rgb[i] = (float)(s >> 8) / 16777216.0f;
    }
    int rc = j->kind == 1 ? vpt_image_write_pfm(j->path, img) : vpt_image_write_png(j->path, img);
    vpt_image_destroy(img);
    return rc;
}

TEST(faults_outputs_full_disk_keep_old_file)
{
    static const char *const names[] = {"data.bin", "image.pfm", "image.png", "volume.vol"};
    for (int kind = 0; kind < 4; kind++) {
        char dir[600], path[700];
        snprintf(dir, sizeof dir, "%s/out%d", vpt_test_tmpdir(), kind);
        REQUIRE(vpt_mkdirs(dir) == 0);
        snprintf(path, sizeof path, "%s/%s", dir, names[kind]);
        REQUIRE(vpt_write_file_atomic(path, "old", 3) == 0);
        WriteJob j = {path, kind};
        char msg[1024];
        CHECK_EQ_INT(with_file_size_limit(1000, write_job, &j, msg, sizeof msg), -1);
        CHECK_STR_CONTAINS(msg, path);
        vpt_test_log("disk full: %s", msg);
        CHECK_STR_CONTAINS(msg, strerror(EFBIG));
        CHECK_MSG(file_equals(path, "old"), "%s: the older file changed", path);
        CHECK_MSG(count_files(dir) == 1, "%s: %d files: a temporary file was left behind", dir, count_files(dir));
        /* With room, the same write replaces the old file. */
        CHECK_EQ_INT(with_file_size_limit(RLIM_INFINITY, write_job, &j, msg, sizeof msg), 0);
        CHECK(file_size(path) > 1000);
        CHECK_EQ_INT(count_files(dir), 1);
    }
}

/* ------------------------------------------------------------ unwritable directories */

TEST(faults_results_path_through_a_file)
{
    /* A results directory that is a regular file (a typo, or a stale file). */
    char file[600], path[700];
    snprintf(file, sizeof file, "%s/results", vpt_test_tmpdir());
    REQUIRE(vpt_write_file_atomic(file, "x", 1) == 0);
    snprintf(path, sizeof path, "%s/gpu/bench.jsonl", file);
    vpt_error_clear();
    CHECK(vpt_results_open(path) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), path);
    CHECK_STR_CONTAINS(vpt_errmsg(), "not a directory");
    vpt_test_log("%s", vpt_errmsg());
    CHECK(file_equals(file, "x"));
    snprintf(path, sizeof path, "%s/image.pfm", file);
    CHECK_EQ_INT(vpt_write_file_atomic(path, "y", 1), -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), path);
}

/* Drops root to "nobody" (root ignores permissions) in this test's process;
 * returns a directory this process owns, or NULL when it cannot be done. */
static const char *unprivileged_dir(void)
{
    static char dir[600];
    const char *tmp = vpt_test_tmpdir();
    if (geteuid() == 0) {
        if (chmod(tmp, 0711) != 0) return NULL;
        snprintf(dir, sizeof dir, "%s/nobody", tmp);
        if (mkdir(dir, 0700) != 0 || chown(dir, 65534, 65534) != 0) return NULL;
        if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0) return NULL;
        if (geteuid() == 0) return NULL;
        return dir;
    }
    snprintf(dir, sizeof dir, "%s", tmp);
    return dir;
}

TEST(faults_results_unwritable_dir)
{
    const char *base = unprivileged_dir();
    if (!base) SKIP("cannot drop root privileges to test permissions");
    char dir[700], path[800];
    snprintf(dir, sizeof dir, "%s/results", base);
    snprintf(path, sizeof path, "%s/bench.jsonl", dir);
    VptResultsFile *f = vpt_results_open(path);
    REQUIRE_MSG(f, "%s", vpt_errmsg());
    REQUIRE(append_rows(f, 0, 2, 10) == 0);
    vpt_results_close(f);
    REQUIRE(chmod(path, 0444) == 0 && chmod(dir, 0555) == 0);

    /* A new results file (and directory) in a read-only directory. */
    char sub[900];
    snprintf(sub, sizeof sub, "%s/h100/bench.jsonl", dir);
    vpt_error_clear();
    CHECK(vpt_results_open(sub) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), sub);
    CHECK_STR_CONTAINS(vpt_errmsg(), strerror(EACCES));
    vpt_test_log("read-only directory (uid %d): %s", (int)geteuid(), vpt_errmsg());
    /* The existing, read-only results file. */
    vpt_error_clear();
    CHECK(vpt_results_open(path) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), path);
    CHECK_STR_CONTAINS(vpt_errmsg(), strerror(EACCES));
    /* An atomic output in the read-only directory. */
    char out[900];
    snprintf(out, sizeof out, "%s/image.pfm", dir);
    vpt_error_clear();
    CHECK_EQ_INT(vpt_write_file_atomic(out, "z", 1), -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), out);
    CHECK_STR_CONTAINS(vpt_errmsg(), strerror(EACCES));
    /* Nothing was lost or added. */
    RowCount c = {0, 0};
    CHECK_EQ_INT(vpt_results_load(path, count_row, &c), 0);
    CHECK_EQ_INT(c.rows, 2);
    CHECK_EQ_INT(c.bad, 0);
    CHECK_EQ_INT(count_files(dir), 1);

    /* bin/render into the read-only directory: a clear error before the
     * render, exit status 1, no file. */
    char cmd[2048], text[8192];
    snprintf(cmd, sizeof cmd, "%s --cpu --scene bucky --spp 1 --width 8 --height 8 -o %s 2>&1",
             vpt_test_tool("render"), out);
    FILE *p = popen(cmd, "r");
    REQUIRE(p);
    size_t n = fread(text, 1, sizeof text - 1, p);
    text[n] = '\0';
    int st = pclose(p);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1);
    CHECK_STR_CONTAINS(text, dir);
    CHECK_STR_CONTAINS(text, "cannot write");
    vpt_test_log("render: %s", text);
    CHECK_EQ_INT(count_files(dir), 1);
    chmod(dir, 0755); /* let the runner clean up */
}

/* ------------------------------------------------------------ bin/render on a full disk */

TEST(faults_render_full_disk)
{
    const char *render = vpt_test_tool("render");
    REQUIRE_MSG(access(render, X_OK) == 0, "%s is missing: run the tests from the repository root after make",
                render);
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s/renders", vpt_test_tmpdir());
    REQUIRE(vpt_mkdirs(dir) == 0);
    snprintf(path, sizeof path, "%s/x.pfm", dir);
    REQUIRE(vpt_write_file_atomic(path, "old", 3) == 0);
    /* 16 blocks of 512 bytes: less than the 48 KiB image. SIGXFSZ ignored in
     * the shell stays ignored in render. */
    char cmd[2048], text[8192];
    snprintf(cmd, sizeof cmd,
             "trap '' XFSZ; ulimit -f 16 && exec %s --cpu --scene bucky --spp 1 --width 64 --height 64 -o %s 2>&1",
             render, path);
    FILE *p = popen(cmd, "r");
    REQUIRE(p);
    size_t n = fread(text, 1, sizeof text - 1, p);
    text[n] = '\0';
    int st = pclose(p);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d: %s", st, text);
    CHECK_STR_CONTAINS(text, path);
    CHECK_STR_CONTAINS(text, "error writing");
    vpt_test_log("render: %s", text);
    CHECK(file_equals(path, "old"));
    CHECK_EQ_INT(count_files(dir), 1);
}
