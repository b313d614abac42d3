/* bin/tune-space: the config lists of a recorded ground-truth space, made
 * without a GPU from the tuner's own space (tuner/space.h is the single
 * source of truth for what a member is and what its neighbours are).
 *
 *   tune-space sample N [--seed S] [--space DIM=V,...]... [--exclude REC.jsonl]...
 *   tune-space neighbours REC.jsonl... [--top K] [--space DIM=V,...]... [--exclude REC.jsonl]...
 *   tune-space correlate A.jsonl B.jsonl [--top K]
 *   tune-space pick REC.jsonl [--top K] [--random M] [--seed S] [--exclude REC.jsonl]...
 *
 * sample: a stratified random sample of the FULL space, the 353,934 schedule
 *   configs of vpt_space_create() times the 32 estimators (majorant global,
 *   grid4..grid128, skip x density f32, f16, u16, u8): 11,325,888 configs,
 *   narrowed by --space as tune narrows its own (e.g. flights=sync: the
 *   schedule space before flights=async). The sample depends on the space
 *   of its commit: the recordings in tests/fixtures/tuner/sampled name
 *   their commit in their recording files. The
 *   strata are the 9 x 32 cells (schedule, estimator). Allocation is equal over the
 *   cells of a schedule and over the single-kernel schedules, and a quarter
 *   of that for the two multi-kernel schedules (naiveMK, streamingMK): on
 *   every recorded space their best config is far slower than the optimum,
 *   and they cost the most GPU time per config, so a full share would spend
 *   a third of the recording on configs no tune keeps
 *   (docs/decisions/tune-space-sample-allocation.md). Proportional
 *   allocation would be worse: the
 *   schedules' member counts differ 50-fold (1,908 for naiveSK and the
 *   multi-kernel ones, 95,400 for the Morton-sorting ones, which vary grid,
 *   threshold and sort key), and it would leave the naive, multi-kernel and
 *   thread-regeneration schedules a handful of points each. Within a cell, members are drawn
 *   uniformly without replacement. The thesis' default variant
 *   (regenerationSK-thread, global f32: the tuner's start) is always in.
 *   Output order is a seeded shuffle, so that a GPU's drift over a long
 *   recording does not line up with a schedule or an estimator.
 *   The sample depends on N and the seed only: with --exclude it prints the
 *   same sample less the configs already recorded (resuming).
 * neighbours: every config one move away, in the full space, from each of
 *   the K fastest ok configs of the recordings (full fidelity) that is not
 *   recorded yet: the member's neighbours in the schedule space
 *   (vpt_space_neighbours) and its schedule moves with their dependent
 *   parameters (vpt_space_schedule_moves), with its estimator, and the same
 *   schedule with each of the 19 other estimators (what the tune's estimator
 *   screening tries). Empty output: the K best are each a local optimum whose
 *   whole neighbourhood is measured.
 * correlate: Spearman's rank correlation of the ok configs recorded in both
 *   files (e.g. a screening workload against the full one) and how many of
 *   A's K fastest are among B's K fastest.
 * pick: the K fastest ok configs of a recording and M others drawn uniformly
 *   from the rest of its ok configs (seeded): the configs to measure again at
 *   another workload, so that the rank correlation is taken both where it
 *   decides (the top) and over the whole range. --exclude leaves out those
 *   already measured there (the choice itself does not change). */
#include "base/error.h"
#include "base/parse.h"
#include "cli/version.h"
#include "codegen/config.h"
#include "tuner/eval.h"
#include "tuner/rng.h"
#include "tuner/space.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *prog = "tune-space";

