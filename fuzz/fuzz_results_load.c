/* libFuzzer target: results files (harness/results.h). The input is
 * written to a scratch file and loaded; then the file is opened for
 * appending (which cuts an unfinished last line), one row is appended, and
 * loaded again. Properties: rows arrive as objects with rising line numbers;
 * a failed load leaves a message naming the file; after the append a file
 * that loaded before loads again with exactly one more row, the new one
 * last, and a file that failed still fails (appending never repairs or
 * damages what was there). */
#include "fuzz/fuzz_common.h"
#include "harness/results.h"

typedef struct {
    size_t rows, last_line;
    int last_is_marker;
} FuzzResultsCount;

static int fuzz_results_row(json_t *row, size_t line, void *ctx)
{
    FuzzResultsCount *c = ctx;
    FUZZ_CHECK(json_is_object(row), "row at line %zu is not an object", line);
    FUZZ_CHECK(line > c->last_line, "line %zu after line %zu", line, c->last_line);
    c->rows++;
    c->last_line = line;
    json_t *m = json_object_get(row, "fuzz_marker");
    c->last_is_marker = json_is_integer(m) && json_integer_value(m) == 424242;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[1024];
    fuzz_write_file(FUZZ_TMPDIR(), "results.jsonl", data, size, path, sizeof path);
    FuzzResultsCount before = {0, 0, 0}, after = {0, 0, 0};
    vpt_error_clear();
    int rc1 = vpt_results_load(path, fuzz_results_row, &before);
    if (rc1 != 0) {
        FUZZ_CHECK(rc1 == -1, "load returned %d", rc1);
        FUZZ_CHECK(strstr(vpt_errmsg(), path) != NULL, "load failed with a message not naming the file: %s",
                   vpt_errmsg());
    }

    vpt_error_clear();
    VptResultsFile *f = vpt_results_open(path);
    FUZZ_CHECK(f != NULL, "cannot open %s for appending: %s", path, vpt_errmsg());
    json_t *row = json_pack("{s:i}", "fuzz_marker", 424242);
    FUZZ_CHECK(row && vpt_results_append(f, row) == 0, "append failed: %s", vpt_errmsg());
    json_decref(row);
    vpt_results_close(f);

    vpt_error_clear();
    int rc2 = vpt_results_load(path, fuzz_results_row, &after);
    if (rc1 == 0) {
        FUZZ_CHECK(rc2 == 0, "the file loaded before the append, not after: %s", vpt_errmsg());
        FUZZ_CHECK(after.rows == before.rows + 1 && after.last_is_marker, "%zu rows before the append, %zu after",
                   before.rows, after.rows);
    } else {
        FUZZ_CHECK(rc2 != 0, "a file that failed to load loads after an append");
    }
    return 0;
}
