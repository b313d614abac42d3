"""Image statistics of the Mitsuba comparison (experiments/mitsuba), in the
Python 3 standard library only: the GPU machine has no numpy.

Images are PFM files (bin/render writes them, and Mitsuba's Bitmap writes
the same layout: little-endian float32 RGB, bottom row first); read_pfm
returns them top row first.

The comparison of two renderers A and B works on K independent renders per
side (different seeds, the same workload) and on each pixel's luminance
(Rec. 709 weights of linear RGB; one scalar per pixel, so that the pixels'
tests are independent, which R, G and B of one pixel are not):

  per-pixel test   the pooled two-sample t statistic of the pixel's K
                   render values on each side, with 2K - 2 degrees of
                   freedom (under the null hypothesis both sides draw from
                   one distribution, so the variances are equal; the pooled
                   equal-size t test is the one robust to non-normality).
                   A pixel whose renders are all identical on both sides
                   (the environment seen directly) is not tested; values
                   within FLOAT_TOL count as equal (float rounding).
  fraction failed  pixels with two-sided p < alpha, against alpha, with the
                   binomial tail probability of that many failures.
  chi-square       each p mapped to z = Phi^-1(1 - p/2); sum of z^2 over
                   the N tested pixels is chi-square with N degrees of
                   freedom under the null hypothesis (Wilson-Hilferty tail).
                   Reported per pixel and, decisive, over the means of 4x4
                   pixel blocks, whose values are near-normal even where
                   single pixels see one scattered sample in 16.
  image mean       the mean luminance of each render, the pooled t test on
                   the K + K values: the most sensitive test of a global
                   bias.
  relMSE           a side's relative mean squared error per render,
                   mean over pixels of var / (mean^2 + 0.01), var the
                   pixel's variance across renders: the error of one render
                   of an unbiased renderer. relMSE x time is the work to a
                   given error; the ratio of the two sides' is the ratio of
                   their times to equal error.
"""

import array
import math
import statistics

REC709 = (0.2126, 0.7152, 0.0722)
RELMSE_EPS = 0.01


class PfmError(ValueError):
    pass


def read_pfm(path):
    """(width, height, array('f') of RGB, top row first)."""
    with open(path, "rb") as f:
        data = f.read()
    tokens, pos = [], 0
    while len(tokens) < 4:
        while pos < len(data) and data[pos:pos + 1].isspace():
            pos += 1
        start = pos
        while pos < len(data) and not data[pos:pos + 1].isspace():
            pos += 1
        if start == pos:
            raise PfmError("%s: truncated PFM header" % path)
        tokens.append(data[start:pos])
    pos += 1  # the single whitespace byte after the scale
    if tokens[0] != b"PF":
        raise PfmError("%s: not a colour PFM (%r)" % (path, tokens[0]))
    try:
        w, h, scale = int(tokens[1]), int(tokens[2]), float(tokens[3])
    except ValueError:
        raise PfmError("%s: bad PFM header" % path) from None
    n = w * h * 3
    if w <= 0 or h <= 0 or len(data) - pos != 4 * n or scale == 0:
        raise PfmError("%s: %dx%d PFM with %d data bytes" % (path, w, h, len(data) - pos))
    raw = array.array("f")
    raw.frombytes(data[pos:])
    if (scale > 0) != (array.array("H", [1]).tobytes() == b"\x00\x01"):
        raw.byteswap()
    out = array.array("f", bytes(4 * n))
    row = 3 * w
    for y in range(h):
        src = (h - 1 - y) * row
        out[y * row:(y + 1) * row] = raw[src:src + row]
    return w, h, out


def luminance(rgb):
    """Per-pixel luminance of an RGB array, as array('d')."""
    r, g, b = REC709
    return array.array("d", (r * rgb[i] + g * rgb[i + 1] + b * rgb[i + 2] for i in range(0, len(rgb), 3)))


def channel_means(rgb):
    n = len(rgb) // 3
    return [math.fsum(rgb[c::3]) / n for c in range(3)]


def pixel_moments(images):
    """(mean, unbiased variance) per pixel over K images (arrays of one
    value per pixel), both array('d')."""
    k = len(images)
    n = len(images[0])
    mean = array.array("d", bytes(8 * n))
    var = array.array("d", bytes(8 * n))
    for i in range(n):
        vals = [img[i] for img in images]
        m = math.fsum(vals) / k
        mean[i] = m
        var[i] = math.fsum((v - m) * (v - m) for v in vals) / (k - 1) if k > 1 else 0.0
    return mean, var


