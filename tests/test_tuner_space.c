#include "tests/harness/test.h"

#include "base/error.h"
#include "tuner/space.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The default space, stated independently of tuner/space.c: the product of
 * the domains, filtered by codegen's rules. */
static const int D_MR[] = {0, 32, 40, 48, 64, 80, 96, 128, 168, 255};
static const int D_PPT[] = {1, 2, 4};
static const int D_BLOCK[] = {32, 64, 128, 256, 512, 1024};
static const int D_GRID[] = {0, 1, 2, 4, 8};
static const int D_THR[] = {0, 25, 50, 75, 100};
static const int D_LA[] = {1, 2, 4};
static const int D_COOP[] = {0, 2, 4, 8};

static size_t brute_count(int (*keep)(const VptConfig *))
{
    size_t n = 0;
    for (int r = 0; r < 5; r++)
        for (int o = 0; o < 4; o++)
            for (int k = 0; k < 2; k++)
                for (int a = 0; a < 10; a++)
                    for (int b = 0; b < 3; b++)
                        for (int c = 0; c < 6; c++)
                            for (int d = 0; d < 5; d++)
                                for (int e = 0; e < 5; e++)
                                    for (int f = 0; f < 2; f++)
                                        for (int g = 0; g < 3; g++)
                                            for (int h = 0; h < 4; h++)
                                                for (int i = 0; i < 2; i++) {
                                                    VptConfig x = vpt_config_default();
                                                    x.regen = (VptRegen)r;
                                                    x.reorder = (VptReorder)o;
                                                    x.kernels = (VptKernels)k;
                                                    x.maxrregcount = D_MR[a];
                                                    x.ppt = D_PPT[b];
                                                    x.block = D_BLOCK[c];
                                                    x.grid = D_GRID[d];
                                                    x.threshold = D_THR[e];
                                                    x.sortkey = (VptSortKey)f;
                                                    x.lookahead = D_LA[g];
                                                    x.coop = D_COOP[h];
                                                    x.flights = (VptFlights)i;
                                                    if (vpt_config_check(&x) == 0 && (!keep || keep(&x))) n++;
                                                }
    return n;
}

TEST(tuner_space_default_members)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    size_t n = vpt_space_size(s);
    CHECK_EQ_INT(n, brute_count(NULL));
    CHECK_EQ_INT(n, 353934); /* the number the header states */
    for (size_t i = 0; i < n; i++) {
        const VptConfig *c = vpt_space_point(s, i);
        CHECK(vpt_config_check(c) == 0);
        CHECK_EQ_INT(vpt_space_index_of(s, c), (long)i); /* also: all distinct */
    }
    CHECK_EQ_INT(vpt_space_domain_size(s, VPT_DIM_SCHEDULE), 9);
    CHECK_EQ_INT(vpt_space_domain_size(s, VPT_DIM_MAXRREGCOUNT), 10);
    CHECK_EQ_INT(vpt_space_domain_value(s, VPT_DIM_BLOCK, 5), 1024);
    VptConfig out = vpt_config_default();
    out.block = 96; /* a valid config outside the domains */
    CHECK_EQ_INT(vpt_space_index_of(s, &out), -1);
    char buf[4096];
    vpt_space_describe(s, buf, sizeof buf);
    CHECK_STR_CONTAINS(buf, "maxrregcount  0,32,40,48,64,80,96,128,168,255");
    CHECK_STR_CONTAINS(buf, "coop          0,2,4,8");
    CHECK_STR_CONTAINS(buf, "flights       sync,async");
    CHECK_STR_CONTAINS(buf, "353934 valid configs");
    vpt_space_destroy(s);
}

/* Dimensions in which a and b differ, as a bit mask over VptDim. */
static unsigned diff_mask(const VptConfig *a, const VptConfig *b)
{
    unsigned m = 0;
    if (vpt_config_schedule_index(a) != vpt_config_schedule_index(b)) m |= 1u << VPT_DIM_SCHEDULE;
    if (a->maxrregcount != b->maxrregcount) m |= 1u << VPT_DIM_MAXRREGCOUNT;
    if (a->ppt != b->ppt) m |= 1u << VPT_DIM_PPT;
    if (a->block != b->block) m |= 1u << VPT_DIM_BLOCK;
    if (a->grid != b->grid) m |= 1u << VPT_DIM_GRID;
    if (a->threshold != b->threshold) m |= 1u << VPT_DIM_THRESHOLD;
    if (a->sortkey != b->sortkey) m |= 1u << VPT_DIM_SORTKEY;
    if (a->coop != b->coop) m |= 1u << VPT_DIM_COOP;
    if (a->flights != b->flights) m |= 1u << VPT_DIM_FLIGHTS;
    return m;
}

