"""More of `jax.scipy.special`: the scaled complementary error function `erfcx`,
Dawson's integral `dawsn`, Spence's function `spence` and the sine and cosine
integrals `sici` and the Fresnel integrals `fresnel` (real arguments); re-exported by `minijax.scipy.special`. Each is
one compiled program when called eagerly (`jitted_eagerly`): dozens of small ops.

The rational approximations are Cephes's (spence, sici) and Cody, Paciorek and
Thacher's (dawsn), the ones scipy and JAX evaluate; `erfcx` is its own: the product
exp(x^2) erfc(x) with x^2 carried in two parts, and Laplace's continued fraction where
that product would underflow."""
from __future__ import annotations

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..frontend.eager_jit import jitted_eagerly
from ..transforms.custom_derivatives import custom_jvp
from ..numpy._promotion import promote_args_inexact, dtype_of, like

__all__ = ["erfcx", "dawsn", "spence", "sici", "fresnel"]

_INV_SQRT_PI = 1 / np.sqrt(np.pi)


def _real_only(name, x):
    if dtype_of(x).kind == "c":
        raise ValueError(f"{name} does not support complex-valued inputs.")


def _in_float32_at_least(fn, x):
    """fn(x) computed in float32 when x is a narrower float (the coefficients and the
    splitting constant below need float32's range and precision)."""
    if dtype_of(x).itemsize < 4:
        return fn(x.astype(np.float32)).astype(dtype_of(x))
    return fn(x)


# -- erfcx -----------------------------------------------------------------------------

_FRACTION_FROM = 5.0      # erfc(5) ~ 1.5e-12: the product still has all its bits below
_FRACTION_TERMS = 24      # enough for float64 at x = 5; float32 needs about half


def _exp_of_square(x):
    """exp(x^2) with the rounding error of x * x put back: x is split into halves whose
    products are exact (Veltkamp), so exp(x^2) = exp(s) exp(e) with s = fl(x * x) and
    e the part of x^2 that s lost. Without it the relative error grows as x^2 eps."""
    splitter = like(x, 4097.0 if dtype_of(x) == np.float32 else 134217729.0)
    c = x * splitter
    high = c - (c - x)
    low = x - high
    s = x * x
    e = ((high * high - s) + 2 * high * low) + low * low
    e = jnp.where(jnp.isfinite(e), e, like(x, 0.0))    # x^2 overflows: exp(s) says so
    return jnp.exp(s) * jnp.exp(e)


def _fraction_tail(x):
    """r in erfcx(x) = 1 / (sqrt(pi) (x + r)): Laplace's continued fraction
    r = (1/2) / (x + 1 / (x + (3/2) / (x + ...))), evaluated from its far end."""
    r = jnp.zeros_like(x)
    for n in range(_FRACTION_TERMS, 0, -1):
        r = like(x, n / 2) / (x + r)
    return r


def _erfcx_value(x):
    large = x >= _FRACTION_FROM
    small_x = jnp.where(large, like(x, 0.0), x)
    large_x = jnp.where(large, x, like(x, _FRACTION_FROM))
    direct = _exp_of_square(small_x) * lax.erfc(small_x)
    fraction = like(x, _INV_SQRT_PI) / (large_x + _fraction_tail(large_x))
    return jnp.where(large, fraction, direct)


@custom_jvp
def _erfcx(x):
    return _in_float32_at_least(_erfcx_value, x)


def _erfcx_slope(x, ans):
    """erfcx'(x) = 2 x erfcx(x) - 2 / sqrt(pi). The two terms cancel as x grows; with
    erfcx = 1 / (sqrt(pi) (x + r)) the difference is -2 r erfcx(x), which does not."""
    large = x >= _FRACTION_FROM
    large_x = jnp.where(large, x, like(x, _FRACTION_FROM))
    identity = 2 * x * ans - like(x, 2 * _INV_SQRT_PI)
    return jnp.where(large, -2 * _fraction_tail(large_x) * ans, identity)


_erfcx.defjvps(lambda g, ans, x: g * _erfcx_slope(x, ans))


@jitted_eagerly()
def erfcx(x):
    """The scaled complementary error function exp(x^2) erfc(x), accurate where erfc
    underflows; of a complex x, the Faddeeva function w(ix), as JAX's."""
    x, = promote_args_inexact("erfcx", x)
    if dtype_of(x).kind == "c":
        from ._special_more import erfcx_complex
        return erfcx_complex(x)
    # strong, as JAX's (whose polynomial coefficients are strong arrays)
    return _erfcx(lax.convert_element_type(x, dtype_of(x), weak_type=False))


