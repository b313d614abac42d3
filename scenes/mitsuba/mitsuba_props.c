/* Mitsuba's objects and properties over the element tree (see
 * mitsuba_props.h): the way Mitsuba's own parser reads a plugin element --
 * each property looked up by name (0.x names upgraded as Mitsuba 3 does:
 * camelCase -> snake_case, maxDepth -> max_depth, toWorld -> to_world) and
 * marked used, values parsed strictly, transforms composed, <ref>s resolved
 * -- so that, when a plugin is done, any child or attribute left unused is
 * an error naming it and its line. Knows no plugin: mitsuba_xml.c says which
 * plugins and properties vptune takes. */
#include "scenes/mitsuba/mitsuba_props.h"

#include "base/error.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
static const char *prop_name(VptMitsubaReader *c, VptMitsubaNode *n, char *buf, size_t bufsz)
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

static const char *plugin_type(VptMitsubaNode *n)
{
    for (int i = 0; i < n->nattr; i++)
        if (!strcmp(n->attr[2 * i], "type")) return n->attr[2 * i + 1];
    return "?";
}

/* "<medium type="heterogeneous"> at line 12", for messages. */
const char *vpt_mitsuba_where(VptMitsubaNode *n, char *buf, size_t sz)
{
    const char *t = plugin_type(n);
    if (strcmp(t, "?")) snprintf(buf, sz, "<%s type=\"%.40s\"> (line %d)", n->tag, t, n->line);
    else snprintf(buf, sz, "<%s> (line %d)", n->tag, n->line);
    return buf;
}

/* The child of obj that sets property `name` (property element, named
 * object or named <ref>), marked used; NULL when absent. Two children
 * setting the same name are an error (*err set). */
