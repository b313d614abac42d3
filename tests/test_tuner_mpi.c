/* tune under MPI without a GPU: `mpirun -np N bin/tune --replay ...`, each
 * rank replaying the recording as a simulated GPU through the same lanes,
 * messages and pool as a tune on GPUs (tuner/mpi.h, tuner/pool.h). Skipped,
 * with the reason, when the build has no MPI shim or mpirun is missing.
 *
 * mpirun runs as the test runs (as root in CI: OMPI_ALLOW_RUN_AS_ROOT), with
 * --oversubscribe (CI machines have 2 cores) and without the shared-memory
 * single-copy mechanism (containers forbid the ptrace it needs). A tune
 * built with sanitizers runs without LeakSanitizer here: OpenMPI's own
 * allocations at exit are not ours (the same pool and lanes are checked for
 * leaks by test_tuner_pool.c, without MPI). */
#include "tests/harness/test.h"
#include "tests/test_tune_runs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIXTURE "tests/fixtures/tuner/manix_exhaustive.jsonl"
#define MPIRUN                                                                                           \
    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none " \
    "ASAN_OPTIONS=detect_leaks=0 timeout -k 5 100 mpirun --oversubscribe"

static char out[1 << 17];

/* Skips unless this build's MPI shim and mpirun are there. */
static void need_mpi(void)
{
    char shim[600];
    snprintf(shim, sizeof shim, "%s", vpt_test_tool("libvptune-mpi.so"));
    if (access(shim, R_OK) != 0) SKIP("this build has no MPI (%s missing): make MPI=1", shim);
    if (vpt_test_sh("command -v mpirun", out, sizeof out) != 0) SKIP("mpirun is not installed (openmpi-bin)");
    if (access(FIXTURE, R_OK) != 0) SKIP("%s not found: run from the repository root", FIXTURE);
}

/* Every line of a is a line of b (both sorted). */
static int lines_within(const char *a, const char *b)
{
    for (const char *p = a; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
        char line[1024];
        if (len >= sizeof line) return 0;
        memcpy(line, p, len);
        line[len] = '\0';
        int found = 0;
        for (const char *q = b; *q && !found;) {
            const char *qn = strchr(q, '\n');
            size_t ql = qn ? (size_t)(qn - q + 1) : strlen(q);
            found = ql == len && memcmp(q, line, len) == 0;
            q += ql;
        }
        if (!found) return 0;
        p += len;
    }
    return 1;
}

/* The tune of one process, as the reference: keys, table, count line. */
typedef struct {
    char keys[1 << 16];
    char table[4096];
    char evals[128];
} Reference;

static void reference(const char *strategy, Reference *ref)
{
    char cache[600], cmd[2400];
    snprintf(cache, sizeof cache, "%s/one-%s.jsonl", vpt_test_tmpdir(), strategy);
    snprintf(cmd, sizeof cmd, "rm -f %s; %s --replay " FIXTURE " --strategy %s --budget 150evals --seed 3 --cache %s "
             "--quiet", cache, vpt_test_tool("tune"), strategy, cache);
    REQUIRE_MSG(vpt_test_sh(cmd, out, sizeof out) == 0, "%s\n%s", cmd, out);
    vpt_test_tune_table(out, ref->table, sizeof ref->table);
    vpt_test_tune_count(out, strategy, ref->evals, sizeof ref->evals);
    int dups;
    vpt_test_cache_keys(cache, ref->keys, sizeof ref->keys, &dups);
    CHECK_EQ_INT(dups, 0);
}

/* What an MPI run left must be what one process left: the same records
 * (halving may have screened one or two it announced beyond where its
 * budget ended: tuner/pool.h), each once, the same winner. */
static void check_same(const char *what, const char *strategy, const char *cache, const Reference *ref)
{
    static char keys[1 << 16];
    int dups, extra, extra_full;
    vpt_test_cache_keys(cache, keys, sizeof keys, &dups);
    CHECK_MSG(dups == 0, "%s: %d configs written twice", what, dups);
    CHECK_MSG(vpt_test_keys_cover(ref->keys, keys, &extra, &extra_full),
              "%s: the cache lacks configs one process wrote (%d rows, %d)", what, vpt_test_count_lines(keys),
              vpt_test_count_lines(ref->keys));
    int allowed = strcmp(strategy, "halving") == 0 ? 4 : 0;
    CHECK_MSG(extra <= allowed && extra_full == 0, "%s: %d configs one process did not write (%d at fidelity 1)", what,
              extra, extra_full);
    char table[4096], evals[128];
    vpt_test_tune_table(out, table, sizeof table);
    vpt_test_tune_count(out, strategy, evals, sizeof evals);
    CHECK_MSG(strcmp(table, ref->table) == 0, "%s: other finalists or winner:\n%s\nagainst one process's\n%s", what,
              table, ref->table);
    CHECK_MSG(strcmp(evals, ref->evals) == 0, "%s: '%s' against '%s'", what, evals, ref->evals);
}

