#include "harness/results.h"

#include "base/error.h"
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const status_names[VPT_STATUS_COUNT] = {
    [VPT_STATUS_OK] = "ok",
    [VPT_STATUS_COMPILE] = "compile",
    [VPT_STATUS_LAUNCH_LIMITS] = "launch_limits",
    [VPT_STATUS_RUNTIME] = "runtime",
    [VPT_STATUS_INVALID_OUTPUT] = "invalid_output",
    [VPT_STATUS_TIMEOUT] = "timeout",
};

const char *vpt_status_name(VptStatus s)
{
    if ((unsigned)s >= VPT_STATUS_COUNT) return "unknown";
    return status_names[s];
}

int vpt_status_parse(const char *name, VptStatus *out)
{
    for (int i = 0; i < VPT_STATUS_COUNT; i++) {
        if (strcmp(name, status_names[i]) == 0) {
            *out = (VptStatus)i;
            return 0;
        }
    }
    return vpt_fail("unknown result status '%s' (expected ok, compile, launch_limits, runtime, "
                    "invalid_output or timeout)", name);
}

struct VptResultsFile {
    int fd;
    char *path;
};

/* With the lock held: cuts the file back to its last newline if the last
 * line is unfinished. */
static int repair_tail(VptResultsFile *f)
{
    struct stat st;
    if (fstat(f->fd, &st) != 0) return vpt_fail_errno("cannot stat '%s'", f->path);
    off_t size = st.st_size;
    if (size == 0) return 0;
    char last;
    if (pread(f->fd, &last, 1, size - 1) != 1) return vpt_fail_errno("cannot read '%s'", f->path);
    if (last == '\n') return 0;
    char buf[65536];
    off_t end = size, keep = 0;
    while (end > 0) {
        off_t start = end > (off_t)sizeof buf ? end - (off_t)sizeof buf : 0;
        size_t n = (size_t)(end - start);
        if (pread(f->fd, buf, n, start) != (ssize_t)n) return vpt_fail_errno("cannot read '%s'", f->path);
        char *nl = memrchr(buf, '\n', n);
        if (nl) {
            keep = start + (off_t)(nl - buf) + 1;
            break;
        }
        end = start;
    }
    if (ftruncate(f->fd, keep) != 0) return vpt_fail_errno("cannot cut the truncated last line of '%s'", f->path);
    fprintf(stderr, "results: %s: cut off a truncated last line (%lld bytes)\n", f->path,
            (long long)(size - keep));
    return 0;
}

static int lock(VptResultsFile *f)
{
    while (flock(f->fd, LOCK_EX) != 0) {
        if (errno != EINTR) return vpt_fail_errno("cannot lock '%s'", f->path);
    }
    return 0;
}

static void unlock(VptResultsFile *f) { flock(f->fd, LOCK_UN); }

VptResultsFile *vpt_results_open(const char *path)
{
    char dir[4096];
    vpt_dirname(path, dir, sizeof dir);
    if (vpt_mkdirs(dir)) {
        vpt_error_prefix("results file '%s'", path);
        return NULL;
    }
    VptResultsFile *f = vpt_calloc(1, sizeof *f);
    if (!f) return NULL;
    f->path = vpt_strdup(path);
    if (!f->path) {
        free(f);
        return NULL;
    }
    f->fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (f->fd < 0) {
        vpt_fail_errno("cannot open results file '%s'", path);
        free(f->path);
        free(f);
        return NULL;
    }
    int rc = lock(f);
    if (rc == 0) {
        rc = repair_tail(f);
        unlock(f);
    }
    if (rc != 0) {
        vpt_results_close(f);
        return NULL;
    }
    return f;
}

const char *vpt_results_path(const VptResultsFile *f) { return f->path; }

int vpt_results_append(VptResultsFile *f, json_t *row)
{
    if (!json_is_object(row)) return vpt_fail("results row for '%s' is not a JSON object", f->path);
    char *text = json_dumps(row, JSON_COMPACT);
    if (!text) return vpt_fail("cannot serialize a results row for '%s' (out of memory or invalid JSON)", f->path);
    size_t n = strlen(text);
    char *line = vpt_malloc(n + 1);
    if (!line) {
        free(text);
        return -1;
    }
    memcpy(line, text, n);
    line[n++] = '\n';
    free(text);

    int rc = lock(f);
    if (rc == 0) {
        rc = repair_tail(f);
        struct stat st;
        off_t before = 0;
        if (rc == 0 && fstat(f->fd, &st) == 0) before = st.st_size;
        size_t done = 0;
        while (rc == 0 && done < n) {
            ssize_t w = write(f->fd, line + done, n - done);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) {
                rc = vpt_fail_errno("cannot append to results file '%s'", f->path);
                /* Keep the file whole: drop the part of the line written. */
                if (ftruncate(f->fd, before) != 0) { /* the reader skips it */ }
                break;
            }
            done += (size_t)w;
        }
        if (rc == 0 && fsync(f->fd) != 0 && errno != EINVAL)
            rc = vpt_fail_errno("cannot sync results file '%s'", f->path);
        unlock(f);
    }
    free(line);
    return rc;
}

void vpt_results_close(VptResultsFile *f)
{
    if (!f) return;
    close(f->fd);
    free(f->path);
    free(f);
}

int vpt_results_load(const char *path, VptResultsRowFn fn, void *ctx)
{
    FILE *fp = fopen(path, "r");
    if (!fp) {
        if (errno == ENOENT) return 0;
        return vpt_fail_errno("cannot open results file '%s'", path);
    }
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t len;
    int rc = 0;
    while (rc == 0 && (len = getline(&line, &cap, fp)) >= 0) {
        lineno++;
        if (len == 0 || line[len - 1] != '\n') {
            fprintf(stderr, "results: %s:%zu: ignoring a truncated last line\n", path, lineno);
            break;
        }
        size_t i = 0;
        while (i < (size_t)len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == '\n')) i++;
        if (i == (size_t)len) continue;
        json_error_t err;
        json_t *row = json_loadb(line, (size_t)len, 0, &err);
        if (!row) {
            rc = vpt_fail("%s:%zu: not valid JSON: %s", path, lineno, err.text);
            break;
        }
        if (!json_is_object(row)) {
            json_decref(row);
            rc = vpt_fail("%s:%zu: a results row must be a JSON object", path, lineno);
            break;
        }
        rc = fn(row, lineno, ctx);
        json_decref(row);
    }
    if (rc == 0 && ferror(fp)) rc = vpt_fail_errno("error reading results file '%s'", path);
    free(line);
    fclose(fp);
    return rc;
}

json_t *vpt_scene_volume_json(const VptScene *s)
{
    const VptSceneVolume *v = &s->volume;
    json_t *o = json_pack("{s:[i,i,i], s:s, s:I, s:s}", "dims", s->nx, s->ny, s->nz, "format",
                          v->format[0] ? v->format : "f32", "bytes", (json_int_t)vpt_scene_volume_bytes(s), "source",
                          v->source[0] ? v->source : s->name);
    if (o && v->sha256[0]) json_object_set_new(o, "sha256", json_string(v->sha256));
    if (o && v->data_sha256[0]) json_object_set_new(o, "data_sha256", json_string(v->data_sha256));
    if (o && v->resample[0]) json_object_set_new(o, "resample", json_string(v->resample));
    return o;
}
