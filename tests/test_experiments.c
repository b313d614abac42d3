/* The experiment runner's Python side against the C it mirrors.
 *
 * experiments/vptexp.py re-implements vpt_config_parse, vpt_config_format and
 * vpt_config_check so that experiments/run can canonicalize and filter
 * configs without a build; these tests feed both the same texts and demand
 * the same answers, so the two cannot drift apart. They also run the
 * runner's and the report generator's own Python unit tests. Skipped (with
 * the reason) when python3 or the experiments/ folder is missing, i.e. when
 * the tests do not run from the repository root. */
#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include "codegen/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void need_python(void)
{
    if (access("experiments/vptexp.py", R_OK) != 0)
        SKIP("experiments/vptexp.py not found: run the tests from the repository root");
    if (system("python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 8) else 1)' >/dev/null 2>&1") != 0)
        SKIP("python3 (3.8 or newer) is not available");
}

/* What the C side says about text, in vptexp.py canon's words. */
static void c_answer(const char *text, char *out, size_t n)
{
    VptConfig c;
    if (vpt_config_parse(text, &c) != 0) {
        snprintf(out, n, "error");
        return;
    }
    char canon[VPT_CONFIG_STR_MAX];
    vpt_config_format(&c, canon, sizeof canon);
    snprintf(out, n, "%s %s", vpt_config_check(&c) == 0 ? "ok" : "invalid", canon);
}

static const char *const malformed[] = {
    "", ",", "block=", "=256", "block=33", "block=1056", "block=0", "maxrregcount=23", "maxrregcount=256",
    "maxrregcount=-1", "ppt=3", "ppt=0", "grid=65", "grid=-1", "threshold=101", "threshold=-1", "foo=1",
    "block=256,block=128", "block=256,naiveSK", "naiveSK,", ",naiveSK", "naive SK", "block= 256", "block=+256",
    "block=0x100", "block=256 ", "threshold=-0", "regen=Thread", "reorder=sort", "kernels=many",
    "sortkey=time", "naiveSK,regen=warp", "NAIVESK", "regenerationsk", "streamingsk-MORTON",
    "sortingSK,sortkey=termination", "streamingSK,threshold=0", "streamingMK,regen=none",
    "regen=device", "kernels=multi,reorder=morton", "regenerationSK-warp,grid=8,threshold=50",
    "naiveSK,grid=4", "naiveMK,block=1024,maxrregcount=128", "block=1024,maxrregcount=64",
    "streamingSK,ppt=4,block=1024", "a=b=c", "block=256,,ppt=2", "regen=block,reorder=compact",
    "lookahead=3", "lookahead=0", "naiveSK,lookahead=4", "coop=3", "coop=32", "coop=-4", "coop=0",
    "streamingSK,coop=16", "regenerationSK-warp,coop=4,lookahead=4", "flights=fast", "flights=", "flights=Async",
    "regenerationSK-warp,flights=sync,flights=async",
};

