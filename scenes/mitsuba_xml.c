/* Mitsuba scene files: text -> VptMitsubaDesc (see mitsuba_xml.h).
 *
 * Two passes. (1) expat builds a small element tree (tag, attributes, line,
 * children); DOCTYPEs, text content and nesting deeper than
 * VPT_MITSUBA_MAX_NESTING are refused, so no entity can be declared and no
 * input can blow up. `<default>` values are then substituted for `$name` in
 * every attribute. (2) The interpreter walks the tree the way Mitsuba's own
 * parser does for the plugins vptune understands: each plugin element's
 * properties are looked up by name and marked used; when a plugin is done,
 * any child or attribute left unused is an error naming it and its line.
 * Names of version 0.x files are upgraded as Mitsuba 3 does (camelCase ->
 * snake_case: maxDepth -> max_depth, intIOR -> int_ior, toWorld -> to_world).
 *
 * Nothing here opens a file; mitsuba_scene.c loads what the description
 * names. */
#include "scenes/mitsuba_xml.h"

#include "base/error.h"

#include <ctype.h>
#include <errno.h>
#include <expat.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NODES 100000
#define MAX_DEFAULTS 256

/* ------------------------------------------------------------ the tree */

typedef struct Node Node;
struct Node {
    char *tag;
    char **attr;          /* name, value, name, value, ... */
    int nattr;            /* pairs */
    int line;
    Node **kid;
    int nkid, cap;
    int used;             /* interpreted (elements); per attribute below */
    unsigned char *attr_used;
};

static void node_free(Node *n)
{
    if (!n) return;
    for (int i = 0; i < n->nkid; i++) node_free(n->kid[i]);
    for (int i = 0; i < 2 * n->nattr; i++) free(n->attr[i]);
    free(n->attr);
    free(n->attr_used);
    free(n->kid);
    free(n->tag);
    free(n);
}

typedef struct {
    const char *name;     /* for messages */
    XML_Parser parser;
    Node *root;
    Node *stack[VPT_MITSUBA_MAX_NESTING + 1];
    int depth;
    size_t nodes;
    int failed;           /* a message is set */
} Builder;

static void build_fail(Builder *b, int line, const char *fmt, const char *arg)
{
    if (b->failed) return;
    b->failed = 1;
    char msg[512];
    snprintf(msg, sizeof msg, fmt, arg);
    vpt_fail("%s:%d: %s", b->name, line, msg);
    XML_StopParser(b->parser, XML_FALSE);
}

static int cur_line(Builder *b) { return (int)XML_GetCurrentLineNumber(b->parser); }

static void XMLCALL on_start(void *ud, const XML_Char *tag, const XML_Char **attrs)
{
    Builder *b = ud;
    if (b->failed) return;
    int line = cur_line(b);
    if (b->depth >= VPT_MITSUBA_MAX_NESTING) {
        char lim[16];
        snprintf(lim, sizeof lim, "%d", VPT_MITSUBA_MAX_NESTING);
        build_fail(b, line, "elements nest deeper than %s levels", lim);
        return;
    }
    if (++b->nodes > MAX_NODES) {
        char lim[16];
        snprintf(lim, sizeof lim, "%d", MAX_NODES);
        build_fail(b, line, "more than %s elements", lim);
        return;
    }
    Node *n = calloc(1, sizeof *n);
    if (!n) goto oom;
    n->line = line;
    n->tag = strdup(tag);
    if (!n->tag) goto oom_node;
    int na = 0;
    while (attrs[2 * na]) na++;
    n->attr = calloc((size_t)(2 * na + 1), sizeof *n->attr);
    n->attr_used = calloc((size_t)na + 1, 1);
    if (!n->attr || !n->attr_used) goto oom_node;
    n->nattr = na;
    for (int i = 0; i < 2 * na; i++)
        if (!(n->attr[i] = strdup(attrs[i]))) goto oom_node;
    if (b->depth == 0) {
        if (b->root) { /* expat refuses a second root itself; kept for safety */
            node_free(n);
            build_fail(b, line, "a second root element <%s>", tag);
            return;
        }
        b->root = n;
    } else {
        Node *p = b->stack[b->depth - 1];
        if (p->nkid == p->cap) {
            int cap = p->cap ? 2 * p->cap : 8;
            Node **k = realloc(p->kid, (size_t)cap * sizeof *k);
            if (!k) goto oom_node;
            p->kid = k;
            p->cap = cap;
        }
        p->kid[p->nkid++] = n;
    }
    b->stack[b->depth++] = n;
    return;
oom_node:
    node_free(n);
oom:
    build_fail(b, line, "out of memory%s", "");
}

static void XMLCALL on_end(void *ud, const XML_Char *tag)
{
    (void)tag;
    Builder *b = ud;
    if (b->failed) return;
    if (b->depth > 0) b->depth--;
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
    Builder *b = ud;
    if (b->failed) return;
    for (int i = 0; i < len; i++)
        if (!isspace((unsigned char)s[i])) {
            build_fail(b, cur_line(b), "unexpected text in the scene: Mitsuba scene files hold elements only%s", "");
            return;
        }
}

static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sys, const XML_Char *pub, int internal)
{
    (void)sys;
    (void)pub;
    (void)internal;
    Builder *b = ud;
    build_fail(b, cur_line(b), "a DOCTYPE (<!DOCTYPE %s ...>) is not supported in scene files", name);
}

static Node *build_tree(const char *name, const char *text, size_t size)
{
    if (size > VPT_MITSUBA_MAX_XML_BYTES) {
        vpt_fail("%s: %zu bytes, more than the %zu a scene file may have", name, size, VPT_MITSUBA_MAX_XML_BYTES);
        return NULL;
    }
    Builder b;
    memset(&b, 0, sizeof b);
    b.name = name;
    b.parser = XML_ParserCreate(NULL);
    if (!b.parser) {
        vpt_fail("%s: cannot create an XML parser (out of memory)", name);
        return NULL;
    }
    XML_SetUserData(b.parser, &b);
    XML_SetElementHandler(b.parser, on_start, on_end);
    XML_SetCharacterDataHandler(b.parser, on_text);
    XML_SetStartDoctypeDeclHandler(b.parser, on_doctype);
    XML_SetParamEntityParsing(b.parser, XML_PARAM_ENTITY_PARSING_NEVER);
    enum XML_Status st = XML_Parse(b.parser, text, (int)size, 1);
    if (st != XML_STATUS_OK && !b.failed) {
        b.failed = 1;
        vpt_fail("%s:%lu: malformed XML: %s", name, (unsigned long)XML_GetCurrentLineNumber(b.parser),
                 XML_ErrorString(XML_GetErrorCode(b.parser)));
    }
    XML_ParserFree(b.parser);
    if (!b.failed && !b.root) {
        b.failed = 1;
        vpt_fail("%s: no root element", name);
    }
    if (b.failed) {
        node_free(b.root);
        return NULL;
    }
    return b.root;
}

/* ------------------------------------------------------------ attributes */

static const char *attr_get(Node *n, const char *key)
{
    for (int i = 0; i < n->nattr; i++)
        if (!strcmp(n->attr[2 * i], key)) {
            n->attr_used[i] = 1;
            return n->attr[2 * i + 1];
        }
    return NULL;
}

/* Replaces every "$name" of a <default> in *val; a '$' left over is an
 * undefined parameter. Longer names are tried first ($spp before $sp). */
typedef struct {
    char *name[MAX_DEFAULTS], *value[MAX_DEFAULTS];
    int n;
} Defaults;

