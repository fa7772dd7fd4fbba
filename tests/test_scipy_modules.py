"""The `jax.scipy` modules minijax added in round 14 against JAX's on small inputs:
`ndimage.map_coordinates`, `fft.dct`/`idct`/`dctn`/`idctn`,
`interpolate.RegularGridInterpolator`, `cluster.vq.vq`. Each case is one function of
the module pair, checked eagerly and under jit (values, dtypes, weak types), under grad and vmap where
JAX supports them; the error cases compare the exception type and message."""
from __future__ import annotations

import jax
import jax.scipy.cluster.vq     # noqa: F401  (JAX's scipy submodules load on import)
import jax.scipy.fft            # noqa: F401
import jax.scipy.interpolate    # noqa: F401
import jax.scipy.ndimage        # noqa: F401
import numpy as np
import pytest

import minijax
import minijax.scipy.cluster.vq  # noqa: F401
import minijax.scipy.fft        # noqa: F401
import minijax.scipy.interpolate  # noqa: F401
import minijax.scipy.ndimage    # noqa: F401
from tests.library_helpers import assert_raises_as_jax, check_everywhere

rng = np.random.default_rng(14)
# Each case's first argument carries a leading axis vmap can take away: the functions
# read the trailing axes, so they run on one example and on the batch alike.
IMAGES = rng.normal(size=(2, 3, 4)).astype(np.float32)
# (point, axis): inside, on a half, and outside on both sides (every mode's folding)
POINTS = np.array([[0.5, 1.5, 1.0], [1.5, 2.5, 0.2], [-0.7, 4.4, 1.0], [3.2, -1.2, 0.0],
                   [2.0, 0.0, 1.7], [-2.5, 6.5, 2.2]], np.float32)
MODES = ("constant", "nearest", "wrap", "mirror", "reflect")
SIGNALS = rng.normal(size=(2, 3, 5)).astype(np.float32)
GRID = (np.array([1.0, 2.0, 3.5, 5.0], np.float32), np.array([4, 5, 6]))
VALUES = rng.normal(size=(4, 3, 2)).astype(np.float32)
OBS = rng.normal(size=(5, 3)).astype(np.float32)
CODES = rng.normal(size=(4, 3)).astype(np.float32)
QUERY = np.array([[1.5, 4.5], [2.2, 5.8], [0.0, 5.0], [4.9, 6.0], [3.5, 4.0]], np.float32)


def _coordinates(image, points):
    # one coordinate array per image axis, the trailing columns of `points`
    return [points[..., k] for k in range(3 - image.ndim, 3)]


def _map(order):
    def fn(mod, image, points):
        return tuple(mod.scipy.ndimage.map_coordinates(
            image, _coordinates(image, points), order, mode=m, cval=-1.5) for m in MODES)
    return fn


def _dct(mod, x):
    f = mod.scipy.fft
    return (f.dct(x, n=3, norm="ortho"), f.dct(x, n=7, axis=0, norm="backward"),
            f.idct(x, n=4, axis=-2, norm="ortho"))


def _dctn(mod, x):
    f = mod.scipy.fft
    return (f.dctn(x, s=(2, 6), norm="ortho"), f.dctn(x, s=[4], axes=[0]),
            f.idctn(x, axes=(-1, 0)))


def _interpolate(mod, query, values):
    rgi = mod.scipy.interpolate.RegularGridInterpolator
    linear = rgi(GRID, values)
    return (linear(query), rgi(GRID, values, "nearest", fill_value=None)(query),
            rgi(GRID[:1], values, fill_value=2.0)(query[..., :1]))


CASES = {
    # gradients in the image and the coordinates (zero for order 0: piecewise constant)
    "map_coordinates_linear": (_map(1), (IMAGES, POINTS), dict(argnums=(0, 1))),
    "map_coordinates_nearest": (_map(0), (IMAGES, POINTS), dict(argnums=(0, 1))),
    "map_coordinates_int": (lambda mod, image, points: mod.scipy.ndimage.map_coordinates(
        image, _coordinates(image, points), 1, mode="nearest"),
        (np.arange(24, dtype=np.int32).reshape(2, 3, 4), POINTS), dict(grad=False)),
    "dct_idct": (_dct, (SIGNALS,), {}),
    "dct_int_and_complex": (lambda mod, x: (
        mod.scipy.fft.dct(x.astype(np.int32)),
        mod.scipy.fft.idctn((x + 1j * x[::-1]).astype(np.complex64))), (SIGNALS,),
        dict(grad=False)),
    "dctn_idctn": (_dctn, (SIGNALS,), dict(rtol=1e-5, atol=1e-5)),
    # vmap leaves one observation of 3 scalars: then 1-d codes (their first feature)
    "vq": (lambda mod, obs, codes: mod.scipy.cluster.vq.vq(
        obs, codes if obs.ndim == 2 else codes[:, 0]), (OBS, CODES), dict(argnums=(0, 1))),
    # gradients in the query points and in the values
    "regular_grid_interpolator": (_interpolate, (QUERY, VALUES), dict(argnums=(0, 1))),
}


