/* bin/tune-plot: a tune's convergence as an SVG plot, from its cache.
 *
 *   tune-plot CACHE.jsonl -o PLOT.svg
 *
 * CACHE.jsonl is a tuner cache (tune --cache FILE, or the default
 * results/<gpu>/tune/<scene>.jsonl), read by the cache's one parser
 * (tuner/cache.h, read-only: the file is never changed). The plot shows each
 * passing full-fidelity evaluation's kernel time (dots) and the best time so
 * far (a step line) against the evaluation number, titled with the scene, the
 * GPU and the best time. SVG is text, so no plotting package is needed. The
 * file is written atomically. Exit status: 0 done, 1 a cache that cannot be
 * read or holds no passing evaluation (the message names it), 2 bad usage. */
#include "base/error.h"
#include "base/file.h"
#include "cli/version.h"
#include "tuner/cache.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *prog = "tune-plot";

static void usage(FILE *fp)
{
    fprintf(fp, "usage: tune-plot CACHE.jsonl -o PLOT.svg\n"
                "\n"
                "Plots a tune's convergence from its cache (tune --cache FILE, or\n"
                "results/<gpu>/tune/<scene>.jsonl): each passing evaluation's kernel time and\n"
                "the best so far, against the evaluation number, as an SVG image.\n"
                "  --version    commit, NVRTC and driver versions\n"
                "Exit status: 0 done, 1 unreadable cache or nothing to plot, 2 bad usage.\n");
}

/* Text for SVG: &, <, > and " escaped. */
static void put_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '&') fputs("&amp;", f);
        else if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

static void plot(FILE *f, const VptTuneProvenance *pv, const char *cache, const double *t, size_t n)
{
    const double W = 720, H = 400, L = 70, R = 20, T = 50, B = 50;
    double lo = t[0], hi = t[0];
    for (size_t i = 1; i < n; i++) {
        if (t[i] < lo) lo = t[i];
        if (t[i] > hi) hi = t[i];
    }
    if (hi <= lo) hi = lo * 1.1 + 1e-9;
#define X(i) (L + (W - L - R) * ((double)(i) / (double)(n > 1 ? n - 1 : 1)))
#define Y(v) (T + (H - T - B) * (1.0 - ((v) - lo) / (hi - lo)))
    double best = INFINITY;
    for (size_t i = 0; i < n; i++) best = fmin(best, t[i]);
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
               "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H);
    char title[512];
    snprintf(title, sizeof title, "tuning %s on %s: best %.4g ms after %zu evaluations", pv->scene, pv->gpu_name, best,
             n);
    fprintf(f, "<text x=\"%.0f\" y=\"20\" font-size=\"14\">", L);
    put_escaped(f, title);
    fprintf(f, "</text>\n<text x=\"%.0f\" y=\"36\" fill=\"#555\">", L);
    put_escaped(f, cache);
    fprintf(f, "</text>\n");
    fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n", L, H - B, W - R, H - B);
    fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n", L, T, L, H - B);
    for (int k = 0; k <= 4; k++) {
        double v = lo + (hi - lo) * k / 4;
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%.3g</text>\n", L - 6, Y(v) + 4, v);
    }
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">evaluation (1 to %zu)</text>\n", (L + W - R) / 2,
            H - 12, n);
    fprintf(f, "<text x=\"16\" y=\"%.0f\" transform=\"rotate(-90 16 %.0f)\" text-anchor=\"middle\">kernel time "
               "(ms)</text>\n", (T + H - B) / 2, (T + H - B) / 2);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"#7aa6d8\"/>\n", X(i), Y(t[i]));
    fprintf(f, "<polyline fill=\"none\" stroke=\"#c0392b\" stroke-width=\"2\" points=\"");
    double run = INFINITY;
    for (size_t i = 0; i < n; i++) {
        run = fmin(run, t[i]);
        fprintf(f, "%.1f,%.1f %.1f,%.1f ", X(i), Y(run), X(i + 1 < n ? i + 1 : i), Y(run));
    }
    fprintf(f, "\"/>\n</svg>\n");
#undef X
#undef Y
}

int main(int argc, char **argv)
{
    if (vpt_handle_version(argc, argv, prog)) return 0;
    const char *cache_path = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "%s: error: %s needs a value\n", prog, argv[i]);
                return 2;
            }
            out = argv[++i];
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "%s: error: unknown option '%s'\n%s: try '%s --help'\n", prog, argv[i], prog, prog);
            return 2;
        } else if (cache_path) {
            fprintf(stderr, "%s: error: one cache at a time ('%s' and '%s')\n", prog, cache_path, argv[i]);
            return 2;
        } else {
            cache_path = argv[i];
        }
    }
    if (!cache_path || !out) {
        fprintf(stderr, "%s: error: %s\n%s: try '%s --help'\n", prog,
                !cache_path ? "a cache is required: tune-plot CACHE.jsonl -o PLOT.svg"
                            : "an output is required: -o PLOT.svg", prog, prog);
        return 2;
    }
    VptCache *c = vpt_cache_open(cache_path, NULL, VPT_CACHE_READONLY);
    if (!c) {
        vpt_report_error(prog);
        return 1;
    }
    size_t n = 0, count = vpt_cache_count(c);
    double *t = count ? vpt_malloc(count * sizeof *t) : NULL;
    if (count && !t) {
        vpt_report_error(prog);
        vpt_cache_close(c);
        return 1;
    }
    for (size_t i = 0; i < count; i++) {
        const VptEvalRecord *r = vpt_cache_record(c, i);
        double v = vpt_eval_objective(r);
        if (r->fidelity == 1 && isfinite(v)) t[n++] = v;
    }
    int rc = 0;
    if (n == 0) {
        vpt_fail("%s: no passing evaluation to plot (%zu rows)", cache_path, count);
        rc = -1;
    }
    VptOutFile *of = rc ? NULL : vpt_outfile_open(out);
    if (!rc && !of) {
        vpt_error_prefix("-o %s", out);
        rc = -1;
    }
    if (of) {
        plot(vpt_outfile_stream(of), vpt_cache_provenance(c), cache_path, t, n);
        if (vpt_outfile_commit(of)) {
            vpt_error_prefix("-o %s", out);
            rc = -1;
        }
    }
    if (rc) vpt_report_error(prog);
    else {
        double best = t[0];
        for (size_t i = 1; i < n; i++) best = fmin(best, t[i]);
        printf("wrote %s (%zu evaluations, best %.4g ms)\n", out, n, best);
    }
    free(t);
    vpt_cache_close(c);
    return rc ? 1 : 0;
}