TEST(tuner_space_neighbours_are_one_move_away)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    const unsigned repairable = (1u << VPT_DIM_MAXRREGCOUNT) | (1u << VPT_DIM_GRID) | (1u << VPT_DIM_THRESHOLD) |
                                (1u << VPT_DIM_SORTKEY) | (1u << VPT_DIM_COOP) | (1u << VPT_DIM_PPT) |
                                (1u << VPT_DIM_FLIGHTS);
    size_t total = 0;
    for (size_t i = 0; i < vpt_space_size(s); i += 7) {
        size_t nb[VPT_SPACE_MAX_NEIGHBOURS];
        size_t n = vpt_space_neighbours(s, i, nb, VPT_SPACE_MAX_NEIGHBOURS);
        CHECK(n >= 1 && n <= 24); /* 21 before coop, whose domain adds at most 2, and flights 1 */
        total += n;
        const VptConfig *c = vpt_space_point(s, i);
        for (size_t j = 0; j < n; j++) {
            REQUIRE(nb[j] < vpt_space_size(s));
            CHECK(nb[j] != i);
            for (size_t k = 0; k < j; k++) CHECK(nb[k] != nb[j]);
            const VptConfig *d = vpt_space_point(s, nb[j]);
            unsigned m = diff_mask(c, d);
            /* one primary move, plus only repairs that switch a dimension off */
            unsigned primary = m & ~repairable;
            CHECK(primary == 0 || (primary & (primary - 1)) == 0);
            unsigned repaired = m & repairable;
            int off_moves = 0;
            if ((repaired & (1u << VPT_DIM_MAXRREGCOUNT)) && d->maxrregcount != 0) off_moves++;
            if ((repaired & (1u << VPT_DIM_GRID)) && d->grid != 0) off_moves++;
            if ((repaired & (1u << VPT_DIM_THRESHOLD)) && d->threshold != 0) off_moves++;
            if ((repaired & (1u << VPT_DIM_SORTKEY)) && d->sortkey != VPT_SORTKEY_POSITION) off_moves++;
            if ((repaired & (1u << VPT_DIM_COOP)) && d->coop != 0) off_moves++;
            if ((repaired & (1u << VPT_DIM_PPT)) && d->ppt != 1) off_moves++;
            if ((repaired & (1u << VPT_DIM_FLIGHTS)) && d->flights != VPT_FLIGHTS_SYNC) off_moves++;
            /* a repairable dimension may also be the move itself, to its adjacent value */
            CHECK(off_moves <= (primary == 0 ? 1 : 0));
        }
    }
    CHECK(total > 0);
    vpt_space_destroy(s);
}

/* The member for config text, its config into *c; -1 when the text does
 * not parse or the config is not a member. */
static long member_of(const VptSpace *s, const char *text, VptConfig *c)
{
    if (vpt_config_parse(text, c)) return -1;
    return vpt_space_index_of(s, c);
}