# -- dawsn -----------------------------------------------------------------------------

# Cody, Paciorek and Thacher (1970), highest degree first. On [0, 3.25):
# x P(x^2) / Q(x^2); beyond, (1 / 2x) (1 + t P(t) / Q(t)) with t = 1 / x^2, one pair of
# polynomials for [3.25, 6.25) and one for [6.25, inf).
_DAWSN_NEAR = ((1.13681498971755972054e-11, 8.49262267667473811108e-10,
                1.94434204175553054283e-8, 9.53151741254484363489e-7,
                3.07828309874913200438e-6, 3.52513368520288738649e-4,
                -8.50149846724410912031e-4, 4.22618223005546594270e-2,
                -9.17480371773452345351e-2, 9.99999999999999994612e-1),
               (2.40372073066762605484e-11, 1.48864681368493396752e-9,
                5.21265281010541664570e-8, 1.27258478273186970203e-6,
                2.32490249820789513991e-5, 3.25524741826057911661e-4,
                3.48805814657162590916e-3, 2.79448531198828973716e-2,
                1.58874241960120565368e-1, 5.74918629489320327824e-1,
                1.00000000000000000539e0))
_DAWSN_MIDDLE = ((5.08955156417900903354e-1, -2.44754418142697847934e-1,
                  9.41512335303534411857e-2, -2.18711255142039025206e-2,
                  3.66207612329569181322e-3, -4.23209114460388756528e-4,
                  3.59641304793896631888e-5, -2.14640351719968974225e-6,
                  9.10010780076391431042e-8, -2.40274520828250956942e-9,
                  3.59233385440928410398e-11),
                 (1.0, -6.31839869873368190192e-1, 2.36706788228248691528e-1,
                  -5.31806367003223277662e-2, 8.48041718586295374409e-3,
                  -9.47996768486665330168e-4, 7.81025592944552338085e-5,
                  -4.55875153252442634831e-6, 1.89100358111421846170e-7,
                  -4.91324691331920606875e-9, 7.18466403235734541950e-11))
_DAWSN_FAR = ((-5.90592860534773254987e-1, 6.29235242724368800674e-1,
               -1.72858975380388136411e-1, 1.64837047825189632310e-2,
               -4.86827613020462700845e-4),
              (1.0, -2.69820057197544900361e0, 1.73270799045947845857e0,
               -3.93708582281939493482e-1, 3.44278924041233391079e-2,
               -9.73655226040941223894e-4))


def _ratio(coefficients, t):
    numerator, denominator = (np.array(c, dtype_of(t)) for c in coefficients)
    return jnp.polyval(numerator, t) / jnp.polyval(denominator, t)


def _dawsn_value(x):
    ax = jnp.abs(x)
    near, far = ax < 3.25, ax >= 6.25
    # each piece sees 1 outside its interval: no overflow there to leak a NaN
    ax_near = jnp.where(near, ax, like(x, 1.0))
    ax_out = jnp.where(near, like(x, 1.0), ax)
    t = 1 / (ax_out * ax_out)
    tail = jnp.where(far, _ratio(_DAWSN_FAR, jnp.where(far, t, like(x, 1.0))),
                     _ratio(_DAWSN_MIDDLE, jnp.where(far, like(x, 1.0), t)))
    value = jnp.where(near, ax_near * _ratio(_DAWSN_NEAR, ax_near * ax_near),
                      (0.5 / ax_out) * (1 + t * tail))
    return jnp.sign(x) * value


@custom_jvp
def _dawsn(x):
    return _in_float32_at_least(_dawsn_value, x)


# D'(x) = 1 - 2 x D(x)
_dawsn.defjvps(lambda g, ans, x: g * (1 - 2 * x * ans))


@jitted_eagerly()
def dawsn(x):
    """Dawson's integral exp(-x^2) int_0^x exp(t^2) dt."""
    x, = promote_args_inexact("dawsn", x)
    _real_only("dawsn", x)
    return _dawsn(x)


# -- spence ----------------------------------------------------------------------------