static int substitute(const char *file, int line, const Defaults *d, char **val)
{
    if (!strchr(*val, '$')) return 0;
    size_t cap = strlen(*val) + 1;
    char *s = malloc(cap);
    if (!s) return vpt_fail("%s:%d: out of memory", file, line);
    size_t o = 0;
    for (const char *p = *val; *p;) {
        if (*p != '$') {
            s[o++] = *p++;
            continue;
        }
        int best = -1;
        size_t blen = 0;
        for (int i = 0; i < d->n; i++) {
            size_t l = strlen(d->name[i]);
            if (l > blen && !strncmp(p + 1, d->name[i], l)) {
                best = i;
                blen = l;
            }
        }
        if (best < 0) {
            char nm[64];
            size_t k = 0;
            for (const char *q = p + 1; k < sizeof nm - 1 && (isalnum((unsigned char)*q) || *q == '_'); q++)
                nm[k++] = *q;
            nm[k] = '\0';
            free(s);
            return vpt_fail("%s:%d: '$%s' names no <default> parameter", file, line, nm);
        }
        size_t vl = strlen(d->value[best]);
        if (vl > blen + 1) {
            if (cap > ((size_t)1 << 24)) {
                free(s);
                return vpt_fail("%s:%d: parameter substitution makes a value too long", file, line);
            }
            cap += vl;
            char *t = realloc(s, cap);
            if (!t) {
                free(s);
                return vpt_fail("%s:%d: out of memory", file, line);
            }
            s = t;
        }
        memcpy(s + o, d->value[best], vl);
        o += vl;
        p += 1 + blen;
    }
    s[o] = '\0';
    free(*val);
    *val = s;
    return 0;
}

static int substitute_tree(const char *file, Node *n, const Defaults *d)
{
    for (int i = 0; i < n->nattr; i++)
        if (substitute(file, n->line, d, &n->attr[2 * i + 1])) return -1;
    for (int i = 0; i < n->nkid; i++)
        if (substitute_tree(file, n->kid[i], d)) return -1;
    return 0;
}

/* ------------------------------------------------------------ the interpreter */

typedef struct {
    const char *file;
    int legacy;               /* a version 0.x file */
    Node *root;
    Defaults defaults;
} Ctx;

/* Mitsuba 3's upgrade of 0.x names: an upper-case letter after a lower-case
 * one or a digit starts a new word; everything is lower-cased. */
static void snake_case(const char *in, char *out, size_t outsz)
{
    size_t o = 0;
    for (size_t i = 0; in[i] && o + 2 < outsz; i++) {
        unsigned char c = (unsigned char)in[i];
        if (isupper(c) && i > 0 && (islower((unsigned char)in[i - 1]) || isdigit((unsigned char)in[i - 1])))
            out[o++] = '_';
        out[o++] = (char)tolower(c);
    }
    out[o] = '\0';
}

/* The property name of a child (its 'name' attribute), upgraded for 0.x. */
static const char *prop_name(Ctx *c, Node *n, char *buf, size_t bufsz)
{
    const char *nm = NULL;
    for (int i = 0; i < n->nattr; i++)
        if (!strcmp(n->attr[2 * i], "name")) nm = n->attr[2 * i + 1];
    if (!nm) return NULL;
    if (!c->legacy) return nm;
    snake_case(nm, buf, bufsz);
    return buf;
}

static int is_property_tag(const char *t)
{
    static const char *const tags[] = {"float", "integer", "boolean", "string", "rgb", "spectrum",
                                       "point", "vector", "transform", "srgb", NULL};
    for (int i = 0; tags[i]; i++)
        if (!strcmp(t, tags[i])) return 1;
    return 0;
}

static const char *plugin_type(Node *n)
{
    for (int i = 0; i < n->nattr; i++)
        if (!strcmp(n->attr[2 * i], "type")) return n->attr[2 * i + 1];
    return "?";
}

/* "<medium type="heterogeneous"> at line 12", for messages. */
static const char *where(Node *n, char *buf, size_t sz)
{
    const char *t = plugin_type(n);
    if (strcmp(t, "?")) snprintf(buf, sz, "<%s type=\"%.40s\"> (line %d)", n->tag, t, n->line);
    else snprintf(buf, sz, "<%s> (line %d)", n->tag, n->line);
    return buf;
}

/* The child of obj that sets property `name` (property element, named
 * object or named <ref>), marked used; NULL when absent. Two children
 * setting the same name are an error (*err set). */
static Node *find_prop(Ctx *c, Node *obj, const char *name, int *err)
{
    Node *found = NULL;
    for (int i = 0; i < obj->nkid; i++) {
        Node *k = obj->kid[i];
        char buf[128];
        const char *nm = prop_name(c, k, buf, sizeof buf);
        if (!nm || strcmp(nm, name)) continue;
        if (found) {
            char w[160];
            vpt_fail("%s:%d: property '%s' of %s is given twice (also at line %d)", c->file, k->line, name,
                     where(obj, w, sizeof w), found->line);
            *err = 1;
            return NULL;
        }
        found = k;
    }
    if (found) {
        found->used = 1;
        for (int i = 0; i < found->nattr; i++)
            if (!strcmp(found->attr[2 * i], "name")) found->attr_used[i] = 1;
    }
    return found;
}

/* The value attribute of a property element of one of the given tags. */
static const char *prop_value(Ctx *c, Node *p, const char *name, const char *const *tags)
{
    int ok = 0;
    for (int i = 0; tags[i]; i++) ok |= !strcmp(p->tag, tags[i]);
    if (!ok) {
        char list[128] = "";
        for (int i = 0; tags[i]; i++) {
            if (i) strncat(list, " or ", sizeof list - strlen(list) - 1);
            strncat(list, "<", sizeof list - strlen(list) - 1);
            strncat(list, tags[i], sizeof list - strlen(list) - 1);
            strncat(list, ">", sizeof list - strlen(list) - 1);
        }
        vpt_fail("%s:%d: property '%s' is a <%s>; expected %s", c->file, p->line, name, p->tag, list);
        return NULL;
    }
    const char *v = attr_get(p, "value");
    if (!v) vpt_fail("%s:%d: <%s name=\"%s\"> has no value attribute", c->file, p->line, p->tag, name);
    return v;
}

static int parse_double(Ctx *c, int line, const char *what, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    while (isspace((unsigned char)*end)) end++;
    if (end == s || *end || errno == ERANGE || !isfinite(v))
        return vpt_fail("%s:%d: %s: '%.60s' is not a finite number", c->file, line, what, s);
    *out = v;
    return 0;
}

/* Up to max numbers separated by commas and/or blanks; returns the count. */
static int parse_list(Ctx *c, int line, const char *what, const char *s, double *out, int max)
{
    int n = 0;
    const char *p = s;
    for (;;) {
        while (isspace((unsigned char)*p) || *p == ',') p++;
        if (!*p) break;
        if (n == max) return vpt_fail("%s:%d: %s: more than %d values in '%.60s'", c->file, line, what, max, s);
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno == ERANGE || !isfinite(v))
            return vpt_fail("%s:%d: %s: '%.60s' is not a list of finite numbers", c->file, line, what, s);
        out[n++] = v;
        p = end;
        if (*p && !isspace((unsigned char)*p) && *p != ',')
            return vpt_fail("%s:%d: %s: '%.60s' is not a list of finite numbers", c->file, line, what, s);
    }
    return n;
}

/* Property getters: 0 found and set, 1 absent (out untouched), -1 error. */
static int get_float(Ctx *c, Node *obj, const char *name, double *out)
{
    int err = 0;
    Node *p = find_prop(c, obj, name, &err);
    if (err) return -1;
    if (!p) return 1;
    static const char *const tags[] = {"float", "integer", NULL};
    const char *v = prop_value(c, p, name, tags);
    if (!v) return -1;
    char what[96];
    snprintf(what, sizeof what, "property '%s'", name);
    return parse_double(c, p->line, what, v, out) ? -1 : 0;
}

