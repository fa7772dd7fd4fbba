"""The scipy.stats distributions added in round 14 (betabinom ... wrapcauchy,
poisson.entropy) and the summary statistics (mode, rankdata, sem, gaussian_kde)
against `jax.scipy.stats`.

One program per distribution: every function of the module on the same points, as a
dict, eagerly and under jit on edge points (-inf, negative, 0, the support's ends,
inf, NaN) and, with its gradient and vmap, on points inside the support. Where JAX
0.10/0.11 and 0.12 differ, minijax keeps 0.12's behaviour and
`test_where_jax_changed` says which version does what."""
from __future__ import annotations

import jax
import numpy as np
import pytest

import minijax
from minijax.testing import JAX_VERSION
from tests.devices import ON_CPU
from tests.library_helpers import check_everywhere

LOOSE = dict(rtol=1e-4, atol=1e-6)

# Edge points (-inf, negative, 0, support ends, inf, NaN), then points inside; a
# quantile function is called at x / 5, which spans [0, 1] and beyond the same way.
EDGES = [-np.inf, -1.5, 0.0, 0.5, 1.0, 2.5, np.inf, np.nan]
X = np.array(EDGES + [0.3, 0.8, 1.7, 2.2, 3.1, 4.6], np.float32)
COUNTS = np.array([-np.inf, -1.0, 2.5, 5.0, 7.0, np.inf, np.nan, 0.0, 1.0, 2.0, 3.0, 4.0],
                  np.float32)
CIRCLE = np.array([-0.5, 0.0, 1.0, 3.0, 2 * np.pi, 7.0, np.inf, np.nan, 0.4, 5.5],
                  np.float32)

CONTINUOUS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")

# (module, functions, parameters after the first argument, points, whether JAX
# differentiates every function)
FAMILIES = [
    ("expon", CONTINUOUS + ("ppf",), (0.25, 2.0), X, True),
    ("chi2", CONTINUOUS, (3.0, -0.5, 1.5), X, True),
    ("pareto", CONTINUOUS + ("ppf",), (2.5, 0.25, 0.5), X, True),
    # JAX's gumbel ppf has no gradient: xlogy(-1, p) differentiates the integer -1
    # (a float0 tangent, refused by the multiply).
    ("gumbel_r", CONTINUOUS + ("ppf",), (0.5, 1.5), X - 2, False),
    ("gumbel_l", CONTINUOUS + ("ppf",), (0.5, 1.5), X - 2, False),
    ("gumbel_r", CONTINUOUS, (0.5, 1.5), X - 2, True),
    # a < 0 < b: the cdf's masses fall in the left tail, the middle and the right tail
    ("truncnorm", CONTINUOUS, (-0.5, 2.0, 0.25, 1.5), X[X == X] - 1, True),
    ("gennorm", ("logpdf", "pdf", "cdf"), (1.5,), X - 2, True),
    ("vonmises", ("logpdf", "pdf"), (2.5,), CIRCLE, True),
    ("wrapcauchy", ("logpdf", "pdf"), (0.4,), CIRCLE, True),
    ("geom", ("logpmf", "pmf"), (0.3, -1.0), COUNTS, True),
    ("nbinom", ("logpmf", "pmf"), (3.0, 0.4), COUNTS, True),
    ("binom", ("logpmf", "pmf"), (5.0, 0.3), COUNTS, True),
    ("binom", ("logpmf", "pmf"), (5.0, 1.0), COUNTS, True),       # certain: k = n
    ("betabinom", ("logpmf", "pmf"), (5.0, 2.0, 1.5), COUNTS, True),
]


@pytest.mark.parametrize("dist,fnames,params,x,differentiable", FAMILIES,
                         ids=[f"{f[0]}{i}" for i, f in enumerate(FAMILIES)])
def test_family(dist, fnames, params, x, differentiable):
    def fn(mod, x):
        module = getattr(mod.scipy.stats, dist)
        return {name: getattr(module, name)(x / 5 if name == "ppf" else x, *params)
                for name in fnames}
    check_everywhere(fn, x, grad=differentiable, vmap=dist in ("expon", "binom"), **LOOSE)


def test_invalid_parameters():
    def invalid(stats):
        return dict(gumbel=stats.gumbel_r.logpdf(0.5, 0.0, -1.0),
                    gumbel_ppf=stats.gumbel_l.ppf(1.0),
                    truncnorm=stats.truncnorm.logpdf(0.5, 2.0, 1.0),
                    betabinom=stats.betabinom.logpmf(1.0, 3.0, -1.0, 2.0),
                    vonmises=stats.vonmises.logpdf(0.5, -1.0),
                    wrapcauchy=stats.wrapcauchy.logpdf(0.5, 1.0))
    ours, theirs = invalid(minijax.scipy.stats), jax.jit(lambda: invalid(jax.scipy.stats))()
    assert all(np.isnan(v) for v in ours.values())
    check_everywhere(lambda mod: invalid(mod.scipy.stats), grad=False, vmap=False)
    assert all(np.isnan(v) for v in theirs.values())


