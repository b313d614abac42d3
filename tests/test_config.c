#include "tests/harness/test.h"

#include "base/error.h"
#include "codegen/config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static VptConfig parse_ok(const char *text)
{
    VptConfig c;
    if (vpt_config_parse(text, &c) != 0) {
        vpt_test_fail_at(__FILE__, __LINE__, "parse('%s') failed: %s", text, vpt_errmsg());
        vpt_test_stop();
    }
    return c;
}

static void expect_parse_error(const char *text, const char *needle1, const char *needle2)
{
    VptConfig c = vpt_config_default();
    c.block = 999; /* sentinel: *out must stay untouched on error */
    int rc = vpt_config_parse(text, &c);
    CHECK_MSG(rc == -1, "parse('%s') should fail", text);
    CHECK_EQ_INT(c.block, 999);
    CHECK_STR_CONTAINS(vpt_errmsg(), needle1);
    if (needle2) CHECK_STR_CONTAINS(vpt_errmsg(), needle2);
}

static void format(const VptConfig *c, char *buf)
{
    vpt_config_format(c, buf, VPT_CONFIG_STR_MAX);
}

TEST(config_default_canonical)
{
    VptConfig c = vpt_config_default();
    char buf[VPT_CONFIG_STR_MAX];
    format(&c, buf);
    CHECK(strcmp(buf, "regen=none,reorder=none,kernels=single,maxrregcount=0,ppt=1,block=256,grid=0,"
                      "threshold=0,sortkey=position,lookahead=1") == 0);
    CHECK(vpt_config_check(&c) == 0);
    CHECK(strcmp(vpt_config_schedule_name(&c), "naiveSK") == 0);
}

TEST(config_thesis_set_round_trip)
{
    VptConfig set[16];
    int n = vpt_config_thesis_set(set, 16);
    CHECK_EQ_INT(n, 9);
    const char *names[] = {"naiveSK", "naiveMK", "regenerationSK-thread", "regenerationSK-warp",
                           "regenerationSK-block", "streamingSK", "streamingMK", "streamingSK-morton",
                           "sortingSK"};
    for (int i = 0; i < n; i++) {
        CHECK_MSG(vpt_config_check(&set[i]) == 0, "%s: %s", names[i], vpt_errmsg());
        CHECK(strcmp(vpt_config_schedule_name(&set[i]), names[i]) == 0);
        CHECK_EQ_INT(set[i].block, 256);
        CHECK_EQ_INT(set[i].ppt, 1);
        CHECK_EQ_INT(set[i].maxrregcount, 0);
        CHECK_EQ_INT(set[i].grid, 0);
        /* the alias parses to the same config, and the canonical form round-trips */
        VptConfig a = parse_ok(names[i]);
        CHECK(vpt_config_equal(&a, &set[i]));
        char buf[VPT_CONFIG_STR_MAX], buf2[VPT_CONFIG_STR_MAX];
        format(&set[i], buf);
        VptConfig b = parse_ok(buf);
        CHECK(vpt_config_equal(&b, &set[i]));
        format(&b, buf2);
        CHECK(strcmp(buf, buf2) == 0);
    }
    CHECK_EQ_INT(vpt_config_thesis_set(set, 3), 3);
}

TEST(config_alias_mapping)
{
    struct { const char *alias; VptRegen regen; VptReorder reorder; VptKernels kernels; } m[] = {
        {"naiveSK", VPT_REGEN_NONE, VPT_REORDER_NONE, VPT_KERNELS_SINGLE},
        {"naiveMK", VPT_REGEN_NONE, VPT_REORDER_NONE, VPT_KERNELS_MULTI},
        {"regenerationSK", VPT_REGEN_THREAD, VPT_REORDER_NONE, VPT_KERNELS_SINGLE},
        {"regenerationSK-thread", VPT_REGEN_THREAD, VPT_REORDER_NONE, VPT_KERNELS_SINGLE},
        {"regenerationSK-warp", VPT_REGEN_WARP, VPT_REORDER_NONE, VPT_KERNELS_SINGLE},
        {"regenerationSK-block", VPT_REGEN_BLOCK, VPT_REORDER_NONE, VPT_KERNELS_SINGLE},
        {"streamingSK", VPT_REGEN_BLOCK, VPT_REORDER_COMPACT, VPT_KERNELS_SINGLE},
        {"streamingMK", VPT_REGEN_DEVICE, VPT_REORDER_COMPACT, VPT_KERNELS_MULTI},
        {"streamingSK-morton", VPT_REGEN_BLOCK, VPT_REORDER_MORTON, VPT_KERNELS_SINGLE},
        {"sortingSK", VPT_REGEN_BLOCK, VPT_REORDER_MORTON_DELAYED, VPT_KERNELS_SINGLE},
        {"STREAMINGsk", VPT_REGEN_BLOCK, VPT_REORDER_COMPACT, VPT_KERNELS_SINGLE}, /* case-insensitive */
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        VptConfig c = parse_ok(m[i].alias);
        CHECK_MSG(c.regen == m[i].regen && c.reorder == m[i].reorder && c.kernels == m[i].kernels, "%s",
                  m[i].alias);
        CHECK_EQ_INT(c.block, 256);
        CHECK(vpt_config_check(&c) == 0);
    }
}

