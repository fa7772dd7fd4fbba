"""`gaussian_kde`: a kernel density estimate with Gaussian kernels, a pytree (its
arrays are the leaves) so that it crosses `jit`, `vmap` and `grad` as JAX's does."""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from ... import numpy as jnp
from ...tree_util import register_pytree_node_class
from ...frontend.eager_jit import jitted_eagerly
from ...numpy._promotion import promote_dtypes_inexact, as_operand, shape_of, dtype_of
from .. import linalg, special

__all__ = ["gaussian_kde"]


def _is_complex(x):
    return np.issubdtype(dtype_of(x), np.complexfloating)


@register_pytree_node_class
@dataclass(frozen=True, init=False, slots=True)
class gaussian_kde:
    """A Gaussian KDE of `dataset` (d x n, or n points of one dimension), with
    bandwidth 'scott' (the default), 'silverman', a scalar factor, or a callable of
    the estimate; `weights` (n,) are normalized to sum 1."""
    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset, bw_method=None, weights=None):
        dataset = jnp.atleast_2d(as_operand("gaussian_kde", dataset))
        if _is_complex(dataset):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not int(np.prod(shape_of(dataset))) > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = shape_of(dataset)
        if weights is not None:
            dataset, weights = promote_dtypes_inexact("gaussian_kde", dataset, weights)
            weights = jnp.atleast_1d(weights)
            weights = weights / jnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(weights) != n:
                raise ValueError("`weights` input should be of length n")
        else:
            dataset, = promote_dtypes_inexact("gaussian_kde", dataset)
            weights = jnp.full(n, 1.0 / n, dtype=dtype_of(dataset))
        self._set("dataset", dataset)
        self._set("weights", weights)
        neff = self._set("neff", 1 / jnp.sum(weights ** 2))
        bw_method = "scott" if bw_method is None else bw_method
        if isinstance(bw_method, str) and bw_method == "scott":
            factor = jnp.power(neff, -1.0 / (d + 4))
        elif isinstance(bw_method, str) and bw_method == "silverman":
            factor = jnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif jnp.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = bw_method
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a "
                             "callable.")
        data_covariance = jnp.atleast_2d(jnp.cov(dataset, rowvar=True, bias=False,
                                                 aweights=weights))
        self._set("covariance", data_covariance * factor ** 2)
        self._set("inv_cov", jnp.linalg.inv(data_covariance) / factor ** 2)

    def _set(self, name, value):
        object.__setattr__(self, name, value)
        return value

    def tree_flatten(self):
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        del aux_data
        kde = cls.__new__(cls)
        for name, value in zip(("neff", "dataset", "weights", "covariance", "inv_cov"),
                               children):
            kde._set(name, value)
        return kde

    @property
    def d(self):
        return shape_of(self.dataset)[0]

    @property
    def n(self):
        return shape_of(self.dataset)[1]

    def evaluate(self, points):
        """The density at `points` (d x m)."""
        points = self._reshape_points(as_operand("evaluate", points))
        return _kernel_sum(False, self.dataset.T, self.weights[:, None], points.T,
                           self.inv_cov)[:, 0]

    def __call__(self, points):
        return self.evaluate(points)

    def pdf(self, x):
        return self.evaluate(x)

    def logpdf(self, x):
        """The log density at `x`, by logsumexp over the kernels."""
        x = self._reshape_points(as_operand("logpdf", x))
        return _kernel_sum(True, self.dataset.T, self.weights[:, None], x.T,
                           self.inv_cov)[:, 0]

    def integrate_gaussian(self, mean, cov):
        """The integral of the estimate times the normal density N(mean, cov)."""
        mean = jnp.atleast_1d(jnp.squeeze(mean))
        cov = jnp.atleast_2d(cov)
        if shape_of(mean) != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if shape_of(cov) != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol = linalg.cho_factor(self.covariance + cov)
        norm = 1.0 / (jnp.sqrt(2 * np.pi) ** self.d * jnp.prod(jnp.diag(chol[0])))
        return _convolve(chol, norm, self.dataset, self.weights, mean)

    def integrate_box_1d(self, low, high):
        """The mass of [low, high] (one-dimensional estimates only)."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be "
                             "scalars")
        sigma = jnp.squeeze(jnp.sqrt(self.covariance))
        low = jnp.squeeze((low - self.dataset) / sigma)
        high = jnp.squeeze((high - self.dataset) / sigma)
        return jnp.sum(self.weights * (special.ndtr(high) - special.ndtr(low)))

    def integrate_kde(self, other):
        """The integral of the product of two estimates."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol = linalg.cho_factor(self.covariance + other.covariance)
        norm = 1.0 / (jnp.sqrt(2 * np.pi) ** self.d * jnp.prod(jnp.diag(chol[0])))
        small, large = (self, other) if self.n < other.n else (other, self)
        from ... import vmap        # the package's, which imports scipy lazily
        result = vmap(partial(_convolve, chol, norm, large.dataset, large.weights),
                      in_axes=1)(small.dataset)
        return jnp.sum(result * small.weights)

    def resample(self, key, shape=()):
        """Points drawn from the estimate: (d,) + shape."""
        from ... import random      # loaded when needed: importing scipy spares it
        index_key, noise_key = random.split(key)
        index = random.choice(index_key, self.n, shape=shape, p=self.weights)
        noise = random.multivariate_normal(
            noise_key, jnp.zeros(self.d, dtype_of(self.covariance)), self.covariance,
            shape=shape, dtype=dtype_of(self.dataset)).T
        return self.dataset[:, index] + noise

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        raise NotImplementedError("only 1D box integrations are supported; use "
                                  "`integrate_box_1d`")

    def set_bandwidth(self, bw_method=None):
        raise NotImplementedError("dynamically changing the bandwidth method is not "
                                  "supported")

    def _reshape_points(self, points):
        if _is_complex(points):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        points = jnp.atleast_2d(points)
        d, m = shape_of(points)
        if d != self.d:
            if d == 1 and m == self.d:
                return jnp.reshape(points, (self.d, 1))
            raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points


def _convolve(chol, norm, target, weights, mean):
    diff = target - mean[:, None]
    half_quadratic = 0.5 * jnp.sum(diff * linalg.cho_solve(chol, diff), axis=0)
    return norm * jnp.sum(jnp.exp(-half_quadratic) * weights)


@jitted_eagerly("in_log")
def _kernel_sum(in_log, points, values, xi, precision):
    """sum_i values_i N(xi; points_i, precision^-1) for each row of xi (or its log)."""
    points, values, xi, precision = promote_dtypes_inexact("gaussian_kde", points, values,
                                                           xi, precision)
    d = shape_of(points)[1]
    if shape_of(xi)[1] != d:
        raise ValueError("points and xi must have same trailing dim")
    if shape_of(precision) != (d, d):
        raise ValueError("precision matrix must match data dims")
    whitening = linalg.cholesky(precision, lower=True)
    points, xi = jnp.dot(points, whitening), jnp.dot(xi, whitening)
    log_norm = jnp.sum(jnp.log(jnp.diag(whitening))) - 0.5 * d * jnp.log(2 * np.pi)
    # (m, n): the squared whitened distance of each query point to each data point
    log_kernel = log_norm - 0.5 * jnp.sum(jnp.square(xi[:, None, :] - points[None, :, :]),
                                          axis=-1)
    if in_log:
        return special.logsumexp(jnp.log(values)[None, :, :] + log_kernel[:, :, None],
                                 axis=1)
    return jnp.sum(values[None, :, :] * jnp.exp(log_kernel)[:, :, None], axis=1)