static int get_int(Ctx *c, Node *obj, const char *name, long long *out)
{
    int err = 0;
    Node *p = find_prop(c, obj, name, &err);
    if (err) return -1;
    if (!p) return 1;
    static const char *const tags[] = {"integer", NULL};
    const char *v = prop_value(c, p, name, tags);
    if (!v) return -1;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    while (isspace((unsigned char)*end)) end++;
    if (end == v || *end || errno == ERANGE || x < -2147483648LL || x > 2147483647LL)
        return vpt_fail("%s:%d: property '%s': '%.60s' is not a 32-bit integer", c->file, p->line, name, v);
    *out = x;
    return 0;
}

static int get_bool(Ctx *c, Node *obj, const char *name, int *out)
{
    int err = 0;
    Node *p = find_prop(c, obj, name, &err);
    if (err) return -1;
    if (!p) return 1;
    static const char *const tags[] = {"boolean", NULL};
    const char *v = prop_value(c, p, name, tags);
    if (!v) return -1;
    if (!strcmp(v, "true") || !strcmp(v, "1")) *out = 1;
    else if (!strcmp(v, "false") || !strcmp(v, "0")) *out = 0;
    else return vpt_fail("%s:%d: property '%s': '%.60s' is not true or false", c->file, p->line, name, v);
    return 0;
}

static int get_string(Ctx *c, Node *obj, const char *name, const char **out, int *line)
{
    int err = 0;
    Node *p = find_prop(c, obj, name, &err);
    if (err) return -1;
    if (!p) return 1;
    static const char *const tags[] = {"string", NULL};
    const char *v = prop_value(c, p, name, tags);
    if (!v) return -1;
    *out = v;
    if (line) *line = p->line;
    return 0;
}

/* A colour given as <rgb value="r, g, b">, <rgb value="v">, <float>, or a
 * <spectrum> with one value (a constant spectrum). */
static int color_of(Ctx *c, Node *p, const char *name, float out[3])
{
    static const char *const tags[] = {"rgb", "float", "integer", "spectrum", NULL};
    const char *v = prop_value(c, p, name, tags);
    if (!v) return -1;
    if (strchr(v, ':'))
        return vpt_fail("%s:%d: property '%s': a spectrum of wavelength:value pairs is not supported (vptune "
                        "renders RGB: give <rgb> or a single value)",
                        c->file, p->line, name);
    double x[3];
    char what[96];
    snprintf(what, sizeof what, "property '%s'", name);
    int n = parse_list(c, p->line, what, v, x, 3);
    if (n < 0) return -1;
    if (n == 1) x[1] = x[2] = x[0];
    else if (n != 3 || strcmp(p->tag, "rgb"))
        return vpt_fail("%s:%d: property '%s': expected %s, got %d values", c->file, p->line, name,
                        strcmp(p->tag, "rgb") ? "one value" : "one or three values", n);
    for (int k = 0; k < 3; k++) {
        if (fabs(x[k]) > 3.0e38) return vpt_fail("%s:%d: property '%s': value out of range", c->file, p->line, name);
        out[k] = (float)x[k];
    }
    return 0;
}

static int get_color(Ctx *c, Node *obj, const char *name, float out[3], int *line)
{
    int err = 0;
    Node *p = find_prop(c, obj, name, &err);
    if (err) return -1;
    if (!p) return 1;
    if (line) *line = p->line;
    return color_of(c, p, name, out) ? -1 : 0;
}

/* ---- transforms (row-major 4x4, applied to column vectors) */

static void mat_identity(double m[16])
{
    memset(m, 0, 16 * sizeof *m);
    m[0] = m[5] = m[10] = m[15] = 1.0;
}

/* m = a * m */
static void mat_premul(double m[16], const double a[16])
{
    double r[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double s = 0.0;
            for (int k = 0; k < 4; k++) s += a[4 * i + k] * m[4 * k + j];
            r[4 * i + j] = s;
        }
    memcpy(m, r, sizeof r);
}

void vpt_mitsuba_transform_point(const double m[16], const double p[3], double out[3])
{
    for (int i = 0; i < 3; i++) out[i] = m[4 * i] * p[0] + m[4 * i + 1] * p[1] + m[4 * i + 2] * p[2] + m[4 * i + 3];
}

/* x/y/z attributes or a value list; `dflt` for missing components; `uniform`
 * lets a single value stand for all three (scale). */
static int xyz_of(Ctx *c, Node *t, const char *what, double dflt, int uniform, double v[3])
{
    const char *val = attr_get(t, "value");
    const char *a[3] = {attr_get(t, "x"), attr_get(t, "y"), attr_get(t, "z")};
    if (val && (a[0] || a[1] || a[2]))
        return vpt_fail("%s:%d: <%s> has both value and x/y/z attributes", c->file, t->line, t->tag);
    if (val) {
        int n = parse_list(c, t->line, what, val, v, 3);
        if (n < 0) return -1;
        if (n == 1 && uniform) v[1] = v[2] = v[0];
        else if (n != 3) return vpt_fail("%s:%d: %s: expected 3 values, got %d", c->file, t->line, what, n);
        return 0;
    }
    for (int k = 0; k < 3; k++) {
        v[k] = dflt;
        if (a[k] && parse_double(c, t->line, what, a[k], &v[k])) return -1;
    }
    return 0;
}

static int check_attrs(Ctx *c, Node *n);

/* Mitsuba 3's lookat: columns left, up', dir, origin, with
 * dir = normalize(target - origin), left = normalize(cross(up, dir)),
 * up' = cross(dir, left). */
static int lookat_matrix(Ctx *c, int line, const double o[3], const double t[3], const double up[3], double m[16])
{
    double d[3] = {t[0] - o[0], t[1] - o[1], t[2] - o[2]};
    double dl = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    if (!(dl > 0.0)) return vpt_fail("%s:%d: <lookat>: origin and target are the same point", c->file, line);
    for (int k = 0; k < 3; k++) d[k] /= dl;
    double l[3] = {up[1] * d[2] - up[2] * d[1], up[2] * d[0] - up[0] * d[2], up[0] * d[1] - up[1] * d[0]};
    double ll = sqrt(l[0] * l[0] + l[1] * l[1] + l[2] * l[2]);
    if (!(ll > 1e-12)) return vpt_fail("%s:%d: <lookat>: up is parallel to the viewing direction", c->file, line);
    for (int k = 0; k < 3; k++) l[k] /= ll;
    double u[3] = {d[1] * l[2] - d[2] * l[1], d[2] * l[0] - d[0] * l[2], d[0] * l[1] - d[1] * l[0]};
    mat_identity(m);
    for (int k = 0; k < 3; k++) {
        m[4 * k + 0] = l[k];
        m[4 * k + 1] = u[k];
        m[4 * k + 2] = d[k];
        m[4 * k + 3] = o[k];
    }
    return 0;
}

/* A <transform> property: its operations applied in order (each one
 * multiplies from the left, as in Mitsuba). *single_lookat is set when it is
 * exactly one <lookat>, whose three points go to lookat[9]. */