TEST(tuner_space_neighbours_repair_conditional_dims)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    VptConfig c;
    long i = member_of(s, "regenerationSK-warp,threshold=50,grid=4,block=128", &c);
    REQUIRE(i >= 0);
    size_t nb[VPT_SPACE_MAX_NEIGHBOURS];
    size_t n = vpt_space_neighbours(s, (size_t)i, nb, VPT_SPACE_MAX_NEIGHBOURS);
    int saw_thread = 0, saw_naive = 0, saw_sorting = 0;
    for (size_t j = 0; j < n; j++) {
        const VptConfig *d = vpt_space_point(s, nb[j]);
        const char *name = vpt_config_schedule_name(d);
        if (strcmp(name, "regenerationSK-thread") == 0) {
            saw_thread = 1; /* threshold switched off, grid kept (thread is persistent) */
            CHECK_EQ_INT(d->threshold, 0);
            CHECK_EQ_INT(d->grid, 4);
        }
        if (strcmp(name, "naiveSK") == 0) {
            saw_naive = 1; /* both off */
            CHECK_EQ_INT(d->threshold, 0);
            CHECK_EQ_INT(d->grid, 0);
        }
        if (strcmp(name, "sortingSK") == 0) {
            saw_sorting = 1; /* nothing to repair */
            CHECK_EQ_INT(d->threshold, 50);
            CHECK_EQ_INT(d->grid, 4);
        }
        CHECK_EQ_INT(d->block == 128 || d->block == 64 || d->block == 256, 1);
    }
    CHECK(saw_thread && saw_naive && saw_sorting);
    /* too small an output buffer: the count is still the full one */
    size_t few[2];
    CHECK_EQ_INT(vpt_space_neighbours(s, (size_t)i, few, 2), n);
    vpt_space_destroy(s);
}

static int contains(const size_t *list, size_t n, size_t m)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] == m) return 1;
    return 0;
}

TEST(tuner_space_neighbours_by_dimension)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    for (size_t i = 0; i < vpt_space_size(s); i += 101) {
        size_t all[VPT_SPACE_MAX_NEIGHBOURS], part[VPT_SPACE_MAX_NEIGHBOURS];
        size_t n = vpt_space_neighbours(s, i, all, VPT_SPACE_MAX_NEIGHBOURS);
        /* the union over single dimensions is the whole neighbourhood */
        size_t covered = 0;
        for (int d = 0; d < VPT_DIM_COUNT; d++) {
            size_t k = vpt_space_neighbours_in(s, i, 1u << d, part, VPT_SPACE_MAX_NEIGHBOURS);
            for (size_t j = 0; j < k; j++) {
                CHECK(contains(all, n, part[j]));
                /* the move is in d; anything else that changed is a repair to "off"
                 * (coop 0, ppt 1 and flights sync only for flights=async) */
                const VptConfig *a = vpt_space_point(s, i), *b = vpt_space_point(s, part[j]);
                unsigned m = diff_mask(a, b) | (a->lookahead != b->lookahead ? 1u << VPT_DIM_LOOKAHEAD : 0);
                CHECK(m & (1u << d));
                m &= ~(1u << d);
                CHECK((m & ((1u << VPT_DIM_SCHEDULE) | (1u << VPT_DIM_BLOCK) | (1u << VPT_DIM_LOOKAHEAD))) == 0);
                if (m & (1u << VPT_DIM_COOP)) CHECK(b->coop == 0 && b->flights == VPT_FLIGHTS_ASYNC);
                if (m & (1u << VPT_DIM_PPT)) CHECK(b->ppt == 1 && b->flights == VPT_FLIGHTS_ASYNC);
                if (m & (1u << VPT_DIM_FLIGHTS)) CHECK(b->flights == VPT_FLIGHTS_SYNC);
            }
            covered += k;
        }
        CHECK(covered >= n); /* a repaired move may come from two dimensions */
        size_t k = vpt_space_neighbours_in(s, i, VPT_SPACE_ALL_DIMS & ~(1u << VPT_DIM_SCHEDULE), part,
                                           VPT_SPACE_MAX_NEIGHBOURS);
        for (size_t j = 0; j < k; j++)
            CHECK_EQ_INT(vpt_config_schedule_index(vpt_space_point(s, part[j])),
                         vpt_config_schedule_index(vpt_space_point(s, i)));
        CHECK_EQ_INT(vpt_space_neighbours_in(s, i, 0, part, VPT_SPACE_MAX_NEIGHBOURS), 0);
    }
    vpt_space_destroy(s);
}

