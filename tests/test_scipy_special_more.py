"""The scipy.special functions added in round 14 against `jax.scipy.special`: one
program per group of functions (values eagerly and under jit on edge and ordinary
points, dtypes and weak types, gradients where JAX differentiates), Python-scalar
promotion, errors, and the edge values where JAX 0.12 changed the exponential
integrals (minijax keeps 0.12's)."""
from __future__ import annotations

import jax
import numpy as np
import pytest

import minijax
from minijax.testing import JAX_VERSION
from tests.library_helpers import check_everywhere

LOOSE = dict(rtol=2e-4, atol=1e-6)

# Points where every supported JAX agrees (the exponential integrals at 0 and the
# infinities are in test_exponential_integral_edges)
X = np.array([-3.0, -0.5, 0.3, 1.0, 1.5, 2.5, 5.0, 10.0, 20.0, 40.0, 70.0, 100.0],
             np.float32)
ORDERS = np.array([1.0, 2.0, 5.0, 1.0, 3.0, 2.0, 1.0, 4.0, 2.0, 6000.0, 1.0, 2.7],
                  np.float32)
POSITIVE = np.array([0.2, 0.7, 1.0, 2.5, 4.0, 9.5], np.float32)
# Both sides of each piece's boundary (erfcx 5; dawsn 3.25, 6.25; spence 0.5, 1.5, 2;
# sici 4, 8; fresnel 1.6); erfcx's slope past 30 is in test_where_jax_changed
INTEGRALS_X = np.array([-7.0, -3.3, -0.4, 0.45, 1.0, 1.6, 3.9, 4.1, 5.2, 6.3, 8.5, 30.0],
                       np.float32)


def gamma_family(mod, x):
    special = mod.scipy.special
    return dict(loggamma=special.loggamma(x), multigammaln=special.multigammaln(x + 1, 3),
                poch=special.poch(x, 1.5), poch_m=special.poch(2.5, x),
                comb=special.comb(8.0, x), comb_rep=special.comb(x + 3, 2.0, repetition=True))


def box_cox(mod, x):
    special = mod.scipy.special
    return dict(zero=special.boxcox(x, 0.0), half=special.boxcox(x, -0.5),
                log1p=special.boxcox1p(x, 0.0), power=special.boxcox1p(x, 1.5))


def exponential_integrals(mod, x):
    special = mod.scipy.special
    return dict(expi=special.expi(x), exp1=special.exp1(jnp_abs(mod, x)),
                expn=special.expn(ORDERS, jnp_abs(mod, x)))


def error_and_trig_integrals(mod, x):
    special = mod.scipy.special
    return dict(erfcx=special.erfcx(x), dawsn=special.dawsn(x),
                spence=special.spence(jnp_abs(mod, x)), sici=special.sici(x),
                fresnel=special.fresnel(x))


def jnp_abs(mod, x):
    return mod.numpy.abs(x)


@pytest.mark.parametrize("group,x", [(gamma_family, POSITIVE), (box_cox, POSITIVE),
                                     (exponential_integrals, X),
                                     (error_and_trig_integrals, INTEGRALS_X)],
                         ids=["gamma_family", "box_cox", "exponential_integrals",
                              "error_and_trig_integrals"])
def test_group(group, x):
    check_everywhere(group, x, vmap=group is box_cox, **LOOSE)


def test_edges():
    # out of the domain, poles, zeros, infinities and NaN (values only)
    x = np.array([-np.inf, -2.0, -1.5, 0.0, 3.0, np.inf, np.nan], np.float32)

    def fn(mod, x):
        special = mod.scipy.special
        return dict(loggamma=special.loggamma(x), comb=special.comb(x, 2.0),
                    comb_k=special.comb(3.0, x), poch=special.poch(x, 2.0),
                    poch_zero=special.poch(x, 0.0), boxcox=special.boxcox(x, 0.5),
                    boxcox1p=special.boxcox1p(x, 0.0), expn=special.expn(2.0, x[:3]),
                    expi_nan=special.expi(x[-1]), erfcx=special.erfcx(x),
                    dawsn=special.dawsn(x), spence=special.spence(x), sici=special.sici(x),
                    fresnel=special.fresnel(x))
    check_everywhere(fn, x, grad=False, vmap=False, **LOOSE)


