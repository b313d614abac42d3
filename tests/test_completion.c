/* bash completion (scripts/vptune-completion.bash), run in bash against the
 * built tools: every option a tool's --help names is offered, the built-in
 * scenes after --scene and --like, every config key after --config, and
 * every KEY=VALUE, --transfer, --type and --strategy value it offers is one
 * the tools accept (bench parses configs at argument time, before it looks
 * for a GPU; render and tune parse the rest). Skipped without bash. */
#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include "scenes/scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char out[1 << 17];

static int sh(const char *cmd)
{
    int st = vpt_test_sh(cmd, out, sizeof out);
    REQUIRE(st != -2);
    return st;
}

/* The completions of the words (the last one being completed), one per line. */
static const char *complete(const char *words)
{
    char dir[512], cmd[4096];
    snprintf(dir, sizeof dir, "%s", vpt_test_tool("render"));
    *strrchr(dir, '/') = '\0';
    snprintf(cmd, sizeof cmd,
             "PATH=%s:$PATH bash -c 'source scripts/vptune-completion.bash; COMP_WORDS=(%s); "
             "COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _vptune_complete; printf \"%%s\\n\" \"${COMPREPLY[@]}\"'",
             dir, words);
    int rc = sh(cmd);
    CHECK_MSG(rc == 0, "completing %s: exit %d: %s", words, rc, out);
    return out;
}

static int has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)); p++)
        if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0')) return 1;
    return 0;
}

static void need_bash(void)
{
    if (system("bash -c true >/dev/null 2>&1") != 0) SKIP("bash is not installed");
    if (access("scripts/vptune-completion.bash", R_OK) != 0) SKIP("run the tests from the repository root");
    REQUIRE_MSG(access(vpt_test_tool("bench"), X_OK) == 0, "bin/bench is missing: run make first");
}

TEST(completion_offers_every_option_and_scene)
{
    need_bash();
    const char *tools[] = {"render", "bench", "tune"};
    for (int t = 0; t < 3; t++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "%s --help", vpt_test_tool(tools[t]));
        REQUIRE(sh(cmd) == 0);
        static char help[sizeof out];
        snprintf(help, sizeof help, "%s", out);
        char words[256];
        snprintf(words, sizeof words, "%s --", tools[t]);
        static char offered[sizeof out];
        snprintf(offered, sizeof offered, "%s", complete(words));
        /* every "--option" of the help text */
        int n = 0;
        for (const char *p = help; (p = strstr(p, "--")); p += 2) {
            char opt[64];
            size_t k = 2;
            while (k < sizeof opt - 1 && (p[k] == '-' || (p[k] >= 'a' && p[k] <= 'z') || (p[k] >= '0' && p[k] <= '9')))
                k++;
            if (k == 2 || p[2] == '-') continue;
            memcpy(opt, p, k);
            opt[k] = '\0';
            CHECK_MSG(has_line(offered, opt), "%s: %s is in --help but not completed", tools[t], opt);
            n++;
        }
        CHECK_MSG(n > 10, "%s --help named only %d options", tools[t], n);
        CHECK(has_line(offered, "--version"));
        snprintf(words, sizeof words, "%s --scene \"\"", tools[t]);
        complete(words);
        for (const char *const *s = vpt_scene_names(); *s; s++)
            CHECK_MSG(has_line(out, *s), "%s --scene: %s not offered: %s", tools[t], *s, out);
    }
    complete("tune --volume x --like ma");
    CHECK(has_line(out, "manix"));
    /* the scalable scenes at the sizes the list names */
    complete("bench --scene he");
    CHECK(has_line(out, "head128") && has_line(out, "head1024") && has_line(out, "head2048"));
    complete("render --scene clo");
    CHECK(has_line(out, "cloud256") && has_line(out, "cloud1024"));
}

TEST(completion_config_keys_and_values_are_accepted)
{
    need_bash();
    static char keys[sizeof out];
    snprintf(keys, sizeof keys, "%s", complete("render --config \"\""));
    CHECK(has_line(keys, "best"));
    CHECK(has_line(keys, "streamingSK"));
    int nvalues = 0;
    static const char *const want_keys[] = {"regen=", "reorder=", "kernels=", "maxrregcount=", "ppt=", "block=",
                                            "grid=", "threshold=", "lookahead=", "coop=", "flights=", "paths=", NULL};
    for (int i = 0; want_keys[i]; i++) CHECK_MSG(has_line(keys, want_keys[i]), "%s not offered", want_keys[i]);
    for (char *k = strtok(keys, "\n"); k; k = strtok(NULL, "\n")) {
        if (!strchr(k, '=')) continue;
        char words[256], key[64];
        snprintf(key, sizeof key, "%s", k);
        snprintf(words, sizeof words, "bench --config %s", key);
        static char values[sizeof out];
        snprintf(values, sizeof values, "%s", complete(words));
        int n = 0;
        char *save = NULL;
        for (char *v = strtok_r(values, "\n", &save); v; v = strtok_r(NULL, "\n", &save)) {
            char cmd[1024];
            /* bench parses --config at once; the unknown scene then stops it */
            snprintf(cmd, sizeof cmd, "%s --config %s --scene no-such-scene", vpt_test_tool("bench"), v);
            sh(cmd);
            CHECK_MSG(strstr(out, "unknown scene") && !strstr(out, "--config"), "%s offered, but: %s", v, out);
            n++;
            nvalues++;
        }
        CHECK_MSG(n >= 2, "%s: %d values offered", key, n);
    }
    CHECK_MSG(nvalues > 20, "only %d values in all", nvalues);
    /* after a comma, the next key */
    complete("render --config regen=warp,pp");
    CHECK(has_line(out, "regen=warp,ppt="));
    /* --transfer, --type, --strategy values */
    static const char *const flags[] = {"--transfer", "--type", "--strategy"};
    for (int f = 0; f < 3; f++) {
        char words[128];
        snprintf(words, sizeof words, "tune %s \"\"", flags[f]);
        static char values[sizeof out];
        snprintf(values, sizeof values, "%s", complete(words));
        for (char *v = strtok(values, "\n"); v; v = strtok(NULL, "\n")) {
            char cmd[1024];
            if (f < 2)
                snprintf(cmd, sizeof cmd, "%s --volume x.raw --dims 1,1,1 %s %s --like no-such-scene --print-scene",
                         vpt_test_tool("tune"), flags[f], v);
            else
                snprintf(cmd, sizeof cmd, "%s --scene no-such-scene %s %s", vpt_test_tool("tune"), flags[f], v);
            sh(cmd);
            CHECK_MSG(strstr(out, "unknown scene"), "%s %s offered, but: %s", flags[f], v, out);
        }
    }
}

TEST(completion_is_installed)
{
    need_bash();
    if (system("make --version >/dev/null 2>&1") != 0) SKIP("make is not installed");
    char cmd[2048];
    const char *tmp = vpt_test_tmpdir();
    /* make -n: what install would do, without building (the tools are built) */
    snprintf(cmd, sizeof cmd, "make -n install PREFIX=%s/prefix", tmp);
    REQUIRE(sh(cmd) == 0);
    CHECK_STR_CONTAINS(out, "scripts/vptune-completion.bash");
    CHECK_STR_CONTAINS(out, "share/bash-completion/completions/$t");
    CHECK_STR_CONTAINS(out, "libvptune-dicom.so");
}