TEST(config_alias_with_overrides)
{
    VptConfig c = parse_ok("streamingSK,block=128");
    CHECK(c.regen == VPT_REGEN_BLOCK && c.reorder == VPT_REORDER_COMPACT && c.kernels == VPT_KERNELS_SINGLE);
    CHECK_EQ_INT(c.block, 128);
    CHECK_EQ_INT(c.ppt, 1);

    c = parse_ok("sortingSK,sortkey=termination,threshold=50,maxrregcount=64,ppt=2,grid=4");
    CHECK(c.reorder == VPT_REORDER_MORTON_DELAYED && c.sortkey == VPT_SORTKEY_TERMINATION);
    CHECK_EQ_INT(c.threshold, 50);
    CHECK_EQ_INT(c.maxrregcount, 64);
    CHECK_EQ_INT(c.ppt, 2);
    CHECK_EQ_INT(c.grid, 4);
    CHECK(vpt_config_check(&c) == 0);

    /* an override may change the schedule's own fields (the result is then checked separately) */
    c = parse_ok("streamingSK,reorder=morton");
    CHECK(c.reorder == VPT_REORDER_MORTON);
    CHECK(strcmp(vpt_config_schedule_name(&c), "streamingSK-morton") == 0);
    c = parse_ok("naiveSK,regen=warp");
    CHECK(strcmp(vpt_config_schedule_name(&c), "regenerationSK-warp") == 0);
}

TEST(config_subset_any_order)
{
    VptConfig c = parse_ok("block=64,regen=warp");
    CHECK(c.regen == VPT_REGEN_WARP && c.block == 64 && c.reorder == VPT_REORDER_NONE && c.ppt == 1);
    VptConfig d = parse_ok("sortkey=position,threshold=0,grid=0,block=64,ppt=1,maxrregcount=0,kernels=single,"
                           "reorder=none,regen=warp");
    CHECK(vpt_config_equal(&c, &d));
}

/* A small deterministic generator for the property tests. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static VptConfig random_config(uint64_t *s)
{
    static const int ppts[] = {1, 2, 4};
    VptConfig c;
    c.regen = (VptRegen)(rng_next(s) % 5);
    c.reorder = (VptReorder)(rng_next(s) % 4);
    c.kernels = (VptKernels)(rng_next(s) % 2);
    int r = (int)(rng_next(s) % 233);
    c.maxrregcount = r == 0 ? 0 : 23 + r; /* 0 or 24..255 */
    c.ppt = ppts[rng_next(s) % 3];
    c.block = 32 * (1 + (int)(rng_next(s) % 32));
    c.grid = (int)(rng_next(s) % 65);
    c.threshold = (int)(rng_next(s) % 101);
    c.sortkey = (VptSortKey)(rng_next(s) % 2);
    c.lookahead = ppts[rng_next(s) % 3];
    static const int coops[] = {0, 1, 2, 4, 8, 16};
    c.coop = coops[rng_next(s) % 6];
    c.flights = (VptFlights)(rng_next(s) % 2);
    c.paths = (VptPathOrder)(rng_next(s) % 2);
    c.majorant = 0;
    c.density = VPT_DENSITY_F32;
    c.sparse = 0;
    return c;
}

