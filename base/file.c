#include "base/file.h"

#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int vpt_read_file(const char *path, size_t max_bytes, char **data, size_t *size)
{
    /* O_NONBLOCK: a named pipe must not hang the open before it is refused
     * as not a regular file (for regular files the flag changes nothing). */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return vpt_fail_errno("cannot open '%s'", path);
    FILE *fp = fdopen(fd, "rb");
    if (!fp) {
        close(fd);
        return vpt_fail_errno("cannot open '%s'", path);
    }
    struct stat st;
    if (fstat(fileno(fp), &st) != 0) {
        fclose(fp);
        return vpt_fail_errno("cannot stat '%s'", path);
    }
    if (!S_ISREG(st.st_mode)) {
        fclose(fp);
        return vpt_fail("'%s' is not a regular file", path);
    }
    if ((uint64_t)st.st_size > (uint64_t)max_bytes) {
        fclose(fp);
        return vpt_fail("'%s' is %lld bytes, more than the %zu allowed", path, (long long)st.st_size, max_bytes);
    }
    size_t n = (size_t)st.st_size;
    char *buf = vpt_malloc(n + 1);
    if (!buf) {
        fclose(fp);
        return -1;
    }
    size_t got = fread(buf, 1, n, fp);
    int err = ferror(fp);
    fclose(fp);
    if (err || got != n) {
        free(buf);
        return vpt_fail("error reading '%s' (read %zu of %zu bytes)", path, got, n);
    }
    buf[n] = '\0';
    *data = buf;
    *size = n;
    return 0;
}

int64_t vpt_file_size(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return vpt_fail_errno("cannot stat '%s'", path);
    if (!S_ISREG(st.st_mode)) return vpt_fail("'%s' is not a regular file", path);
    return (int64_t)st.st_size;
}

struct VptOutFile {
    FILE *fp;
    char *path;
    char *tmp;
};

static atomic_uint tmp_counter;

VptOutFile *vpt_outfile_open(const char *path)
{
    VptOutFile *f = vpt_calloc(1, sizeof *f);
    if (!f) return NULL;
    size_t n = strlen(path) + 64;
    f->path = vpt_strdup(path);
    f->tmp = vpt_malloc(n);
    if (!f->path || !f->tmp) goto fail;
    snprintf(f->tmp, n, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&tmp_counter, 1));
    f->fp = fopen(f->tmp, "wb");
    if (!f->fp) {
        vpt_fail_errno("cannot write '%s'", path);
        goto fail;
    }
    return f;
fail:
    free(f->path);
    free(f->tmp);
    free(f);
    return NULL;
}

FILE *vpt_outfile_stream(VptOutFile *f) { return f->fp; }

int vpt_outfile_commit(VptOutFile *f)
{
    int rc = 0;
    if (fflush(f->fp) != 0 || ferror(f->fp)) rc = vpt_fail_errno("error writing '%s'", f->path);
    else if (fsync(fileno(f->fp)) != 0 && errno != EINVAL) rc = vpt_fail_errno("error syncing '%s'", f->path);
    if (fclose(f->fp) != 0 && rc == 0) rc = vpt_fail_errno("error closing '%s'", f->path);
    f->fp = NULL;
    if (rc == 0 && rename(f->tmp, f->path) != 0) rc = vpt_fail_errno("cannot rename onto '%s'", f->path);
    if (rc != 0) unlink(f->tmp);
    free(f->path);
    free(f->tmp);
    free(f);
    return rc;
}

void vpt_outfile_abort(VptOutFile *f)
{
    if (!f) return;
    if (f->fp) fclose(f->fp);
    unlink(f->tmp);
    free(f->path);
    free(f->tmp);
    free(f);
}

int vpt_write_file_atomic(const char *path, const void *data, size_t size)
{
    VptOutFile *f = vpt_outfile_open(path);
    if (!f) return -1;
    if (size && fwrite(data, 1, size, f->fp) != size) {
        vpt_fail_errno("error writing '%s'", path);
        vpt_outfile_abort(f);
        return -1;
    }
    return vpt_outfile_commit(f);
}

int vpt_mkdirs(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) return vpt_fail("bad directory path '%s'", path);
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) return vpt_fail_errno("cannot create directory '%s'", buf);
            struct stat st;
            if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) return vpt_fail("'%s' exists and is not a directory", buf);
            buf[i] = c;
        }
    }
    return 0;
}

void vpt_dirname(const char *path, char *out, size_t outsz)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(out, outsz, ".");
        return;
    }
    size_t n = (size_t)(slash - path);
    if (n == 0) n = 1;
    if (n >= outsz) n = outsz - 1;
    memcpy(out, path, n);
    out[n] = '\0';
}