_SPENCE = ((4.65128586073990045278E-5, 7.31589045238094711071E-3,
            1.33847639578309018650E-1, 8.79691311754530315341E-1,
            2.71149851196553469920E0, 4.25697156008121755724E0,
            3.29771340985225106936E0, 1.00000000000000000126E0),
           (6.90990488912553276999E-4, 2.54043763932544379113E-2,
            2.82974860602568089943E-1, 1.41172597751831069617E0,
            3.63800533345137075418E0, 5.03278880143316990390E0,
            3.54771340985225096217E0, 9.99999999999999998740E-1))


@jitted_eagerly()
def spence(x):
    """Spence's function int_1^x log(t) / (1 - t) dt for x >= 0 (NaN below, as JAX;
    scipy continues it to negative x). float32 and float64 only, as JAX."""
    x = jnp.asarray(x)
    if dtype_of(x) not in (np.float32, np.float64):
        raise TypeError(f"spence: x.dtype={dtype_of(x)} is not supported; pass float32 "
                        "or float64")
    pi2_6 = np.pi ** 2 / 6
    special = (x <= 0) | (x == 1)
    # Cephes: bring x into [1/2, 3/2] around 1 (w = x - 1), through the reflection
    # x -> 1 - x below 1/2 and the inversion x -> 1/x above 3/2.
    y = jnp.where(special, like(x, 2.0), x)
    y = jnp.where(y > 2, 1 / y, y)
    above, below = y > 1.5, y < 0.5
    w = jnp.select([above, below], [1 / y - 1, -y], y - 1)
    s = -w * _ratio(_SPENCE, w)
    s = jnp.where(below, pi2_6 - jnp.log(y) * jnp.log1p(-y) - s, s)
    s = jnp.where((x > 2) | above, -0.5 * jnp.log(y) ** 2 - s, s)
    edge = jnp.where(x == 1, like(x, 0.0), jnp.where(x == 0, like(x, pi2_6),
                                                     like(x, np.nan)))
    return jnp.where(special, edge, s)


# -- sici ------------------------------------------------------------------------------

# Cephes: on [0, 4] Si = x SN(x^2) / SD(x^2) and Ci = gamma + log x + x^2 CN / CD;
# beyond, Si = pi/2 - f cos x - g sin x and Ci = f sin x - g cos x with the auxiliary
# functions f = FN(z) / (x FD(z)), g = z GN(z) / GD(z), z = 1 / x^2, one fit on (4, 8)
# and one from 8 on.
_SI = ((-8.39167827910303881427E-11, 4.62591714427012837309E-8,
        -9.75759303843632795789E-6, 9.76945438170435310816E-4,
        -4.13470316229406538752E-2, 1.00000000000000000302E0),
       (2.03269266195951942049E-12, 1.27997891179943299903E-9,
        4.41827842801218905784E-7, 9.96412122043875552487E-5,
        1.42085239326149893930E-2, 9.99999999999999996984E-1))
_CI = ((2.02524002389102268789E-11, -1.35249504915790756375E-8,
        3.59325051419993077021E-6, -4.74007206873407909465E-4,
        2.89159652607555242092E-2, -1.00000000000000000080E0),
       (4.07746040061880559506E-12, 3.06780997581887812692E-9,
        1.23210355685883423679E-6, 3.17442024775032769882E-4,
        5.10028056236446052392E-2, 4.00000000000000000080E0))
_F4 = ((4.23612862892216586994E0, 5.45937717161812843388E0, 1.62083287701538329132E0,
        1.67006611831323023771E-1, 6.81020132472518137426E-3,
        1.08936580650328664411E-4, 5.48900223421373614008E-7),
       (1.0, 8.16496634205391016773E0, 7.30828822505564552187E0,
        1.86792257950184183883E0, 1.78792052963149907262E-1,
        7.01710668322789753610E-3, 1.10034357153915731354E-4,
        5.48900252756255700982E-7))
_G4 = ((8.71001698973114191777E-2, 6.11379109952219284151E-1, 3.97180296392337498885E-1,
        7.48527737628469092119E-2, 5.38868681462177273157E-3,
        1.61999794598934024525E-4, 1.97963874140963632189E-6,
        7.82579040744090311069E-9),
       (1.0, 1.64402202413355338886E0, 6.66296701268987968381E-1,
        9.88771761277688796203E-2, 6.22396345441768420760E-3,
        1.73221081474177119497E-4, 2.02659182086343991969E-6,
        7.82579218933534490868E-9))