TEST(config_random_round_trip)
{
    uint64_t s = 12345;
    int valid = 0;
    for (int i = 0; i < 200000 && valid < 3000; i++) {
        VptConfig c = random_config(&s);
        /* every in-domain config round-trips, valid or not */
        char buf[VPT_CONFIG_STR_MAX], buf2[VPT_CONFIG_STR_MAX];
        format(&c, buf);
        VptConfig b = parse_ok(buf);
        CHECK(vpt_config_equal(&b, &c));
        format(&b, buf2);
        CHECK(strcmp(buf, buf2) == 0);
        if (vpt_config_check(&c) == 0) {
            valid++;
            /* every valid config is one of the nine named schedules */
            CHECK(vpt_config_schedule_index(&c) >= 0);
            /* and its alias + overrides spell the same config */
            char alias[VPT_CONFIG_STR_MAX * 2];
            snprintf(alias, sizeof alias,
                     "%s,maxrregcount=%d,ppt=%d,block=%d,grid=%d,threshold=%d,sortkey=%s,lookahead=%d,coop=%d,"
                     "flights=%s,paths=%s",
                     vpt_config_schedule_name(&c), c.maxrregcount, c.ppt, c.block, c.grid, c.threshold,
                     vpt_sortkey_name(c.sortkey), c.lookahead, c.coop, vpt_flights_name(c.flights),
                     vpt_paths_name(c.paths));
            VptConfig a = parse_ok(alias);
            CHECK(vpt_config_equal(&a, &c));
        }
    }
    CHECK(valid >= 3000);
}

TEST(config_parse_errors_name_the_key)
{
    expect_parse_error("regen=fast", "regen=fast", "none, thread, warp, block, device");
    expect_parse_error("reorder=sort", "reorder=sort", "morton_delayed");
    expect_parse_error("kernels=two", "kernels=two", "single, multi");
    expect_parse_error("sortkey=x", "sortkey=x", "position, termination");
    expect_parse_error("maxrregcount=20", "maxrregcount=20", "24..255");
    expect_parse_error("maxrregcount=256", "maxrregcount", "24..255");
    expect_parse_error("maxrregcount=-1", "maxrregcount", "24..255");
    expect_parse_error("maxrregcount=64k", "maxrregcount", "not an integer");
    expect_parse_error("ppt=3", "ppt=3", "1, 2, 4");
    expect_parse_error("ppt=0", "ppt", "1, 2, 4");
    expect_parse_error("block=100", "block=100", "multiple of 32");
    expect_parse_error("block=2048", "block", "32..1024");
    expect_parse_error("block=0", "block", "32..1024");
    expect_parse_error("grid=65", "grid", "0..64");
    expect_parse_error("grid=-1", "grid", "0..64");
    expect_parse_error("threshold=101", "threshold", "0..100");
    expect_parse_error("threshold=1.5", "threshold", "not an integer");
    expect_parse_error("block=", "block", "empty value");
    expect_parse_error("colour=red", "unknown key 'colour'", "regen, reorder, kernels, maxrregcount");
    expect_parse_error("=5", "unknown key ''", "keys:");
    expect_parse_error("block=64,block=128", "block", "twice");
    expect_parse_error("streamingSK,regen=warp,regen=block", "regen", "twice");
    expect_parse_error("fastSK", "'fastSK'", "streamingSK");
    expect_parse_error("block=64,streamingSK", "streamingSK", "must come first");
    expect_parse_error("streamingSK,naiveSK", "naiveSK", "must come first");
    expect_parse_error("block=64,", "stray ','", NULL);
    expect_parse_error(",block=64", "stray ','", NULL);
    expect_parse_error("block=64,,ppt=2", "stray ','", NULL);
    expect_parse_error("block=64, ppt=2", "whitespace", NULL);
    expect_parse_error("", "empty config", "streamingSK");
    /* every message quotes the text it rejects */
    expect_parse_error("ppt=8", "config 'ppt=8'", NULL);
    char longtext[2000];
    memset(longtext, 'a', sizeof longtext - 1);
    longtext[sizeof longtext - 1] = '\0';
    expect_parse_error(longtext, "too long", NULL);
    VptConfig c;
    CHECK(vpt_config_parse(NULL, &c) == -1);
}

/* The config must fail with a message containing every needle, or pass. */
static void expect_check(const char *text, int ok, const char *needle1, const char *needle2)
{
    VptConfig c = parse_ok(text);
    int rc = vpt_config_check(&c);
    if (ok) {
        CHECK_MSG(rc == 0, "'%s' should pass: %s", text, vpt_errmsg());
        return;
    }
    CHECK_MSG(rc == -1, "'%s' should be rejected", text);
    CHECK_STR_CONTAINS(vpt_errmsg(), needle1);
    if (needle2) CHECK_STR_CONTAINS(vpt_errmsg(), needle2);
}