def test_integer_and_scalar_arguments_promote_like_jax():
    def fn(mod, k):
        stats = mod.scipy.stats
        return (stats.binom.logpmf(k, 5, 0.5), stats.pareto.sf(k, 2), stats.expon.cdf(k),
                stats.chi2.logpdf(k, 2), stats.gumbel_r.sf(k))
    check_everywhere(fn, np.array([1, 2, 3], np.int32), grad=False, vmap=False,
                     concrete_weak_types=False)
    check_everywhere(lambda mod: fn(mod, 2), grad=False, vmap=False)


def test_gradients_in_the_parameters():
    x = np.array([0.4, 1.1, 2.3], np.float32)
    k = np.array([0.0, 2.0, 4.0], np.float32)

    def fn(mod, a, b):
        stats = mod.scipy.stats
        return (stats.chi2.logpdf(x, a), stats.pareto.logpdf(x + 1, a, 0.0, b),
                stats.gumbel_l.logcdf(x, a, b), stats.truncnorm.logpdf(x, -a, b),
                stats.betabinom.logpmf(k, 5.0, a, b), stats.nbinom.logpmf(k, a, b / 4),
                stats.vonmises.logpdf(x, a), stats.gennorm.logpdf(x, a))
    check_everywhere(fn, np.float32(1.5), np.float32(2.5), argnums=(0, 1), vmap=False,
                     **LOOSE)


def test_dirichlet_and_multinomial():
    alpha = np.array([1.5, 2.0, 0.7], np.float32)
    x = np.array([[0.2, 0.5, 0.3], [0.1, 0.0, 0.9], [0.6, 0.3, 0.2]], np.float32).T
    counts = np.array([2, 0, 3], np.int32)

    def fn(mod, alpha, p):
        stats = mod.scipy.stats
        return (stats.dirichlet.logpdf(x, alpha), stats.dirichlet.pdf(x[:2], alpha),
                stats.dirichlet.logpdf(x[:, 0], alpha),
                stats.multinomial.logpmf(counts, 5, p), stats.multinomial.pmf(counts, 4, p))
    check_everywhere(fn, alpha, alpha / alpha.sum(), argnums=(0, 1), vmap=False, **LOOSE)
    for mod in (minijax, jax):
        with pytest.raises(ValueError, match="integer type"):
            mod.scipy.stats.multinomial.logpmf(counts.astype(np.float32), 5, alpha / 3)
        with pytest.raises(ValueError, match="one-dimensional"):
            mod.scipy.stats.dirichlet.logpdf(x, alpha[None])
        with pytest.raises(ValueError, match="one entry fewer"):
            mod.scipy.stats.dirichlet.logpdf(x[:1], alpha)


def test_poisson_entropy():
    # one rate in each regime (summed to mu + 20, summed further, asymptotic), and 0
    mu = np.array([0.0, 0.5, 4.0, 30.0, 150.0], np.float32)
    def fn(mod, mu):
        entropy = mod.scipy.stats.poisson.entropy
        return entropy(mu), entropy(2.0, np.zeros((2, 1), np.float32))  # loc: its shape
    check_everywhere(fn, mu, grad=False, vmap=False, **LOOSE)
    check_everywhere(lambda mod, mu: mod.scipy.stats.poisson.entropy(mu, 1.0), mu[1:4],
                     vmap=False, **LOOSE)


def test_where_jax_changed():
    stats, new = minijax.scipy.stats, JAX_VERSION >= (0, 12)
    cases = {
        # a NaN point has a NaN truncnorm cdf (0.10 and 0.11: 1)
        "truncnorm.cdf(nan)": (lambda s: s.truncnorm.cdf(np.nan, -1.0, 1.0), np.nan, 1.0),
        # kappa = 0 is the uniform density on the circle (0.10 and 0.11: NaN)
        "vonmises.pdf(kappa=0)": (lambda s: s.vonmises.pdf(1.0, 0.0), 1 / (2 * np.pi),
                                  np.nan),
        # the pmf's integer test is on k - loc (0.10 and 0.11: on k)
        "poisson.pmf(loc=0.5)": (lambda s: s.poisson.pmf(2.5, 2.0, 0.5), 2 * np.exp(-2.0),
                                 0.0),
        # counts are tested row by row (0.10 and 0.11 sum over every row)
        "multinomial.pmf(rows)": (lambda s: s.multinomial.pmf(np.int32([[1, 1], [2, 0]]), 2,
                                                              np.float32([0.5, 0.5]))[0],
                                  0.5, 0.0),
        # with df = 2 the density at loc is 1/2 (0.10 and 0.11: NaN, from 0 * log 0)
        "chi2.pdf(loc, df=2)": (lambda s: s.chi2.pdf(0.0, 2.0), 0.5, np.nan),
    }
    # float32 against the exact value: a GPU's exp and lgamma are a few ulps further off
    rtol = 1e-6 if ON_CPU else 1e-5
    for name, (fn, newest, older) in cases.items():
        np.testing.assert_allclose(fn(stats), newest, rtol=rtol, err_msg=name)
        np.testing.assert_allclose(jax.jit(lambda: fn(jax.scipy.stats))(),
                                   newest if new else older, rtol=rtol, err_msg=name)


