/* docs/tutorial.md, run as written: every line of its ```sh blocks is
 * extracted from the file (so the tutorial and this test cannot drift
 * apart) and run in a scratch folder holding links to the checkout's bin/,
 * tests/ and scripts/; each must exit 0, and each -o file must then exist.
 * Lines ending in "# GPU" run only where a CUDA GPU is present (elsewhere
 * they are logged as skipped, with the reason); `make` is not run again (the
 * suite was built by it). */
#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include "base/error.h"
#include "harness/cuda_driver.h"
#include "scenes/formats/volume_dicom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char out[1 << 16];

static int sh(const char *cmd)
{
    int st = vpt_test_sh(cmd, out, sizeof out);
    REQUIRE(st != -2);
    return st;
}

TEST_TIMEOUT(tutorial_commands_work_as_written, 300)
{
    FILE *f = fopen("docs/tutorial.md", "r");
    if (!f) SKIP("docs/tutorial.md not found: run the tests from the repository root");
    const char *tmp = vpt_test_tmpdir();
    char root[1024], bin[512], cmd[8192];
    REQUIRE(getcwd(root, sizeof root));
    snprintf(bin, sizeof bin, "%s", vpt_test_tool("render"));
    *strrchr(bin, '/') = '\0';
    snprintf(cmd, sizeof cmd, "cd %s && ln -s %s bin && ln -s %s/tests tests && ln -s %s/scripts scripts", tmp, bin,
             root, root);
    REQUIRE_MSG(sh(cmd) == 0, "%s: %s", cmd, out);
    int gpu = vpt_cuda_load() == 0;
    char no_gpu[512];
    snprintf(no_gpu, sizeof no_gpu, "%s", gpu ? "" : vpt_errmsg());
    vpt_error_clear();
    int dicom = vpt_volume_dicom_shim_path() != NULL, dicom_skipped = 0;
    char no_dicom[512];
    snprintf(no_dicom, sizeof no_dicom, "%s", dicom ? "" : vpt_errmsg());

    char line[2048];
    int in_sh = 0, ran = 0, skipped = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\n")] = '\0';
        if (!strncmp(line, "```", 3)) {
            in_sh = !in_sh && !strcmp(line, "```sh");
            continue;
        }
        if (!in_sh || !line[0] || line[0] == '#') continue;
        /* a trailing "# GPU" marks a GPU step; the comment is not run */
        char *hash = strstr(line, " # ");
        if (!hash) hash = strstr(line, "  #");
        int needs_gpu = hash && strstr(hash, "# GPU");
        if (hash) *hash = '\0';
        for (size_t n = strlen(line); n && line[n - 1] == ' '; n--) line[n - 1] = '\0';
        if (!strcmp(line, "make")) {
            vpt_test_log("docs/tutorial.md:%d: '%s' not run again: this suite was built by it", lineno, line);
            continue;
        }
        if (needs_gpu && !gpu) {
            vpt_test_log("docs/tutorial.md:%d: skipped '%s': no CUDA GPU (%s)", lineno, line, no_gpu);
            skipped++;
            continue;
        }
        /* a DICOM step needs GDCM's runtime (the GPU machines have no
         * registry to install it from): skipped with the reason there */
        if (strstr(line, "dicom") && !dicom) {
            vpt_test_log("docs/tutorial.md:%d: skipped '%s': the GDCM shim cannot load (%s)", lineno, line, no_dicom);
            dicom_skipped++;
            continue;
        }
        snprintf(cmd, sizeof cmd, "cd %s && %s", tmp, line);
        int rc = sh(cmd);
        CHECK_MSG(rc == 0, "docs/tutorial.md:%d: '%s' exited %d: %s", lineno, line, rc, out);
        const char *o = strstr(line, " -o ");
        if (rc == 0 && o) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", tmp, o + 4);
            path[strcspn(path, " ")] = '\0';
            CHECK_MSG(access(path, F_OK) == 0, "docs/tutorial.md:%d: '%s' wrote no %s", lineno, line, o + 4);
        }
        ran++;
    }
    fclose(f);
    CHECK_MSG(!in_sh, "docs/tutorial.md: a ```sh block is not closed");
    CHECK_MSG(ran + dicom_skipped >= 7, "only %d commands ran", ran);
    CHECK_MSG(gpu || skipped >= 4, "only %d GPU steps were found", skipped);
    vpt_test_log("%d commands ran, %d GPU steps and %d DICOM steps skipped", ran, skipped, dicom_skipped);
}
