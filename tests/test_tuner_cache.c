#include "tests/harness/test.h"
#include "tests/test_tuner_double.h"

#include "base/error.h"
#include "base/file.h"
#include "tuner/cache.h"
#include "tuner/rows.h"

#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void tmp_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", vpt_test_tmpdir(), name);
}

/* n records of distinct configs from the default space's thesis set and
 * variations, filled by the test double (some fail). */
static int make_records(VptEvalRecord *out, int n)
{
    const char *texts[] = {
        "naiveSK", "naiveMK", "regenerationSK-thread,grid=2", "regenerationSK-warp,threshold=25",
        "regenerationSK-block,block=128", "streamingSK,maxrregcount=64", "streamingMK,ppt=2",
        "streamingSK-morton,sortkey=termination", "sortingSK,block=512", "naiveSK,block=1024",
        "streamingSK,block=64,ppt=4", "sortingSK,maxrregcount=40,block=128",
    };
    int m = n < 12 ? n : 12;
    for (int i = 0; i < m; i++) {
        VptConfig c;
        if (vpt_config_parse(texts[i], &c)) return -1;
        vpt_eval_record_init(&out[i], &c, i % 3 == 2 ? 0 : 1);
        td_fill(&c, out[i].fidelity, &out[i]);
        snprintf(out[i].time, sizeof out[i].time, "2025-01-0%dT00:00:00Z", 1 + i % 9);
    }
    return m;
}

static int records_equal(const VptEvalRecord *a, const VptEvalRecord *b)
{
    if (!vpt_config_equal(&a->config, &b->config) || a->fidelity != b->fidelity || a->status != b->status ||
        strcmp(a->reason, b->reason) != 0 || strcmp(a->time, b->time) != 0 || a->cost_s != b->cost_s)
        return 0;
    for (int i = 0; i < vpt_metric_field_count; i++) {
        double x = *(const double *)((const char *)a + vpt_metric_fields[i].offset);
        double y = *(const double *)((const char *)b + vpt_metric_fields[i].offset);
        if (!(x == y || (isnan(x) && isnan(y)))) return 0; /* bit-exact round trip */
    }
    return 1;
}

/* Appends r as the pool does: encoded by the rows module, written by the
 * cache. */
static int append(VptCache *c, const VptEvalRecord *r)
{
    char *line = vpt_rows_record_line(r);
    int rc = line ? vpt_cache_append(c, r, line) : -1;
    free(line);
    return rc;
}

static VptCache *write_cache(const char *path, int n_rows, VptEvalRecord *recs)
{
    VptTuneProvenance prov = td_provenance();
    VptCache *c = vpt_cache_open(path, &prov, VPT_CACHE_NOSYNC);
    if (!c) return NULL;
    for (int i = 0; i < n_rows; i++)
        if (append(c, &recs[i])) {
            vpt_cache_close(c);
            return NULL;
        }
    return c;
}

/* Every estimator of one schedule has its own key, so a cache or a
 * recording never answers one estimator with another's row (grid64's and
 * grid128's cell sizes once masked to global's key, and volume=sparse was
 * not in it). */
TEST(tuner_rows_config_keys_tell_every_estimator_apart)
{
    VptConfig base;
    REQUIRE(vpt_config_parse("regenerationSK-warp,lookahead=4,coop=8", &base) == 0);
    const int *cells;
    const int nm = vpt_majorant_cells(&cells);
    uint64_t keys[VPT_MAJORANT_COUNT * VPT_DENSITY_FORMAT_COUNT * 2];
    char texts[VPT_MAJORANT_COUNT * VPT_DENSITY_FORMAT_COUNT * 2][VPT_CONFIG_STR_MAX];
    int n = 0;
    for (int m = 0; m < nm; m++)
        for (int f = 0; f < VPT_DENSITY_FORMAT_COUNT; f++)
            for (int sp = 0; sp < 2; sp++) {
                VptConfig c = base;
                c.majorant = cells[m];
                c.density = (VptDensityFormat)f;
                c.sparse = sp;
                if (vpt_majorant_skips(c.majorant) && sp) continue; /* skip needs the dense texture */
                REQUIRE(vpt_config_check(&c) == 0);
                vpt_config_format(&c, texts[n], sizeof texts[n]);
                keys[n++] = vpt_cache_key(&c, 1);
            }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) CHECK_MSG(keys[i] != keys[j], "%s and %s share a key", texts[i], texts[j]);
}

