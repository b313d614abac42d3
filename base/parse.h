/* Strict parsing of numbers from flags, config strings and file headers.
 *
 * Each function accepts the whole string or nothing: leading/trailing spaces,
 * trailing garbage, empty strings, out-of-range values, NaN and infinities are
 * rejected with a message naming `what` (e.g. "--spp") and the allowed range. */
#ifndef VPT_BASE_PARSE_H
#define VPT_BASE_PARSE_H

#include <stddef.h>
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

/* The inverse of vpt_parse_double for a finite v: the fewest significant
 * digits that parse back to v exactly, without an exponent where plain
 * digits do ("50", "0.877", not "5e+01", "0.87699999999999996"), into buf
 * (32 bytes are always enough). */
void vpt_format_double(double v, char *buf, size_t size);
/* v[0..3) as vpt_format_double writes each, "x,y,z", or "x" when the three
 * are equal (96 bytes are always enough). */
void vpt_format_vec3_short(const double v[3], char *buf, size_t size);

#endif
