/* How much host memory this process may still take, for refusing work that
 * cannot fit before it allocates (a volume, a large built-in scene) instead
 * of being killed by the kernel's out-of-memory killer part way through. */
#ifndef VPT_BASE_MEMORY_H
#define VPT_BASE_MEMORY_H

/* MemAvailable (/proc/meminfo), lowered to what the cgroup's limit leaves
 * (memory.max - memory.current, cgroup v2) when one is set; the
 * environment variable VPT_MEM_AVAILABLE (bytes) overrides both, for
 * tests. 0 when it cannot be told. */
double vpt_memory_available(void);

/* bytes as "1.25 GiB", "310.0 MiB" or "96 kB", for messages. */
const char *vpt_memory_text(double bytes, char buf[32]);

#endif