TEST(tuner_space_schedule_moves_bring_dependent_parameters)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    VptConfig c;
    REQUIRE(vpt_config_parse("regenerationSK-thread,maxrregcount=64,grid=2,lookahead=4", &c) == 0);
    long i = vpt_space_index_of(s, &c);
    REQUIRE(i >= 0);
    size_t mv[VPT_SPACE_MAX_SCHEDULE_MOVES];
    size_t n = vpt_space_schedule_moves(s, (size_t)i, mv, VPT_SPACE_MAX_SCHEDULE_MOVES);
    REQUIRE(n <= VPT_SPACE_MAX_SCHEDULE_MOVES);
    int warp_thr[101] = {0}, morton_keys = 0, naive = 0;
    for (size_t j = 0; j < n; j++) {
        CHECK(mv[j] != (size_t)i);
        for (size_t k = 0; k < j; k++) CHECK(mv[k] != mv[j]);
        const VptConfig *d = vpt_space_point(s, mv[j]);
        CHECK(vpt_config_schedule_index(d) != vpt_config_schedule_index(&c));
        /* the kernel's own parameters travel with the move */
        CHECK(d->maxrregcount == 64 && d->ppt == 1 && d->block == 256 && d->lookahead == 4);
        const char *name = vpt_config_schedule_name(d);
        if (!strcmp(name, "regenerationSK-warp")) {
            CHECK_EQ_INT(d->grid, 2); /* free before and after: kept */
            warp_thr[d->threshold]++;
        }
        if (!strcmp(name, "streamingSK-morton") && d->threshold == 0 && d->grid == 2) morton_keys |= 1 << d->sortkey;
        if (!strcmp(name, "naiveSK")) {
            naive++;
            CHECK_EQ_INT(d->grid, 0); /* repaired off: naiveSK is not persistent */
        }
    }
    /* the threshold was fixed under thread regeneration: every value is tried */
    for (int t = 0; t <= 100; t += 25) CHECK_MSG(warp_thr[t] == 1, "warp threshold %d: %d moves", t, warp_thr[t]);
    CHECK_EQ_INT(morton_keys, 3); /* the sort key too */
    CHECK_EQ_INT(naive, 1);       /* naiveSK has no dependent parameter */

    /* from warp regeneration, the threshold is already free: it is carried */
    REQUIRE(vpt_config_parse("regenerationSK-warp,threshold=50", &c) == 0);
    i = vpt_space_index_of(s, &c);
    REQUIRE(i >= 0);
    n = vpt_space_schedule_moves(s, (size_t)i, mv, VPT_SPACE_MAX_SCHEDULE_MOVES);
    int block_moves = 0;
    for (size_t j = 0; j < n; j++) {
        const VptConfig *d = vpt_space_point(s, mv[j]);
        if (!strcmp(vpt_config_schedule_name(d), "regenerationSK-block")) {
            block_moves++;
            CHECK_EQ_INT(d->threshold, 50);
        }
    }
    CHECK_EQ_INT(block_moves, 1);
    size_t few[2];
    CHECK_EQ_INT(vpt_space_schedule_moves(s, (size_t)i, few, 2), n);
    vpt_space_destroy(s);
}

TEST(tuner_space_nearest_member)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    VptConfig c;
    REQUIRE(vpt_config_parse("regenerationSK", &c) == 0);
    CHECK_EQ_INT(vpt_space_nearest(s, &c, NULL), vpt_space_index_of(s, &c));
    /* without block 256, the members one dimension away tie: rng picks among
     * them, NULL the first */
    REQUIRE(vpt_space_restrict(s, "block", "64,128,512") == 0);
    CHECK_EQ_INT(vpt_space_index_of(s, &c), -1);
    long first = vpt_space_nearest(s, &c, NULL);
    REQUIRE(first >= 0);
    VptRng rng;
    vpt_rng_seed(&rng, 3);
    int seen_other = 0;
    for (int k = 0; k < 20; k++) {
        long m = vpt_space_nearest(s, &c, &rng);
        REQUIRE(m >= 0);
        const VptConfig *d = vpt_space_point(s, (size_t)m);
        CHECK(diff_mask(&c, d) == (1u << VPT_DIM_BLOCK) && d->lookahead == c.lookahead);
        seen_other |= m != first;
    }
    CHECK(seen_other);
    const VptConfig *d = vpt_space_point(s, (size_t)first);
    CHECK(diff_mask(&c, d) == (1u << VPT_DIM_BLOCK) && d->block == 64);
    vpt_space_destroy(s);
}

