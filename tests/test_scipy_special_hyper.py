"""The scipy.special functions added in round 15 against `jax.scipy.special`:
`hyp1f1`, `hyp2f1`, `bessel_jn`, `wofz` (and complex `erfcx`), `owens_t`, `sph_harm_y`
and `log_ndtr(series_order=)`. minijax evaluates JAX's algorithms with the same
operations in the same order, so values agree to a few float32 ulps (TIGHT); gradients
go through the same rules (series in the parameters), so they get a little more room.

JAX compiles each hypergeometric call site for seconds (its series run in while loops
over digamma and gamma), so each function is one call site over per-element
parameters that reach all of its branches, values and gradient in one program;
weak types are compared on the traced programs, which compiles nothing."""
from __future__ import annotations

import jax
import numpy as np
import pytest

import minijax
from tests.library_helpers import check_everywhere
from tests.numpy_helpers import assert_avals_match
from tests.test_divergences import pins

TIGHT = dict(rtol=4e-6, atol=1e-7)            # a few float32 ulps
GRADS = dict(grad_rtol=2e-5, grad_atol=1e-6)

# (a, b, x) per element: 1F1's Taylor series (|x| < 100) with both signs of x and
# small and large parameters, its asymptotic series (|x| >= 100), and the special
# cases a = 0 (1, also with b = 0, where scipy gives NaN), a = b (e^x), b = 0 (inf)
HYP1F1 = np.array([[0.7, 1.3, -3.0], [0.7, 1.3, 0.3], [2.0, 4.5, 7.0], [-0.4, 2.5, 1.5],
                   [1.5, 0.6, 30.0], [0.7, 1.3, 120.0], [0.0, 2.0, 1.0], [0.0, 0.0, 1.0],
                   [1.5, 1.5, 1.0], [2.0, 0.0, 1.0]], np.float32)
# (a, b, c, x): the Taylor series, past x = 0.9 the digamma transformation (c - a - b
# a non-negative integer, then a negative one) and Euler's transformation (c - a - b
# <= -1), a terminating series (a = -3), x = 0, Gauss's theorem at x = 1, and inf at
# x = 1 with c - a - b <= 0, beyond 1, and at a pole of c
HYP2F1 = np.array([[0.5, 1.25, 2.0, -0.7], [0.5, 1.25, 2.0, 0.6], [1.0, 1.5, 2.5, 0.93],
                   [0.5, 0.5, 3.0, 0.97], [1.5, 2.0, 1.5, 0.95], [1.5, 1.25, 1.25, 0.97],
                   [-3.0, 1.5, 2.5, 0.4], [0.3, 0.8, 3.0, 0.4], [0.5, 1.25, 2.0, 0.0],
                   [0.5, 0.5, 3.0, 1.0], [1.0, 1.0, 2.0, 1.0], [0.5, 1.25, 2.0, 1.5],
                   [0.5, 1.25, -2.0, 0.5]], np.float32)


def test_hyp1f1():
    # rows are elements: vmap maps over them (the masked series loops, batched)
    check_everywhere(lambda mod, p: mod.scipy.special.hyp1f1(*p.T), HYP1F1, **TIGHT,
                     **GRADS)


def test_hyp2f1():
    # eager calls run the program jit compiles (jitted_eagerly), as test_hyp1f1 checks:
    # not compiled a third time here
    check_everywhere(lambda mod, p: mod.scipy.special.hyp2f1(*p.T), HYP2F1, vmap=False,
                     eager=False, **TIGHT, **GRADS)


def others(mod, x):
    s = mod.scipy.special
    return dict(jn=s.bessel_jn(x, v=3), owens=s.owens_t(x - 2.0, x[::-1] - 1.5))


def test_bessel_jn_and_owens_t():
    # owens_t: h = 0, a = +-1 exactly, |a| > 1 with a h on both sides of 0.67, and NaN
    x = np.array([0.1, 1.0, 2.0, 2.5, 3.5, 5.0, 7.5, 10.0, 20.0, np.nan], np.float32)
    check_everywhere(others, x[:9], vmap=False, **TIGHT, **GRADS)

    def elementwise(mod, x):      # the per-element functions under vmap, and NaN
        s = mod.scipy.special
        return dict(jn=s.bessel_jn(x, v=12, n_iter=20), owens=s.owens_t(x - 2.0, 0.7),
                    owens_one=s.owens_t(x, 1.0))
    check_everywhere(elementwise, x, grad=False, **TIGHT)


def test_sph_harm_y():
    n = np.array([0, 1, 2, 3, 4, 4, 2, 1, 6])
    m = np.array([0, -1, 2, -3, 1, -4, 0, 1, 5])
    theta = np.array([0.0, 0.3, 1.0, 1.6, 2.0, 2.8, np.pi, 0.5, 1.2], np.float32)

    # the gradient (through plain operations on both sides) costs JAX seconds to compile
    def fn(mod, phi):
        s = mod.scipy.special
        return dict(arrays=s.sph_harm_y(n, m, theta, phi),
                    clipped=s.sph_harm_y(n, m, theta, phi, n_max=3),   # n above 3 -> 3
                    scalar_theta=s.sph_harm_y(n[:4], m[:4], 0.7, phi[:4]))
    check_everywhere(fn, np.linspace(0, 2 * np.pi, 9).astype(np.float32), grad=False,
                     vmap=False, **TIGHT)