VptMitsubaNode *vpt_mitsuba_find_prop(VptMitsubaReader *c, VptMitsubaNode *obj, const char *name, int *err)
{
    VptMitsubaNode *found = NULL;
    for (int i = 0; i < obj->nkid; i++) {
        VptMitsubaNode *k = obj->kid[i];
        char buf[128];
        const char *nm = prop_name(c, k, buf, sizeof buf);
        if (!nm || strcmp(nm, name)) continue;
        if (found) {
            char w[160];
            vpt_fail("%s:%d: property '%s' of %s is given twice (also at line %d)", c->file, k->line, name,
                     vpt_mitsuba_where(obj, w, sizeof w), found->line);
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
static const char *prop_value(VptMitsubaReader *c, VptMitsubaNode *p, const char *name, const char *const *tags)
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
    const char *v = vpt_mitsuba_attr(p, "value");
    if (!v) vpt_fail("%s:%d: <%s name=\"%s\"> has no value attribute", c->file, p->line, p->tag, name);
    return v;
}

static int parse_double(VptMitsubaReader *c, int line, const char *what, const char *s, double *out)
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
static int parse_list(VptMitsubaReader *c, int line, const char *what, const char *s, double *out, int max)
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

/* obj's property `name` (*p) and its value's text (*v), which must be given
 * with one of tags[] (NULL-terminated): 0, 1 absent, -1 with the message. */
static int prop_text(VptMitsubaReader *c, VptMitsubaNode *obj, const char *name, const char *const *tags,
                     VptMitsubaNode **p, const char **v)
{
    int err = 0;
    *p = vpt_mitsuba_find_prop(c, obj, name, &err);
    if (err) return -1;
    if (!*p) return 1;
    *v = prop_value(c, *p, name, tags);
    return *v ? 0 : -1;
}

int vpt_mitsuba_get_float(VptMitsubaReader *c, VptMitsubaNode *obj, const char *name, double *out)
{
    static const char *const tags[] = {"float", "integer", NULL};
    VptMitsubaNode *p;
    const char *v;
    int r = prop_text(c, obj, name, tags, &p, &v);
    if (r) return r;
    char what[96];
    snprintf(what, sizeof what, "property '%s'", name);
    return parse_double(c, p->line, what, v, out) ? -1 : 0;
}

int vpt_mitsuba_get_int(VptMitsubaReader *c, VptMitsubaNode *obj, const char *name, long long *out)
{
    static const char *const tags[] = {"integer", NULL};
    VptMitsubaNode *p;
    const char *v;
    int r = prop_text(c, obj, name, tags, &p, &v);
    if (r) return r;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    while (isspace((unsigned char)*end)) end++;
    if (end == v || *end || errno == ERANGE || x < -2147483648LL || x > 2147483647LL)
        return vpt_fail("%s:%d: property '%s': '%.60s' is not a 32-bit integer", c->file, p->line, name, v);
    *out = x;
    return 0;
}

int vpt_mitsuba_get_bool(VptMitsubaReader *c, VptMitsubaNode *obj, const char *name, int *out)
{
    static const char *const tags[] = {"boolean", NULL};
    VptMitsubaNode *p;
    const char *v;
    int r = prop_text(c, obj, name, tags, &p, &v);
    if (r) return r;
    if (!strcmp(v, "true") || !strcmp(v, "1")) *out = 1;
    else if (!strcmp(v, "false") || !strcmp(v, "0")) *out = 0;
    else return vpt_fail("%s:%d: property '%s': '%.60s' is not true or false", c->file, p->line, name, v);
    return 0;
}

int vpt_mitsuba_get_string(VptMitsubaReader *c, VptMitsubaNode *obj, const char *name, const char **out, int *line)
{
    static const char *const tags[] = {"string", NULL};
    VptMitsubaNode *p;
    const char *v;
    int r = prop_text(c, obj, name, tags, &p, &v);
    if (r) return r;
    *out = v;
    if (line) *line = p->line;
    return 0;
}

/* A colour given as <rgb value="r, g, b">, <rgb value="v">, <float>, or a
 * <spectrum> with one value (a constant spectrum). */
int vpt_mitsuba_color(VptMitsubaReader *c, VptMitsubaNode *p, const char *name, float out[3])
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

int vpt_mitsuba_get_color(VptMitsubaReader *c, VptMitsubaNode *obj, const char *name, float out[3], int *line)
{
    int err = 0;
    VptMitsubaNode *p = vpt_mitsuba_find_prop(c, obj, name, &err);
    if (err) return -1;
    if (!p) return 1;
    if (line) *line = p->line;
    return vpt_mitsuba_color(c, p, name, out) ? -1 : 0;
}

static int xyz_of(VptMitsubaReader *c, VptMitsubaNode *t, const char *what, double dflt, int uniform, double v[3]);

int vpt_mitsuba_get_vector(VptMitsubaReader *c, VptMitsubaNode *obj, const char *name, double out[3], int *line)
{
    int err = 0;
    VptMitsubaNode *p = vpt_mitsuba_find_prop(c, obj, name, &err);
    if (err) return -1;
    if (!p) return 1;
    if (strcmp(p->tag, "vector") && strcmp(p->tag, "point"))
        return vpt_fail("%s:%d: property '%s' is a <%s>; expected <vector>", c->file, p->line, name, p->tag);
    if (line) *line = p->line;
    char what[96];
    snprintf(what, sizeof what, "property '%s'", name);
    return xyz_of(c, p, what, 0.0, 0, out) ? -1 : 0;
}

/* ---- transforms (row-major 4x4, applied to column vectors) */

void vpt_mitsuba_mat_identity(double m[16])
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

/* x/y/z attributes or a value list; `dflt` for missing components; `uniform`
 * lets a single value stand for all three (scale). */
static int xyz_of(VptMitsubaReader *c, VptMitsubaNode *t, const char *what, double dflt, int uniform, double v[3])
{
    const char *val = vpt_mitsuba_attr(t, "value");
    const char *a[3] = {vpt_mitsuba_attr(t, "x"), vpt_mitsuba_attr(t, "y"), vpt_mitsuba_attr(t, "z")};
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


/* Mitsuba 3's lookat: columns left, up', dir, origin, with
 * dir = normalize(target - origin), left = normalize(cross(up, dir)),
 * up' = cross(dir, left). */
static int lookat_matrix(VptMitsubaReader *c, int line, const double o[3], const double t[3], const double up[3],
                         double m[16])
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
    vpt_mitsuba_mat_identity(m);
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
static int transform_of(VptMitsubaReader *c, VptMitsubaNode *t, double m[16], int *single_lookat, float lookat[9])
{
    if (strcmp(t->tag, "transform"))
        return vpt_fail("%s:%d: property '%s' is a <%s>; expected a <transform>", c->file, t->line,
                        vpt_mitsuba_attr(t, "name") ? vpt_mitsuba_attr(t, "name") : "?", t->tag);
    vpt_mitsuba_mat_identity(m);
    if (single_lookat) *single_lookat = 0;
    for (int i = 0; i < t->nkid; i++) {
        VptMitsubaNode *op = t->kid[i];
        op->used = 1;
        double a[16];
        vpt_mitsuba_mat_identity(a);
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
            const char *as = vpt_mitsuba_attr(op, "angle");
            if (!as) return vpt_fail("%s:%d: <rotate> has no angle", c->file, op->line);
            if (parse_double(c, op->line, "<rotate> angle", as, &ang)) return -1;
            const char *axs = vpt_mitsuba_attr(op, "axis");
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
            const char *v = vpt_mitsuba_attr(op, "value");
            if (!v) return vpt_fail("%s:%d: <matrix> has no value", c->file, op->line);
            int n = parse_list(c, op->line, "<matrix>", v, a, 16);
            if (n < 0) return -1;
            if (n != 16 && n != 9) return vpt_fail("%s:%d: <matrix> needs 16 (or 9) values, got %d", c->file, op->line,
                                                   n);
            if (n == 9) {
                double r9[9];
                memcpy(r9, a, sizeof r9);
                vpt_mitsuba_mat_identity(a);
                for (int r2 = 0; r2 < 3; r2++)
                    for (int k = 0; k < 3; k++) a[4 * r2 + k] = r9[3 * r2 + k];
            }
        } else if (!strcmp(op->tag, "lookat")) {
            const char *s3[3] = {vpt_mitsuba_attr(op, "origin"), vpt_mitsuba_attr(op, "target"),
                                 vpt_mitsuba_attr(op, "up")};
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
        if (vpt_mitsuba_attrs_used(c->file, op)) return -1;
        if (op->nkid)
            return vpt_fail("%s:%d: <%s> inside <%s> is not supported", c->file, op->kid[0]->line, op->kid[0]->tag,
                            op->tag);
        mat_premul(m, a);
    }
    return 0;
}

int vpt_mitsuba_get_transform(VptMitsubaReader *c, VptMitsubaNode *obj, const char *name, double m[16],
                              int *single_lookat, float lookat[9])
{
    int err = 0;
    VptMitsubaNode *p = vpt_mitsuba_find_prop(c, obj, name, &err);
    if (err) return -1;
    if (!p) return 1;
    return transform_of(c, p, m, single_lookat, lookat) ? -1 : 0;
}


/* After a plugin is interpreted: every child and attribute was used, and
 * the property elements' own attributes too. */
int vpt_mitsuba_check_used(VptMitsubaReader *c, VptMitsubaNode *obj)
{
    char w[160];
    vpt_mitsuba_attr(obj, "type");
    vpt_mitsuba_attr(obj, "id");
    vpt_mitsuba_attr(obj, "name");
    if (vpt_mitsuba_attrs_used(c->file, obj)) return -1;
    for (int i = 0; i < obj->nkid; i++) {
        VptMitsubaNode *k = obj->kid[i];
        if (!k->used) {
            char buf[128];
            const char *nm = prop_name(c, k, buf, sizeof buf);
            if (is_property_tag(k->tag) || !strcmp(k->tag, "ref"))
                return vpt_fail("%s:%d: %s property '%s' of %s is not supported by vptune", c->file, k->line, k->tag,
                                nm ? nm : "(unnamed)", vpt_mitsuba_where(obj, w, sizeof w));
            return vpt_fail("%s:%d: %s inside %s is not supported by vptune", c->file, k->line,
                            vpt_mitsuba_where(k, w, sizeof w), obj->tag);
        }
        if (is_property_tag(k->tag)) {
            if (vpt_mitsuba_attrs_used(c->file, k)) return -1;
            if (strcmp(k->tag, "transform") && k->nkid)
                return vpt_fail("%s:%d: <%s> inside <%s> is not supported", c->file, k->kid[0]->line,
                                k->kid[0]->tag, k->tag);
        }
    }
    return 0;
}

int vpt_mitsuba_type_is(VptMitsubaNode *n, const char *t) { return !strcmp(plugin_type(n), t); }

int vpt_mitsuba_unsupported(VptMitsubaReader *c, VptMitsubaNode *n, const char *supported)
{
    return vpt_fail("%s:%d: <%s type=\"%.40s\"> is not supported by vptune (supported: %s)", c->file, n->line, n->tag,
                    plugin_type(n), supported);
}

/* The top-level object with id, for a <ref>; marked used. */
VptMitsubaNode *vpt_mitsuba_resolve_ref(VptMitsubaReader *c, VptMitsubaNode *ref)
{
    const char *id = vpt_mitsuba_attr(ref, "id");
    if (!id) {
        vpt_fail("%s:%d: <ref> without an id", c->file, ref->line);
        return NULL;
    }
    for (int i = 0; i < c->root->nkid; i++) {
        VptMitsubaNode *k = c->root->kid[i];
        const char *kid_id = NULL;
        for (int j = 0; j < k->nattr; j++)
            if (!strcmp(k->attr[2 * j], "id")) kid_id = k->attr[2 * j + 1];
        if (kid_id && !strcmp(kid_id, id)) {
            k->used = 1;
            vpt_mitsuba_attr(ref, "name");
            if (vpt_mitsuba_attrs_used(c->file, ref)) return NULL;
            return k;
        }
    }
    vpt_fail("%s:%d: <ref id=\"%.60s\"> names no top-level object", c->file, ref->line, id);
    return NULL;
}

/* A nested object child of obj with tag `tag` (any name), or a named
 * <ref>: 0 found, 1 absent, -1 error (two of them, a bad ref). With `name`,
 * only children whose name attribute is `name`. */
int vpt_mitsuba_child(VptMitsubaReader *c, VptMitsubaNode *obj, const char *tag, const char *name, VptMitsubaNode **out)
{
    VptMitsubaNode *found = NULL;
    for (int i = 0; i < obj->nkid; i++) {
        VptMitsubaNode *k = obj->kid[i];
        char buf[128];
        const char *nm = prop_name(c, k, buf, sizeof buf);
        if (name && (!nm || strcmp(nm, name))) continue;
        VptMitsubaNode *target = NULL;
        if (!strcmp(k->tag, tag)) {
            target = k;
        } else if (!strcmp(k->tag, "ref")) {
            /* an unnamed ref inside a shape is its BSDF (Mitsuba 0.5 files) */
            if (!name && nm) continue;
            VptMitsubaNode *r = vpt_mitsuba_resolve_ref(c, k);
            if (!r) return -1;
            if (strcmp(r->tag, tag)) {
                if (!name) { /* not this kind: leave it for another lookup */
                    r->used = 0;
                    continue;
                }
                return vpt_fail("%s:%d: <ref> '%s' names a <%s>, expected a <%s>", c->file, k->line,
                                vpt_mitsuba_attr(k, "id"), r->tag, tag);
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

int vpt_mitsuba_ior(VptMitsubaReader *c, VptMitsubaNode *obj, const char *name, double dflt, float *out)
{
    int err = 0;
    VptMitsubaNode *p = vpt_mitsuba_find_prop(c, obj, name, &err);
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
        if (!(x > 0.0) || x > 100.0) return vpt_fail("%s:%d: %s %g is not a usable index of refraction", c->file,
                                                     p->line, name, x);
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
