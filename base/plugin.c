/* Locating and opening vptune's optional shared libraries (contract in
 * base/plugin.h). */
#include "base/plugin.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *try_open(const char *file, int flags, char *path, size_t path_size, char *err, size_t err_size)
{
    void *h = dlopen(file, flags);
    if (h) {
        snprintf(path, path_size, "%s", file);
        return h;
    }
    size_t n = strlen(err);
    const char *why = dlerror();
    snprintf(err + n, err_size - n, "%s%s", n ? "; " : "", why ? why : file);
    return NULL;
}

void *vpt_plugin_open(const char *name, const char *env_var, int flags, char *path, size_t path_size, char *err,
                      size_t err_size)
{
    path[0] = '\0';
    err[0] = '\0';
    const char *env = env_var ? getenv(env_var) : NULL;
    if (env && *env) return try_open(env, flags, path, path_size, err, err_size);
    void *h = NULL;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            char p[4200];
            snprintf(p, sizeof p, "%s/%s", exe, name);
            if (access(p, F_OK) == 0) h = try_open(p, flags, path, path_size, err, err_size);
            snprintf(p, sizeof p, "%s/../lib/vptune/%s", exe, name);
            if (!h && access(p, F_OK) == 0) h = try_open(p, flags, path, path_size, err, err_size);
        }
    }
    if (!h && !*err) snprintf(err, err_size, "%s is not beside the program nor in ../lib/vptune", name);
    return h;
}

static int load_once(VptPlugin *p)
{
    void *h = vpt_plugin_open(p->file, p->env, RTLD_NOW | RTLD_LOCAL, p->path, sizeof p->path, p->error,
                              sizeof p->error);
    if (!h) return -1;
    int (*version)(void) = (int (*)(void))(uintptr_t)dlsym(h, p->abi_symbol);
    const int got = version ? version() : -1;
    if (got != p->abi) {
        snprintf(p->error, sizeof p->error, "%s is of another version (ABI %d, expected %d): rebuild and reinstall",
                 p->path, got, p->abi);
        dlclose(h);
        return -1;
    }
    for (int k = 0; k < VPT_PLUGIN_MAX_FNS && p->symbols[k]; k++)
        if (!(p->fn[k] = (void (*)(void))(uintptr_t)dlsym(h, p->symbols[k]))) {
            snprintf(p->error, sizeof p->error, "%s lacks %s", p->path, p->symbols[k]);
            return -1;
        }
    return 0;
}

int vpt_plugin_load(VptPlugin *p)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    if (!p->state) p->state = load_once(p) ? -1 : 1;
    const int ok = p->state == 1;
    pthread_mutex_unlock(&lock);
    return ok ? 0 : -1;
}