TEST(config_rule_device_needs_multi)
{
    expect_check("regen=device", 0, "regen=device needs kernels=multi", "got kernels=single");
    expect_check("regen=device,reorder=compact", 0, "regen=device needs kernels=multi", NULL);
    expect_check("regen=device,reorder=compact,kernels=multi", 1, NULL, NULL);
}

TEST(config_rule_multi_regen)
{
    expect_check("kernels=multi,regen=thread", 0, "kernels=multi allows regen none|device only", "regen=thread");
    expect_check("kernels=multi,regen=warp", 0, "kernels=multi allows regen none|device only", "regen=warp");
    expect_check("kernels=multi,regen=block,reorder=compact", 0, "allows regen none|device", "regen=block");
    expect_check("kernels=multi,regen=none", 1, NULL, NULL);
}

TEST(config_rule_multi_reorder)
{
    expect_check("kernels=multi,regen=device,reorder=morton", 0, "kernels=multi allows reorder none|compact only",
                 "reorder=morton");
    expect_check("kernels=multi,reorder=morton_delayed", 0, "allows reorder none|compact", "morton_delayed");
}

TEST(config_rule_multi_device_compact_together)
{
    expect_check("kernels=multi,regen=device,reorder=none", 0, "regen=device and reorder=compact together",
                 "got regen=device, reorder=none");
    expect_check("kernels=multi,regen=none,reorder=compact", 0, "regen=device and reorder=compact together",
                 "got regen=none, reorder=compact");
    expect_check("naiveMK", 1, NULL, NULL);
    expect_check("streamingMK", 1, NULL, NULL);
}

TEST(config_rule_reorder_needs_block)
{
    expect_check("reorder=compact,regen=warp", 0, "reorder=compact needs regen=block with kernels=single",
                 "(got regen=warp)");
    expect_check("reorder=morton,regen=thread", 0, "reorder=morton needs regen=block", "regen=thread");
    expect_check("reorder=morton_delayed", 0, "reorder=morton_delayed needs regen=block", "regen=none");
    expect_check("reorder=compact,regen=block", 1, NULL, NULL);
    expect_check("reorder=morton,regen=block", 1, NULL, NULL);
    expect_check("reorder=morton_delayed,regen=block", 1, NULL, NULL);
}

TEST(config_rule_threshold)
{
    expect_check("regenerationSK-thread,threshold=25", 0, "threshold=25 needs regen warp|block", "regen=thread");
    expect_check("naiveSK,threshold=1", 0, "threshold=1 needs regen warp|block", "regen=none");
    expect_check("streamingMK,threshold=50", 0, "threshold=50 needs regen warp|block", "regen=device");
    expect_check("regenerationSK-warp,threshold=99", 1, NULL, NULL);
    expect_check("streamingSK,threshold=75", 1, NULL, NULL);
}

TEST(config_rule_sortkey)
{
    expect_check("streamingSK,sortkey=termination", 0, "sortkey=termination needs reorder morton|morton_delayed",
                 "reorder=compact");
    expect_check("naiveSK,sortkey=termination", 0, "sortkey=termination", "reorder=none");
    expect_check("streamingSK-morton,sortkey=termination", 1, NULL, NULL);
    expect_check("sortingSK,sortkey=termination", 1, NULL, NULL);
}

TEST(config_rule_grid_needs_persistent)
{
    expect_check("naiveSK,grid=2", 0, "grid=2 needs a persistent kernel", "regen=none");
    expect_check("naiveMK,grid=1", 0, "grid=1 needs a persistent kernel", "kernels=multi");
    expect_check("streamingMK,grid=8", 0, "grid=8 needs a persistent kernel", "regen=device");
    expect_check("regenerationSK-thread,grid=64", 1, NULL, NULL);
    expect_check("regenerationSK-warp,grid=1", 1, NULL, NULL);
    expect_check("streamingSK,grid=4", 1, NULL, NULL);
}

TEST(config_rule_register_file)
{
    expect_check("naiveSK,maxrregcount=128,block=1024", 0, "65536-register file", "maxrregcount=128");
    expect_check("naiveSK,maxrregcount=65,block=1024", 0, "65536-register file", "allocated as 72");
    /* 85 fits by the plain product (65280) but not at the allocation unit (88 x 768) */
    expect_check("naiveSK,maxrregcount=85,block=768", 0, "65536-register file", "block=768");
    expect_check("naiveSK,maxrregcount=80,block=768", 1, NULL, NULL);
    expect_check("naiveSK,maxrregcount=64,block=1024", 1, NULL, NULL);
    expect_check("naiveSK,maxrregcount=255,block=256", 1, NULL, NULL);
    expect_check("naiveSK,maxrregcount=255,block=288", 0, "register file", "block=288");
    expect_check("naiveSK,maxrregcount=0,block=1024", 1, NULL, NULL); /* compiler's choice: harness decides */
}