static int transform_of(Ctx *c, Node *t, double m[16], int *single_lookat, float lookat[9])
{
    if (strcmp(t->tag, "transform"))
        return vpt_fail("%s:%d: property '%s' is a <%s>; expected a <transform>", c->file, t->line,
                        attr_get(t, "name") ? attr_get(t, "name") : "?", t->tag);
    mat_identity(m);
    if (single_lookat) *single_lookat = 0;
    for (int i = 0; i < t->nkid; i++) {
        Node *op = t->kid[i];
        op->used = 1;
        double a[16];
        mat_identity(a);
        if (!strcmp(op->tag, "translate")) {
            double v[3];
            if (xyz_of(c, op, "<translate>", 0.0, 0, v)) return -1;
            a[3] = v[0];
            a[7] = v[1];
            a[11] = v[2];
        } else if (!strcmp(op->tag, "scale")) {
            double v[3];
            if (xyz_of(c, op, "<scale>", 1.0, 1, v)) return -1;
            a[0] = v[0];
            a[5] = v[1];
            a[10] = v[2];
        } else if (!strcmp(op->tag, "rotate")) {
            double ax[3], ang;
            const char *as = attr_get(op, "angle");
            if (!as) return vpt_fail("%s:%d: <rotate> has no angle", c->file, op->line);
            if (parse_double(c, op->line, "<rotate> angle", as, &ang)) return -1;
            const char *axs = attr_get(op, "axis");
            if (axs) {
                int n = parse_list(c, op->line, "<rotate> axis", axs, ax, 3);
                if (n < 0) return -1;
                if (n != 3) return vpt_fail("%s:%d: <rotate> axis needs 3 values", c->file, op->line);
            } else if (xyz_of(c, op, "<rotate>", 0.0, 0, ax)) {
                return -1;
            }
            double len = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
            if (!(len > 0.0)) return vpt_fail("%s:%d: <rotate> has a zero axis", c->file, op->line);
            for (int k = 0; k < 3; k++) ax[k] /= len;
            double r = ang * 3.14159265358979323846 / 180.0, s = sin(r), co = cos(r), omc = 1.0 - co;
            double x = ax[0], y = ax[1], z = ax[2];
            double R[9] = {co + x * x * omc,     x * y * omc - z * s, x * z * omc + y * s,
                           y * x * omc + z * s, co + y * y * omc,     y * z * omc - x * s,
                           z * x * omc - y * s, z * y * omc + x * s, co + z * z * omc};
            for (int r2 = 0; r2 < 3; r2++)
                for (int k = 0; k < 3; k++) a[4 * r2 + k] = R[3 * r2 + k];
        } else if (!strcmp(op->tag, "matrix")) {
            const char *v = attr_get(op, "value");
            if (!v) return vpt_fail("%s:%d: <matrix> has no value", c->file, op->line);
            int n = parse_list(c, op->line, "<matrix>", v, a, 16);
            if (n < 0) return -1;
            if (n != 16 && n != 9) return vpt_fail("%s:%d: <matrix> needs 16 (or 9) values, got %d", c->file, op->line, n);
            if (n == 9) {
                double r9[9];
                memcpy(r9, a, sizeof r9);
                mat_identity(a);
                for (int r2 = 0; r2 < 3; r2++)
                    for (int k = 0; k < 3; k++) a[4 * r2 + k] = r9[3 * r2 + k];
            }
        } else if (!strcmp(op->tag, "lookat")) {
            const char *s3[3] = {attr_get(op, "origin"), attr_get(op, "target"), attr_get(op, "up")};
            double v[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 1, 0}};
            static const char *const nm[3] = {"origin", "target", "up"};
            for (int k = 0; k < 3; k++) {
                if (!s3[k]) {
                    if (k == 2) continue;   /* Mitsuba's default up: +y */
                    return vpt_fail("%s:%d: <lookat> has no %s", c->file, op->line, nm[k]);
                }
                char what[32];
                snprintf(what, sizeof what, "<lookat> %s", nm[k]);
                int n = parse_list(c, op->line, what, s3[k], v[k], 3);
                if (n < 0) return -1;
                if (n != 3) return vpt_fail("%s:%d: <lookat> %s needs 3 values", c->file, op->line, nm[k]);
                for (int j = 0; j < 3; j++)
                    if (!(fabs(v[k][j]) <= FLT_MAX))
                        return vpt_fail("%s:%d: <lookat> %s: %g is beyond the float range", c->file, op->line, nm[k],
                                        v[k][j]);
            }
            if (lookat_matrix(c, op->line, v[0], v[1], v[2], a)) return -1;
            if (single_lookat && t->nkid == 1) {
                *single_lookat = 1;
                for (int k = 0; k < 9; k++) lookat[k] = (float)v[k / 3][k % 3];
            }
        } else {
            return vpt_fail("%s:%d: <%s> inside a <transform> is not supported (translate, scale, rotate, matrix, "
                            "lookat)",
                            c->file, op->line, op->tag);
        }
        if (check_attrs(c, op)) return -1;
        if (op->nkid)
            return vpt_fail("%s:%d: <%s> inside <%s> is not supported", c->file, op->kid[0]->line, op->kid[0]->tag,
                            op->tag);
        mat_premul(m, a);
    }
    return 0;
}

static int get_transform(Ctx *c, Node *obj, const char *name, double m[16], int *single_lookat, float lookat[9])
{
    int err = 0;
    Node *p = find_prop(c, obj, name, &err);
    if (err) return -1;
    if (!p) return 1;
    return transform_of(c, p, m, single_lookat, lookat) ? -1 : 0;
}

/* ---- objects */

/* Every attribute of n was read. */
static int check_attrs(Ctx *c, Node *n)
{
    for (int i = 0; i < n->nattr; i++)
        if (!n->attr_used[i])
            return vpt_fail("%s:%d: attribute %s=\"%.60s\" of <%s> is not supported", c->file, n->line, n->attr[2 * i],
                            n->attr[2 * i + 1], n->tag);
    return 0;
}

/* After a plugin is interpreted: every child and attribute was used, and
 * the property elements' own attributes too. */
static int check_used(Ctx *c, Node *obj)
{
    char w[160];
    attr_get(obj, "type");
    attr_get(obj, "id");
    attr_get(obj, "name");
    if (check_attrs(c, obj)) return -1;
    for (int i = 0; i < obj->nkid; i++) {
        Node *k = obj->kid[i];
        if (!k->used) {
            char buf[128];
            const char *nm = prop_name(c, k, buf, sizeof buf);
            if (is_property_tag(k->tag) || !strcmp(k->tag, "ref"))
                return vpt_fail("%s:%d: %s property '%s' of %s is not supported by vptune", c->file, k->line, k->tag,
                                nm ? nm : "(unnamed)", where(obj, w, sizeof w));
            return vpt_fail("%s:%d: %s inside %s is not supported by vptune", c->file, k->line,
                            where(k, w, sizeof w), obj->tag);
        }
        if (is_property_tag(k->tag)) {
            if (check_attrs(c, k)) return -1;
            if (strcmp(k->tag, "transform") && k->nkid)
                return vpt_fail("%s:%d: <%s> inside <%s> is not supported", c->file, k->kid[0]->line,
                                k->kid[0]->tag, k->tag);
        }
    }
    return 0;
}

static int type_is(Node *n, const char *t) { return !strcmp(plugin_type(n), t); }

static int unsupported_plugin(Ctx *c, Node *n, const char *supported)
{
    return vpt_fail("%s:%d: <%s type=\"%.40s\"> is not supported by vptune (supported: %s)", c->file, n->line, n->tag,
                    plugin_type(n), supported);
}

/* The top-level object with id, for a <ref>; marked used. */
static Node *resolve_ref(Ctx *c, Node *ref)
{
    const char *id = attr_get(ref, "id");
    if (!id) {
        vpt_fail("%s:%d: <ref> without an id", c->file, ref->line);
        return NULL;
    }
    for (int i = 0; i < c->root->nkid; i++) {
        Node *k = c->root->kid[i];
        const char *kid_id = NULL;
        for (int j = 0; j < k->nattr; j++)
            if (!strcmp(k->attr[2 * j], "id")) kid_id = k->attr[2 * j + 1];
        if (kid_id && !strcmp(kid_id, id)) {
            k->used = 1;
            attr_get(ref, "name");
            if (check_attrs(c, ref)) return NULL;
            return k;
        }
    }
    vpt_fail("%s:%d: <ref id=\"%.60s\"> names no top-level object", c->file, ref->line, id);
    return NULL;
}

