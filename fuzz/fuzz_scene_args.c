/* libFuzzer target: the shared scene-option parser (cli/scene_args.h) on
 * arbitrary command lines. The input is split at NUL bytes into at most 32
 * arguments. Properties: vpt_scene_args_take consumes scene options and
 * leaves the rest (returning 0, 1 or -1 with a message), never reading past
 * argc; a command line that passes vpt_scene_args_check formats
 * (vpt_scene_args_format) to shell words that, unquoted and parsed again,
 * give the same options; nothing is loaded (no file is touched). */
#include "fuzz/fuzz_common.h"

#include "cli/scene_args.h"

#define FUZZ_MAX_ARGS 32

/* Splits the format's output back into words: plain words, and '...'
 * quoting with '\'' for a quote, as vpt_shell_word_append writes them. */
static int unquote_words(const char *s, char *store, size_t n, char **argv, int max)
{
    int argc = 0;
    size_t o = 0;
    while (*s) {
        while (*s == ' ') s++;
        if (!*s) break;
        if (argc == max) return -1;
        argv[argc++] = store + o;
        while (*s && *s != ' ') {
            if (*s == '\'') {
                for (s++; *s && *s != '\''; s++) store[o++] = *s;
                if (*s) s++;
                if (s[0] == '\\' && s[1] == '\'') store[o++] = '\'', s += 2;
            } else {
                store[o++] = *s++;
            }
            if (o + 1 >= n) return -1;
        }
        store[o++] = '\0';
    }
    return argc;
}

static void same(const VptSceneArgs *a, const VptSceneArgs *b)
{
    FUZZ_CHECK(a->nscenes == b->nscenes, "%d scenes became %d", a->nscenes, b->nscenes);
    for (int i = 0; i < a->nscenes; i++) FUZZ_CHECK(!strcmp(a->scenes[i], b->scenes[i]), "scene %d", i);
    FUZZ_CHECK(!a->volume == !b->volume && (!a->volume || !strcmp(a->volume, b->volume)), "volume");
    FUZZ_CHECK(!a->scene_file == !b->scene_file && (!a->scene_file || !strcmp(a->scene_file, b->scene_file)),
               "scene file");
    FUZZ_CHECK(a->medium.density_scale == b->medium.density_scale, "density scale");
    FUZZ_CHECK(a->medium.has_albedo == b->medium.has_albedo &&
                   (!a->medium.has_albedo || !memcmp(a->medium.albedo, b->medium.albedo, sizeof a->medium.albedo)),
               "albedo");
    FUZZ_CHECK(a->medium.has_g == b->medium.has_g && (!a->medium.has_g || a->medium.g == b->medium.g), "g");
    /* the light's values keep their bytes (the scene's name records them) */
    FUZZ_CHECK(a->light.has_sun == b->light.has_sun, "has_sun");
    if (a->light.has_sun) {
        FUZZ_CHECK(!memcmp(a->light.sun_dir, b->light.sun_dir, sizeof a->light.sun_dir), "sun direction");
        FUZZ_CHECK(!memcmp(a->light.sun_irradiance, b->light.sun_irradiance, sizeof a->light.sun_irradiance),
                   "sun irradiance");
        FUZZ_CHECK(!memcmp(&a->light.sun_radius_deg, &b->light.sun_radius_deg, sizeof a->light.sun_radius_deg),
                   "sun radius");
    }
    FUZZ_CHECK(a->light.has_env == b->light.has_env &&
                   (!a->light.has_env || !memcmp(a->light.env, b->light.env, sizeof a->light.env)),
               "env");
    if (!a->volume) return; /* the volume-only options are written with --volume only */
    FUZZ_CHECK(!a->like == !b->like && (!a->like || !strcmp(a->like, b->like)), "like");
    FUZZ_CHECK(a->load.has_dims == b->load.has_dims, "has_dims");
    if (a->load.has_dims)
        for (int k = 0; k < 3; k++) FUZZ_CHECK(a->load.dims[k] == b->load.dims[k], "dims[%d]", k);
    FUZZ_CHECK(a->load.has_type == b->load.has_type && (!a->load.has_type || a->load.type == b->load.type), "type");
    FUZZ_CHECK(a->downsample == b->downsample && a->upsample == b->upsample, "down/upsample");
    FUZZ_CHECK(a->transfer == b->transfer, "transfer");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *argv[FUZZ_MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "fuzz";
    for (size_t p = 0; p <= size && argc <= FUZZ_MAX_ARGS; p += strlen(text + p) + 1) argv[argc++] = text + p;
    argv[argc] = NULL;
    for (int multi = 0; multi <= 1; multi++) {
        VptSceneArgs a;
        vpt_scene_args_init(&a);
        int ok = 1;
        for (int i = 1; i < argc; i++) {
            vpt_error_clear();
            int j = i, rc = vpt_scene_args_take(&a, argc, argv, &j, multi);
            FUZZ_CHECK(rc >= -1 && rc <= 1, "take returned %d", rc);
            FUZZ_CHECK(j >= i && j < argc, "take moved to %d of %d", j, argc);
            if (rc == -1) {
                FUZZ_CHECK_FAILED_WITH_MESSAGE("vpt_scene_args_take");
                ok = 0;
                break;
            }
            FUZZ_CHECK(rc == 1 || j == i, "an argument it did not take moved the index");
            i = j;
        }
        if (!ok) continue;
        vpt_error_clear();
        if (vpt_scene_args_check(&a, 0, multi)) {
            FUZZ_CHECK_FAILED_WITH_MESSAGE("vpt_scene_args_check");
            continue;
        }
        static char words[1 << 16], store[1 << 16];
        if (vpt_scene_args_format(&a, words, sizeof words)) continue;
        char *again[2 * FUZZ_MAX_ARGS + 40];
        again[0] = "fuzz";
        int n = unquote_words(words, store, sizeof store, again + 1, 2 * FUZZ_MAX_ARGS + 30);
        FUZZ_CHECK(n >= 0, "cannot split '%s'", words);
        VptSceneArgs b;
        vpt_scene_args_init(&b);
        for (int i = 1; i <= n; i++) {
            int rc = vpt_scene_args_take(&b, n + 1, again, &i, multi);
            FUZZ_CHECK(rc == 1, "'%s' (from '%s') is not taken again: %s", again[i], words, vpt_errmsg());
        }
        same(&a, &b);
    }
    free(text);
    return 0;
}