TEST_TIMEOUT(tuner_mpi_two_ranks_equal_one_process, 300)
{
    need_mpi();
    static const char *const strategies[] = {"random", "exhaustive", "genetic", "halving"};
    for (size_t k = 0; k < sizeof strategies / sizeof strategies[0]; k++) {
        const char *st = strategies[k];
        static Reference ref;
        reference(st, &ref);
        char cache[600], cmd[2400];
        snprintf(cache, sizeof cache, "%s/mpi-%s.jsonl", vpt_test_tmpdir(), st);
        snprintf(cmd, sizeof cmd, MPIRUN " -np 2 %s --replay " FIXTURE " --strategy %s --budget 150evals --seed 3 "
                 "--cache %s --quiet", vpt_test_tool("tune"), st, cache);
        REQUIRE_MSG(vpt_test_sh(cmd, out, sizeof out) == 0, "%s\n%s", cmd, out);
        CHECK_STR_CONTAINS(out, "simulating on 2 GPUs side by side (2 MPI ranks");
        CHECK_STR_CONTAINS(out, "rank 1 on ");
        check_same(st, st, cache, &ref);
        /* every row says who measured it: a simulated GPU, its host, its rank */
        char check[2400];
        snprintf(check, sizeof check, "grep -c '\"measured_by\":{\"gpu\":\"GPU-[0-9a-f-]*#[01]\",\"host\":\"[^\"]*\","
                 "\"rank\":[01]}' %s", cache);
        vpt_test_sh(check, out, sizeof out);
        CHECK_MSG(atoi(out) == vpt_test_count_lines(ref.keys), "%s: %s rows name who measured them, of %d", st, out,
                  vpt_test_count_lines(ref.keys));
    }
}

/* Two ranks on one GPU (here one simulated GPU) take turns and still give
 * one process's tune. */
TEST_TIMEOUT(tuner_mpi_two_ranks_share_one_gpu, 120)
{
    need_mpi();
    static Reference ref;
    reference("random", &ref);
    char cache[600], cmd[2400];
    snprintf(cache, sizeof cache, "%s/shared.jsonl", vpt_test_tmpdir());
    snprintf(cmd, sizeof cmd, "VPT_REPLAY_DELAY_S=0.003 " MPIRUN " -np 2 %s --replay " FIXTURE " --strategy random "
             "--budget 150evals --seed 3 --cache %s --quiet --gpus 0", vpt_test_tool("tune"), cache);
    REQUIRE_MSG(vpt_test_sh(cmd, out, sizeof out) == 0, "%s\n%s", cmd, out);
    CHECK_STR_CONTAINS(out, "rank 1 on ");
    CHECK_STR_CONTAINS(out, "(shares its GPU: they measure in turn)");
    check_same("shared GPU", "random", cache, &ref);
    snprintf(cmd, sizeof cmd, "grep -c '#0\",\"host\":\"[^\"]*\",\"rank\":1}' %s", cache);
    vpt_test_sh(cmd, out, sizeof out);
    CHECK_MSG(atoi(out) > 0, "rank 1 measured nothing on the shared GPU (%s)", out);
}

/* Runs the MPI tune in the background (env: more environment, opts: more
 * mpirun options), kills rank `victim` (a child of mpirun, itself the child
 * of timeout) with SIGKILL once the cache holds more than 40 rows, and
 * waits for mpirun; the output is in out. */
static void run_and_kill(const char *cache, int ranks, const char *env, const char *opts, int victim)
{
    static char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "C=%s; rm -f $C; VPT_REPLAY_DELAY_S=0.02 %s " MPIRUN " %s -np %d %s --replay " FIXTURE
             " --strategy random --budget 150evals --seed 3 --cache $C --quiet > $C.log 2>&1 & m=$!; "
             "i=0; while [ $i -lt 600 ]; do n=$(cat $C 2>/dev/null | wc -l); [ \"$n\" -gt 40 ] && break; "
             "sleep 0.05; i=$((i+1)); done; echo \"rows at the kill: $n\"; "
             "mp=$(grep -l \"^PPid:[[:space:]]*$m\\$\" /proc/[0-9]*/status 2>/dev/null | head -n 1); "
             "mp=${mp#/proc/}; mp=${mp%%/status}; "
             "for s in $(grep -l \"^PPid:[[:space:]]*$mp\\$\" /proc/[0-9]*/status 2>/dev/null); do "
             "  p=${s#/proc/}; p=${p%%/status}; "
             "  if tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=%d; then "
             "    kill -9 $p && echo \"killed rank %d ($p)\"; fi; done; "
             "wait $m; echo \"mpirun exited $?\"; cat $C.log",
             cache, env, opts, ranks, vpt_test_tool("tune"), victim, victim);
    vpt_test_sh(cmd, out, sizeof out);
    vpt_test_log("%s", out);
}

