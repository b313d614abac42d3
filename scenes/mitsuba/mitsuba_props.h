/* Mitsuba's objects and properties, read from the element tree
 * (mitsuba_tree.h) the way Mitsuba's own parser reads them: a plugin
 * element's properties by name (version 0.x names upgraded as Mitsuba 3
 * does: maxDepth -> max_depth, intIOR -> int_ior, toWorld -> to_world),
 * values parsed strictly, transforms composed, <ref>s resolved; everything
 * read is marked used, and vpt_mitsuba_check_used reports what a plugin left
 * unread. The second of the scene-file reader's passes (mitsuba_xml.h has
 * the whole contract); it knows no plugin: mitsuba_xml.c says which plugins
 * and properties vptune takes.
 *
 * Every function that fails sets a message "file:line: ..." (base/error.h)
 * and returns -1 (or NULL); the getters return 0 when the property was found
 * and set, 1 when it is absent (out untouched). */
#ifndef VPT_SCENES_MITSUBA_PROPS_H
#define VPT_SCENES_MITSUBA_PROPS_H

#include "scenes/mitsuba/mitsuba_tree.h"

#include <stddef.h>

/* The file being read: its name (messages), its version, its tree. */
typedef struct {
    const char *file;
    int legacy;               /* a version 0.x file */
    VptMitsubaNode *root;
} VptMitsubaReader;

/* "<medium type="heterogeneous"> (line 12)", for messages, in buf. */
const char *vpt_mitsuba_where(VptMitsubaNode *n, char *buf, size_t sz);

/* Whether n's type attribute is t. */
int vpt_mitsuba_type_is(VptMitsubaNode *n, const char *t);

/* Fails: "<tag type="..."> is not supported by vptune (supported: ...)". */
int vpt_mitsuba_unsupported(VptMitsubaReader *c, VptMitsubaNode *n, const char *supported);

/* The child of obj that sets property `name` (property element, named
 * object or named <ref>), marked used; NULL when absent. Two children
 * setting the same name are an error (*err set). */
VptMitsubaNode *vpt_mitsuba_find_prop(VptMitsubaReader *c, VptMitsubaNode *obj, const char *name, int *err);

/* Property getters (0 set, 1 absent, -1 error): a <float> (or <integer>),
 * a 32-bit <integer>, a <boolean> (true, false, 1, 0), a <string> (and its
 * line), a colour (vpt_mitsuba_color; and its line), a <transform> (`m`,
 * row-major 4x4 applied to column vectors, its operations each multiplied
 * from the left as in Mitsuba; *single_lookat set when it is exactly one
 * <lookat>, whose origin, target and up then go to lookat, when non-NULL). */
int vpt_mitsuba_get_float(VptMitsubaReader *c, VptMitsubaNode *obj, const char *name, double *out);
int vpt_mitsuba_get_int(VptMitsubaReader *c, VptMitsubaNode *obj, const char *name, long long *out);
int vpt_mitsuba_get_bool(VptMitsubaReader *c, VptMitsubaNode *obj, const char *name, int *out);
int vpt_mitsuba_get_string(VptMitsubaReader *c, VptMitsubaNode *obj, const char *name, const char **out,
                           int *line);
int vpt_mitsuba_get_color(VptMitsubaReader *c, VptMitsubaNode *obj, const char *name, float out[3], int *line);
/* A <vector> (or <point>): value="x, y, z" or x/y/z attributes (0 when left
 * out), each finite. */
int vpt_mitsuba_get_vector(VptMitsubaReader *c, VptMitsubaNode *obj, const char *name, double out[3], int *line);
int vpt_mitsuba_get_transform(VptMitsubaReader *c, VptMitsubaNode *obj, const char *name, double m[16],
                              int *single_lookat, float lookat[9]);

/* The colour a property element p (found by name) holds: <rgb> of one or
 * three values, a <float> or <integer>, or a <spectrum> of one value (a
 * constant spectrum; wavelength:value pairs are refused). 0 or -1. */
int vpt_mitsuba_color(VptMitsubaReader *c, VptMitsubaNode *p, const char *name, float out[3]);

/* An index of refraction: a number in (0, 100], or one of Mitsuba's named
 * materials (include/mitsuba/render/ior.h: vacuum, air, water, bk7, ...);
 * dflt when absent. 0 or -1. */
int vpt_mitsuba_ior(VptMitsubaReader *c, VptMitsubaNode *obj, const char *name, double dflt, float *out);

/* The 4x4 identity. */
void vpt_mitsuba_mat_identity(double m[16]);

/* The top-level object a <ref id> names, marked used; NULL when none. */
VptMitsubaNode *vpt_mitsuba_resolve_ref(VptMitsubaReader *c, VptMitsubaNode *ref);

/* A nested object child of obj with tag `tag` (any name), or a named <ref>
 * to one: 0 found (*out), 1 absent, -1 error (two of them, a bad ref). With
 * `name`, only children whose name attribute is `name`. */
int vpt_mitsuba_child(VptMitsubaReader *c, VptMitsubaNode *obj, const char *tag, const char *name,
                      VptMitsubaNode **out);

/* After a plugin is interpreted: every child and attribute of obj was used,
 * and the property elements' own attributes too; else -1 naming the first
 * that was not. */
int vpt_mitsuba_check_used(VptMitsubaReader *c, VptMitsubaNode *obj);

#endif