/* A nested object child of obj with tag `tag` (any name), or a named
 * <ref>: 0 found, 1 absent, -1 error (two of them, a bad ref). With `name`,
 * only children whose name attribute is `name`. */
static int child_object(Ctx *c, Node *obj, const char *tag, const char *name, Node **out)
{
    Node *found = NULL;
    for (int i = 0; i < obj->nkid; i++) {
        Node *k = obj->kid[i];
        char buf[128];
        const char *nm = prop_name(c, k, buf, sizeof buf);
        if (name && (!nm || strcmp(nm, name))) continue;
        Node *target = NULL;
        if (!strcmp(k->tag, tag)) {
            target = k;
        } else if (!strcmp(k->tag, "ref")) {
            /* an unnamed ref inside a shape is its BSDF (Mitsuba 0.5 files) */
            if (!name && nm) continue;
            Node *r = resolve_ref(c, k);
            if (!r) return -1;
            if (strcmp(r->tag, tag)) {
                if (!name) { /* not this kind: leave it for another lookup */
                    r->used = 0;
                    continue;
                }
                return vpt_fail("%s:%d: <ref> '%s' names a <%s>, expected a <%s>", c->file, k->line,
                                attr_get(k, "id"), r->tag, tag);
            }
            target = r;
        } else {
            continue;
        }
        if (found) {
            return vpt_fail("%s:%d: a second <%s>%s%s%s (the first at line %d)", c->file, k->line, tag,
                            name ? " named '" : "", name ? name : "", name ? "'" : "", found->line);
        }
        k->used = 1;
        for (int j = 0; j < k->nattr; j++)
            if (!strcmp(k->attr[2 * j], "name")) k->attr_used[j] = 1;
        found = target;
    }
    if (!found) return 1;
    *out = found;
    return 0;
}

/* ---- IORs: Mitsuba's named materials (include/mitsuba/render/ior.h) */

static int ior_of(Ctx *c, Node *obj, const char *name, double dflt, float *out)
{
    int err = 0;
    Node *p = find_prop(c, obj, name, &err);
    if (err) return -1;
    if (!p) {
        *out = (float)dflt;
        return 0;
    }
    static const char *const tags[] = {"float", "integer", "string", NULL};
    const char *v = prop_value(c, p, name, tags);
    if (!v) return -1;
    if (strcmp(p->tag, "string")) {
        double x;
        if (parse_double(c, p->line, name, v, &x)) return -1;
        if (!(x > 0.0) || x > 100.0) return vpt_fail("%s:%d: %s %g is not a usable index of refraction", c->file, p->line, name, x);
        *out = (float)x;
        return 0;
    }
    static const struct {
        const char *name;
        double ior;
    } table[] = {{"vacuum", 1.0}, {"helium", 1.00004}, {"hydrogen", 1.00013}, {"air", 1.00028},
                 {"carbon dioxide", 1.00045}, {"water", 1.3330}, {"acetone", 1.36}, {"ethanol", 1.361},
                 {"carbon tetrachloride", 1.461}, {"glycerol", 1.4729}, {"benzene", 1.501},
                 {"silicone oil", 1.52045}, {"bromine", 1.661}, {"water ice", 1.31}, {"fused quartz", 1.458},
                 {"pyrex", 1.470}, {"acrylic glass", 1.49}, {"polypropylene", 1.49}, {"bk7", 1.5046},
                 {"sodium chloride", 1.544}, {"amber", 1.55}, {"pet", 1.5750}, {"diamond", 2.419}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(v, table[i].name)) {
            *out = (float)table[i].ior;
            return 0;
        }
    return vpt_fail("%s:%d: %s: unknown material '%.60s' (give a number, or vacuum, air, water, bk7, ...)", c->file,
                    p->line, name, v);
}

/* ---- the plugins */

static int do_integrator(Ctx *c, Node *n, VptMitsubaDesc *d)
{
    int ok = c->legacy ? type_is(n, "volpath") || type_is(n, "volpath_simple")
                       : type_is(n, "volpath") || type_is(n, "volpathmis");
    if (!ok) return unsupported_plugin(c, n, c->legacy ? "volpath, volpath_simple" : "volpath, volpathmis");
    long long md = -1, rr = 5;
    if (get_int(c, n, "max_depth", &md) < 0 || get_int(c, n, "rr_depth", &rr) < 0) return -1;
    int hide = 0, strict = 0;
    if (get_bool(c, n, "hide_emitters", &hide) < 0 || get_bool(c, n, "strict_normals", &strict) < 0) return -1;
    if (hide)
        return vpt_fail("%s:%d: hide_emitters = true is not supported (vptune shows the environment)", c->file, n->line);
    if (md == 0 || md < -1)
        return vpt_fail("%s:%d: max_depth %lld: vptune renders max_depth -1 (unlimited) or a positive depth", c->file,
                        n->line, md);
    d->max_depth = md == -1 || md >= VPT_MITSUBA_DEPTH_INFINITE ? 0 : (int)md;
    if (rr <= 0) return vpt_fail("%s:%d: rr_depth %lld must be positive", c->file, n->line, rr);
    d->rr_depth = rr >= VPT_MITSUBA_DEPTH_INFINITE ? -1 : (int)rr;
    return check_used(c, n);
}

static int do_sampler(Ctx *c, Node *n, VptMitsubaDesc *d)
{
    static const char *const types[] = {"independent", "stratified", "multijitter", "ldsampler", NULL};
    int ok = 0;
    for (int i = 0; types[i]; i++) ok |= type_is(n, types[i]);
    if (!ok) return unsupported_plugin(c, n, "independent, stratified, multijitter, ldsampler");
    long long spp = 4, seed = 0, dim = 0;
    int jitter = 1;
    if (get_int(c, n, "sample_count", &spp) < 0 || get_int(c, n, "seed", &seed) < 0 ||
        get_int(c, n, "dimension", &dim) < 0 || get_bool(c, n, "jitter", &jitter) < 0)
        return -1;
    if (spp < 1 || spp > (1 << 24)) return vpt_fail("%s:%d: sample_count %lld is outside 1..16777216", c->file, n->line, spp);
    d->spp = (int)spp;
    return check_used(c, n);
}

static int do_film(Ctx *c, Node *n, VptMitsubaDesc *d)
{
    if (!type_is(n, "hdrfilm")) return unsupported_plugin(c, n, "hdrfilm");
    long long w = 768, h = 576;
    if (get_int(c, n, "width", &w) < 0 || get_int(c, n, "height", &h) < 0) return -1;
    if (w < 1 || h < 1 || w > 16384 || h > 16384)
        return vpt_fail("%s:%d: film %lldx%lld: width and height must lie in 1..16384", c->file, n->line, w, h);
    d->width = (int)w;
    d->height = (int)h;
    const char *s;
    /* output formats do not change the image's values */
    if (get_string(c, n, "pixel_format", &s, NULL) < 0 || get_string(c, n, "component_format", &s, NULL) < 0 ||
        get_string(c, n, "file_format", &s, NULL) < 0)
        return -1;
    int b = 0;
    if (get_bool(c, n, "banner", &b) < 0 || get_bool(c, n, "attach_log", &b) < 0) return -1;
    b = 0;
    if (get_bool(c, n, "sample_border", &b) < 0) return -1;
    if (b) return vpt_fail("%s:%d: sample_border = true is not supported", c->file, n->line);
    b = 0;
    if (get_bool(c, n, "high_quality_edges", &b) < 0) return -1;
    if (b) return vpt_fail("%s:%d: high_quality_edges = true is not supported", c->file, n->line);
    Node *rf;
    int r = child_object(c, n, "rfilter", NULL, &rf);
    if (r < 0) return -1;
    if (r > 0)
        return vpt_fail("%s:%d: the film has no <rfilter>: Mitsuba's default (gaussian) blends neighbouring pixels, "
                        "vptune's pixels are boxes; add <rfilter type=\"box\"/>",
                        c->file, n->line);
    if (!type_is(rf, "box")) return unsupported_plugin(c, rf, "box (vptune's pixels are boxes)");
    double radius;
    int rr = get_float(c, rf, "radius", &radius);
    if (rr < 0) return -1;
    if (rr == 0 && radius != 0.5)
        return vpt_fail("%s:%d: a box filter of radius %g: only 0.5 (one pixel) matches vptune", c->file, rf->line,
                        radius);
    if (check_used(c, rf)) return -1;
    return check_used(c, n);
}

