/* results/ holds data: every file outside archive/ is listed in
 * results/manifest.json and read by a docs table, a report part or a test;
 * no docs table mixes commits without naming them; results/README.md is
 * what scripts/results_index.py writes; the tables of README.md and docs/
 * are what scripts/readme_tables.py computes from the files. Also the index's own
 * unit tests (scripts/test_results_index.py), which break a scratch copy of
 * the repository one rule at a time and demand the check fail. Skipped (with
 * the reason) without python3 or outside the repository root. */
#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include <stdlib.h>

static void need_scripts(void)
{
    if (access("scripts/results_index.py", R_OK) != 0 || access("results/manifest.json", R_OK) != 0)
        SKIP("scripts/results_index.py or results/manifest.json not found: run the tests from the repository root");
    if (system("python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 8) else 1)' >/dev/null 2>&1") != 0)
        SKIP("python3 (3.8 or newer) is not available");
}

static void run_ok(const char *cmd)
{
    need_scripts();
    static char out[65536];
    int rc = vpt_test_sh(cmd, out, sizeof out);
    CHECK_MSG(rc == 0, "%s: exit %d\n%s", cmd, rc, out);
    vpt_test_log("%s", out);
}

TEST(results_index_every_file_read_and_listed)
{
    run_ok("python3 scripts/results_index.py --check");
}

TEST(results_readme_tables_match_results)
{
    run_ok("python3 scripts/readme_tables.py --check");
}

TEST_TIMEOUT(results_index_suite, 300)
{
    run_ok("python3 scripts/test_results_index.py");
}