@pytest.mark.parametrize("name", list(CASES))
def test_against_jax(name):
    fn, args, options = CASES[name]
    check_everywhere(fn, *args, **{"rtol": 1e-5, "atol": 1e-6, **options})


def test_interpolator_is_a_pytree_as_jaxs():
    def build(mod):
        return mod.scipy.interpolate.RegularGridInterpolator(GRID, VALUES, "nearest")
    ours, theirs = build(minijax), build(jax)
    ours_leaves, ours_def = jax.tree_util.tree_flatten(ours)
    theirs_leaves, theirs_def = jax.tree_util.tree_flatten(theirs)
    assert len(ours_leaves) == len(theirs_leaves) == 4   # two grid axes, values, fill
    for a, b in zip(ours_leaves, theirs_leaves):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert ours_def.node_data()[1] == theirs_def.node_data()[1] == ("nearest", False)
    # through jit and vmap as an argument, the method riding along as static data
    got = minijax.jit(lambda f, q: f(q))(ours, QUERY)
    # (JAX's side jitted: JAX runs the interpolator op by op, a compile per operation)
    want = jax.jit(lambda f: f(QUERY))(theirs)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    # a batch of two interpolators, mapped over as one argument
    def two(f):
        return jax.tree_util.tree_map(lambda leaf: np.stack([leaf, 2 * leaf]), f)
    got = minijax.vmap(lambda f: f(QUERY))(two(ours))
    want = jax.jit(jax.vmap(lambda f: f(QUERY)))(two(theirs))
    assert got.shape == (2, 5, 2)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


ERRORS = {
    "vq_rank": lambda mod: mod.scipy.cluster.vq.vq(OBS, CODES[:, 0]),
    "vq_3d": lambda mod: mod.scipy.cluster.vq.vq(OBS[None], CODES[None]),
    "map_coordinates_order": lambda mod: mod.scipy.ndimage.map_coordinates(
        IMAGES[0], list(POINTS.T[:2]), 3),
    "map_coordinates_mode": lambda mod: mod.scipy.ndimage.map_coordinates(
        IMAGES[0], list(POINTS.T[:2]), 1, mode="grid-wrap"),
    "map_coordinates_rank": lambda mod: mod.scipy.ndimage.map_coordinates(
        IMAGES[0], [POINTS[:, 0]], 1),
    "dct_type": lambda mod: mod.scipy.fft.dct(SIGNALS, type=3),
    "idctn_type": lambda mod: mod.scipy.fft.idctn(SIGNALS, type=1),
    "dct_norm": lambda mod: mod.scipy.fft.dct(SIGNALS, norm="forward"),
    "dctn_s": lambda mod: mod.scipy.fft.dctn(SIGNALS, s=(2, 2, 2, 2)),
    "dct_list": lambda mod: mod.scipy.fft.dct([1.0, 2.0]),
    "interpolator_method": lambda mod: mod.scipy.interpolate.RegularGridInterpolator(
        GRID, VALUES, "cubic"),
    "interpolator_call_method": lambda mod: mod.scipy.interpolate.RegularGridInterpolator(
        GRID, VALUES)(QUERY, method="spline"),
    "interpolator_bounds_error": lambda mod: mod.scipy.interpolate.RegularGridInterpolator(
        GRID, VALUES, bounds_error=True),
    "interpolator_too_many_axes": lambda mod: mod.scipy.interpolate.RegularGridInterpolator(
        GRID * 2, VALUES),
    "interpolator_fill_value": lambda mod: mod.scipy.interpolate.RegularGridInterpolator(
        GRID, VALUES, fill_value=1j),
    "interpolator_query_dimension": lambda mod: mod.scipy.interpolate.RegularGridInterpolator(
        GRID, VALUES)(np.ones((2, 3), np.float32)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_as_jaxs(name):
    # (for a list, JAX's message names its internal helper)
    assert_raises_as_jax(ERRORS[name], same_message=name != "dct_list")