#define MAX_FILES 16
#define N_ESTIMATORS (VPT_MAJORANT_COUNT * VPT_DENSITY_FORMAT_COUNT)

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: tune-space sample N [--seed S] [--space DIM=V,...]... [--exclude REC.jsonl]...\n"
            "       tune-space neighbours REC.jsonl... [--top K] [--space DIM=V,...]... [--exclude REC.jsonl]...\n"
            "       tune-space correlate A.jsonl B.jsonl [--top K]\n"
            "       tune-space pick REC.jsonl [--top K] [--random M] [--seed S] [--exclude REC.jsonl]...\n"
            "\n"
            "Config lists for a recorded ground-truth space (one canonical config per line,\n"
            "for bench --configs), from the tuner's space; no GPU needed.\n"
            "\n"
            "  sample N      a stratified random sample of N configs of the full space\n"
            "                (schedules x estimators; strata: schedule x estimator)\n"
            "  neighbours    the unrecorded neighbours of the K fastest recorded configs\n"
            "                (default K 10): schedule-space moves and the other estimators\n"
            "  correlate     Spearman's rho of the configs ok in both recordings, and the\n"
            "                overlap of their K fastest (default K 20)\n"
            "  pick          the K fastest ok configs of a recording (default 40) and M\n"
            "                others drawn at random from its ok configs (default 60)\n"
            "  --seed S      sample seed (default 1)\n"
            "  --space D=V,.. sample and neighbours: restrict a dimension of the schedule space\n"
            "                as tune --space does (e.g. flights=sync; may repeat)\n"
            "  --exclude F   leave out configs recorded in F (a results file; may repeat)\n");
}

/* A results file (harness rows, .jsonl or .jsonl.gz) through the replay's
 * parser, the one reader of recorded runs. */
static VptReplay *open_recording(const char *path)
{
    VptReplay *r = vpt_replay_open(path);
    if (!r) vpt_error_prefix("%s", path);
    return r;
}

typedef struct {
    VptReplay *rec[MAX_FILES];
    int n;
} Recordings;

static void recordings_close(Recordings *rs)
{
    for (int i = 0; i < rs->n; i++) vpt_replay_destroy(rs->rec[i]);
    rs->n = 0;
}

static int recordings_add(Recordings *rs, const char *path)
{
    if (rs->n == MAX_FILES) return vpt_fail("at most %d recordings", MAX_FILES);
    if (!(rs->rec[rs->n] = open_recording(path))) return -1;
    rs->n++;
    return 0;
}

static int recorded(const Recordings *rs, const VptConfig *c)
{
    for (int i = 0; i < rs->n; i++)
        if (vpt_replay_find(rs->rec[i], c)) return 1;
    return 0;
}

/* Printed configs, to print each once. */
typedef struct {
    VptConfig *c;
    size_t n, cap;
} ConfigList;

static int list_has(const ConfigList *l, const VptConfig *c)
{
    for (size_t i = 0; i < l->n; i++)
        if (vpt_config_equal(&l->c[i], c)) return 1;
    return 0;
}

static int list_push(ConfigList *l, const VptConfig *c)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        VptConfig *p = vpt_realloc(l->c, cap * sizeof *p);
        if (!p) return -1;
        l->c = p;
        l->cap = cap;
    }
    l->c[l->n++] = *c;
    return 0;
}

static void print_config(const VptConfig *c)
{
    char text[VPT_CONFIG_STR_MAX];
    vpt_config_format(c, text, sizeof text);
    puts(text);
}

/* The configs of out that exclude did not record, one a line. */
static void print_list(const ConfigList *out, const Recordings *exclude)
{
    for (size_t i = 0; i < out->n; i++)
        if (!recorded(exclude, &out->c[i])) print_config(&out->c[i]);
}

static VptConfig with_estimator(const VptConfig *c, int e)
{
    VptConfig x = *c;
    const int *majorants;
    vpt_majorant_cells(&majorants);
    x.majorant = majorants[e / VPT_DENSITY_FORMAT_COUNT];
    x.density = (VptDensityFormat)(e % VPT_DENSITY_FORMAT_COUNT);
    return x;
}

/* The schedule space narrowed by --space DIM=V,... (at most MAX_FILES). */
typedef struct {
    const char *spec[MAX_FILES];
    int n;
} SpaceSpecs;

static VptSpace *make_space(const SpaceSpecs *sp)
{
    VptSpace *s = vpt_space_create();
    if (!s) return NULL;
    for (int i = 0; i < sp->n; i++)
        if (vpt_space_restrict_spec(s, sp->spec[i])) {
            vpt_space_destroy(s);
            return NULL;
        }
    return s;
}

/* ---- sample ------------------------------------------------------------- */