_F8 = ((4.55880873470465315206E-1, 7.13715274100146711374E-1, 1.60300158222319456320E-1,
        1.16064229408124407915E-2, 3.49556442447859055605E-4,
        4.86215430826454749482E-6, 3.20092790091004902806E-8,
        9.41779576128512936592E-11, 9.70507110881952024631E-14),
       (1.0, 9.17463611873684053703E-1, 1.78685545332074536321E-1,
        1.22253594771971293032E-2, 3.58696481881851580297E-4,
        4.92435064317881464393E-6, 3.21956939101046018377E-8,
        9.43720590350276732376E-11, 9.70507110881952025725E-14))
_G8 = ((6.97359953443276214934E-1, 3.30410979305632063225E-1, 3.84878767649974295920E-2,
        1.71718239052347903558E-3, 3.48941165502279436777E-5,
        3.47131167084116673800E-7, 1.70404452782044526189E-9,
        3.85945925430276600453E-12, 3.14040098946363334640E-15),
       (1.0, 1.68548898811011640017E0, 4.87852258695304967486E-1,
        4.67913194259625806320E-2, 1.90284426674399523638E-3,
        3.68475504442561108162E-5, 3.57043223443740838771E-7,
        1.72693748966316146736E-9, 3.87830166023954706752E-12,
        3.14040098946363335242E-15))


def _sici_of_abs(ax):
    near, before_8 = ax <= 4, ax < 8
    x_near = jnp.where(near, ax, like(ax, 1.0))
    t = x_near * x_near
    si_near = jnp.where(ax == 0, like(ax, 0.0), x_near * _ratio(_SI, t))
    ci_near = jnp.where(ax == 0, like(ax, -np.inf),
                        np.euler_gamma + jnp.log(x_near) + t * _ratio(_CI, t))
    # From 1e9 on f ~ 1/x and g ~ 0 to working precision (and inf gives pi/2 and 0).
    huge = ax > 1e9
    x_far = jnp.where(near, like(ax, 8.0), ax)
    z = 1 / (x_far * x_far)
    f = jnp.where(before_8, _ratio(_F4, z), _ratio(_F8, z)) / x_far
    g = z * jnp.where(before_8, _ratio(_G4, z), _ratio(_G8, z))
    f, g = jnp.where(huge, 1 / x_far, f), jnp.where(huge, like(ax, 0.0), g)
    sin, cos = jnp.sin(x_far), jnp.cos(x_far)
    # f and g vanish at inf, where sin and cos are NaN
    f_sin = jnp.where(jnp.isinf(ax), like(ax, 0.0), f * sin)
    f_cos = jnp.where(jnp.isinf(ax), like(ax, 0.0), f * cos)
    g_sin = jnp.where(jnp.isinf(ax), like(ax, 0.0), g * sin)
    g_cos = jnp.where(jnp.isinf(ax), like(ax, 0.0), g * cos)
    si_far = np.pi / 2 - f_cos - g_sin
    ci_far = f_sin - g_cos
    return jnp.where(near, si_near, si_far), jnp.where(near, ci_near, ci_far)


@jitted_eagerly()
def sici(x):
    """The sine and cosine integrals (Si(x), Ci(x)): Si = int_0^x sin t / t dt, Ci =
    gamma + log x + int_0^x (cos t - 1) / t dt. For negative x, Si is odd and Ci is
    Ci(|x|) (the real part of scipy's), NaN at -inf, as JAX."""
    x, = promote_args_inexact("sici", x)
    if dtype_of(x).kind == "c":
        raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype "
                         f"{dtype_of(x)}.")
    return _sici(x)


@custom_jvp
def _sici(x):
    si, ci = _sici_of_abs(jnp.abs(x))
    return jnp.sign(x) * si, jnp.where(jnp.isneginf(x), like(x, np.nan), ci)


@_sici.defjvp
def _sici_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    # Si' = sin x / x (1 at 0), Ci' = cos x / x
    return _sici(x), (jnp.sinc(x / np.pi) * t, jnp.cos(x) / x * t)


# -- fresnel ---------------------------------------------------------------------------

# Cephes's single-precision fresnlf: S = x^3 SN(x^4), C = x CN(x^4) for x^2 < 2.5625;
# beyond, C = 1/2 + (f sin - g cos) / (pi x) and S = 1/2 - (f cos + g sin) / (pi x) of
# pi x^2 / 2, with f = 1 - u FN(u), g = GN(u) / t, t = pi x^2, u = 1 / t^2.
_FRESNEL_S = (1.647629463788700e-9, -1.522754752581096e-7, 8.424748808502400e-6,
              -3.120693124703272e-4, 7.244727626597022e-3, -9.228055941124598e-2,
              5.235987735681432e-1)
