/* Strict parsing of numbers from flags, config strings and file headers.
 *
 * Each function accepts the whole string or nothing: leading/trailing spaces,
 * trailing garbage, empty strings, out-of-range values, NaN and infinities are
 * rejected with a message naming `what` (e.g. "--spp") and the allowed range. */
#ifndef VPT_BASE_PARSE_H
#define VPT_BASE_PARSE_H

#include <stdint.h>

int vpt_parse_i64(const char *s, int64_t min, int64_t max, const char *what, int64_t *out);
int vpt_parse_int(const char *s, int min, int max, const char *what, int *out);
int vpt_parse_u64(const char *s, uint64_t max, const char *what, uint64_t *out);
int vpt_parse_double(const char *s, double min, double max, const char *what, double *out);
int vpt_parse_float(const char *s, float min, float max, const char *what, float *out);

/* "x,y,z" (or "x y z" when sep is ' ') of three numbers. */
int vpt_parse_vec3(const char *s, char sep, const char *what, float out[3]);

/* Durations "90s", "2m", "500ms", "1.5h"; a bare number is seconds. */
int vpt_parse_duration(const char *s, const char *what, double *seconds);

#endif