static void kill_and_resume(int victim)
{
    need_mpi();
    static Reference ref;
    reference("random", &ref);
    char cache[600], cmd[2400];
    snprintf(cache, sizeof cache, "%s/killed-%d.jsonl", vpt_test_tmpdir(), victim);
    run_and_kill(cache, 2, "", "", victim);
    char killed[64];
    snprintf(killed, sizeof killed, "killed rank %d", victim);
    REQUIRE_MSG(strstr(out, killed), "rank %d was not found to kill:\n%s", victim, out);
    CHECK_MSG(!strstr(out, "mpirun exited 0"), "the job went on without rank %d:\n%s", victim, out);
    /* nothing half-written, nothing twice, nothing one process would not have measured */
    static char keys[1 << 16];
    int dups;
    vpt_test_cache_keys(cache, keys, sizeof keys, &dups);
    int rows = vpt_test_count_lines(keys);
    CHECK_EQ_INT(dups, 0);
    CHECK_MSG(rows >= 40 && rows < vpt_test_count_lines(ref.keys), "killed with %d rows written (not mid-run)", rows);
    CHECK(lines_within(keys, ref.keys));
    /* the same command resumes, and ends where one process ends */
    snprintf(cmd, sizeof cmd, MPIRUN " -np 2 %s --replay " FIXTURE " --strategy random --budget 150evals --seed 3 "
             "--cache %s --quiet", vpt_test_tool("tune"), cache);
    REQUIRE_MSG(vpt_test_sh(cmd, out, sizeof out) == 0, "%s\n%s", cmd, out);
    char there[64];
    snprintf(there, sizeof there, "(%d evaluations already there)", rows);
    CHECK_STR_CONTAINS(out, there);
    check_same("resumed", "random", cache, &ref);
}

TEST_TIMEOUT(tuner_mpi_kill_rank1_then_resume, 180) { kill_and_resume(1); }
TEST_TIMEOUT(tuner_mpi_kill_rank0_then_resume, 180) { kill_and_resume(0); }

/* With a launcher that lets the job go on (mpirun --enable-recovery), a
 * rank that dies is reported and its config evaluated by another. */
TEST_TIMEOUT(tuner_mpi_lost_rank_is_reported_and_the_tune_goes_on, 180)
{
    need_mpi();
    static Reference ref;
    reference("random", &ref);
    char cache[600];
    snprintf(cache, sizeof cache, "%s/recovered.jsonl", vpt_test_tmpdir());
    run_and_kill(cache, 3, "VPT_MPI_SILENCE_S=2 VPT_MPI_FINALIZE_S=5", "--enable-recovery", 2);
    REQUIRE_MSG(strstr(out, "killed rank 2"), "rank 2 was not found to kill:\n%s", out);
    /* the job ends: cleanly, or, when Open MPI's finalize waits on the
     * dead rank (it does under load), by the finalize time limit */
    CHECK_MSG(strstr(out, "mpirun exited 0") || strstr(out, "MPI_Finalize did not return"),
              "the job did not end by itself:\n%s", out);
    CHECK_MSG(!strstr(out, "mpirun exited 124"), "the job did not end by itself:\n%s", out);
    CHECK_STR_CONTAINS(out, "is lost (no message from rank 2 for");
    CHECK_STR_CONTAINS(out, "evaluations (lost)");
    check_same("a rank lost", "random", cache, &ref);
}

TEST_TIMEOUT(tuner_mpi_refuses_different_gpus, 120)
{
    need_mpi();
    char other[600], cmd[2048];
    snprintf(other, sizeof other, "%s/h200.jsonl", vpt_test_tmpdir());
    snprintf(cmd, sizeof cmd, "sed 's/NVIDIA H100 80GB HBM3/NVIDIA H200/g' " FIXTURE " > %s", other);
    REQUIRE(vpt_test_sh(cmd, out, sizeof out) == 0);
    snprintf(cmd, sizeof cmd, MPIRUN " -np 1 %s --replay " FIXTURE " --budget 5evals --quiet : -np 1 %s --replay %s "
             "--budget 5evals --quiet", vpt_test_tool("tune"), vpt_test_tool("tune"), other);
    CHECK(vpt_test_sh(cmd, out, sizeof out) != 0);
    CHECK_STR_CONTAINS(out, "tune: error: only identical GPUs are mixed in one tune, and GPU differs: rank 1 on ");
    CHECK_STR_CONTAINS(out, "has 'NVIDIA H200', rank 0 on ");
    CHECK_STR_CONTAINS(out, "has 'NVIDIA H100 80GB HBM3'");
    CHECK(!strstr(out, "simulating on"));
}

TEST_TIMEOUT(tuner_mpi_without_the_shim_says_what_to_do, 60)
{
    need_mpi();
    char cmd[2400];
    snprintf(cmd, sizeof cmd, "VPT_MPI_SHIM=/nonexistent/libvptune-mpi.so " MPIRUN " -np 2 %s --replay " FIXTURE
             " --budget 5evals", vpt_test_tool("tune"));
    CHECK(vpt_test_sh(cmd, out, sizeof out) != 0);
    CHECK_STR_CONTAINS(out, "tune: error: this program was started by an MPI launcher, and its MPI shim could not "
                            "be loaded (/nonexistent/libvptune-mpi.so");
    CHECK_STR_CONTAINS(out, "make MPI=1");
}
