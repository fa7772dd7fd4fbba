"""`bessel_jn`, `wofz`, `owens_t` and `sph_harm_y` of `jax.scipy.special`, with
JAX's algorithms, re-exported by `minijax.scipy.special`:

* `bessel_jn`: J_0 .. J_v by Miller's backward recurrence from order `n_iter`,
  normalised by J_0 + 2 (J_2 + J_4 + ...) = 1 (Zhang and Jin's BJNDD);
* `wofz`: the Faddeeva function by Weideman's 32-term rational approximation in the
  upper half plane, and w(-z) = 2 exp(-z^2) - w(z) below it;
* `owens_t`: Owen's T by a 13-point Gauss quadrature of its integral (Patefield and
  Tandy's method T5) for |a| <= 1, reflected through 1/|a| beyond;
* `sph_harm_y`: orthonormal spherical harmonics from the normalized associated
  Legendre functions, built by the three-term recurrence one superdiagonal (degree
  minus order) at a time."""
from __future__ import annotations

import operator

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..frontend.eager_jit import jitted_eagerly
from ..transforms.custom_derivatives import custom_jvp
from ..numpy._promotion import promote_args_inexact, dtype_of, like

__all__ = ["bessel_jn", "wofz", "owens_t", "sph_harm_y"]


# -- bessel_jn -------------------------------------------------------------------------

@jitted_eagerly("v", "n_iter")
def bessel_jn(z, *, v, n_iter=50):
    """J_0(z) .. J_v(z), Bessel functions of the first kind of integer order, stacked
    on a new first axis (shape (v + 1, *z.shape)), for real z: the recurrence
    f_k = 2 (k + 1) f_{k+1} / z - f_{k+2} run down from k = n_iter (use more for
    large |z|) and divided by f_0 + 2 (f_2 + f_4 + ...)."""
    z, = promote_args_inexact("bessel_jn", z)
    if dtype_of(z).kind == "c":
        raise ValueError("complex input not supported.")
    for static in (v, n_iter):
        try:
            hash(static)
        except TypeError:
            raise ValueError("Non-hashable static arguments are not supported: bessel_jn's "
                             f"v and n_iter are static Python integers, got {static!r}") \
                from None
    v = operator.index(v)
    n_iter = int(n_iter)

    def down(carry, k):
        f0, f1, even_sum = carry
        f = 2.0 * (k + 1.0) * f1 / z - f0
        even_sum = jnp.where(k % 2 == 0, even_sum + 2.0 * f, even_sum)
        return (f1, f, even_sum), f

    start = (jnp.zeros_like(z), jnp.full_like(z, 1e-16), jnp.zeros_like(z))
    (_, _, even_sum), f = lax.scan(down, start, jnp.arange(n_iter + 1, dtype=dtype_of(z)),
                                   reverse=True)
    return f[:v + 1] / (even_sum - f[0])


# -- wofz ------------------------------------------------------------------------------

# Weideman (1994), N = 32: w(z) = 2 p(Z) / (L - iz)^2 + 1 / (sqrt(pi) (L - iz)) with
# Z = (L + iz) / (L - iz), for Im z >= 0; p's coefficients, highest degree first.
_WEIDEMAN_L = 4.7568284600108841
_WEIDEMAN = np.array([
    -1.3034426067909105e-12, 3.7411838373738471e-12, 8.030427700497756e-12,
    -2.1543593557490879e-11, -5.5442449963237932e-11, 1.165824698850374e-10,
    4.1537441121999766e-10, -5.2310202114920615e-10, -3.2080151339721323e-09,
    8.1248864216535907e-10, 2.3797556530014025e-08, 2.2930438438915445e-08,
    -1.4813078929137642e-07, -4.1840763750512053e-07, 4.2558331397138446e-07,
    4.4015317312832251e-06, 6.8210319443575151e-06, -2.1409619201999998e-05,
    -0.00013075449254579421, -0.00024532980270038237, 0.00039259136070109705,
    0.0045195411053493093, 0.019006155784845501, 0.057304403529837282,
    0.14060716226893755, 0.29544451071508743, 0.54601397206393376, 0.9019254893648001,
    1.3455441692345449, 1.8256696296324815, 2.2635372999002676, 2.5722534081245696])


def _wofz_upper_half(z):
    re = lax.real(z)
    big_l = lax.complex(like(re, _WEIDEMAN_L), like(re, 0.0))
    iz = lax.complex(lax.neg(lax.imag(z)), re)
    denominator = big_l - iz
    p = jnp.polyval(jnp.asarray(_WEIDEMAN, dtype=dtype_of(z)), (big_l + iz) / denominator)
    inv_sqrt_pi = lax.complex(like(re, 1 / np.sqrt(np.pi)), like(re, 0.0))
    return 2 * p / (denominator * denominator) + inv_sqrt_pi / denominator