# ------------------------------------------------------------ distributions

def _betacf(a, b, x):
    """Continued fraction of the regularized incomplete beta function
    (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc(a, b, x):
    """Regularized incomplete beta function I_x(a, b), 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t, nu):
    """P(|T| >= |t|) for Student's t with nu degrees of freedom."""
    if not math.isfinite(t):
        return 0.0
    return betainc(0.5 * nu, 0.5, nu / (nu + t * t))


_NORMAL = statistics.NormalDist()


def normal_sf(z):
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def z_of_two_sided_p(p):
    """|z| whose two-sided normal tail is p (p clamped to [1e-300, 1])."""
    p = min(1.0, max(p, 1e-300))
    if p >= 1.0:
        return 0.0
    if p > 1e-15:
        return _NORMAL.inv_cdf(1.0 - 0.5 * p)
    # far tail: the asymptotic inverse of the Mills ratio, refined by Newton
    z = math.sqrt(-2.0 * math.log(0.5 * p))
    for _ in range(50):
        f = math.log(0.5 * math.erfc(z / math.sqrt(2.0)) + 1e-320) - math.log(0.5 * p)
        dens = math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
        step = f / (-dens / max(0.5 * math.erfc(z / math.sqrt(2.0)), 1e-320))
        z -= step
        if abs(step) < 1e-10:
            break
    return z


def chi2_sf(x, k):
    """P(X >= x) for chi-square with k degrees of freedom: Wilson-Hilferty
    (accurate to a few per cent of the tail for k >= 30; k here is the
    number of pixels)."""
    if k <= 0:
        return 1.0
    c = 2.0 / (9.0 * k)
    z = ((x / k) ** (1.0 / 3.0) - (1.0 - c)) / math.sqrt(c)
    return normal_sf(z)


def binomial_upper_p(k, n, p):
    """P(X >= k) for X ~ Binomial(n, p): normal approximation with
    continuity correction (n p is in the hundreds here)."""
    if n == 0:
        return 1.0
    sd = math.sqrt(n * p * (1.0 - p))
    if sd == 0:
        return 1.0 if k <= n * p else 0.0
    return normal_sf((k - 0.5 - n * p) / sd)


# Both renderers accumulate in float32: where vptune's analog Woodcock
# tracking returns exactly 1 (no real collision), Mitsuba's null-collision
# weights sigma_n / sigma_maj x 1 / P(null) leave 1 +- a few ulps. Values
# within FLOAT_TOL (relative) of each other count as equal, and a pixel's
# render-to-render standard deviation is at least FLOAT_TOL x its value:
# float rounding, far below the Monte Carlo noise of any pixel that varies.
FLOAT_TOL = 1e-5


def pooled_t(ma, va, mb, vb, k):
    """The pooled two-sample t of equal sizes k, and its degrees of freedom;
    None when the pixel is constant on both sides up to float rounding."""
    s2 = 0.5 * (va + vb)
    floor = FLOAT_TOL * max(abs(ma), abs(mb))
    if s2 <= floor * floor:
        if abs(ma - mb) <= floor:
            return None
        s2 = floor * floor
    return (ma - mb) / math.sqrt(2.0 * s2 / k), 2 * k - 2


# ------------------------------------------------------------ the comparison

def block_means(lum, width, b):
    """Means of b x b pixel blocks (whole blocks only), row-major."""
    height = len(lum) // width
    bw, bh = width // b, height // b
    out = array.array("d", bytes(8 * bw * bh))
    inv = 1.0 / (b * b)
    for by in range(bh):
        for bx in range(bw):
            s = 0.0
            for y in range(by * b, by * b + b):
                row = y * width + bx * b
                s += math.fsum(lum[row:row + b])
            out[by * bw + bx] = s * inv
    return out


def chi2_test(lum_a, lum_b):
    """(sum of z^2, tested count) of the pooled t tests of the values of
    two lists of K images; values constant on both sides are skipped."""
    k = len(lum_a)
    ma, va = pixel_moments(lum_a)
    mb, vb = pixel_moments(lum_b)
    chi2, tested = 0.0, 0
    for i in range(len(ma)):
        if va[i] == 0.0 and vb[i] == 0.0:
            continue
        r = pooled_t(ma[i], va[i], mb[i], vb[i], k)
        if r is None:
            continue
        p = t_two_sided_p(*r)
        z = z_of_two_sided_p(p)
        chi2 += z * z
        tested += 1
    return chi2, tested