/* paths=pixel has a key of its own, one bit above every other field, so
 * that the keys of the configs from before it existed (paths=sample) are
 * what they were: no field of any member of the schedule space with any
 * estimator reaches that bit. */
TEST(tuner_rows_config_keys_tell_the_path_orders_apart)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    const int *cells;
    const int nm = vpt_majorant_cells(&cells);
    const uint64_t pixel_bit = (uint64_t)1 << 60; /* the fidelity is bit 0 */
    for (size_t i = 0; i < vpt_space_size(s); i += 97) {
        VptConfig c = *vpt_space_point(s, i);
        c.majorant = cells[i % (size_t)nm];
        c.density = (VptDensityFormat)(i % VPT_DENSITY_FORMAT_COUNT);
        c.sparse = !vpt_majorant_skips(c.majorant) && (i / 7) % 2;
        const uint64_t k = vpt_cache_key(&c, 1);
        CHECK_MSG(!(k & pixel_bit), "member %zu's key reaches the path order's bit", i);
        CHECK(vpt_cache_key(&c, 0) == (k & ~(uint64_t)1));
        c.paths = VPT_PATHS_PIXEL;
        CHECK(vpt_cache_key(&c, 1) == (k | pixel_bit));
    }
    vpt_space_destroy(s);
}

TEST(tuner_cache_round_trip)
{
    char path[600];
    tmp_path(path, sizeof path, "a.jsonl");
    VptEvalRecord recs[12];
    int n = make_records(recs, 12);
    REQUIRE(n == 12);
    VptCache *c = write_cache(path, n, recs);
    REQUIRE_MSG(c, "%s", vpt_errmsg());
    CHECK_EQ_INT(vpt_cache_count(c), n);
    vpt_cache_close(c);

    VptTuneProvenance prov = td_provenance();
    c = vpt_cache_open(path, &prov, 0);
    REQUIRE_MSG(c, "%s", vpt_errmsg());
    CHECK_EQ_INT(vpt_cache_count(c), n);
    CHECK_EQ_INT(vpt_cache_dropped_bytes(c), 0);
    for (int i = 0; i < n; i++) {
        CHECK_MSG(records_equal(vpt_cache_record(c, i), &recs[i]), "row %d differs after reopening", i);
        VptEvalRecord got;
        CHECK(vpt_cache_lookup(c, &recs[i].config, recs[i].fidelity, &got) == VPT_CACHE_RETRACED);
        CHECK(records_equal(&got, &recs[i]));
        const VptEvalRecord *f = vpt_cache_find(c, &recs[i].config, recs[i].fidelity);
        CHECK(f && records_equal(f, &recs[i]));
        CHECK(vpt_cache_find(c, &recs[i].config, !recs[i].fidelity) == NULL);
    }
    const VptTuneProvenance *p = vpt_cache_provenance(c);
    CHECK(strcmp(p->gpu_uuid, prov.gpu_uuid) == 0 && p->seed == prov.seed && p->rr_depth == -1);
    vpt_cache_close(c);

    /* the file is JSON lines: a header, then one eval row per record */
    char *data;
    size_t size;
    REQUIRE(vpt_read_file(path, 1 << 20, &data, &size) == 0);
    CHECK(strncmp(data, "{\"kind\":\"header\",\"schema\":\"vptune.tune/1\"", 41) == 0);
    int lines = 0;
    for (size_t i = 0; i < size; i++) lines += data[i] == '\n';
    CHECK_EQ_INT(lines, n + 1);
    CHECK(data[size - 1] == '\n');
    free(data);
}