static double schedule_weight(int schedule)
{
    const VptSchedule *sch;
    vpt_config_schedules(&sch);
    return sch[schedule].kernels == VPT_KERNELS_MULTI ? 0.25 : 1.0;
}

static int cmd_sample(size_t n, uint64_t seed, const SpaceSpecs *sp, const Recordings *exclude)
{
    VptSpace *s = make_space(sp);
    if (!s) return -1;
    size_t size = vpt_space_size(s);
    /* members by schedule */
    size_t *members = vpt_malloc(size * sizeof *members);
    size_t start[VPT_SCHEDULE_COUNT + 1] = {0};
    ConfigList out = {0};
    int rc = -1;
    if (!members) goto done;
    for (size_t i = 0; i < size; i++) start[vpt_config_schedule_index(vpt_space_point(s, i)) + 1]++;
    for (int k = 0; k < VPT_SCHEDULE_COUNT; k++) start[k + 1] += start[k];
    {
        size_t fill[VPT_SCHEDULE_COUNT];
        memcpy(fill, start, sizeof fill);
        for (size_t i = 0; i < size; i++) members[fill[vpt_config_schedule_index(vpt_space_point(s, i))]++] = i;
    }
    /* allocation: each schedule its largest-remainder share of n x weight
     * / total weight (ties by a draw), spread over its 20 estimator cells
     * evenly, the cells that get one more taken in turn along a seeded
     * order of the estimators, so that the estimators' totals also differ
     * by one at most */
    enum { CELLS = VPT_SCHEDULE_COUNT * N_ESTIMATORS };
    double total = 0, quota[VPT_SCHEDULE_COUNT];
    size_t per_sched[VPT_SCHEDULE_COUNT], alloc[CELLS], given = 0;
    for (int k = 0; k < VPT_SCHEDULE_COUNT; k++) total += schedule_weight(k);
    VptRng rng;
    vpt_rng_seed(&rng, seed);
    for (int k = 0; k < VPT_SCHEDULE_COUNT; k++) {
        quota[k] = (double)n * schedule_weight(k) / total;
        per_sched[k] = (size_t)floor(quota[k]);
        given += per_sched[k];
    }
    while (given < n) {
        int best = -1;
        double best_r = -1, best_tie = 0;
        for (int k = 0; k < VPT_SCHEDULE_COUNT; k++) {
            double r = quota[k] - (double)per_sched[k], tie = vpt_rng_uniform(&rng);
            if (r > best_r + 1e-9 || (fabs(r - best_r) <= 1e-9 && tie > best_tie)) {
                best = k;
                best_r = r;
                best_tie = tie;
            }
        }
        per_sched[best]++;
        quota[best] = (double)per_sched[best]; /* taken: no remainder left */
        given++;
    }
    int order[N_ESTIMATORS], turn = 0;
    for (int e = 0; e < N_ESTIMATORS; e++) order[e] = e;
    for (int e = N_ESTIMATORS; e > 1; e--) {
        int j = (int)vpt_rng_below(&rng, (uint64_t)e), t = order[e - 1];
        order[e - 1] = order[j];
        order[j] = t;
    }
    for (int k = 0; k < VPT_SCHEDULE_COUNT; k++) {
        for (int e = 0; e < N_ESTIMATORS; e++) alloc[k * N_ESTIMATORS + e] = per_sched[k] / N_ESTIMATORS;
        for (size_t j = 0; j < per_sched[k] % N_ESTIMATORS; j++) {
            alloc[k * N_ESTIMATORS + order[turn]]++;
            turn = (turn + 1) % N_ESTIMATORS;
        }
    }
    /* the start of every tune first */
    VptConfig prior;
    if (vpt_config_parse("regenerationSK", &prior) || list_push(&out, &prior)) goto done;
    for (int c = 0; c < CELLS; c++) {
        int k = c / N_ESTIMATORS, e = c % N_ESTIMATORS;
        size_t m = start[k + 1] - start[k];
        size_t *pool = members + start[k];
        /* partial Fisher-Yates over the schedule's members: the first
         * alloc draws, without replacement (a cell never wants more than
         * its schedule has: the smallest schedule has 1,908 members) */
        size_t want = alloc[c] < m ? alloc[c] : m;
        for (size_t i = 0; i < want; i++) {
            size_t j = i + (size_t)vpt_rng_below(&rng, m - i);
            size_t t = pool[i];
            pool[i] = pool[j];
            pool[j] = t;
            VptConfig x = with_estimator(vpt_space_point(s, pool[i]), e);
            if (!list_has(&out, &x) && list_push(&out, &x)) goto done;
        }
    }
    /* a seeded order */
    for (size_t i = out.n; i > 1; i--) {
        size_t j = (size_t)vpt_rng_below(&rng, i);
        VptConfig t = out.c[i - 1];
        out.c[i - 1] = out.c[j];
        out.c[j] = t;
    }
    print_list(&out, exclude);
    rc = 0;
done:
    free(out.c);
    free(members);
    vpt_space_destroy(s);
    return rc;
}