@custom_jvp
def _wofz(z):
    upper = lax.ge(lax.imag(z), like(lax.real(z), 0.0))
    w_upper = _wofz_upper_half(lax.select(upper, z, lax.neg(z)))
    return lax.select(upper, w_upper, 2 * lax.exp(lax.neg(z * z)) - w_upper)


# w'(z) = -2 z w(z) + 2i / sqrt(pi)
_wofz.defjvps(lambda g, ans, z: g * (lax.neg(2 * z * ans) + lax.complex(
    like(lax.real(z), 0.0), like(lax.real(z), 2 / np.sqrt(np.pi)))))


def _to_complex(name, z):
    z, = promote_args_inexact(name, z)
    if dtype_of(z).kind != "c":
        target = np.complex128 if dtype_of(z) == np.float64 else np.complex64
        weak = getattr(z, "weak_type", False)
        z = lax.convert_element_type(z, target, weak_type=weak)
    return z


def wofz(z):
    """The Faddeeva function w(z) = exp(-z^2) erfc(-iz) (complex; real z is taken as
    complex)."""
    return _wofz(_to_complex("wofz", z))


def erfcx_complex(x):
    """erfcx of a complex x: w(ix)."""
    return _wofz(lax.complex(lax.neg(lax.imag(x)), lax.real(x)))


# -- owens_t ---------------------------------------------------------------------------

# T(h, a) ~ a sum_i w_i exp(-h^2 (1 + a^2 t_i) / 2) / (1 + a^2 t_i) for |a| <= 1: the
# nodes t_i and weights w_i (which carry the 1 / 2pi) of Patefield and Tandy's T5.
_OWENS_NODES = np.array([
    0.0035082039676451715, 0.031279042338030754, 0.085266826283219451,
    0.16245071730812277, 0.25851196049125435, 0.36807553840697534, 0.48501092905604697,
    0.60277514152618577, 0.71477884217753227, 0.81475510988760099, 0.89711029755948966,
    0.95723808085944262, 0.99178832974629704])
_OWENS_WEIGHTS = np.array([
    0.018831438115323503, 0.018567086243977649, 0.018042093461223386,
    0.017263829606398753, 0.016243219975989857, 0.014994592034116705,
    0.013535474469662088, 0.011886351605820165, 0.010070377242777432,
    0.0081130545742299587, 0.0060419009528470239, 0.0038862217010742058,
    0.0016793031084546090])


def _owens_quadrature(h, a):
    nodes = jnp.asarray(_OWENS_NODES, dtype=dtype_of(a))
    r = jnp.square(a)[..., None] * nodes
    integrand = jnp.exp(-0.5 * jnp.square(h)[..., None] * (1. + r)) / (1. + r)
    return a * (integrand @ jnp.asarray(_OWENS_WEIGHTS, dtype=dtype_of(a)))


@custom_jvp
def _owens_t(h, a):
    h, abs_a = jnp.abs(h), jnp.abs(a)
    root_2 = like(h, np.sqrt(2))
    h_normed = h / root_2
    small = abs_a <= 1.
    # T(h, a) = (ndtr(h) + ndtr(ah)) / 2 - ndtr(h) ndtr(ah) - T(ah, 1/a): only |a| <= 1
    # is integrated
    a_in = jnp.where(small, abs_a, jnp.reciprocal(abs_a))
    h_in = jnp.where(small, h, abs_a * h)
    result = _owens_quadrature(h_in, a_in)
    result = jnp.where(h_in == 0., jnp.arctan(a_in) / (2 * np.pi), result)
    result = jnp.where(a_in == 1., 0.125 * lax.erfc(-h_in / root_2) * lax.erfc(h_in / root_2),
                       result)
    tail_h, tail_ah = lax.erfc(h_normed), lax.erfc(abs_a * h_normed)
    reflected = jnp.where(
        abs_a * h <= 0.67,
        0.25 - 0.25 * lax.erf(h_normed) * lax.erf(abs_a * h_normed) - result,
        0.25 * (tail_h + tail_ah - tail_h * tail_ah) - result)
    result = lax.sign(a) * jnp.where(abs_a > 1., reflected, result)
    return jnp.where(jnp.isnan(a) | jnp.isnan(h), jnp.full_like(result, np.nan), result)


@_owens_t.defjvp
def _owens_t_jvp(primals, tangents):
    (h, a), (dh, da) = primals, tangents
    result = _owens_t(h, a)
    root_2 = like(h, np.sqrt(2))
    # dT/dh = -exp(-h^2/2) erf(ah / sqrt 2) / (2 sqrt(2 pi)),
    # dT/da = exp(-(1 + a^2) h^2 / 2) / (2 pi (1 + a^2))
    d_h = (-lax.exp(-0.5 * lax.square(h)) * lax.erf(a * h / root_2)
           / (2. * like(h, np.sqrt(2. * np.pi))))
    d_a = (lax.exp(-0.5 * (lax.square(a) + 1.) * lax.square(h))
           / (2. * np.pi * (lax.square(a) + 1.)))
    return result, (d_h * dh + d_a * da).astype(dtype_of(result))