_FRESNEL_C = (1.416802502367354e-8, -1.157231412229871e-6, 5.387223446683264e-5,
              -1.604381798862293e-3, 2.818489036795073e-2, -2.467398198317899e-1,
              9.999999760004487e-1)
_FRESNEL_F = (-1.903009855649792e12, 1.355942388050252e11, -4.158143148511033e9,
              7.343848463587323e7, -8.732356681548485e5, 8.560515466275470e3,
              -1.032877601091159e2, 2.999401847870011e0)
_FRESNEL_G = (-1.860843997624650e11, 1.278350673393208e10, -3.779387713202229e8,
              6.492611570598858e6, -7.787789623358162e4, 8.602931494734327e2,
              -1.493439396592284e1, 9.999841934744914e-1)


def _sin_cos_half_pi_square(x):
    """sin and cos of pi x^2 / 2 for x >= 0, exact in the argument: x^2 / 2 is reduced
    mod 2 without forming x^2 (with s = x mod 2, x^2 / 2 = s (x - s/2) mod 2), then to
    the nearest quarter turn k / 2 and a remainder d in [-1/4, 1/4]."""
    s = jnp.fmod(x, 2.0)
    r = jnp.fmod(s * (x - s / 2), 2.0)
    k = jnp.round(2 * r)
    d = np.pi * (r - k / 2)
    sin_d, cos_d = jnp.sin(d), jnp.cos(d)
    quarter = [k == 1, k == 2, k == 3]
    sin = jnp.select(quarter, [cos_d, -sin_d, -cos_d], sin_d)
    cos = jnp.select(quarter, [-sin_d, -cos_d, sin_d], cos_d)
    return sin, cos


def _fresnel_value(x):
    ax = jnp.abs(x)
    small = ax * ax < 2.5625
    x_small = jnp.where(small, ax, like(x, 0.0))
    x2 = x_small * x_small
    s_small = x_small * x2 * jnp.polyval(np.array(_FRESNEL_S, np.float32), x2 * x2)
    c_small = x_small * jnp.polyval(np.array(_FRESNEL_C, np.float32), x2 * x2)
    x_other = jnp.where(small | jnp.isinf(ax), like(x, 2.0), ax)
    t = np.pi * x_other * x_other
    u = 1 / (t * t)
    f = 1 - u * jnp.polyval(np.array(_FRESNEL_F, np.float32), u)
    g = jnp.polyval(np.array(_FRESNEL_G, np.float32), u) / t
    sin, cos = _sin_cos_half_pi_square(x_other)
    pi_x = np.pi * x_other
    c_other = 0.5 + (f * sin - g * cos) / pi_x
    s_other = 0.5 - (f * cos + g * sin) / pi_x
    # from 36974 on, and at inf, both are 1/2 to float32's precision
    limit = ax > 36974.0
    s = jnp.where(small, s_small, jnp.where(limit, like(x, 0.5), s_other))
    c = jnp.where(small, c_small, jnp.where(limit, like(x, 0.5), c_other))
    negative = x < 0
    return jnp.where(negative, -s, s), jnp.where(negative, -c, c)


@custom_jvp
def _fresnel(x):
    s, c = _fresnel_value(x.astype(np.float32))
    return s.astype(dtype_of(x)), c.astype(dtype_of(x))


@_fresnel.defjvp
def _fresnel_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    # S' = sin(pi x^2 / 2), C' = cos(pi x^2 / 2)
    sin, cos = _sin_cos_half_pi_square(jnp.abs(x))
    return _fresnel(x), (sin * t, cos * t)


@jitted_eagerly()
def fresnel(x):
    """The Fresnel integrals (S(x), C(x)): the integrals from 0 to x of sin(pi t^2 / 2)
    and cos(pi t^2 / 2), with Cephes's single-precision fits (narrower floats are
    computed in float32; minijax has no float64)."""
    x, = promote_args_inexact("fresnel", x)
    if dtype_of(x).kind == "c":
        raise NotImplementedError("Support for complex-valued inputs is not implemented "
                                  "yet.")
    return _fresnel(lax.convert_element_type(x, dtype_of(x), weak_type=False))