TEST(tuner_space_random_mutate_crossover_stay_inside)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    VptRng rng;
    vpt_rng_seed(&rng, 42);
    size_t n = vpt_space_size(s);
    size_t hist[9] = {0};
    int changed = 0;
    for (int t = 0; t < 20000; t++) {
        size_t a = vpt_space_random(s, &rng), b = vpt_space_random(s, &rng);
        REQUIRE(a < n && b < n);
        hist[vpt_config_schedule_index(vpt_space_point(s, a))]++;
        size_t m = vpt_space_mutate(s, a, 1.0 / 7, &rng);
        REQUIRE(m < n);
        changed += m != a;
        size_t x = vpt_space_crossover(s, a, b, &rng);
        REQUIRE(x < n);
        /* the child takes every dimension from a parent, or an off value */
        const VptConfig *ca = vpt_space_point(s, a), *cb = vpt_space_point(s, b), *cx = vpt_space_point(s, x);
        CHECK(cx->block == ca->block || cx->block == cb->block);
        CHECK(cx->ppt == ca->ppt || cx->ppt == cb->ppt);
        CHECK(vpt_config_schedule_index(cx) == vpt_config_schedule_index(ca) ||
              vpt_config_schedule_index(cx) == vpt_config_schedule_index(cb));
    }
    CHECK(changed > 19000); /* a mutation changes the point unless it had to fall back */
    /* uniform over members: schedules appear in proportion to their member counts */
    CHECK(hist[0] > 50 && hist[0] < 300);    /* naiveSK: 159 of 23532 before lookahead and threshold 100 (x3): same share */
    CHECK(hist[8] > 5000 && hist[8] < 5800); /* sortingSK: 6360 -> ~5405 */
    vpt_space_destroy(s);
}

static int keep_restricted(const VptConfig *c)
{
    return (c->block == 128 || c->block == 256) &&
           (c->reorder == VPT_REORDER_COMPACT && c->regen == VPT_REGEN_BLOCK) && c->ppt == 1;
}

TEST(tuner_space_restrict)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    CHECK(vpt_space_restrict(s, "block", "128,256") == 0);
    CHECK(vpt_space_restrict(s, "schedule", "streamingSK") == 0);
    CHECK(vpt_space_restrict(s, "ppt", "1") == 0);
    CHECK_EQ_INT(vpt_space_size(s), brute_count(keep_restricted));
    for (size_t i = 0; i < vpt_space_size(s); i++) {
        CHECK(keep_restricted(vpt_space_point(s, i)));
        CHECK_EQ_INT(vpt_space_index_of(s, vpt_space_point(s, i)), (long)i);
    }
    CHECK_EQ_INT(vpt_space_domain_size(s, VPT_DIM_BLOCK), 2);
    /* errors leave the space as it was */
    size_t before = vpt_space_size(s);
    CHECK(vpt_space_restrict(s, "colour", "red") == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "unknown space dimension 'colour'");
    CHECK(vpt_space_restrict(s, "block", "512") == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "512 is not in the domain (128,256)");
    CHECK(vpt_space_restrict(s, "schedule", "fastSK") == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "fastSK");
    CHECK(vpt_space_restrict(s, "ppt", "x") == -1);
    CHECK(vpt_space_restrict(s, "block", "") == -1);
    CHECK_EQ_INT(vpt_space_size(s), before);
    vpt_space_destroy(s);

    s = vpt_space_create();
    REQUIRE(s);
    /* sortkey=termination exists only with Morton schedules */
    CHECK(vpt_space_restrict(s, "schedule", "naiveSK,streamingSK") == 0);
    CHECK(vpt_space_restrict(s, "sortkey", "termination") == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "leaves no valid config");
    vpt_space_destroy(s);
}