TEST(tuner_cache_empty_or_new_file_gets_a_header)
{
    char path[600];
    tmp_path(path, sizeof path, "new.jsonl");
    VptTuneProvenance prov = td_provenance();
    VptCache *c = vpt_cache_open(path, &prov, 0); /* with fsync: the default */
    REQUIRE_MSG(c, "%s", vpt_errmsg());
    CHECK_EQ_INT(vpt_cache_count(c), 0);
    vpt_cache_close(c);
    CHECK(vpt_file_size(path) > 50);
    REQUIRE(vpt_write_file_atomic(path, "", 0) == 0);
    c = vpt_cache_open(path, &prov, 0);
    REQUIRE_MSG(c, "%s", vpt_errmsg());
    vpt_cache_close(c);
    CHECK(vpt_file_size(path) > 50);
    /* read-only needs a header */
    REQUIRE(vpt_write_file_atomic(path, "", 0) == 0);
    CHECK(vpt_cache_open(path, NULL, VPT_CACHE_READONLY) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "no header");
    CHECK(vpt_cache_open(path, NULL, 0) == NULL); /* writing needs a provenance */
}

TEST(tuner_cache_header_mismatch_names_the_field)
{
    char path[600];
    tmp_path(path, sizeof path, "prov.jsonl");
    VptEvalRecord recs[3];
    make_records(recs, 3);
    VptCache *c = write_cache(path, 3, recs);
    REQUIRE(c);
    vpt_cache_close(c);
    struct {
        const char *field;
        void (*change)(VptTuneProvenance *);
    } cases[] = {
        {"gpu.uuid", NULL}, {"commit", NULL}, {"nvrtc", NULL}, {"scene", NULL},
        {"workload.width", NULL}, {"workload.height", NULL}, {"workload.spp", NULL}, {"workload.seed", NULL},
        {"workload.max_depth", NULL}, {"workload.rr_depth", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        VptTuneProvenance p = td_provenance();
        switch (i) {
        case 0: snprintf(p.gpu_uuid, sizeof p.gpu_uuid, "GPU-other"); break;
        case 1: snprintf(p.commit, sizeof p.commit, "def456"); break;
        case 2: snprintf(p.nvrtc, sizeof p.nvrtc, "12.8"); break;
        case 3: snprintf(p.scene, sizeof p.scene, "smoke"); break;
        case 4: p.width = 65; break;
        case 5: p.height = 49; break;
        case 6: p.spp = 8; break;
        case 7: p.seed = 8; break;
        case 8: p.max_depth = 5; break;
        case 9: p.rr_depth = 3; break;
        }
        c = vpt_cache_open(path, &p, 0);
        CHECK_MSG(c == NULL, "mismatch of %s accepted", cases[i].field);
        vpt_cache_close(c);
        CHECK_STR_CONTAINS(vpt_errmsg(), cases[i].field);
        CHECK_STR_CONTAINS(vpt_errmsg(), "never mixed");
        CHECK_STR_CONTAINS(vpt_errmsg(), path);
    }
    /* the GPU name and driver are informative only */
    VptTuneProvenance p = td_provenance();
    snprintf(p.driver, sizeof p.driver, "999.1");
    snprintf(p.gpu_name, sizeof p.gpu_name, "Renamed");
    c = vpt_cache_open(path, &p, 0);
    CHECK_MSG(c != NULL, "%s", vpt_errmsg());
    vpt_cache_close(c);
    /* the file was not touched by the refusals */
    p = td_provenance();
    c = vpt_cache_open(path, &p, VPT_CACHE_READONLY);
    REQUIRE(c);
    CHECK_EQ_INT(vpt_cache_count(c), 3);
    vpt_cache_close(c);
    /* the caller's choice: start a new file, keeping the old one aside */
    snprintf(p.commit, sizeof p.commit, "def456");
    c = vpt_cache_open(path, &p, VPT_CACHE_FRESH);
    REQUIRE_MSG(c, "%s", vpt_errmsg());
    CHECK_EQ_INT(vpt_cache_count(c), 0);
    char prev[700];
    snprintf(prev, sizeof prev, "%s.prev1", path);
    CHECK(strcmp(vpt_cache_moved_to(c), prev) == 0);
    vpt_cache_close(c);
    VptCache *old = vpt_cache_open(prev, NULL, VPT_CACHE_READONLY);
    REQUIRE(old);
    CHECK_EQ_INT(vpt_cache_count(old), 3);
    CHECK(strcmp(vpt_cache_provenance(old)->commit, "abc123") == 0);
    vpt_cache_close(old);
}

/* The header carries the scene's volume; a cache of another grid or file
 * content under the same scene name is refused, naming the volume; a
 * header from before volumes were recorded (none) resumes under one that
 * has it, and the volume's path alone does not matter. */
TEST(tuner_cache_volume_in_the_header)
{
    char path[600];
    tmp_path(path, sizeof path, "vol.jsonl");
    static const char *const v1 = "{\"bytes\":906002432,\"dims\":[1024,1024,432],\"format\":\"i16\","
                                  "\"resample\":\"up4\",\"sha256\":\"aa\",\"source\":\"cranium.mhd\"}";
    VptTuneProvenance p = td_provenance();
    snprintf(p.volume, sizeof p.volume, "%s", v1);
    VptCache *c = vpt_cache_open(path, &p, VPT_CACHE_NOSYNC);
    REQUIRE_MSG(c, "%s", vpt_errmsg());
    vpt_cache_close(c);
    c = vpt_cache_open(path, NULL, VPT_CACHE_READONLY);
    REQUIRE(c);
    CHECK_MSG(!strcmp(vpt_cache_provenance(c)->volume, v1), "read back %s", vpt_cache_provenance(c)->volume);
    vpt_cache_close(c);
    /* the same volume found at another path: resumed */
    snprintf(p.volume, sizeof p.volume, "%s", "{\"bytes\":906002432,\"dims\":[1024,1024,432],\"format\":\"i16\","
                                              "\"resample\":\"up4\",\"sha256\":\"aa\",\"source\":\"../ct/cranium.mhd\"}");
    c = vpt_cache_open(path, &p, 0);
    CHECK_MSG(c != NULL, "%s", vpt_errmsg());
    vpt_cache_close(c);
    /* other content, another grid: refused */
    static const char *const others[] = {
        "{\"dims\":[1024,1024,432],\"format\":\"i16\",\"resample\":\"up4\",\"sha256\":\"bb\"}",
        "{\"dims\":[512,512,216],\"format\":\"i16\",\"resample\":\"up2\",\"sha256\":\"aa\"}",
        "{\"dims\":[1024,1024,432],\"format\":\"f32\",\"resample\":\"up4\",\"sha256\":\"aa\"}"};
    for (int i = 0; i < 3; i++) {
        snprintf(p.volume, sizeof p.volume, "%s", others[i]);
        c = vpt_cache_open(path, &p, 0);
        CHECK_MSG(c == NULL, "volume %s accepted", others[i]);
        vpt_cache_close(c);
        CHECK_STR_CONTAINS(vpt_errmsg(), "volume: recorded");
    }
    /* an old header without a volume resumes under one with it */
    tmp_path(path, sizeof path, "old.jsonl");
    VptTuneProvenance old = td_provenance();
    c = vpt_cache_open(path, &old, VPT_CACHE_NOSYNC);
    REQUIRE(c);
    vpt_cache_close(c);
    c = vpt_cache_open(path, &p, 0);
    CHECK_MSG(c != NULL, "%s", vpt_errmsg());
    vpt_cache_close(c);
}

/* Truncating a valid cache anywhere inside its last row: the row is dropped,
 * the file is cut back to the last complete line, and appending continues. */
TEST(tuner_cache_truncated_last_line_is_tolerated)
{
    char path[600], cut[600];
    tmp_path(path, sizeof path, "full.jsonl");
    tmp_path(cut, sizeof cut, "cut.jsonl");
    VptEvalRecord recs[5];
    make_records(recs, 5);
    VptCache *c = write_cache(path, 5, recs);
    REQUIRE(c);
    vpt_cache_close(c);
    char *data;
    size_t size;
    REQUIRE(vpt_read_file(path, 1 << 20, &data, &size) == 0);
    size_t last_start = size - 1;
    while (last_start > 0 && data[last_start - 1] != '\n') last_start--;
    VptTuneProvenance prov = td_provenance();
    for (size_t k = last_start; k < size - 1; k++) { /* size - 1: a whole row, below */
        REQUIRE(vpt_write_file_atomic(cut, data, k) == 0);
        c = vpt_cache_open(cut, &prov, VPT_CACHE_NOSYNC);
        REQUIRE_MSG(c, "cut at %zu: %s", k, vpt_errmsg());
        CHECK_EQ_INT(vpt_cache_count(c), 4);
        CHECK_EQ_INT(vpt_cache_dropped_bytes(c), k - last_start);
        CHECK_EQ_INT(vpt_file_size(cut), (long long)last_start);
        CHECK(append(c, &recs[4]) == 0);
        vpt_cache_close(c);
        CHECK_EQ_INT(vpt_file_size(cut), (long long)size); /* the same bytes again */
    }
    /* a whole row that only lost its newline is kept */
    REQUIRE(vpt_write_file_atomic(cut, data, size - 1) == 0);
    c = vpt_cache_open(cut, &prov, VPT_CACHE_NOSYNC);
    REQUIRE_MSG(c, "%s", vpt_errmsg());
    CHECK_EQ_INT(vpt_cache_count(c), 5);
    CHECK_EQ_INT(vpt_cache_dropped_bytes(c), 0);
    vpt_cache_close(c);
    CHECK_EQ_INT(vpt_file_size(cut), (long long)size);
    /* a read-only open ignores the tail and leaves the file alone */
    REQUIRE(vpt_write_file_atomic(cut, data, size - 10) == 0);
    c = vpt_cache_open(cut, NULL, VPT_CACHE_READONLY);
    REQUIRE(c);
    CHECK_EQ_INT(vpt_cache_count(c), 4);
    CHECK(append(c, &recs[4]) == -1);
    vpt_cache_close(c);
    CHECK_EQ_INT(vpt_file_size(cut), (long long)(size - 10));
    /* a tail of NUL bytes (blocks allocated, never written) is a crash trace too */
    char *zeros = calloc(1, size + 100);
    REQUIRE(zeros);
    memcpy(zeros, data, size);
    REQUIRE(vpt_write_file_atomic(cut, zeros, size + 100) == 0);
    c = vpt_cache_open(cut, &prov, VPT_CACHE_NOSYNC);
    REQUIRE_MSG(c, "%s", vpt_errmsg());
    CHECK_EQ_INT(vpt_cache_count(c), 5);
    vpt_cache_close(c);
    CHECK_EQ_INT(vpt_file_size(cut), (long long)size);
    /* a file cut inside its header starts anew */
    REQUIRE(vpt_write_file_atomic(cut, data, 20) == 0);
    c = vpt_cache_open(cut, &prov, VPT_CACHE_NOSYNC);
    REQUIRE_MSG(c, "%s", vpt_errmsg());
    CHECK_EQ_INT(vpt_cache_count(c), 0);
    vpt_cache_close(c);
    free(zeros);
    free(data);
}

/* Replaces line `line` (1-based) of the valid cache at src with `text` and
 * expects opening to fail naming that line and containing `needle`. */
static void expect_bad_line(const char *src, int line, const char *text, const char *needle)
{
    char *data;
    size_t size;
    REQUIRE(vpt_read_file(src, 1 << 20, &data, &size) == 0);
    char *out = malloc(size + strlen(text) + 2);
    REQUIRE(out);
    size_t o = 0;
    int ln = 1;
    for (size_t i = 0; i < size;) {
        char *nl = memchr(data + i, '\n', size - i);
        size_t len = (size_t)(nl - (data + i)) + 1;
        if (ln == line) {
            memcpy(out + o, text, strlen(text));
            o += strlen(text);
            out[o++] = '\n';
        } else {
            memcpy(out + o, data + i, len);
            o += len;
        }
        i += len;
        ln++;
    }
    char bad[700];
    snprintf(bad, sizeof bad, "%s.bad", src);
    REQUIRE(vpt_write_file_atomic(bad, out, o) == 0);
    VptTuneProvenance prov = td_provenance();
    VptCache *c = vpt_cache_open(bad, &prov, 0);
    CHECK_MSG(c == NULL, "line %d '%s' accepted", line, text);
    vpt_cache_close(c);
    char where[720];
    snprintf(where, sizeof where, "%s:%d", bad, line);
    CHECK_STR_CONTAINS(vpt_errmsg(), where);
    CHECK_STR_CONTAINS(vpt_errmsg(), needle);
    /* the file is not "repaired" */
    CHECK_EQ_INT(vpt_file_size(bad), (long long)o);
    free(out);
    free(data);
}

TEST(tuner_cache_garbage_in_the_middle_is_an_error)
{
    char path[600];
    tmp_path(path, sizeof path, "g.jsonl");
    VptEvalRecord recs[5];
    make_records(recs, 5);
    VptCache *c = write_cache(path, 5, recs);
    REQUIRE(c);
    vpt_cache_close(c);
    expect_bad_line(path, 3, "garbage", "not valid JSON");
    expect_bad_line(path, 3, "{\"kind\":\"eval\",\"config\":\"naiveSK\"", "not valid JSON"); /* cut, then more rows */
    expect_bad_line(path, 4, "", "not valid JSON");
    expect_bad_line(path, 2, "[1,2]", "kind");
    expect_bad_line(path, 3, "{\"kind\":\"header\",\"schema\":\"vptune.tune/1\"}", "expected an eval row");
    expect_bad_line(path, 3,
                    "{\"kind\":\"eval\",\"config\":\"naiveSK\",\"status\":\"melted\",\"cost_s\":1,\"metrics\":{}}",
                    "unknown result status 'melted'");
    expect_bad_line(path, 3, "{\"kind\":\"eval\",\"config\":\"block=100\",\"status\":\"ok\",\"cost_s\":1}",
                    "block=100");
    expect_bad_line(path, 3, "{\"kind\":\"eval\",\"config\":\"naiveSK\",\"status\":\"ok\",\"cost_s\":1}",
                    "without a positive \"metrics.time_ms\"");
    expect_bad_line(path, 3,
                    "{\"kind\":\"eval\",\"config\":\"naiveSK\",\"status\":\"compile\",\"metrics\":{}}",
                    "missing \"cost_s\"");
    expect_bad_line(path, 3,
                    "{\"kind\":\"eval\",\"config\":\"naiveSK\",\"status\":\"ok\",\"cost_s\":1,"
                    "\"metrics\":{\"time_ms\":\"fast\"}}",
                    "metrics.time_ms");
    expect_bad_line(path, 1, "{\"kind\":\"eval\"}", "expected the header row");
    expect_bad_line(path, 1, "{\"kind\":\"header\",\"schema\":\"vptune.tune/0\"}", "vptune.tune/0");
    /* a whole garbage last line (it has its newline) is garbage, not a crash trace */
    expect_bad_line(path, 6, "not json", "not valid JSON");
    /* a NUL byte inside a complete line */
    char *data;
    size_t size;
    REQUIRE(vpt_read_file(path, 1 << 20, &data, &size) == 0);
    char *nl = memchr(data, '\n', size);
    nl[5] = '\0';
    char bad[700];
    snprintf(bad, sizeof bad, "%s.nul", path);
    REQUIRE(vpt_write_file_atomic(bad, data, size) == 0);
    VptTuneProvenance prov = td_provenance();
    CHECK(vpt_cache_open(bad, &prov, 0) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), ":2: NUL byte");
    free(data);
}

