/* Replays every libFuzzer target's committed seed corpus (fuzz/corpus/<t>/)
 * and its past findings (fuzz/regressions/<t>/) through the target's own
 * code, without libFuzzer: each fuzz/fuzz_<t>.c is compiled in here with its
 * entry point renamed, so the same properties are checked (a broken one
 * aborts the test's process, which fails the test). Run from the repository
 * root, as `make test` does; under `make test SANITIZE=1` the replay runs
 * with ASan and UBSan. */
#include "tests/harness/test.h"

#include "base/file.h"

#include <dirent.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

/* The targets' scratch files go to the test's own directory. */
#define FUZZ_TMPDIR() vpt_test_tmpdir()

#define LLVMFuzzerTestOneInput fuzz_one_volume_mitsuba
#include "fuzz/fuzz_volume_mitsuba.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_one_volume_metaimage
#include "fuzz/fuzz_volume_metaimage.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_one_volume_nrrd
#include "fuzz/fuzz_volume_nrrd.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_one_volume_nanovdb
#include "fuzz/fuzz_volume_nanovdb.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_one_pfm
#include "fuzz/fuzz_pfm.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_one_env_map
#include "fuzz/fuzz_env_map.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_one_config
#include "fuzz/fuzz_config.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_one_parse_numbers
#include "fuzz/fuzz_parse_numbers.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_one_results_load
#include "fuzz/fuzz_results_load.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_one_tuner_cache
#include "fuzz/fuzz_tuner_cache.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_one_mitsuba_xml
#include "fuzz/fuzz_mitsuba_xml.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_one_scene_args
#include "fuzz/fuzz_scene_args.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_one_estimators
#include "fuzz/fuzz_estimators.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_one_tuner_sequences
#include "fuzz/fuzz_tuner_sequences.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_one_gpus
#include "fuzz/fuzz_gpus.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_one_volume_dicom
#define LLVMFuzzerInitialize fuzz_init_volume_dicom
#include "fuzz/fuzz_volume_dicom.c"
#undef LLVMFuzzerTestOneInput
#undef LLVMFuzzerInitialize
#define LLVMFuzzerTestOneInput fuzz_one_volume_vdb
#define LLVMFuzzerInitialize fuzz_init_volume_vdb
#include "fuzz/fuzz_volume_vdb.c"
#undef LLVMFuzzerTestOneInput
#undef LLVMFuzzerInitialize
#define LLVMFuzzerTestOneInput fuzz_one_env_map_exr
#define LLVMFuzzerInitialize fuzz_init_env_map_exr
#include "fuzz/fuzz_env_map_exr.c"
#undef LLVMFuzzerTestOneInput
#undef LLVMFuzzerInitialize

typedef int (*FuzzOne)(const uint8_t *data, size_t size);

/* Runs fn on every file of dir; returns how many, or -1 when dir is absent. */
static int replay_dir(const char *dir, FuzzOne fn)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *data;
        size_t size;
        if (vpt_read_file(path, (size_t)16 << 20, &data, &size) != 0) {
            CHECK_MSG(0, "%s", vpt_errmsg());
            continue;
        }
        /* Printed before the input runs: a crash then names it. */
        printf("    replaying %s (%zu bytes)\n", path, size);
        fflush(stdout);
        CHECK_EQ_INT(fn((const uint8_t *)data, size), 0);
        free(data);
        n++;
    }
    closedir(d);
    return n;
}

static void replay(const char *target, FuzzOne fn)
{
    char corpus[256], regressions[256];
    snprintf(corpus, sizeof corpus, "fuzz/corpus/%s", target);
    snprintf(regressions, sizeof regressions, "fuzz/regressions/%s", target);
    int nc = replay_dir(corpus, fn);
    REQUIRE_MSG(nc > 0, "%s has no seeds (run the tests from the repository root)", corpus);
    int nr = replay_dir(regressions, fn);
    vpt_test_log("%s: %d seeds, %d regression inputs", target, nc, nr < 0 ? 0 : nr);
}