TEST(config_rule_path_slots_and_ppt)
{
    /* ppt > 1 with reordering is allowed; the slot bound holds at the domain's corner */
    expect_check("streamingSK,ppt=4,block=1024", 1, NULL, NULL);
    expect_check("sortingSK,ppt=2,block=512", 1, NULL, NULL);
    /* the bound itself, on a hand-built config outside the parser's domain */
    VptConfig c = parse_ok("streamingSK,block=1024");
    c.ppt = 8;
    CHECK(vpt_config_check(&c) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "ppt=8");
}

TEST(config_check_domains_of_hand_built_configs)
{
    VptConfig c = vpt_config_default();
    c.block = 100;
    CHECK(vpt_config_check(&c) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "block=100");
    c = vpt_config_default();
    c.regen = (VptRegen)9;
    CHECK(vpt_config_check(&c) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "regen=9");
    c = vpt_config_default();
    c.maxrregcount = 8;
    CHECK(vpt_config_check(&c) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "maxrregcount=8");
    c = vpt_config_default();
    c.threshold = -3;
    CHECK(vpt_config_check(&c) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "threshold=-3");
    c = vpt_config_default();
    c.sortkey = (VptSortKey)5;
    CHECK(vpt_config_check(&c) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "sortkey");
}

/* Rules checked against an independent statement of the valid schedules: a
 * (regen, reorder, kernels) triple is valid exactly when it is one of the
 * nine thesis schedules. */
TEST(config_valid_schedules_are_the_nine)
{
    int valid = 0;
    for (int r = 0; r < 5; r++)
        for (int o = 0; o < 4; o++)
            for (int k = 0; k < 2; k++) {
                VptConfig c = vpt_config_default();
                c.regen = (VptRegen)r;
                c.reorder = (VptReorder)o;
                c.kernels = (VptKernels)k;
                int ok = vpt_config_check(&c) == 0;
                CHECK_EQ_INT(ok, vpt_config_schedule_index(&c) >= 0);
                if (!ok) CHECK(strcmp(vpt_config_schedule_name(&c), "custom") == 0);
                valid += ok;
            }
    CHECK_EQ_INT(valid, 9);
    const VptSchedule *s;
    CHECK_EQ_INT(vpt_config_schedules(&s), VPT_SCHEDULE_COUNT);
    CHECK(strcmp(s[5].name, "streamingSK") == 0);
    CHECK(vpt_config_is_persistent(&(VptConfig){.regen = VPT_REGEN_WARP}));
    CHECK(!vpt_config_is_persistent(&(VptConfig){.regen = VPT_REGEN_DEVICE}));
}

TEST(config_coop_field)
{
    VptConfig c;
    REQUIRE(vpt_config_parse("regenerationSK-warp,coop=4", &c) == 0);
    CHECK_EQ_INT(c.coop, 4);
    char buf[VPT_CONFIG_STR_MAX];
    vpt_config_format(&c, buf, sizeof buf);
    CHECK_STR_CONTAINS(buf, ",lookahead=1,coop=4");
    /* off is not written: texts from before coop existed stay canonical */
    REQUIRE(vpt_config_parse("regenerationSK-warp,coop=0", &c) == 0);
    vpt_config_format(&c, buf, sizeof buf);
    CHECK(strstr(buf, "coop") == NULL);
    CHECK(strcmp(buf + strlen(buf) - strlen("lookahead=1"), "lookahead=1") == 0);
    const char *bad[] = {"naiveSK,coop=3", "naiveSK,coop=32", "naiveSK,coop=-2"};
    for (int i = 0; i < 3; i++) {
        CHECK(vpt_config_parse(bad[i], &c) == -1);
        CHECK_STR_CONTAINS(vpt_errmsg(), "coop");
        CHECK_STR_CONTAINS(vpt_errmsg(), "0 (off), 1, 2, 4, 8, 16");
    }
    VptConfig d = vpt_config_default();
    d.coop = 5; /* built by hand */
    CHECK(vpt_config_check(&d) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "coop=5");
}

