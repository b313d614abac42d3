/* --version: see cli/version.h. */
#include "cli/version.h"

#include "base/embedded.h"
#include "harness/cuda_driver.h"
#include "harness/nvrtc_compile.h"

#include <string.h>

void vpt_print_version(FILE *fp, const char *prog)
{
    char driver[64];
    vpt_driver_release(driver, sizeof driver);
    fprintf(fp, "%s (vptune) commit %s\n", prog, vpt_git_commit);
    fprintf(fp, "NVRTC %s (%s)\n", vpt_nvrtc_version(), vpt_nvrtc_build());
    if (strcmp(driver, "unknown") == 0) fprintf(fp, "driver: none found (no NVIDIA driver on this machine)\n");
    else fprintf(fp, "driver %s\n", driver);
}

int vpt_handle_version(int argc, char **argv, const char *prog)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--version") == 0) {
            vpt_print_version(stdout, prog);
            return 1;
        }
    return 0;
}