TEST(tuner_cache_one_writer_at_a_time)
{
    char path[600];
    tmp_path(path, sizeof path, "lock.jsonl");
    VptTuneProvenance prov = td_provenance();
    VptCache *a = vpt_cache_open(path, &prov, VPT_CACHE_NOSYNC);
    REQUIRE(a);
    VptCache *b = vpt_cache_open(path, &prov, VPT_CACHE_NOSYNC);
    CHECK(b == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "in use by another process");
    CHECK(vpt_cache_open(path, &prov, VPT_CACHE_FRESH) == NULL); /* nor moved away under it */
    CHECK_STR_CONTAINS(vpt_errmsg(), "in use");
    vpt_cache_close(a);
    b = vpt_cache_open(path, &prov, VPT_CACHE_NOSYNC);
    CHECK(b != NULL);
    vpt_cache_close(b);
}

/* A row repeated identically (a resumed run appending it again, at another
 * time) is accepted and looked up as its first. */
TEST(tuner_cache_identical_repeat_is_accepted)
{
    char path[600];
    tmp_path(path, sizeof path, "dup.jsonl");
    VptEvalRecord recs[2];
    make_records(recs, 2);
    VptEvalRecord again = recs[0];
    snprintf(again.time, sizeof again.time, "2026-11-27T00:00:00Z");
    VptCache *c = write_cache(path, 2, recs);
    REQUIRE(c);
    REQUIRE_MSG(append(c, &again) == 0, "%s", vpt_errmsg());
    vpt_cache_close(c);
    VptTuneProvenance prov = td_provenance();
    c = vpt_cache_open(path, &prov, VPT_CACHE_READONLY);
    REQUIRE_MSG(c, "%s", vpt_errmsg());
    CHECK_EQ_INT(vpt_cache_count(c), 3);
    const VptEvalRecord *f = vpt_cache_find(c, &recs[0].config, recs[0].fidelity);
    CHECK(f && strcmp(f->time, recs[0].time) == 0);
    vpt_cache_close(c);
}