/* ---- neighbours ----------------------------------------------------------- */

typedef struct {
    VptConfig config;
    double ms;
} Ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const Ranked *x = a, *y = b;
    if (x->ms != y->ms) return x->ms < y->ms ? -1 : 1;
    char ta[VPT_CONFIG_STR_MAX], tb[VPT_CONFIG_STR_MAX];
    vpt_config_format(&x->config, ta, sizeof ta);
    vpt_config_format(&y->config, tb, sizeof tb);
    return strcmp(ta, tb);
}

/* The ok full-fidelity records of the recordings, fastest first (a config
 * recorded in two files: its first file's row). */
static Ranked *ranked_ok(const Recordings *rs, size_t *n_out)
{
    size_t cap = 0;
    for (int i = 0; i < rs->n; i++) cap += vpt_replay_count(rs->rec[i]);
    Ranked *r = vpt_malloc((cap ? cap : 1) * sizeof *r);
    if (!r) return NULL;
    size_t n = 0;
    for (int i = 0; i < rs->n; i++)
        for (size_t j = 0; j < vpt_replay_count(rs->rec[i]); j++) {
            const VptEvalRecord *x = vpt_replay_record(rs->rec[i], j);
            double ms = vpt_eval_objective(x);
            if (!isfinite(ms)) continue;
            int earlier = 0;
            for (int p = 0; p < i && !earlier; p++) earlier = vpt_replay_find(rs->rec[p], &x->config) != NULL;
            if (!earlier) r[n++] = (Ranked){x->config, ms};
        }
    qsort(r, n, sizeof *r, cmp_ranked);
    *n_out = n;
    return r;
}

static int push_new(ConfigList *out, const Recordings *rs, const Recordings *exclude, const VptConfig *c)
{
    if (recorded(rs, c) || recorded(exclude, c) || list_has(out, c)) return 0;
    return list_push(out, c);
}

static int cmd_neighbours(const Recordings *rs, size_t top, const SpaceSpecs *sp, const Recordings *exclude)
{
    size_t n_ok;
    Ranked *ok = ranked_ok(rs, &n_ok);
    if (!ok) return -1;
    VptSpace *s = make_space(sp);
    ConfigList out = {0};
    int rc = -1;
    if (!s) goto done;
    for (size_t i = 0; i < n_ok && i < top; i++) {
        const VptConfig *c = &ok[i].config;
        VptConfig sched = *c;
        sched.majorant = 0;
        sched.density = VPT_DENSITY_F32;
        long m = vpt_space_index_of(s, &sched);
        if (m >= 0) {
            size_t nb[VPT_SPACE_MAX_NEIGHBOURS + VPT_SPACE_MAX_SCHEDULE_MOVES];
            size_t k = vpt_space_neighbours(s, (size_t)m, nb, VPT_SPACE_MAX_NEIGHBOURS);
            k += vpt_space_schedule_moves(s, (size_t)m, nb + k, VPT_SPACE_MAX_SCHEDULE_MOVES);
            for (size_t j = 0; j < k; j++) {
                VptConfig x = *vpt_space_point(s, nb[j]);
                x.majorant = c->majorant;
                x.density = c->density;
                if (push_new(&out, rs, exclude, &x)) goto done;
            }
        } /* a config outside the schedule space (another domain value) has
             no schedule moves; its estimators still do */
        for (int e = 0; e < N_ESTIMATORS; e++) {
            VptConfig x = with_estimator(c, e);
            if (push_new(&out, rs, exclude, &x)) goto done;
        }
    }
    print_list(&out, exclude); /* push_new kept none that exclude recorded */
    rc = 0;
done: /* in the reverse order of acquisition */
    free(out.c);
    vpt_space_destroy(s);
    free(ok);
    return rc;
}