static int do_sensor(Ctx *c, Node *n, VptMitsubaDesc *d)
{
    if (!type_is(n, "perspective")) return unsupported_plugin(c, n, "perspective");
    double m[16];
    float la[9];
    int single = 0;
    int r = get_transform(c, n, "to_world", m, &single, la);
    if (r < 0) return -1;
    if (r > 0) mat_identity(m);
    if (single) {
        memcpy(d->cam_pos, la, 3 * sizeof(float));
        memcpy(d->cam_target, la + 3, 3 * sizeof(float));
        memcpy(d->cam_up, la + 6, 3 * sizeof(float));
        d->camera_from_lookat = 1;
    } else {
        /* columns: left, up, forward, position; a rigid, right-handed frame */
        double col[4][3];
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < 3; i++) col[j][i] = m[4 * i + j];
        for (int j = 0; j < 3; j++) {
            double l = sqrt(col[j][0] * col[j][0] + col[j][1] * col[j][1] + col[j][2] * col[j][2]);
            if (fabs(l - 1.0) > 1e-4)
                return vpt_fail("%s:%d: the camera's to_world scales (column %d has length %g): Mitsuba and vptune "
                                "allow rotation and translation only",
                                c->file, n->line, j, l);
        }
        double cr[3] = {col[1][1] * col[2][2] - col[1][2] * col[2][1], col[1][2] * col[2][0] - col[1][0] * col[2][2],
                        col[1][0] * col[2][1] - col[1][1] * col[2][0]};
        for (int i = 0; i < 3; i++)
            if (fabs(cr[i] - col[0][i]) > 1e-4)
                return vpt_fail("%s:%d: the camera's to_world is not a rotation (a mirrored or sheared frame)", c->file,
                                n->line);
        for (int i = 0; i < 3; i++) {
            d->cam_pos[i] = (float)col[3][i];
            d->cam_target[i] = (float)(col[3][i] + col[2][i]);
            d->cam_up[i] = (float)col[1][i];
            if (!isfinite(d->cam_pos[i]) || !isfinite(d->cam_target[i]))
                return vpt_fail("%s:%d: the camera's position is beyond the float range", c->file, n->line);
        }
    }
    d->fov_deg = 2.0 * atan(18.0 / 50.0) * 180.0 / 3.14159265358979323846; /* Mitsuba's default: 50mm */
    snprintf(d->fov_axis, sizeof d->fov_axis, "x");
    const char *fl;
    int fl_line = 0;
    if (get_string(c, n, "focal_length", &fl, &fl_line) < 0) return -1;
    if (fl_line) return vpt_fail("%s:%d: focal_length is not supported: give fov", c->file, fl_line);
    if (get_float(c, n, "fov", &d->fov_deg) < 0) return -1;
    if (!(d->fov_deg > 0.0 && d->fov_deg < 179.0))
        return vpt_fail("%s:%d: fov %g degrees is outside (0, 179)", c->file, n->line, d->fov_deg);
    const char *axis;
    int ar = get_string(c, n, "fov_axis", &axis, NULL);
    if (ar < 0) return -1;
    if (ar == 0) {
        if (strcmp(axis, "x") && strcmp(axis, "y") && strcmp(axis, "diagonal") && strcmp(axis, "smaller") &&
            strcmp(axis, "larger"))
            return vpt_fail("%s:%d: fov_axis '%.40s' (x, y, diagonal, smaller or larger)", c->file, n->line, axis);
        snprintf(d->fov_axis, sizeof d->fov_axis, "%s", axis);
    }
    d->near_clip = 0.01;
    d->far_clip = 10000.0;
    if (get_float(c, n, "near_clip", &d->near_clip) < 0 || get_float(c, n, "far_clip", &d->far_clip) < 0) return -1;
    if (!(d->near_clip > 0.0 && d->far_clip > d->near_clip))
        return vpt_fail("%s:%d: near_clip %g and far_clip %g: need 0 < near < far", c->file, n->line, d->near_clip,
                        d->far_clip);
    static const char *const ppo_names[2] = {"principal_point_offset_x", "principal_point_offset_y"};
    for (int i = 0; i < 2; i++) {
        double ppo = 0.0;
        if (get_float(c, n, ppo_names[i], &ppo) < 0) return -1;
        if (ppo != 0.0) return vpt_fail("%s:%d: a principal point offset is not supported", c->file, n->line);
    }
    d->spp = 4;
    d->width = 768;
    d->height = 576;
    Node *k;
    r = child_object(c, n, "sampler", NULL, &k);
    if (r < 0 || (r == 0 && do_sampler(c, k, d))) return -1;
    r = child_object(c, n, "film", NULL, &k);
    if (r < 0) return -1;
    if (r > 0)
        return vpt_fail("%s:%d: the sensor has no <film>: Mitsuba's default filters with a gaussian; add "
                        "<film type=\"hdrfilm\"> with <rfilter type=\"box\"/>",
                        c->file, n->line);
    if (do_film(c, k, d)) return -1;
    return check_used(c, n);
}

static int do_emitter(Ctx *c, Node *n, VptMitsubaDesc *d)
{
    if (!type_is(n, "constant")) return unsupported_plugin(c, n, "constant");
    int r = get_color(c, n, "radiance", d->env, NULL);
    if (r < 0) return -1;
    if (r > 0) return vpt_fail("%s:%d: the constant emitter has no radiance", c->file, n->line);
    for (int k = 0; k < 3; k++)
        if (!(d->env[k] >= 0.0f)) return vpt_fail("%s:%d: radiance must not be negative", c->file, n->line);
    return check_used(c, n);
}

static int do_phase(Ctx *c, Node *n, VptMitsubaDesc *d)
{
    if (type_is(n, "isotropic")) {
        d->hg_g = 0.0f;
    } else if (type_is(n, "hg")) {
        double g = 0.8; /* Mitsuba's default */
        if (get_float(c, n, "g", &g) < 0) return -1;
        if (!(g > -1.0 && g < 1.0)) return vpt_fail("%s:%d: hg g = %g is outside (-1, 1)", c->file, n->line, g);
        d->hg_g = (float)g;
    } else {
        return unsupported_plugin(c, n, "isotropic, hg");
    }
    return check_used(c, n);
}