def owens_t(h, a):
    """Owen's T function, (1 / 2pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx,
    for real h and a."""
    h, a = promote_args_inexact("owens_t", h, a)
    return _owens_t(h, a)


# -- sph_harm_y ------------------------------------------------------------------------

def _legendre_recurrence_coefficients(l_max, dtype):
    """For step i (degree minus order), the (order, degree) matrices of the normalized
    recurrence P_l^m = d0 x P_{l-1}^m - d1 P_{l-2}^m, zero off the i-th superdiagonal,
    in `dtype` arithmetic (each quantity rounded as a float computation of it would)."""
    m, l = np.meshgrid(np.arange(l_max + 1, dtype=dtype), np.arange(l_max + 1, dtype=dtype),
                       indexing="ij")
    one, two, three, four = (dtype(v) for v in (1, 2, 3, 4))
    with np.errstate(divide="ignore", invalid="ignore"):
        l2, m2, twice_l, lm1_2 = l * l, m * m, two * l, (l - one) * (l - one)
        d0 = np.sqrt((four * l2 - one) / (l2 - m2))
        d1 = np.sqrt(((twice_l + one) * (lm1_2 - m2)) / ((twice_l - three) * (l2 - m2)))
    step = np.arange(l_max + 1)[:, None, None]
    on_diagonal = (step + np.arange(l_max + 1)[None, :, None]
                   == np.arange(l_max + 1)[None, None, :])
    d0 = np.where(on_diagonal & (l > m + 0.5)[None], d0[None], 0).astype(dtype)
    d1 = np.where(on_diagonal & (l > m + 1.5)[None], d1[None], 0).astype(dtype)
    return d0, d1


def _normalized_legendre(l_max, x):
    """(order, degree, point) array of the orthonormal associated Legendre functions
    at x = cos(theta), zero where the order exceeds the degree."""
    dtype = dtype_of(x)
    count = jnp.shape(x)[0]
    p = jnp.zeros((l_max + 1, l_max + 1, count), dtype)
    a_idx = jnp.arange(1, l_max + 1, dtype=dtype)
    b_idx = jnp.arange(l_max, dtype=dtype)
    start = 0.5 / jnp.sqrt(like(x, np.pi))                   # P_0^0 = 1 / sqrt(4 pi)
    f_a = jnp.cumprod(-1 * jnp.sqrt(1.0 + 0.5 / a_idx))
    f_b = jnp.sqrt(2.0 * b_idx + 3.0)
    p = p.at[0, 0].set(start)
    sines = jnp.cumprod(jnp.broadcast_to(jnp.sqrt(1.0 - x * x), (l_max, count)), axis=0)
    diagonal = np.arange(1, l_max + 1)
    p = p.at[diagonal, diagonal].set(start * (f_a[:, None] * sines))
    below = np.arange(l_max)
    p = p.at[below, below + 1].set((f_b[:, None] * x[None, :]) * p[below, below])
    if l_max > 1:
        d0, d1 = _legendre_recurrence_coefficients(l_max, np.dtype(dtype).type)
        d0, d1 = jnp.asarray(d0), jnp.asarray(d1)

        def step(i, p):
            h = (d0[i][..., None] * (jnp.roll(p, 1, axis=1) * x)
                 - d1[i][..., None] * jnp.roll(p, 2, axis=1))
            return p + h
        p = lax.fori_loop(2, l_max + 1, step, p)
    return p


@jitted_eagerly("n_max")
def _sph_harm(n, m, theta, phi, n_max):
    legendre = _normalized_legendre(n_max, jnp.cos(theta))
    value = legendre.at[abs(m), n, jnp.arange(len(n))].get(mode="clip")
    angle = abs(m) * phi
    turn = lax.complex(jnp.cos(angle), jnp.sin(angle))
    harmonics = lax.complex(value * jnp.real(turn), value * jnp.imag(turn))
    # Y_n^-m = (-1)^m conj(Y_n^m)
    return jnp.where(m < 0, (-1.0) ** abs(m) * jnp.conjugate(harmonics), harmonics)


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """The orthonormal spherical harmonics Y_n^m(theta, phi) (theta the colatitude,
    phi the longitude) of degree n and order m, with |m| <= n, elementwise over 1-D n,
    m and theta. `n_max` (a static int, required under transformations) bounds n;
    larger n are clipped to it, as in JAX. `diff_n` is not supported."""
    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
    if jnp.isscalar(theta):
        theta = jnp.array([theta])
    if n_max is None:
        n_max = np.max(n)
    try:
        n_max = int(n_max)
    except TypeError as error:
        raise type(error)(
            "The `n_max` argument of `jax.scipy.special.sph_harm_y` must be statically "
            "specified to use `sph_harm_y` within JAX transformations.") from error
    return _sph_harm(n, m, theta, phi, n_max)