/* ---- correlate ------------------------------------------------------------ */

/* Ranks of v[0..n) (1-based, ties averaged) into rank. */
static void ranks(const double *v, size_t n, double *rank)
{
    for (size_t i = 0; i < n; i++) {
        double less = 0, equal = 0;
        for (size_t j = 0; j < n; j++) {
            less += v[j] < v[i];
            equal += v[j] == v[i];
        }
        rank[i] = less + (equal + 1) / 2;
    }
}

static int cmd_correlate(VptReplay *a, VptReplay *b, size_t top)
{
    size_t n = vpt_replay_count(a), m = 0;
    double *x = vpt_malloc((n ? n : 1) * 4 * sizeof *x);
    if (!x) return -1;
    double *y = x + n, *rx = y + n, *ry = rx + n;
    for (size_t i = 0; i < n; i++) {
        const VptEvalRecord *ra = vpt_replay_record(a, i);
        const VptEvalRecord *rb = vpt_replay_find(b, &ra->config);
        if (!rb || !isfinite(vpt_eval_objective(ra)) || !isfinite(vpt_eval_objective(rb))) continue;
        x[m] = vpt_eval_objective(ra);
        y[m] = vpt_eval_objective(rb);
        m++;
    }
    if (m < 3) {
        free(x);
        return vpt_fail("only %zu configs are ok in both recordings (at least 3 are needed)", m);
    }
    ranks(x, m, rx);
    ranks(y, m, ry);
    double mean = (m + 1) / 2.0, sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < m; i++) {
        sxy += (rx[i] - mean) * (ry[i] - mean);
        sxx += (rx[i] - mean) * (rx[i] - mean);
        syy += (ry[i] - mean) * (ry[i] - mean);
    }
    size_t k = top < m ? top : m, both = 0;
    for (size_t i = 0; i < m; i++) both += rx[i] <= (double)k && ry[i] <= (double)k;
    printf("configs ok in both: %zu\nspearman_rho: %.4f\ntop %zu overlap: %zu\n", m, sxy / sqrt(sxx * syy), k, both);
    free(x);
    return 0;
}

/* ---- pick ----------------------------------------------------------------- */

static int cmd_pick(const Recordings *rs, size_t top, size_t random, uint64_t seed, const Recordings *exclude)
{
    size_t n_ok;
    Ranked *ok = ranked_ok(rs, &n_ok);
    if (!ok) return -1;
    size_t k = top < n_ok ? top : n_ok;
    VptRng rng;
    vpt_rng_seed(&rng, seed);
    /* the rest, partially shuffled: its first `random` are the draws */
    size_t rest = n_ok - k, m = random < rest ? random : rest;
    for (size_t i = 0; i < m; i++) {
        size_t j = k + i + (size_t)vpt_rng_below(&rng, rest - i);
        Ranked t = ok[k + i];
        ok[k + i] = ok[j];
        ok[j] = t;
    }
    for (size_t i = 0; i < k + m; i++)
        if (!recorded(exclude, &ok[i].config)) print_config(&ok[i].config);
    free(ok);
    return 0;
}

/* ---- main ----------------------------------------------------------------- */