/* A medium volume property `name`: a value, or a <volume> (inline or ref). */
static int medium_volume(Ctx *c, Node *med, const char *name, VptMitsubaVolume *v)
{
    int err = 0;
    Node *p = find_prop(c, med, name, &err);
    if (err) return -1;
    if (!p) return 0;
    v->line = p->line;
    if (strcmp(p->tag, "volume") && strcmp(p->tag, "ref")) {
        v->kind = VPT_MTS_VOLUME_CONST;
        return color_of(c, p, name, v->value);
    }
    Node *vol = p;
    if (!strcmp(p->tag, "ref")) {
        vol = resolve_ref(c, p);
        if (!vol) return -1;
        if (strcmp(vol->tag, "volume"))
            return vpt_fail("%s:%d: '%s' refers to a <%s>, expected a <volume>", c->file, p->line, name, vol->tag);
    }
    if (type_is(vol, "constvolume") || type_is(vol, "const")) {
        v->kind = VPT_MTS_VOLUME_CONST;
        int r = get_color(c, vol, "value", v->value, NULL);
        if (r < 0) return -1;
        if (r > 0) v->value[0] = v->value[1] = v->value[2] = 1.0f;
        return check_used(c, vol);
    }
    if (!type_is(vol, "gridvolume") && !type_is(vol, "grid"))
        return unsupported_plugin(c, vol, "gridvolume, constvolume");
    v->kind = VPT_MTS_VOLUME_GRID;
    const char *fn;
    int r = get_string(c, vol, "filename", &fn, NULL);
    if (r < 0) return -1;
    if (r > 0) return vpt_fail("%s:%d: the gridvolume has no filename", c->file, vol->line);
    if (strlen(fn) >= sizeof v->filename || !*fn)
        return vpt_fail("%s:%d: gridvolume filename '%.60s' is empty or too long", c->file, vol->line, fn);
    snprintf(v->filename, sizeof v->filename, "%s", fn);
    r = get_transform(c, vol, "to_world", v->to_world, NULL, NULL);
    if (r < 0) return -1;
    if (r > 0) mat_identity(v->to_world);
    v->use_grid_bbox = c->legacy;
    if (!c->legacy && get_bool(c, vol, "use_grid_bbox", &v->use_grid_bbox) < 0) return -1;
    const char *s;
    int sl = 0;
    if (get_string(c, vol, "filter_type", &s, &sl) < 0) return -1;
    if (sl && strcmp(s, "trilinear"))
        return vpt_fail("%s:%d: filter_type '%.40s': vptune filters trilinearly", c->file, sl, s);
    sl = 0;
    if (get_string(c, vol, "wrap_mode", &s, &sl) < 0) return -1;
    if (sl && strcmp(s, "clamp")) return vpt_fail("%s:%d: wrap_mode '%.40s': vptune clamps", c->file, sl, s);
    int b;
    /* raw only matters to spectral variants, accel and send_data to speed */
    if (get_bool(c, vol, "raw", &b) < 0 || get_bool(c, vol, "accel", &b) < 0 || get_bool(c, vol, "send_data", &b) < 0)
        return -1;
    return check_used(c, vol);
}

static int do_medium(Ctx *c, Node *n, VptMitsubaDesc *d)
{
    d->medium_line = n->line;
    int homogeneous = type_is(n, "homogeneous");
    if (!type_is(n, "heterogeneous") && !homogeneous) return unsupported_plugin(c, n, "heterogeneous, homogeneous");
    if (medium_volume(c, n, c->legacy ? "density" : "sigma_t", &d->sigma_t) ||
        medium_volume(c, n, "albedo", &d->albedo))
        return -1;
    if (homogeneous && (d->sigma_t.kind == VPT_MTS_VOLUME_GRID || d->albedo.kind == VPT_MTS_VOLUME_GRID))
        return vpt_fail("%s:%d: a homogeneous medium takes constant sigma_t and albedo", c->file, n->line);
    if (d->sigma_t.kind == VPT_MTS_VOLUME_NONE) { /* Mitsuba's default: 1 */
        d->sigma_t.kind = VPT_MTS_VOLUME_CONST;
        d->sigma_t.value[0] = d->sigma_t.value[1] = d->sigma_t.value[2] = 1.0f;
        d->sigma_t.line = n->line;
    }
    if (d->albedo.kind == VPT_MTS_VOLUME_NONE) { /* Mitsuba's default: 0.75 */
        d->albedo.kind = VPT_MTS_VOLUME_CONST;
        d->albedo.value[0] = d->albedo.value[1] = d->albedo.value[2] = 0.75f;
        d->albedo.line = n->line;
    }
    if (d->sigma_t.kind == VPT_MTS_VOLUME_CONST &&
        (d->sigma_t.value[0] != d->sigma_t.value[1] || d->sigma_t.value[0] != d->sigma_t.value[2]))
        return vpt_fail("%s:%d: a coloured extinction (spectrally varying sigma_t) is not supported", c->file,
                        d->sigma_t.line);
    d->scale = 1.0;
    if (get_float(c, n, "scale", &d->scale) < 0) return -1;
    if (!(d->scale > 0.0)) return vpt_fail("%s:%d: scale %g must be positive", c->file, n->line, d->scale);
    int b;
    if (get_bool(c, n, "sample_emitters", &b) < 0 || get_bool(c, n, "has_spectral_extinction", &b) < 0) return -1;
    if (c->legacy) {
        const char *m;
        int ml = 0;
        if (get_string(c, n, "method", &m, &ml) < 0) return -1;
        if (ml && strcmp(m, "woodcock"))
            return vpt_fail("%s:%d: method '%.40s': vptune tracks with Woodcock (delta) tracking only", c->file, ml, m);
    }
    Node *ph;
    int r = child_object(c, n, "phase", NULL, &ph);
    if (r < 0) return -1;
    d->hg_g = 0.0f;
    if (r == 0 && do_phase(c, ph, d)) return -1;
    return check_used(c, n);
}

static int do_bsdf(Ctx *c, Node *n, VptMitsubaDesc *d)
{
    if (type_is(n, "null") && !c->legacy) {
        d->boundary = VPT_BOUNDARY_NULL;
        d->ior_inside = d->ior_outside = 1.0f;
        d->ggx_alpha = 0.0f;
        return check_used(c, n);
    }
    int rough = type_is(n, "roughdielectric");
    if (!rough && !type_is(n, "dielectric"))
        return unsupported_plugin(c, n, c->legacy ? "dielectric, roughdielectric" : "null, dielectric, roughdielectric");
    if (ior_of(c, n, "int_ior", 1.5046, &d->ior_inside) || ior_of(c, n, "ext_ior", 1.00028, &d->ior_outside)) return -1;
    static const char *const unit[] = {"specular_reflectance", "specular_transmittance"};
    for (int i = 0; i < 2; i++) {
        float v[3];
        int line = 0;
        int r = get_color(c, n, unit[i], v, &line);
        if (r < 0) return -1;
        if (r == 0 && (v[0] != 1.0f || v[1] != 1.0f || v[2] != 1.0f))
            return vpt_fail("%s:%d: %s must be 1 (vptune's dielectric does not tint)", c->file, line, unit[i]);
    }
    d->boundary = VPT_BOUNDARY_SMOOTH;
    d->ggx_alpha = 0.0f;
    if (rough) {
        const char *dist = "beckmann";
        int dl = 0;
        if (get_string(c, n, "distribution", &dist, &dl) < 0) return -1;
        if (strcmp(dist, "ggx"))
            return vpt_fail("%s:%d: distribution '%.40s'%s: vptune's rough dielectric is GGX; add <string "
                            "name=\"distribution\" value=\"ggx\"/>",
                            c->file, dl ? dl : n->line, dist, dl ? "" : " (Mitsuba's default)");
        double a = 0.1, au = -1, av = -1;
        if (get_float(c, n, "alpha", &a) < 0 || get_float(c, n, "alpha_u", &au) < 0 ||
            get_float(c, n, "alpha_v", &av) < 0)
            return -1;
        if (au >= 0 || av >= 0) {
            if (au != av) return vpt_fail("%s:%d: anisotropic roughness (alpha_u != alpha_v) is not supported", c->file, n->line);
            a = au;
        }
        if (!(a > 0.0 && a <= 1.0)) return vpt_fail("%s:%d: alpha %g is outside (0, 1]", c->file, n->line, a);
        int sv;
        if (get_bool(c, n, "sample_visible", &sv) < 0) return -1; /* sampling only */
        d->boundary = VPT_BOUNDARY_GGX;
        d->ggx_alpha = (float)a;
    }
    return check_used(c, n);
}