def test_mode_rankdata_sem():
    x = np.array([[3.0, 1.0, 1.0, 2.0], [2.0, np.nan, 2.0, 5.0], [3.0, 1.0, 4.0, 2.0]],
                 np.float32)
    ints = np.array([[4, 1, 1, 2], [2, 4, 2, 5], [4, 1, 1, 2]], np.int32)

    def fn(mod, x):
        stats = mod.scipy.stats
        out = {f"mode{a}{k}": tuple(stats.mode(x, axis=a, keepdims=k))
               for a, k in ((0, False), (1, True), (None, False))}
        out |= {f"rank_{m}": stats.rankdata(ints, m)
                for m in ("average", "min", "max", "dense", "ordinal")}
        out |= dict(rank_nan=stats.rankdata(x[1]), rank_rows=stats.rankdata(ints, axis=1),
                    mode_ints=tuple(stats.mode(ints, axis=1)),
                    sem=stats.sem(x), sem_all=stats.sem(x, axis=None, ddof=0),
                    sem_omit=stats.sem(x, axis=1, nan_policy="omit", keepdims=True))
        return out
    check_everywhere(fn, x, grad=False, vmap=False)
    check_everywhere(lambda mod, x: mod.scipy.stats.sem(x, axis=-1), x[::2])
    for mod in (minijax, jax):
        with pytest.raises(ValueError, match="unknown method"):
            mod.scipy.stats.rankdata(ints, "mean")
        with pytest.raises(ValueError, match="nan_policy"):
            mod.scipy.stats.mode(ints, nan_policy="skip")
        with pytest.raises(NotImplementedError):
            mod.scipy.stats.rankdata(ints, nan_policy="omit")


def test_gaussian_kde():
    data = np.array([[0.1, 0.5, 1.2, 2.0, -0.3, 0.9], [1.0, 0.2, 0.3, 0.9, 1.5, -0.4]],
                    np.float32)
    points = np.array([[0.0, 1.0, 2.5], [0.5, 0.5, 0.0]], np.float32)
    weights = np.arange(1, 7, dtype=np.float32)

    def fn(mod, data):
        stats = mod.scipy.stats
        kde = stats.gaussian_kde(data, weights=weights)
        one = stats.gaussian_kde(data[0], bw_method="silverman")
        mean, cov = np.zeros(2, np.float32), np.eye(2, dtype=np.float32)
        return dict(pdf=kde(points), logpdf=kde.logpdf(points), neff=kde.neff,
                    covariance=kde.covariance,
                    gauss=kde.integrate_gaussian(mean, cov), self=kde.integrate_kde(kde),
                    box=one.integrate_box_1d(-0.5, 1.0), one=one.evaluate(points[0]),
                    scalar_bw=stats.gaussian_kde(data, 0.7).pdf(points[:, 1]))
    check_everywhere(fn, data, grad=False, vmap=False, **LOOSE)
    check_everywhere(lambda mod, data: mod.scipy.stats.gaussian_kde(data).logpdf(points),
                     data, vmap=False, **LOOSE)
    # a pytree: through jit as an argument, with JAX's leaves
    ours = minijax.scipy.stats.gaussian_kde(data)
    theirs = jax.scipy.stats.gaussian_kde(data)
    assert len(minijax.tree_util.tree_leaves(ours)) == len(jax.tree_util.tree_leaves(theirs))
    np.testing.assert_allclose(minijax.jit(lambda k: k.pdf(points))(ours),
                               theirs.pdf(points), **LOOSE)
    sample = ours.resample(minijax.random.key(0), (4,))
    assert sample.shape == (2, 4) and sample.dtype == np.float32
    for mod in (minijax, jax):
        with pytest.raises(ValueError, match="multiple elements"):
            mod.scipy.stats.gaussian_kde(np.ones(1, np.float32))
        with pytest.raises(ValueError, match="bw_method"):
            mod.scipy.stats.gaussian_kde(data, bw_method="wide")
        with pytest.raises(ValueError, match="points have dimension"):
            mod.scipy.stats.gaussian_kde(data).evaluate(np.ones((3, 2), np.float32))
