/* libFuzzer target: the tuner's results cache (tuner/cache.h) and its
 * replay reader of result files (vpt_replay_open, tuner/eval.h). The input
 * is written to a scratch file, then:
 *   1. opened read-only: on success every row's config must be a valid one
 *      that vpt_cache_find returns, no two rows of one config and fidelity
 *      may be different measurements, and the file must be unchanged;
 *   2. opened for writing with the provenance it states (or a fixed one when
 *      it has none): a failure must leave the file unchanged; a success must
 *      hold the same rows, each found by vpt_cache_lookup in file order (a
 *      retrace: each reached, or a repeat), take one more (refused, the file
 *      unchanged, when it is another measurement of a config the file
 *      holds), and read back with it last;
 *   3. read as a replay source: on success every full-fidelity row is found
 *      and evaluates; a failure leaves a message. */
#include "fuzz/fuzz_common.h"
#include "tuner/cache.h"
#include "tuner/eval.h"
#include "tuner/rows.h"

static int fuzz_cache_same_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return 0;
    int same = 1;
    for (size_t i = 0; i < size && same; i++) same = fgetc(fp) == data[i];
    if (same) same = fgetc(fp) == EOF;
    fclose(fp);
    return same;
}

static void fuzz_cache_check_rows(VptCache *c, const char *what, int retrace)
{
    for (size_t i = 0; i < vpt_cache_count(c); i++) {
        const VptEvalRecord *r = vpt_cache_record(c, i);
        char canon[VPT_CONFIG_STR_MAX];
        vpt_config_format(&r->config, canon, sizeof canon);
        VptConfig back;
        FUZZ_CHECK(vpt_config_parse(canon, &back) == 0 && vpt_config_equal(&back, &r->config),
                   "%s: row %zu holds config '%s', which does not parse back", what, i, canon);
        FUZZ_CHECK((unsigned)r->status < VPT_STATUS_COUNT, "%s: row %zu has status %d", what, i, (int)r->status);
        FUZZ_CHECK(r->fidelity == 0 || r->fidelity == 1, "%s: row %zu has fidelity %d", what, i, r->fidelity);
        FUZZ_CHECK(memchr(r->reason, '\0', sizeof r->reason) && memchr(r->time, '\0', sizeof r->time),
                   "%s: row %zu has an unterminated string", what, i);
        VptEvalRecord got;
        const VptEvalRecord *f = &got;
        if (retrace) {
            VptCacheHit h = vpt_cache_lookup(c, &r->config, r->fidelity, &got);
            FUZZ_CHECK(h == VPT_CACHE_RETRACED || h == VPT_CACHE_HIT, "%s: row %zu ('%s') is not found", what, i, canon);
        } else {
            f = vpt_cache_find(c, &r->config, r->fidelity);
        }
        FUZZ_CHECK(f && vpt_config_equal(&f->config, &r->config) && f->fidelity == r->fidelity,
                   "%s: row %zu ('%s') is not found", what, i, canon);
        FUZZ_CHECK(vpt_rows_same_measurement(f, r), "%s: row %zu ('%s') is another measurement than its first row",
                   what, i, canon);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[1024];
    fuzz_write_file(FUZZ_TMPDIR(), "tune.jsonl", data, size, path, sizeof path);

    /* 1. read-only */
    vpt_error_clear();
    VptCache *c = vpt_cache_open(path, NULL, VPT_CACHE_READONLY);
    VptTuneProvenance prov;
    size_t rows = 0;
    int ro_ok = c != NULL;
    if (c) {
        prov = *vpt_cache_provenance(c);
        rows = vpt_cache_count(c);
        fuzz_cache_check_rows(c, "read-only", 0);
        vpt_cache_close(c);
    } else {
        FUZZ_CHECK_FAILED_WITH_MESSAGE("vpt_cache_open (read-only)");
        memset(&prov, 0, sizeof prov);
        snprintf(prov.gpu_name, sizeof prov.gpu_name, "fuzz GPU");
        snprintf(prov.gpu_uuid, sizeof prov.gpu_uuid, "GPU-fuzz");
        snprintf(prov.nvrtc, sizeof prov.nvrtc, "13.0");
        snprintf(prov.commit, sizeof prov.commit, "fuzz");
        snprintf(prov.scene, sizeof prov.scene, "bucky");
        prov.width = prov.height = 8;
        prov.spp = 1;
        prov.rr_depth = -1;
    }
    FUZZ_CHECK(fuzz_cache_same_file(path, data, size), "a read-only open changed the file");

    /* 2. for writing, then one more row */
    vpt_error_clear();
    c = vpt_cache_open(path, &prov, VPT_CACHE_NOSYNC);
    if (!c) {
        FUZZ_CHECK_FAILED_WITH_MESSAGE("vpt_cache_open");
        FUZZ_CHECK(!ro_ok, "the file opens read-only but not for writing: %s", vpt_errmsg());
        FUZZ_CHECK(fuzz_cache_same_file(path, data, size), "a failed open changed the file");
    } else {
        if (ro_ok) FUZZ_CHECK(vpt_cache_count(c) == rows, "%zu rows read-only, %zu for writing", rows, vpt_cache_count(c));
        fuzz_cache_check_rows(c, "read-write", 1);
        size_t before = vpt_cache_count(c);
        VptConfig cfg = vpt_config_default();
        cfg.block = 96;
        VptEvalRecord r;
        vpt_eval_record_init(&r, &cfg, 1);
        r.time_ms = 2.5;
        r.cost_s = 1.0;
        snprintf(r.time, sizeof r.time, "2025-01-01T00:00:00Z");
        char *line = vpt_rows_record_line(&r);
        FUZZ_CHECK(line != NULL, "the row does not encode: %s", vpt_errmsg());
        VptEvalRecord had;
        int conflict = vpt_cache_lookup(c, &cfg, 1, &had) != VPT_CACHE_MISS && !vpt_rows_same_measurement(&had, &r);
        vpt_error_clear();
        int rc = vpt_cache_append(c, &r, line);
        free(line);
        vpt_cache_close(c);
        if (conflict) {
            FUZZ_CHECK(rc == -1 && strstr(vpt_errmsg(), "two different measurements"),
                       "an append of another measurement of a config the file holds was not refused");
            FUZZ_CHECK(fuzz_cache_same_file(path, data, size), "a refused append changed the file");
            goto replay;
        }
        FUZZ_CHECK(rc == 0, "append failed: %s", vpt_errmsg());
        vpt_error_clear();
        c = vpt_cache_open(path, NULL, VPT_CACHE_READONLY);
        FUZZ_CHECK(c != NULL, "the file does not open after an append: %s", vpt_errmsg());
        FUZZ_CHECK(vpt_cache_count(c) == before + 1, "%zu rows before the append, %zu after", before,
                   vpt_cache_count(c));
        const VptEvalRecord *last = vpt_cache_record(c, vpt_cache_count(c) - 1);
        FUZZ_CHECK(vpt_config_equal(&last->config, &cfg) && last->time_ms == 2.5, "the appended row reads back wrong");
        FUZZ_CHECK(vpt_cache_find(c, &cfg, 1) != NULL, "the appended row is not found");
        vpt_cache_close(c);
    }

    /* 3. as a replay source (the input as written) */
replay:
    fuzz_write_file(FUZZ_TMPDIR(), "tune.jsonl", data, size, path, sizeof path);
    vpt_error_clear();
    VptReplay *rp = vpt_replay_open(path);
    if (!rp) {
        FUZZ_CHECK_FAILED_WITH_MESSAGE("vpt_replay_open");
        return 0;
    }
    FUZZ_CHECK(vpt_replay_count(rp) > 0, "a replay without rows opened");
    for (size_t i = 0; i < vpt_replay_count(rp); i++) {
        const VptEvalRecord *r = vpt_replay_record(rp, i);
        FUZZ_CHECK(r && vpt_replay_find(rp, &r->config) != NULL, "replay row %zu is not found", i);
        VptEvalRecord out;
        vpt_error_clear();
        if (vpt_replay_evaluate(rp, &r->config, 1, &out) != 0) FUZZ_CHECK_FAILED_WITH_MESSAGE("vpt_replay_evaluate");
    }
    size_t rejected = 0;
    vpt_error_clear();
    VptSpace *s = vpt_replay_space(rp, &rejected);
    if (s) vpt_space_destroy(s);
    else FUZZ_CHECK_FAILED_WITH_MESSAGE("vpt_replay_space");
    vpt_replay_destroy(rp);
    return 0;
}