TEST(tuner_space_from_configs)
{
    const char *texts[] = {
        "streamingSK,block=128", "streamingSK,block=256", "sortingSK,block=128,maxrregcount=40",
        "streamingSK,block=128", /* duplicate */
        "naiveSK,grid=3",        /* violates a rule: left out */
        "regenerationSK-warp,threshold=33,block=96",
    };
    VptConfig cfgs[6];
    for (int i = 0; i < 6; i++) REQUIRE(vpt_config_parse(texts[i], &cfgs[i]) == 0);
    size_t rejected = 99;
    VptSpace *s = vpt_space_create_from_configs(cfgs, 6, &rejected);
    REQUIRE(s);
    CHECK_EQ_INT(rejected, 1);
    CHECK_EQ_INT(vpt_space_size(s), 4);
    CHECK_EQ_INT(vpt_space_domain_size(s, VPT_DIM_BLOCK), 3); /* 96, 128, 256 */
    CHECK_EQ_INT(vpt_space_domain_value(s, VPT_DIM_BLOCK, 0), 96);
    CHECK_EQ_INT(vpt_space_domain_size(s, VPT_DIM_SCHEDULE), 3);
    for (int i = 0; i < 6; i++)
        if (i != 4) CHECK(vpt_space_index_of(s, &cfgs[i]) >= 0);
    CHECK(vpt_space_index_of(s, &cfgs[4]) == -1);
    /* moves stay among the recorded configs */
    VptRng rng;
    vpt_rng_seed(&rng, 1);
    for (size_t i = 0; i < vpt_space_size(s); i++) {
        size_t nb[VPT_SPACE_MAX_NEIGHBOURS];
        size_t n = vpt_space_neighbours(s, i, nb, VPT_SPACE_MAX_NEIGHBOURS);
        for (size_t j = 0; j < n; j++) CHECK(nb[j] < vpt_space_size(s));
        CHECK(vpt_space_mutate(s, i, 0.5, &rng) < vpt_space_size(s));
    }
    vpt_space_destroy(s);
    CHECK(vpt_space_create_from_configs(&cfgs[4], 1, NULL) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "no valid config");
}

/* coop is categorical: from no cooperative flights every coop value is one
 * step away, not only the adjacent 2. */
TEST(tuner_space_every_coop_value_is_one_step_away)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    VptConfig c;
    long i = member_of(s, "regenerationSK-warp,threshold=50,lookahead=4", &c);
    REQUIRE(i >= 0);
    size_t nb[VPT_SPACE_MAX_NEIGHBOURS];
    size_t n = vpt_space_neighbours_in(s, (size_t)i, 1u << VPT_DIM_COOP, nb, VPT_SPACE_MAX_NEIGHBOURS);
    int seen = 0;
    for (size_t j = 0; j < n; j++) {
        const VptConfig *d = vpt_space_point(s, nb[j]);
        VptConfig same = c;
        same.coop = d->coop;
        CHECK(vpt_config_equal(d, &same));
        seen |= 1 << d->coop;
    }
    CHECK_EQ_INT((int)n, 3);
    CHECK_EQ_INT(seen, (1 << 2) | (1 << 4) | (1 << 8));
    vpt_space_destroy(s);
}

/* The register-cap move: a cap that does not bind (no cap, or one above the
 * registers the kernel uses) steps to the largest cap below that count,
 * all else kept; the domain's own step from "no cap" reaches only the
 * smallest cap. */
TEST(tuner_space_register_cap_lands_below_the_kernels_registers)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    VptConfig c;
    long i = member_of(s, "regenerationSK-warp,threshold=50,block=64,lookahead=4,coop=4", &c);
    REQUIRE(i >= 0);
    REQUIRE(c.maxrregcount == 0);
    size_t nb[VPT_SPACE_MAX_NEIGHBOURS];
    size_t n = vpt_space_neighbours_in(s, (size_t)i, 1u << VPT_DIM_MAXRREGCOUNT, nb, VPT_SPACE_MAX_NEIGHBOURS);
    REQUIRE(n == 1);
    CHECK_EQ_INT(vpt_space_point(s, nb[0])->maxrregcount, 32);
    VptConfig want = c;
    want.maxrregcount = 80;
    long m = vpt_space_register_cap(s, (size_t)i, 87);
    REQUIRE(m >= 0);
    CHECK(vpt_config_equal(vpt_space_point(s, (size_t)m), &want));
    /* a cap above the count binds no more than none */
    c.maxrregcount = 168;
    long j = vpt_space_index_of(s, &c);
    REQUIRE(j >= 0);
    m = vpt_space_register_cap(s, (size_t)j, 80);
    REQUIRE(m >= 0);
    want.maxrregcount = 64;
    CHECK(vpt_config_equal(vpt_space_point(s, (size_t)m), &want));
    /* a binding cap, an unknown count, or no cap below the count: no move */
    c.maxrregcount = 80;
    long k = vpt_space_index_of(s, &c);
    REQUIRE(k >= 0);
    CHECK_EQ_INT(vpt_space_register_cap(s, (size_t)k, 80), -1);
    CHECK_EQ_INT(vpt_space_register_cap(s, (size_t)i, 0), -1);
    CHECK_EQ_INT(vpt_space_register_cap(s, (size_t)i, NAN), -1);
    CHECK_EQ_INT(vpt_space_register_cap(s, (size_t)i, 32), -1);
    vpt_space_destroy(s);
}