def test_faddeeva():
    z = np.array([0.5 + 0.5j, -1 + 2j, 3 - 1j, -2 - 0.3j, 0j, 5.0 + 0j, 0.1 - 4j],
                 np.complex64)
    # a real z is taken as complex
    check_everywhere(lambda mod, z: dict(wofz=mod.scipy.special.wofz(z),
                                         erfcx=mod.scipy.special.erfcx(z),
                                         real=mod.scipy.special.wofz(z.real)),
                     z, grad=False, **TIGHT)
    # the derivative -2 z w + 2i / sqrt(pi), along Re z
    check_everywhere(lambda mod, x: mod.scipy.special.wofz(x + 0.5j).imag,
                     np.array([-2.0, 0.3, 1.5], np.float32), vmap=False, **TIGHT, **GRADS)


def test_log_ndtr_series_order():
    x = np.array([-40.0, -12.0, -10.5, -3.0, 1.0, 8.0], np.float32)
    check_everywhere(lambda mod, x: {order: mod.scipy.special.log_ndtr(x, order)
                                     for order in (0, 7, 30)},
                     x, vmap=False, **TIGHT, **GRADS)


def test_dtypes_and_weak_types():
    def programs(mod):
        s = mod.scipy.special
        return (s.hyp1f1(1, 2.0, 0.5), s.hyp1f1(np.float32(1), 2.0, 0.5),
                s.hyp2f1(0.5, 1, 2, 0.3), s.hyp2f1(0.5, 1, 2, np.float16(0.3)),
                s.bessel_jn(2.0, v=2), s.bessel_jn(np.int32(2), v=2),
                s.owens_t(0.5, 2), s.owens_t(np.float32(0.5), 2),
                s.log_ndtr(-11.0, series_order=2), s.wofz(1.5), s.wofz(1 + 1j),
                s.wofz(np.float16(1)), s.erfcx(np.complex64(1j)),
                s.sph_harm_y(np.array([2]), np.array([1]), 0.7, 1.1))
    assert_avals_match(minijax.make_jaxpr(lambda: programs(minijax))().out_avals,
                       jax.make_jaxpr(lambda: programs(jax))().out_avals)


def test_static_arguments():
    n, m = np.array([1, 3, 5]), np.array([1, -2, 0])
    theta, phi = np.array([0.4, 1.2, 2.0], np.float32), np.float32(0.9)
    for mod in (minijax, jax):
        s = mod.scipy.special
        with pytest.raises(TypeError):        # n_max from a traced n: not static
            mod.jit(lambda n: s.sph_harm_y(n, m, theta, phi))(n)
        with pytest.raises(ValueError, match="Non-hashable static arguments"):
            mod.jit(lambda v: s.bessel_jn(1.0, v=v))(2)
    ours = minijax.jit(lambda n: minijax.scipy.special.sph_harm_y(n, m, theta, phi,
                                                                  n_max=5))(n)
    theirs = jax.jit(lambda n: jax.scipy.special.sph_harm_y(n, m, theta, phi, n_max=5))(n)
    np.testing.assert_allclose(ours, theirs, **TIGHT)


def test_errors_as_in_jax():
    for mod in (minijax, jax):
        s = mod.scipy.special
        with pytest.raises(ValueError, match="complex"):
            s.hyp1f1(1.0, 2.0, np.complex64(1))
        with pytest.raises(TypeError):
            s.bessel_jn(1.0, v=2.5)
        with pytest.raises(NotImplementedError, match="diff_n"):
            s.sph_harm_y(np.array([1]), np.array([0]), 0.5, 0.5, diff_n=1)
        with pytest.raises(TypeError, match="Python integer"):
            s.log_ndtr(-1.0, series_order=2.0)
        with pytest.raises(ValueError, match="non-negative"):
            s.log_ndtr(-1.0, series_order=-1)
        with pytest.raises(ValueError, match="<= 30"):
            s.log_ndtr(-1.0, series_order=31)
        with pytest.raises(TypeError, match="int32 is not supported"):
            s.log_ndtr(np.int32(2))
        with pytest.raises(TypeError, match="float16 is not supported"):
            s.log_ndtr(np.float16(2))


@pins("bessel_jn_complex_type_error")
def test_bessel_jn_refuses_complex_input():
    with pytest.raises(TypeError, match="rem does not accept dtype complex64"):
        jax.scipy.special.bessel_jn(np.complex64(1), v=2)
    with pytest.raises(ValueError, match="complex input not supported"):
        minijax.scipy.special.bessel_jn(np.complex64(1), v=2)
