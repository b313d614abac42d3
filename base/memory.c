/* Host memory available to this process: see base/memory.h. */
#include "base/memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A number from the first line of a file; -1 when absent or "max". */
static double read_number(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[64];
    double v = -1;
    if (fgets(line, sizeof line, f) && strncmp(line, "max", 3)) v = strtod(line, NULL);
    fclose(f);
    return v;
}

double vpt_memory_available(void)
{
    const char *env = getenv("VPT_MEM_AVAILABLE");
    if (env && *env) return strtod(env, NULL);
    double avail = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "MemAvailable:", 13)) avail = strtod(line + 13, NULL) * 1024.0;
        fclose(f);
    }
    const double lim = read_number("/sys/fs/cgroup/memory.max"), used = read_number("/sys/fs/cgroup/memory.current");
    if (lim > 0) {
        const double left = used > 0 && used < lim ? lim - used : lim;
        if (avail == 0 || left < avail) avail = left;
    }
    return avail;
}

const char *vpt_memory_text(double bytes, char buf[32])
{
    if (bytes >= 1073741824.0) snprintf(buf, 32, "%.2f GiB", bytes / 1073741824.0);
    else if (bytes >= 1048576.0) snprintf(buf, 32, "%.1f MiB", bytes / 1048576.0);
    else snprintf(buf, 32, "%.0f kB", bytes / 1000.0);
    return buf;
}