def test_python_scalars_promote_like_jax():
    def fn(mod):
        special = mod.scipy.special
        return (special.loggamma(2), special.comb(5, 2), special.poch(3.0, 2),
                special.boxcox(2.0, 0.5), special.expi(1.5), special.exp1(2),
                special.expn(2, 1.5), special.multigammaln(3.5, 2), special.erfcx(1),
                special.sici(3), special.dawsn(np.float16(-1)), special.fresnel(1.0))
    check_everywhere(fn, grad=False, vmap=False, **LOOSE)


def test_bernoulli():
    for n in (0, 2, 3, 10):
        theirs = jax.jit(lambda: jax.scipy.special.bernoulli(n))()
        check = dict(rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(minijax.scipy.special.bernoulli(n), theirs, **check)
        np.testing.assert_allclose(minijax.jit(lambda: minijax.scipy.special.bernoulli(n))(),
                                   theirs, **check)
        assert minijax.scipy.special.bernoulli(n).dtype == theirs.dtype
    for mod in (minijax, jax):
        with pytest.raises(ValueError, match="non-negative"):
            mod.scipy.special.bernoulli(-1)
        with pytest.raises(TypeError):
            mod.scipy.special.bernoulli(2.5)
        with pytest.raises(TypeError):
            mod.jit(mod.scipy.special.bernoulli)(3)
        with pytest.raises(TypeError):
            mod.jit(lambda d: mod.scipy.special.multigammaln(2.0, d))(2)
        with pytest.raises(ValueError, match="complex"):
            mod.scipy.special.expi(np.complex64(1))
        with pytest.raises(ValueError, match="complex"):
            mod.scipy.special.dawsn(np.complex64(1))
        with pytest.raises(ValueError, match="real-valued"):
            mod.scipy.special.sici(np.complex64(1))
        with pytest.raises(TypeError, match="not supported"):
            mod.scipy.special.spence(np.int32(2))
        with pytest.raises(NotImplementedError, match="complex"):
            mod.scipy.special.fresnel(np.complex64(1))


def test_exponential_integral_edges():
    special, new = minijax.scipy.special, JAX_VERSION >= (0, 12)
    # JAX 0.12 gives these their limits; 0.10 and 0.11 give NaN, and 1/3 for E_3(0)
    cases = {"expi(-inf)": (lambda s: s.expi(-np.inf), -0.0, np.nan),
             "expi(0)": (lambda s: s.expi(0.0), -np.inf, np.nan),
             "exp1(inf)": (lambda s: s.exp1(np.inf), 0.0, np.nan),
             "expn(0, inf)": (lambda s: s.expn(0, np.inf), 0.0, np.nan),
             "expn(3, 0)": (lambda s: s.expn(3, 0.0), 0.5, 1 / 3),
             # the derivative in x is -E_{n-1}(x): -E_2(0) = -1 (0.10 and 0.11: -1/2)
             "expn'(3, 0)": (lambda s: jax_or_minijax(s).grad(lambda x: s.expn(3, x))(0.0),
                             -1.0, -0.5),
             # and for n = 0, -(x + 1) exp(-x) / x^2 (0.10 and 0.11: NaN)
             "expn'(0, 1)": (lambda s: jax_or_minijax(s).grad(lambda x: s.expn(0, x))(1.0),
                             -2 / np.e, np.nan)}
    for name, (fn, newest, older) in cases.items():
        np.testing.assert_allclose(fn(special), newest, rtol=1e-6, err_msg=name)
        np.testing.assert_allclose(fn(jax.scipy.special), newest if new else older,
                                   rtol=1e-6, err_msg=name)


def jax_or_minijax(special):
    return minijax if special is minijax.scipy.special else jax


def test_where_jax_changed():
    special, new = minijax.scipy.special, JAX_VERSION >= (0, 12)
    # JAX 0.12 fits erfcx' directly for x > 0; 0.10 and 0.11 take 2x erfcx(x) - 2/sqrt(pi),
    # which cancels to float32's rounding far out and is NaN at inf
    cases = {"erfcx'(1e5)": (1e5, -1 / np.sqrt(np.pi) / 1e10, -1.1920929e-07),
             "erfcx'(inf)": (np.inf, 0.0, np.nan)}
    for name, (x, newest, older) in cases.items():
        np.testing.assert_allclose(minijax.grad(special.erfcx)(np.float32(x)), newest,
                                   rtol=1e-6, err_msg=name)
        np.testing.assert_allclose(jax.grad(jax.scipy.special.erfcx)(np.float32(x)),
                                   newest if new else older, rtol=1e-6, err_msg=name)