TEST(config_flights_field)
{
    VptConfig c;
    REQUIRE(vpt_config_parse("regenerationSK-warp,threshold=50,lookahead=2,flights=async,majorant=grid32", &c) == 0);
    CHECK_EQ_INT(c.flights, VPT_FLIGHTS_ASYNC);
    CHECK_EQ_INT(vpt_config_check(&c), 0);
    char buf[VPT_CONFIG_STR_MAX];
    vpt_config_format(&c, buf, sizeof buf);
    CHECK_STR_CONTAINS(buf, ",lookahead=2,flights=async,majorant=grid32");
    /* sync is not written: texts from before flights existed stay canonical */
    REQUIRE(vpt_config_parse("regenerationSK-warp,flights=sync,coop=4", &c) == 0);
    vpt_config_format(&c, buf, sizeof buf);
    CHECK(strstr(buf, "flights") == NULL);
    CHECK(vpt_config_parse("naiveSK,flights=yes", &c) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "flights=yes");
    CHECK_STR_CONTAINS(vpt_errmsg(), "sync, async");
    /* rule 11: a lane's own regeneration, no cooperative groups, one path a lane */
    const char *bad[][2] = {{"regenerationSK-block,flights=async", "flights=async needs regen thread|warp"},
                            {"naiveSK,flights=async", "got regen=none"},
                            {"streamingMK,flights=async", "got regen=device"},
                            {"regenerationSK-warp,coop=4,flights=async", "flights=async needs coop=0"},
                            {"regenerationSK-thread,ppt=2,flights=async", "flights=async needs ppt=1"}};
    for (int i = 0; i < 5; i++) {
        REQUIRE(vpt_config_parse(bad[i][0], &c) == 0);
        CHECK_MSG(vpt_config_check(&c) == -1, "%s", bad[i][0]);
        CHECK_STR_CONTAINS(vpt_errmsg(), bad[i][1]);
    }
    REQUIRE(vpt_config_parse("regenerationSK-thread,grid=2,maxrregcount=64,flights=async,majorant=skip,density=u8", &c) ==
            0);
    CHECK_EQ_INT(vpt_config_check(&c), 0);
    VptConfig d = vpt_config_default();
    d.flights = (VptFlights)2; /* built by hand */
    CHECK(vpt_config_check(&d) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "flights=2");
}

TEST(config_paths_field)
{
    VptConfig c;
    REQUIRE(vpt_config_parse("regenerationSK-warp,threshold=50,paths=pixel,flights=async,majorant=grid32", &c) == 0);
    CHECK_EQ_INT(c.paths, VPT_PATHS_PIXEL);
    CHECK_EQ_INT(vpt_config_check(&c), 0);
    char buf[VPT_CONFIG_STR_MAX];
    vpt_config_format(&c, buf, sizeof buf);
    /* after flights, before the estimator, like the fields' order */
    CHECK_STR_CONTAINS(buf, ",flights=async,paths=pixel,majorant=grid32");
    VptConfig back;
    REQUIRE(vpt_config_parse(buf, &back) == 0);
    CHECK(vpt_config_equal(&back, &c));
    /* sample is not written: texts from before paths existed stay canonical */
    REQUIRE(vpt_config_parse("streamingSK,paths=sample", &c) == 0);
    vpt_config_format(&c, buf, sizeof buf);
    CHECK(strstr(buf, "paths") == NULL);
    VptConfig d = vpt_config_default();
    CHECK(vpt_config_equal(&c, &d) == 0); /* streamingSK differs elsewhere */
    d = c;
    d.paths = VPT_PATHS_PIXEL;
    CHECK(!vpt_config_equal(&c, &d));
    CHECK(vpt_config_parse("naiveSK,paths=tile", &c) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "paths=tile");
    CHECK_STR_CONTAINS(vpt_errmsg(), "sample, pixel");
    d = vpt_config_default();
    d.paths = (VptPathOrder)2; /* built by hand */
    CHECK(vpt_config_check(&d) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "paths=2");
}

TEST(config_lookahead_field)
{
    VptConfig c;
    REQUIRE(vpt_config_parse("regenerationSK-thread,lookahead=4", &c) == 0);
    CHECK_EQ_INT(c.lookahead, 4);
    char buf[VPT_CONFIG_STR_MAX];
    vpt_config_format(&c, buf, sizeof buf);
    CHECK_STR_CONTAINS(buf, ",lookahead=4");
    CHECK(vpt_config_parse("naiveSK,lookahead=3", &c) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "lookahead");
    CHECK_STR_CONTAINS(vpt_errmsg(), "1, 2, 4");
}