/* The cap lifted: the next caps of the domain above the register bound (the
 * cap, or the block's launch bound), all else kept, the block lowered to
 * what the register file holds at that cap; nothing past the domain's end. */
TEST(tuner_space_cap_lifted_keeps_the_config_and_fits_the_block)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    VptConfig c;
    long i = member_of(s, "regenerationSK-warp,threshold=50,block=128,lookahead=4,coop=4,maxrregcount=64", &c);
    REQUIRE(i >= 0);
    VptConfig want = c;
    want.maxrregcount = 80;
    long m = vpt_space_cap_lifted(s, (size_t)i, 1);
    REQUIRE(m >= 0);
    CHECK(vpt_config_equal(vpt_space_point(s, (size_t)m), &want));
    want.maxrregcount = 96;
    m = vpt_space_cap_lifted(s, (size_t)i, 2);
    REQUIRE(m >= 0);
    CHECK(vpt_config_equal(vpt_space_point(s, (size_t)m), &want));
    /* block 1024 holds 64 registers a lane: cap 80 needs block 512 or less,
     * and the SM's register file holds three blocks of 256 (768 threads)
     * where it holds one of 512 */
    long j = member_of(s, "regenerationSK-warp,threshold=50,block=1024,lookahead=4,coop=4,maxrregcount=64", &c);
    REQUIRE(j >= 0);
    m = vpt_space_cap_lifted(s, (size_t)j, 1);
    REQUIRE(m >= 0);
    CHECK_EQ_INT(vpt_space_point(s, (size_t)m)->maxrregcount, 80);
    CHECK_EQ_INT(vpt_space_point(s, (size_t)m)->block, 256);
    CHECK_EQ_INT(vpt_space_point(s, (size_t)m)->coop, 4);
    CHECK_EQ_INT(vpt_config_check(vpt_space_point(s, (size_t)m)), 0);
    /* uncapped, block 1024's launch bound is 64: lifted as a cap of 64 is */
    long u = member_of(s, "regenerationSK-warp,threshold=50,block=1024,lookahead=4,coop=4", &c);
    REQUIRE(u >= 0);
    CHECK_EQ_INT(vpt_space_register_bound(s, (size_t)u), 64);
    m = vpt_space_cap_lifted(s, (size_t)u, 1);
    REQUIRE(m >= 0);
    CHECK_EQ_INT(vpt_space_point(s, (size_t)m)->maxrregcount, 80);
    CHECK_EQ_INT(vpt_space_point(s, (size_t)m)->block, 256);
    /* cap 128: one block of 512 or two of 256 hold 512 threads alike, and
     * the larger block is kept */
    long w = member_of(s, "regenerationSK-warp,threshold=50,block=512,lookahead=4,coop=4,maxrregcount=96", &c);
    REQUIRE(w >= 0);
    m = vpt_space_cap_lifted(s, (size_t)w, 1);
    REQUIRE(m >= 0);
    CHECK_EQ_INT(vpt_space_point(s, (size_t)m)->maxrregcount, 128);
    CHECK_EQ_INT(vpt_space_point(s, (size_t)m)->block, 512);
    /* uncapped at a block whose launch bound is the largest, or the domain's largest cap: nothing above */
    long k = member_of(s, "regenerationSK-warp,threshold=50,block=128,lookahead=4,coop=4", &c);
    REQUIRE(k >= 0);
    CHECK_EQ_INT(vpt_space_register_bound(s, (size_t)k), 255);
    CHECK_EQ_INT(vpt_space_cap_lifted(s, (size_t)k, 1), -1);
    long t = member_of(s, "regenerationSK-warp,threshold=50,block=128,lookahead=4,coop=4,maxrregcount=255", &c);
    REQUIRE(t >= 0);
    CHECK_EQ_INT(vpt_space_cap_lifted(s, (size_t)t, 1), -1);
    vpt_space_destroy(s);
}