def relmse(mean, var, eps=RELMSE_EPS):
    """Mean over pixels of var / (mean^2 + eps)."""
    return math.fsum(v / (m * m + eps) for m, v in zip(mean, var)) / len(mean)


def compare(lum_a, lum_b, width, alpha=0.01, block=4):
    """The statistics of the module docstring for two lists of K per-pixel
    luminance images (same K, same size, `width` pixels a row). Returns a
    dict (JSON-ready)."""
    k = len(lum_a)
    if k != len(lum_b) or k < 2:
        raise ValueError("need the same number (at least 2) of renders per side")
    n = len(lum_a[0])
    ma, va = pixel_moments(lum_a)
    mb, vb = pixel_moments(lum_b)
    tested = failed = constant_equal = constant_differ = 0
    chi2 = 0.0
    worst = (1.0, -1)
    for i in range(n):
        if va[i] == 0.0 and vb[i] == 0.0:
            # no variance to test against: equal (up to float rounding), or
            # different by the chance of discrete samples (a pixel that saw
            # 1 of 16 samples scatter in every render on one side)
            if abs(ma[i] - mb[i]) <= FLOAT_TOL * max(abs(ma[i]), abs(mb[i])):
                constant_equal += 1
            else:
                constant_differ += 1
            continue
        r = pooled_t(ma[i], va[i], mb[i], vb[i], k)
        if r is None:
            constant_equal += 1
            continue
        p = t_two_sided_p(*r)
        tested += 1
        if p < alpha:
            failed += 1
        z = z_of_two_sided_p(p)
        chi2 += z * z
        if p < worst[0]:
            worst = (p, i)
    bchi2, btested = chi2_test([block_means(x, width, block) for x in lum_a],
                               [block_means(x, width, block) for x in lum_b])
    img_a = [math.fsum(x) / n for x in lum_a]
    img_b = [math.fsum(x) / n for x in lum_b]
    mean_a, mean_b = statistics.fmean(img_a), statistics.fmean(img_b)
    var_a, var_b = statistics.variance(img_a), statistics.variance(img_b)
    r = pooled_t(mean_a, var_a, mean_b, var_b, k)
    mean_t, mean_p = (r[0], t_two_sided_p(*r)) if r else (0.0, 1.0)
    between = math.fsum((a - b) * (a - b) / (b * b + RELMSE_EPS) for a, b in zip(ma, mb)) / n
    expected = math.fsum((x + y) / k / (b * b + RELMSE_EPS) for x, y, b in zip(va, vb, mb)) / n
    return {
        "renders_per_side": k,
        "pixels": n,
        "alpha": alpha,
        "test": "pooled two-sample t on each pixel's luminance over K renders per side, %d dof" % (2 * k - 2),
        "pixels_tested": tested,
        "pixels_constant_equal": constant_equal,
        "pixels_constant_different": constant_differ,
        "pixels_failed": failed,
        "fraction_failed": failed / tested if tested else 0.0,
        "binomial_p": binomial_upper_p(failed, tested, alpha),
        "chi2": chi2,
        "chi2_dof": tested,
        "chi2_p": chi2_sf(chi2, tested),
        "block": block,
        "block_chi2": bchi2,
        "block_dof": btested,
        "block_chi2_p": chi2_sf(bchi2, btested),
        "worst_pixel": {"x": worst[1] % width, "y": worst[1] // width, "p": worst[0]} if worst[1] >= 0 else None,
        "image_mean": {"a": mean_a, "b": mean_b, "rel_diff": (mean_a - mean_b) / mean_b if mean_b else 0.0,
                       "t": mean_t, "p": mean_p},
        "relmse_between_means": between,
        "relmse_between_expected": expected,
        "relmse_a": relmse(ma, va),
        "relmse_b": relmse(mb, vb),
    }


def verdict(c, p_min=1e-3):
    """Whether the images agree: neither the block chi-square nor the
    image-mean test rejects at p_min. (The per-pixel chi-square is reported
    but not decisive: pixels that see 0 or 1 scattering sample of 16 are
    discrete enough to skew it even between two sets of one renderer's
    seeds; the block means are not.)"""
    return c["block_chi2_p"] >= p_min and c["image_mean"]["p"] >= p_min