TEST(fuzz_regressions_volume_mitsuba) { replay("volume_mitsuba", fuzz_one_volume_mitsuba); }
TEST(fuzz_regressions_volume_metaimage) { replay("volume_metaimage", fuzz_one_volume_metaimage); }
TEST(fuzz_regressions_volume_nrrd) { replay("volume_nrrd", fuzz_one_volume_nrrd); }
TEST(fuzz_regressions_volume_nanovdb) { replay("volume_nanovdb", fuzz_one_volume_nanovdb); }
TEST(fuzz_regressions_pfm) { replay("pfm", fuzz_one_pfm); }
TEST(fuzz_regressions_env_map) { replay("env_map", fuzz_one_env_map); }
TEST(fuzz_regressions_config) { replay("config", fuzz_one_config); }
TEST(fuzz_regressions_parse_numbers) { replay("parse_numbers", fuzz_one_parse_numbers); }
TEST(fuzz_regressions_results_load) { replay("results_load", fuzz_one_results_load); }
TEST(fuzz_regressions_tuner_cache) { replay("tuner_cache", fuzz_one_tuner_cache); }
TEST(fuzz_regressions_mitsuba_xml) { replay("mitsuba_xml", fuzz_one_mitsuba_xml); }
TEST(fuzz_regressions_scene_args) { replay("scene_args", fuzz_one_scene_args); }
TEST(fuzz_regressions_estimators) { replay("estimators", fuzz_one_estimators); }
TEST(fuzz_regressions_tuner_sequences) { replay("tuner_sequences", fuzz_one_tuner_sequences); }
TEST(fuzz_regressions_gpus) { replay("gpus", fuzz_one_gpus); }
TEST(fuzz_regressions_volume_dicom)
{
    (void)fuzz_init_volume_dicom;
    if (!vpt_volume_dicom_shim_path()) SKIP("the GDCM shim (bin/libvptune-dicom.so) is not built or cannot load");
    replay("volume_dicom", fuzz_one_volume_dicom);
}
TEST(fuzz_regressions_volume_vdb)
{
    (void)fuzz_init_volume_vdb;
    if (!vpt_volume_vdb_shim_path()) SKIP("the OpenVDB shim (bin/libvptune-openvdb.so) is not built or cannot load");
    replay("volume_vdb", fuzz_one_volume_vdb);
}
TEST(fuzz_regressions_env_map_exr)
{
    (void)fuzz_init_env_map_exr;
    if (!vpt_env_map_exr_shim_path()) SKIP("the OpenEXR plugin (bin/libvptune-openexr.so) is not built or cannot load");
    replay("env_map_exr", fuzz_one_env_map_exr);
}

/* The experiment-spec target is Python (fuzz/fuzz_experiment_spec.py): its
 * --replay mode runs the same checks on the committed inputs, and compares
 * config texts with the C parser when build-fuzz/bin/config_answer exists. */
TEST(fuzz_regressions_experiment_spec)
{
    if (access("fuzz/fuzz_experiment_spec.py", R_OK) != 0 || access("experiments/vptexp.py", R_OK) != 0)
        SKIP("fuzz/fuzz_experiment_spec.py or experiments/vptexp.py not found: run from the repository root");
    if (system("python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 8) else 1)' >/dev/null 2>&1") != 0)
        SKIP("python3 (3.8 or newer) is not available");
    FILE *p = popen("python3 fuzz/fuzz_experiment_spec.py --replay fuzz/corpus/experiment_spec "
                    "fuzz/regressions/experiment_spec 2>&1",
                    "r");
    REQUIRE(p);
    char out[8192];
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    vpt_test_log("%s", out);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "replay failed: %s", out);
    CHECK_STR_CONTAINS(out, "replayed");
}

/* Each fuzz/fuzz_<t>.c must be replayed above: a target added without its
 * replay fails here. */
TEST(fuzz_regressions_cover_every_target)
{
    static const char *const replayed[] = {"volume_mitsuba", "volume_metaimage", "volume_nrrd", "pfm",
                                           "config", "parse_numbers", "results_load", "tuner_cache",
                                           "mitsuba_xml", "volume_dicom", "scene_args", "estimators",
                                           "volume_nanovdb", "volume_vdb", "tuner_sequences", "gpus", "env_map",
                                           "env_map_exr"};
    DIR *d = opendir("fuzz");
    REQUIRE_MSG(d, "no fuzz/ directory (run the tests from the repository root)");
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "fuzz_", 5) == 0 && len > 8 && strcmp(e->d_name + len - 3, ".py") == 0) {
            CHECK_MSG(strcmp(e->d_name, "fuzz_experiment_spec.py") == 0,
                      "fuzz/%s has no replay in tests/test_fuzz_regressions.c", e->d_name);
            continue;
        }
        if (strncmp(e->d_name, "fuzz_", 5) != 0 || len < 8 || strcmp(e->d_name + len - 2, ".c") != 0) continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(len - 7), e->d_name + 5);
        int found = 0;
        for (size_t i = 0; i < sizeof replayed / sizeof replayed[0]; i++) found |= !strcmp(name, replayed[i]);
        CHECK_MSG(found, "fuzz/%s has no replay in tests/test_fuzz_regressions.c", e->d_name);
        n++;
    }
    closedir(d);
    CHECK_EQ_INT(n, (int)(sizeof replayed / sizeof replayed[0]));
}
