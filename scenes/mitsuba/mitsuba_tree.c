/* The element tree of a Mitsuba scene file (see mitsuba_tree.h).
 *
 * expat builds a small element tree (tag, attributes, line, children);
 * DOCTYPEs, text content and nesting deeper than VPT_MITSUBA_MAX_NESTING are
 * refused, so no entity can be declared and no input can blow up.
 * `<default>` values are then substituted for `$name` in every attribute.
 * Knows XML, not Mitsuba's plugins: mitsuba_props.c reads the tree as
 * Mitsuba's objects and properties, mitsuba_xml.c maps those to vptune. */
#include "scenes/mitsuba/mitsuba_tree.h"

#include "base/error.h"
#include "scenes/mitsuba/mitsuba_xml.h"

#include <ctype.h>
#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NODES 100000
#define MAX_DEFAULTS 256

void vpt_mitsuba_tree_free(VptMitsubaNode *n)
{
    if (!n) return;
    for (int i = 0; i < n->nkid; i++) vpt_mitsuba_tree_free(n->kid[i]);
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
    VptMitsubaNode *root;
    VptMitsubaNode *stack[VPT_MITSUBA_MAX_NESTING + 1];
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
    VptMitsubaNode *n = calloc(1, sizeof *n);
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
            vpt_mitsuba_tree_free(n);
            build_fail(b, line, "a second root element <%s>", tag);
            return;
        }
        b->root = n;
    } else {
        VptMitsubaNode *p = b->stack[b->depth - 1];
        if (p->nkid == p->cap) {
            int cap = p->cap ? 2 * p->cap : 8;
            VptMitsubaNode **k = realloc(p->kid, (size_t)cap * sizeof *k);
            if (!k) goto oom_node;
            p->kid = k;
            p->cap = cap;
        }
        p->kid[p->nkid++] = n;
    }
    b->stack[b->depth++] = n;
    return;
oom_node:
    vpt_mitsuba_tree_free(n);
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

VptMitsubaNode *vpt_mitsuba_tree_build(const char *name, const char *text, size_t size)
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
        vpt_mitsuba_tree_free(b.root);
        return NULL;
    }
    return b.root;
}

/* ------------------------------------------------------------ attributes */

const char *vpt_mitsuba_attr(VptMitsubaNode *n, const char *key)
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

static int substitute_tree(const char *file, VptMitsubaNode *n, const Defaults *d)
{
    for (int i = 0; i < n->nattr; i++)
        if (substitute(file, n->line, d, &n->attr[2 * i + 1])) return -1;
    for (int i = 0; i < n->nkid; i++)
        if (substitute_tree(file, n->kid[i], d)) return -1;
    return 0;
}

/* Every attribute of n was read. */
int vpt_mitsuba_attrs_used(const char *file, VptMitsubaNode *n)
{
    for (int i = 0; i < n->nattr; i++)
        if (!n->attr_used[i])
            return vpt_fail("%s:%d: attribute %s=\"%.60s\" of <%s> is not supported", file, n->line, n->attr[2 * i],
                            n->attr[2 * i + 1], n->tag);
    return 0;
}

static int collect_defaults(const char *file, VptMitsubaNode *root, Defaults *d)
{
    for (int i = 0; i < root->nkid; i++) {
        VptMitsubaNode *k = root->kid[i];
        if (strcmp(k->tag, "default")) continue;
        const char *nm = vpt_mitsuba_attr(k, "name"), *v = vpt_mitsuba_attr(k, "value");
        if (!nm || !v) return vpt_fail("%s:%d: <default> needs name and value", file, k->line);
        if (vpt_mitsuba_attrs_used(file, k)) return -1;
        if (k->nkid) return vpt_fail("%s:%d: <default> holds elements", file, k->line);
        if (!*nm || strchr(nm, '$') || strchr(v, '$'))
            return vpt_fail("%s:%d: <default name=\"%.40s\">: an empty name or a value with '$'", file, k->line, nm);
        for (int j = 0; j < d->n; j++)
            if (!strcmp(d->name[j], nm))
                return vpt_fail("%s:%d: <default name=\"%.40s\"> given twice", file, k->line, nm);
        if (d->n == MAX_DEFAULTS) return vpt_fail("%s:%d: more than %d <default>s", file, k->line, MAX_DEFAULTS);
        d->name[d->n] = (char *)nm;
        d->value[d->n] = (char *)v;
        d->n++;
    }
    return 0;
}

int vpt_mitsuba_tree_defaults(const char *file, VptMitsubaNode *root)
{
    Defaults d;
    memset(&d, 0, sizeof d);
    /* the defaults point into the tree; substitution replaces other values
     * only (a default's own value holds no '$') */
    if (collect_defaults(file, root, &d)) return -1;
    return substitute_tree(file, root, &d);
}