/* Two different measurements of one config at one fidelity: refused on
 * open, read-only or not, naming both rows as file:line; an append that
 * would write one fails and writes nothing. Each field of a measurement
 * counts. */
TEST(tuner_cache_conflicting_rows_are_refused)
{
    char path[600];
    tmp_path(path, sizeof path, "conflict.jsonl");
    VptEvalRecord recs[3];
    REQUIRE(make_records(recs, 3) == 3);
    REQUIRE(recs[1].status == VPT_STATUS_OK || recs[0].status == VPT_STATUS_OK);
    const int k = recs[0].status == VPT_STATUS_OK ? 0 : 1;
    VptTuneProvenance prov = td_provenance();
    for (int field = 0; field < 4; field++) {
        VptEvalRecord other = recs[k];
        switch (field) {
        case 0: other.time_ms *= 1.5; break;
        case 1: other.cost_s += 0.25; break;
        case 2: other.status = VPT_STATUS_TIMEOUT; other.time_ms = NAN; break;
        default: other.registers += 8; break;
        }
        unlink(path);
        VptCache *c = write_cache(path, 3, recs);
        REQUIRE(c);
        char *before;
        size_t before_size;
        REQUIRE(vpt_read_file(path, 1 << 20, &before, &before_size) == 0);
        CHECK(append(c, &other) == -1);
        CHECK_STR_CONTAINS(vpt_errmsg(), "two different measurements");
        char *after;
        size_t after_size;
        REQUIRE(vpt_read_file(path, 1 << 20, &after, &after_size) == 0);
        CHECK_MSG(after_size == before_size && memcmp(before, after, before_size) == 0, "a refused append wrote");
        free(after);
        vpt_cache_close(c);
        /* the same row written behind the cache's back: line k+2 and line 5 */
        char *line = vpt_rows_record_line(&other);
        REQUIRE(line);
        char *both = malloc(before_size + strlen(line) + 1);
        REQUIRE(both);
        memcpy(both, before, before_size);
        strcpy(both + before_size, line);
        REQUIRE(vpt_write_file_atomic(path, both, strlen(both)) == 0);
        free(both);
        free(line);
        free(before);
        char first[700], second[700];
        snprintf(first, sizeof first, "%s:%d", path, k + 2);
        snprintf(second, sizeof second, "%s:5", path);
        for (int ro = 0; ro < 2; ro++) {
            CHECK(vpt_cache_open(path, &prov, ro ? VPT_CACHE_READONLY : VPT_CACHE_NOSYNC) == NULL);
            CHECK_STR_CONTAINS(vpt_errmsg(), first);
            CHECK_STR_CONTAINS(vpt_errmsg(), second);
            CHECK_STR_CONTAINS(vpt_errmsg(), "two different measurements");
        }
    }
}