TEST(experiments_config_mirror)
{
    need_python();
    char in[512], out[512], cmd[1200];
    snprintf(in, sizeof in, "%s/configs.txt", vpt_test_tmpdir());
    snprintf(out, sizeof out, "%s/answers.txt", vpt_test_tmpdir());
    FILE *f = fopen(in, "w");
    REQUIRE(f);
    int n = 0;
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++, n++) fprintf(f, "%s\n", malformed[i]);
    static const char *const regen[] = {"none", "thread", "warp", "block", "device"};
    static const char *const reorder[] = {"none", "compact", "morton", "morton_delayed"};
    static const char *const kernels[] = {"single", "multi"};
    static const int maxrreg[] = {0, 24, 32, 40, 128, 255}, block[] = {32, 256, 512, 1024}, ppt[] = {1, 4};
    static const int grid[] = {0, 8}, threshold[] = {0, 50, 100}, lookahead[] = {1, 4}, coop[] = {0, 4};
    static const char *const sortkey[] = {"position", "termination"};
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 4; b++)
            for (int k = 0; k < 2; k++)
                for (int m = 0; m < 6; m++)
                    for (int bl = 0; bl < 4; bl++)
                        for (int p = 0; p < 2; p++)
                            for (int g = 0; g < 2; g++)
                                for (int t = 0; t < 3; t++)
                                    for (int s = 0; s < 2; s++)
                                        for (int l = 0; l < 4; l++, n++)
                                            fprintf(f,
                                                    "block=%d,regen=%s,reorder=%s,kernels=%s,maxrregcount=%d,"
                                                    "ppt=%d,grid=%d,threshold=%d,sortkey=%s,lookahead=%d,coop=%d\n",
                                                    block[bl], regen[a], reorder[b], kernels[k], maxrreg[m],
                                                    ppt[p], grid[g], threshold[t], sortkey[s], lookahead[l % 2],
                                                    coop[l / 2]);
    /* the estimator keys and flights, over the schedules that differ on them */
    static const char *const estimator[] = {"", ",majorant=skip", ",majorant=grid32,density=u8", ",majorant=skip,volume=sparse",
                                            ",majorant=grid8,volume=sparse,density=f16"};
    static const char *const flights[] = {"", ",flights=sync", ",flights=async"};
    static const char *const sched[] = {"naiveSK", "regenerationSK-thread", "regenerationSK-warp,threshold=50",
                                        "regenerationSK-block", "streamingMK", "regenerationSK-warp,coop=4",
                                        "regenerationSK-thread,ppt=2", "regenerationSK-warp,lookahead=2,grid=2"};
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 3; b++)
            for (int e = 0; e < 5; e++, n++) fprintf(f, "%s%s%s\n", sched[a], flights[b], estimator[e]);
    const VptSchedule *sch;
    int ns = vpt_config_schedules(&sch);
    for (int i = 0; i < ns; i++, n += 3) {
        fprintf(f, "%s\n", sch[i].name);
        fprintf(f, "%s,block=128,maxrregcount=64\n", sch[i].name);
        fprintf(f, "%s,threshold=0,grid=2,ppt=2\n", sch[i].name);
    }
    fclose(f);
    snprintf(cmd, sizeof cmd, "python3 experiments/vptexp.py canon < '%s' > '%s'", in, out);
    REQUIRE_MSG(system(cmd) == 0, "'%s' failed", cmd);

    FILE *fi = fopen(in, "r"), *fo = fopen(out, "r");
    REQUIRE(fi && fo);
    char text[1100], py[1100], c[1100];
    int line = 0, differ = 0;
    while (fgets(text, sizeof text, fi)) {
        line++;
        text[strcspn(text, "\n")] = '\0';
        if (!fgets(py, sizeof py, fo)) {
            CHECK_MSG(0, "python answered %d lines, expected %d", line - 1, n);
            break;
        }
        py[strcspn(py, "\n")] = '\0';
        c_answer(text, c, sizeof c);
        if (strcmp(py, c) != 0 && differ++ < 10)
            CHECK_MSG(0, "line %d '%s': C says '%s', vptexp.py says '%s'", line, text, c, py);
    }
    fclose(fi);
    fclose(fo);
    CHECK_EQ_INT(line, n);
    CHECK_EQ_INT(differ, 0);
    vpt_test_log("%d config texts agree", line);
}

/* Runs a Python unittest file and fails with its output's tail. */
static void run_python_suite(const char *script)
{
    need_python();
    if (access(script, R_OK) != 0) SKIP("%s not found", script);
    char log[512], cmd[1200];
    snprintf(log, sizeof log, "%s/suite.log", vpt_test_tmpdir());
    snprintf(cmd, sizeof cmd, "python3 %s > '%s' 2>&1", script, log);
    int rc = system(cmd);
    if (rc != 0) {
        char buf[8192];
        CHECK_MSG(0, "%s failed (status %d):\n%s", script, rc, vpt_test_read_tail(log, buf, sizeof buf));
    }
}

TEST_TIMEOUT(experiments_runner_suite, 300)
{
    run_python_suite("experiments/test_experiments.py");
}
