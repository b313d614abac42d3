/* Recorded evaluation orders (contract in tuner/sequences.h). */
#include "tuner/sequences.h"

#include "base/error.h"
#include "base/file.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

struct VptSequences {
    VptSequence *seq;
    size_t n, cap;
};

void vpt_sequences_destroy(VptSequences *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) free(s->seq[i].configs);
    free(s->seq);
    free(s);
}

size_t vpt_sequences_count(const VptSequences *s)
{
    return s->n;
}

const VptSequence *vpt_sequences_get(const VptSequences *s, size_t i)
{
    VPT_ASSERT(i < s->n);
    return &s->seq[i];
}

static int name_field(json_t *row, const char *key, char *out, const char *where)
{
    json_t *v = json_object_get(row, key);
    const char *t = json_string_value(v);
    if (!t) return vpt_fail("%s: \"%s\" must be a string", where, key);
    size_t len = json_string_length(v);
    if (len == 0 || len >= VPT_SEQUENCE_NAME_MAX || memchr(t, '\0', len))
        return vpt_fail("%s: \"%s\" must be 1..%d bytes without NUL", where, key, VPT_SEQUENCE_NAME_MAX - 1);
    memcpy(out, t, len + 1);
    return 0;
}

/* One "sequence" row into *q (its configs allocated). */
static int parse_sequence(json_t *row, const char *where, VptSequence *q)
{
    memset(q, 0, sizeof *q);
    if (name_field(row, "scene", q->scene, where) || name_field(row, "tuner", q->tuner, where) ||
        name_field(row, "strategy", q->strategy, where))
        return -1;
    json_t *seed = json_object_get(row, "seed");
    if (!json_is_integer(seed) || json_integer_value(seed) < 0)
        return vpt_fail("%s: \"seed\" must be an integer >= 0", where);
    q->seed = (uint64_t)json_integer_value(seed);
    json_t *arr = json_object_get(row, "configs");
    if (!json_is_array(arr)) return vpt_fail("%s: \"configs\" must be an array of config texts", where);
    size_t n = json_array_size(arr);
    if (n > VPT_SEQUENCE_MAX_CONFIGS)
        return vpt_fail("%s: %zu configs, more than the %d allowed", where, n, VPT_SEQUENCE_MAX_CONFIGS);
    q->configs = vpt_malloc((n ? n : 1) * sizeof *q->configs);
    if (!q->configs) return -1;
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(arr, i);
        const char *t = json_string_value(v);
        if (!t || memchr(t, '\0', json_string_length(v)) || vpt_config_parse(t, &q->configs[i]) ||
            vpt_config_check(&q->configs[i])) {
            if (t) vpt_error_prefix("%s: configs[%zu]", where, i);
            else vpt_fail("%s: configs[%zu] is not a string", where, i);
            free(q->configs);
            q->configs = NULL;
            return -1;
        }
    }
    q->n = n;
    return 0;
}

VptSequences *vpt_sequences_parse(const char *name, const char *text, size_t size)
{
    VptSequences *s = vpt_calloc(1, sizeof *s);
    if (!s) return NULL;
    size_t line_no = 0;
    const char *p = text, *end = text + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        line_no++;
        const char *line = p;
        size_t len = (size_t)(eol - p);
        p = eol + 1;
        while (len && (*line == ' ' || *line == '\t' || *line == '\r')) {
            line++;
            len--;
        }
        if (!len) continue;
        char where[600];
        snprintf(where, sizeof where, "%s:%zu", name, line_no);
        json_error_t jerr;
        json_t *row = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!row || !json_is_object(row)) {
            json_decref(row);
            vpt_fail("%s: not a JSON object%s%s", where, row ? "" : ": ", row ? "" : jerr.text);
            goto fail;
        }
        const char *kind = json_string_value(json_object_get(row, "kind"));
        if (!kind) {
            json_decref(row);
            vpt_fail("%s: no \"kind\"", where);
            goto fail;
        }
        if (strcmp(kind, "sequence") != 0) {
            json_decref(row);
            continue;
        }
        if (s->n == s->cap) {
            size_t cap = s->cap ? 2 * s->cap : 64;
            VptSequence *q = vpt_realloc(s->seq, cap * sizeof *q);
            if (!q) {
                json_decref(row);
                goto fail;
            }
            s->seq = q;
            s->cap = cap;
        }
        int rc = parse_sequence(row, where, &s->seq[s->n]);
        json_decref(row);
        if (rc) goto fail;
        s->n++;
    }
    return s;
fail:
    vpt_sequences_destroy(s);
    return NULL;
}

VptSequences *vpt_sequences_load(const char *path)
{
    char *data;
    size_t size;
    if (vpt_read_file(path, VPT_SEQUENCES_MAX_BYTES, &data, &size)) return NULL;
    VptSequences *s = vpt_sequences_parse(path, data, size);
    free(data);
    return s;
}