/* A resumed run that asks for the file's rows in their order retraces
 * them: each becomes visible to vpt_cache_find only when reached (as when
 * the interrupted run was there); a lookup out of that order ends the
 * retrace and shows every row. */
TEST(tuner_cache_retrace_shows_rows_as_reached)
{
    char path[600];
    tmp_path(path, sizeof path, "retrace.jsonl");
    VptEvalRecord recs[6];
    REQUIRE(make_records(recs, 6) == 6);
    VptCache *c = write_cache(path, 6, recs);
    REQUIRE(c);
    vpt_cache_close(c);
    VptTuneProvenance prov = td_provenance();
    c = vpt_cache_open(path, &prov, VPT_CACHE_NOSYNC);
    REQUIRE(c);
    VptEvalRecord got;
    for (int i = 0; i < 3; i++) {
        CHECK(vpt_cache_find(c, &recs[i].config, recs[i].fidelity) == NULL);
        CHECK(vpt_cache_has(c, &recs[i].config, recs[i].fidelity));
        CHECK(vpt_cache_lookup(c, &recs[i].config, recs[i].fidelity, &got) == VPT_CACHE_RETRACED);
        CHECK(records_equal(&got, &recs[i]));
        CHECK(vpt_cache_find(c, &recs[i].config, recs[i].fidelity) != NULL);
        CHECK(vpt_cache_lookup(c, &recs[i].config, recs[i].fidelity, &got) == VPT_CACHE_HIT);
    }
    /* row 5 before row 4: another run; everything visible from then on */
    CHECK(vpt_cache_find(c, &recs[3].config, recs[3].fidelity) == NULL);
    CHECK(vpt_cache_lookup(c, &recs[4].config, recs[4].fidelity, &got) == VPT_CACHE_HIT);
    for (int i = 0; i < 6; i++) CHECK(vpt_cache_find(c, &recs[i].config, recs[i].fidelity) != NULL);
    CHECK(vpt_cache_lookup(c, &recs[3].config, recs[3].fidelity, &got) == VPT_CACHE_HIT);
    vpt_cache_close(c);
    /* a miss while rows are ahead ends it too */
    c = vpt_cache_open(path, &prov, VPT_CACHE_NOSYNC);
    REQUIRE(c);
    VptConfig absent;
    REQUIRE(vpt_config_parse("naiveSK,block=32", &absent) == 0);
    CHECK(vpt_cache_lookup(c, &absent, 1, &got) == VPT_CACHE_MISS);
    CHECK(vpt_cache_find(c, &recs[5].config, recs[5].fidelity) != NULL);
    vpt_cache_close(c);
    /* read-only: no retrace */
    c = vpt_cache_open(path, &prov, VPT_CACHE_READONLY);
    REQUIRE(c);
    CHECK(vpt_cache_find(c, &recs[2].config, recs[2].fidelity) != NULL);
    vpt_cache_close(c);
}
