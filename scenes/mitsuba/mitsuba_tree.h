/* The element tree of a Mitsuba scene file: XML in, elements with their
 * attributes and lines out, <default> parameters substituted. The first of
 * the scene-file reader's passes (mitsuba_xml.h has the whole contract); it
 * knows XML and nothing of Mitsuba's plugins (mitsuba_props.h reads the
 * tree as Mitsuba's objects, mitsuba_xml.c maps them to vptune). */
#ifndef VPT_SCENES_MITSUBA_TREE_H
#define VPT_SCENES_MITSUBA_TREE_H

#include <stddef.h>

/* One element. `used` and `attr_used` record what the interpreter read, so
 * that what it did not read can be reported. */
typedef struct VptMitsubaNode VptMitsubaNode;
struct VptMitsubaNode {
    char *tag;
    char **attr;              /* name, value, name, value, ... */
    int nattr;                /* pairs */
    int line;
    VptMitsubaNode **kid;
    int nkid, cap;
    int used;                 /* interpreted (elements); per attribute below */
    unsigned char *attr_used;
};

/* The tree of text (size bytes; `name` starts every message, with ":line").
 * NULL with a message on malformed XML, a DOCTYPE, text content, more than
 * VPT_MITSUBA_MAX_XML_BYTES or nesting deeper than VPT_MITSUBA_MAX_NESTING
 * (mitsuba_xml.h), too many elements, no memory. */
VptMitsubaNode *vpt_mitsuba_tree_build(const char *name, const char *text, size_t size);
void vpt_mitsuba_tree_free(VptMitsubaNode *root);

/* The value of attribute key of n, marked used; NULL when n has none. */
const char *vpt_mitsuba_attr(VptMitsubaNode *n, const char *key);

/* 0 when every attribute of n was read (vpt_mitsuba_attr), else -1 with a
 * message naming the first one that was not, file:line first. */
int vpt_mitsuba_attrs_used(const char *file, VptMitsubaNode *n);

/* Collects the root's <default name value> children and replaces every
 * "$name" in every other attribute of the tree (longer names first); a '$'
 * naming no default, a default given twice, with other attributes or
 * children, are errors (-1, with a message). */
int vpt_mitsuba_tree_defaults(const char *file, VptMitsubaNode *root);

#endif