static int do_shape(Ctx *c, Node *n, VptMitsubaDesc *d)
{
    d->shape_line = n->line;
    if (type_is(n, "cube") && !c->legacy) {
        d->shape = VPT_MTS_SHAPE_CUBE;
    } else if (type_is(n, "obj")) {
        d->shape = VPT_MTS_SHAPE_OBJ;
        const char *fn;
        int r = get_string(c, n, "filename", &fn, NULL);
        if (r < 0) return -1;
        if (r > 0) return vpt_fail("%s:%d: the obj shape has no filename", c->file, n->line);
        if (strlen(fn) >= sizeof d->shape_filename || !*fn)
            return vpt_fail("%s:%d: obj filename '%.60s' is empty or too long", c->file, n->line, fn);
        snprintf(d->shape_filename, sizeof d->shape_filename, "%s", fn);
        int b;
        if (get_bool(c, n, "face_normals", &b) < 0 || get_bool(c, n, "flip_tex_coords", &b) < 0) return -1;
    } else {
        return unsupported_plugin(c, n, c->legacy ? "obj (a box mesh)" : "cube, obj (a box mesh)");
    }
    int r = get_transform(c, n, "to_world", d->shape_to_world, NULL, NULL);
    if (r < 0) return -1;
    if (r > 0) mat_identity(d->shape_to_world);
    int flip = 0;
    if (get_bool(c, n, "flip_normals", &flip) < 0) return -1;
    if (flip) return vpt_fail("%s:%d: flip_normals = true is not supported (it swaps inside and outside)", c->file, n->line);
    Node *k;
    r = child_object(c, n, "medium", "interior", &k);
    if (r < 0) return -1;
    if (r > 0)
        return vpt_fail("%s:%d: the shape has no interior medium (<ref name=\"interior\" id=...>): vptune renders a "
                        "medium in a box",
                        c->file, n->line);
    if (do_medium(c, k, d)) return -1;
    r = child_object(c, n, "medium", "exterior", &k);
    if (r < 0) return -1;
    if (r == 0) return vpt_fail("%s:%d: an exterior medium is not supported (vptune's box sits in vacuum)", c->file, k->line);
    r = child_object(c, n, "bsdf", NULL, &k);
    if (r < 0) return -1;
    if (r > 0) {
        if (!c->legacy)
            return vpt_fail("%s:%d: the shape has no BSDF: Mitsuba 3 gives it a diffuse one, which vptune does not "
                            "render; add <bsdf type=\"null\"/> for an index-matched boundary",
                            c->file, n->line);
        d->boundary = VPT_BOUNDARY_NULL; /* Mitsuba 0.5: index-matched */
        d->ior_inside = d->ior_outside = 1.0f;
        d->ggx_alpha = 0.0f;
    } else if (do_bsdf(c, k, d)) {
        return -1;
    }
    return check_used(c, n);
}

static int interpret(Ctx *c, VptMitsubaDesc *d)
{
    Node *root = c->root;
    if (strcmp(root->tag, "scene"))
        return vpt_fail("%s:%d: the root element is <%s>; a Mitsuba scene file starts with <scene>", c->file,
                        root->line, root->tag);
    const char *ver = attr_get(root, "version");
    if (!ver) return vpt_fail("%s:%d: <scene> has no version attribute", c->file, root->line);
    int major = -1, minor = 0, patch = 0;
    char rest;
    int nv = sscanf(ver, "%d.%d.%d%c", &major, &minor, &patch, &rest);
    if (nv < 1 || nv > 3 || major < 0 || !(major == 0 || major == 2 || major == 3))
        return vpt_fail("%s:%d: scene version '%.40s': vptune reads versions 0.x (Mitsuba 0.5/0.6) and 2.x/3.x",
                        c->file, root->line, ver);
    c->legacy = major == 0;
    d->version_major = c->legacy ? 0 : 3;
    if (check_attrs(c, root)) return -1;
    Node *sensor = NULL, *shape = NULL, *integ = NULL, *emitter = NULL;
    for (int i = 0; i < root->nkid; i++) {
        Node *k = root->kid[i];
        Node **slot = !strcmp(k->tag, "sensor") ? &sensor : !strcmp(k->tag, "shape") ? &shape
                    : !strcmp(k->tag, "integrator") ? &integ : !strcmp(k->tag, "emitter") ? &emitter : NULL;
        if (slot) {
            if (*slot)
                return vpt_fail("%s:%d: a second <%s> (the first at line %d): vptune renders one %s", c->file, k->line,
                                k->tag, (*slot)->line, k->tag);
            *slot = k;
            k->used = 1;
        } else if (!strcmp(k->tag, "default")) {
            k->used = 1;
        } else if (strcmp(k->tag, "bsdf") && strcmp(k->tag, "medium") && strcmp(k->tag, "volume") &&
                   strcmp(k->tag, "phase")) {
            char w[160];
            return vpt_fail("%s:%d: %s is not supported in a vptune scene", c->file, k->line, where(k, w, sizeof w));
        }
    }
    if (!integ)
        return vpt_fail("%s:%d: no <integrator>: Mitsuba's default (path) ignores media; add <integrator "
                        "type=\"volpath\">",
                        c->file, root->line);
    if (do_integrator(c, integ, d)) return -1;
    if (!sensor) return vpt_fail("%s:%d: no <sensor>", c->file, root->line);
    if (do_sensor(c, sensor, d)) return -1;
    if (!shape) return vpt_fail("%s:%d: no <shape>: vptune renders a medium in a box shape", c->file, root->line);
    if (do_shape(c, shape, d)) return -1;
    if (emitter && do_emitter(c, emitter, d)) return -1;
    /* top-level objects no one referred to */
    for (int i = 0; i < root->nkid; i++)
        if (!root->kid[i]->used) {
            char w[160];
            return vpt_fail("%s:%d: %s is not used by the shape", c->file, root->kid[i]->line,
                            where(root->kid[i], w, sizeof w));
        }
    return 0;
}

static int collect_defaults(Ctx *c)
{
    Node *root = c->root;
    for (int i = 0; i < root->nkid; i++) {
        Node *k = root->kid[i];
        if (strcmp(k->tag, "default")) continue;
        const char *nm = attr_get(k, "name"), *v = attr_get(k, "value");
        if (!nm || !v) return vpt_fail("%s:%d: <default> needs name and value", c->file, k->line);
        if (check_attrs(c, k)) return -1;
        if (k->nkid) return vpt_fail("%s:%d: <default> holds elements", c->file, k->line);
        if (!*nm || strchr(nm, '$') || strchr(v, '$'))
            return vpt_fail("%s:%d: <default name=\"%.40s\">: an empty name or a value with '$'", c->file, k->line, nm);
        for (int j = 0; j < c->defaults.n; j++)
            if (!strcmp(c->defaults.name[j], nm))
                return vpt_fail("%s:%d: <default name=\"%.40s\"> given twice", c->file, k->line, nm);
        if (c->defaults.n == MAX_DEFAULTS) return vpt_fail("%s:%d: more than %d <default>s", c->file, k->line, MAX_DEFAULTS);
        c->defaults.name[c->defaults.n] = (char *)nm;
        c->defaults.value[c->defaults.n] = (char *)v;
        c->defaults.n++;
    }
    return 0;
}

int vpt_mitsuba_parse(const char *name, const char *text, size_t size, VptMitsubaDesc *out)
{
    memset(out, 0, sizeof *out);
    Node *root = build_tree(name, text, size);
    if (!root) return -1;
    Ctx c;
    memset(&c, 0, sizeof c);
    c.file = name;
    c.root = root;
    int rc = -1;
    /* defaults point into the tree; substitution replaces other values only
     * (a default's own value holds no '$') */
    if (collect_defaults(&c) == 0 && substitute_tree(name, root, &c.defaults) == 0) rc = interpret(&c, out);
    node_free(root);
    if (rc) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    return 0;
}