int main(int argc, char **argv)
{
    if (vpt_handle_version(argc, argv, prog)) return 0;
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(stdout);
        return 0;
    }
    const char *cmd = argv[1];
    int is_sample = !strcmp(cmd, "sample"), is_nb = !strcmp(cmd, "neighbours"), is_corr = !strcmp(cmd, "correlate"),
        is_pick = !strcmp(cmd, "pick");
    Recordings files = {0}, exclude = {0};
    SpaceSpecs space = {0};
    const char *paths[MAX_FILES];
    int n_paths = 0, n_exclude = 0;
    const char *exclude_paths[MAX_FILES];
    uint64_t seed = 1, count = 0, top = is_corr ? 20 : is_pick ? 40 : 10, random = 60;
    int have_count = 0, rc = 2;
    if (!is_sample && !is_nb && !is_corr && !is_pick) {
        vpt_fail("unknown command '%s' (sample, neighbours, correlate, pick)", cmd);
        goto usage_error;
    }
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] == '-' && a[1] == '-') {
            if (!v) {
                vpt_fail("%s needs a value (see --help)", a);
                goto usage_error;
            }
            i++;
            if (!strcmp(a, "--seed")) {
                if (vpt_parse_u64(v, UINT64_MAX, "--seed", &seed)) goto usage_error;
            } else if (!strcmp(a, "--top") && !is_sample) {
                if (vpt_parse_u64(v, 1000000, "--top", &top)) goto usage_error;
                if (top == 0) {
                    vpt_fail("--top: 0 configs (give at least 1)");
                    goto usage_error;
                }
            } else if (!strcmp(a, "--random") && is_pick) {
                if (vpt_parse_u64(v, 10000000, "--random", &random)) goto usage_error;
            } else if (!strcmp(a, "--space") && (is_sample || is_nb)) {
                if (space.n == MAX_FILES) {
                    vpt_fail("--space: at most %d restrictions", MAX_FILES);
                    goto usage_error;
                }
                space.spec[space.n++] = v;
            } else if (!strcmp(a, "--exclude") && !is_corr) {
                if (n_exclude == MAX_FILES) {
                    vpt_fail("--exclude: at most %d files", MAX_FILES);
                    goto usage_error;
                }
                exclude_paths[n_exclude++] = v;
            } else {
                vpt_fail("unknown option '%s' for %s (see --help)", a, cmd);
                goto usage_error;
            }
        } else if (is_sample && !have_count) {
            if (vpt_parse_u64(a, 10000000, "sample N", &count)) goto usage_error;
            if (count == 0) {
                vpt_fail("sample N: 0 configs (give at least 1)");
                goto usage_error;
            }
            have_count = 1;
        } else if (!is_sample && n_paths < MAX_FILES) {
            paths[n_paths++] = a;
        } else {
            vpt_fail("unexpected argument '%s' (see --help)", a);
            goto usage_error;
        }
    }
    if (is_sample && !have_count) {
        vpt_fail("sample needs N, the number of configs");
        goto usage_error;
    }
    if (is_nb && n_paths == 0) {
        vpt_fail("neighbours needs at least one recording (a results file)");
        goto usage_error;
    }
    if (is_pick && n_paths != 1) {
        vpt_fail("pick needs one recording (got %d)", n_paths);
        goto usage_error;
    }
    if (is_corr && n_paths != 2) {
        vpt_fail("correlate needs two recordings (got %d)", n_paths);
        goto usage_error;
    }
    rc = 1;
    for (int i = 0; i < n_exclude; i++)
        if (recordings_add(&exclude, exclude_paths[i])) goto out;
    for (int i = 0; i < n_paths; i++)
        if (recordings_add(&files, paths[i])) goto out;
    if (is_sample) rc = cmd_sample((size_t)count, seed, &space, &exclude) ? 1 : 0;
    else if (is_nb) rc = cmd_neighbours(&files, (size_t)top, &space, &exclude) ? 1 : 0;
    else if (is_pick) rc = cmd_pick(&files, (size_t)top, (size_t)random, seed, &exclude) ? 1 : 0;
    else rc = cmd_correlate(files.rec[0], files.rec[1], (size_t)top) ? 1 : 0;
    if (rc == 0 && fflush(stdout) != 0) {
        vpt_fail_errno("cannot write the config list");
        rc = 1;
    }
out:
    if (rc) vpt_report_error(prog);
    recordings_close(&files);
    recordings_close(&exclude);
    return rc;
usage_error:
    vpt_report_error(prog);
    fprintf(stderr, "%s: try '%s --help'\n", prog, prog);
    return 2;
}
