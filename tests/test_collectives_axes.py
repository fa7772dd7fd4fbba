"""Tuples of axis names and `axis_index_groups` under `vmap(..., axis_name=...)`,
against JAX on one device (the same features under `shard_map` on 8 devices are in
`tests/shard_map_axes_cases.py`).

A tuple of names is one axis whose members are numbered row-major, the first name
major. Under nested vmaps each trace splits such a collective into collectives over
one name each (`minijax/transforms/collective_split.py`). JAX does the same for
`axis_index` and `all_to_all`; for `all_gather`, `psum_scatter` and `ppermute` its
vmap fails (registry entry "vmap_collective_over_a_tuple_of_names_asserts"), so
those are checked against NumPy and against the same program with the names nested.
"""
from __future__ import annotations

import jax
import numpy as np
import pytest

import minijax
from minijax import lax as mlax
from tests.ad_helpers import assert_close

rng = np.random.default_rng(2)
V = rng.standard_normal((2, 4, 8)).astype(np.float32)     # 'i' of 2, 'j' of 4, f32[8]
IJ = ("i", "j")


def nested(lib, f, outer="i", inner="j"):
    return lib.vmap(lib.vmap(f, axis_name=inner), axis_name=outer)


JAX_AGREES = {
    "axis_index": lambda lax: lambda a: a * lax.axis_index(IJ),
    "axis_index_reversed": lambda lax: lambda a: a * lax.axis_index(("j", "i")),
    "all_to_all": lambda lax: lambda a: lax.all_to_all(a, IJ, 0, 0, tiled=True),
}


@pytest.mark.parametrize("name", sorted(JAX_AGREES))
@pytest.mark.parametrize("order", [("i", "j"), ("j", "i")])
def test_against_jax(name, order):
    ours, theirs = JAX_AGREES[name](mlax), JAX_AGREES[name](jax.lax)
    x = V if order == ("i", "j") else np.swapaxes(V, 0, 1)
    expected = nested(jax, theirs, *order)(x)
    assert_close(nested(minijax, ours, *order)(x), expected)
    assert_close(minijax.jit(nested(minijax, ours, *order))(x), expected)
    assert_close(nested(minijax, minijax.jit(ours), *order)(x), expected)
    if name == "all_to_all":
        def loss(lib, f):
            return lambda x: (nested(lib, f, *order)(x) ** 2 * x).sum()
        assert_close(minijax.grad(loss(minijax, ours))(x), jax.grad(loss(jax, theirs))(x),
                     tol=1e-4)


def _members():
    """Every member's value, in the row-major order of ('i', 'j'): f32[8 members, 8]."""
    return V.reshape(8, 8)


def test_all_gather_of_a_tuple():
    f = nested(minijax, lambda a: mlax.all_gather(a, IJ))
    got = f(V)
    np.testing.assert_array_equal(got, np.broadcast_to(_members(), (2, 4, 8, 8)))
    tiled = nested(minijax, lambda a: mlax.all_gather(a, IJ, tiled=True))(V)
    np.testing.assert_array_equal(tiled, np.broadcast_to(_members().reshape(64), (2, 4, 64)))
    # the same as gathering over 'j' then over 'i'
    two_steps = nested(minijax, lambda a: mlax.all_gather(mlax.all_gather(a, "j"), "i"))(V)
    np.testing.assert_array_equal(got, two_steps.reshape(got.shape))


def test_psum_scatter_of_a_tuple():
    got = nested(minijax, lambda a: mlax.psum_scatter(a, IJ))(V)
    total = _members().sum(0)                   # f32[8]: member k keeps element k
    np.testing.assert_allclose(got, total.reshape(2, 4), rtol=1e-5)
    # its transpose is the gather: grad of a weighted scatter
    w = rng.standard_normal((2, 4)).astype(np.float32)
    grad = minijax.grad(lambda v: (nested(minijax, lambda a: mlax.psum_scatter(a, IJ))(v)
                                   * w).sum())(V)
    np.testing.assert_allclose(grad, np.broadcast_to(w.reshape(8), (2, 4, 8)), rtol=1e-6)


def test_ppermute_of_a_tuple():
    perm = [(k, (3 * k + 1) % 8) for k in range(8)]
    got = nested(minijax, lambda a: mlax.ppermute(a, IJ, perm))(V)
    want = np.empty((8, 8), np.float32)
    for source, destination in perm:
        want[destination] = _members()[source]
    np.testing.assert_array_equal(got, want.reshape(2, 4, 8))
    jitted = minijax.jit(nested(minijax, lambda a: mlax.ppermute(a, IJ, perm)))(V)
    np.testing.assert_array_equal(jitted, got)


def test_jax_still_asserts_on_tuples_under_vmap():
    # Registry entry "vmap_collective_over_a_tuple_of_names_asserts"
    from tests.test_collectives import _jax_fails, _retire_if_fixed
    _retire_if_fixed("vmap_collective_over_a_tuple_of_names_asserts", _jax_fails(
        lambda: nested(jax, lambda a: jax.lax.all_gather(a, IJ))(V)))


def test_text_form_keeps_the_tuple():
    seen = []

    def f(a):
        seen.append(str(minijax.make_jaxpr(lambda b: mlax.all_gather(b, IJ) * 1.0)(a)))
        return a
    nested(minijax, f)(V)
    assert "axis_name=('i', 'j')" in seen[0] and "axis_size=8" in seen[0], seen[0]


# -- axis_index_groups: JAX's vmap raises NotImplementedError, and so does minijax's ----

@pytest.mark.parametrize("fn", ["psum", "pmean", "pmax", "pmin", "all_gather",
                                "psum_scatter"])
def test_groups_under_vmap_are_not_implemented_as_in_jax(fn):
    x = V[0, :, :4]                                            # 4 members of f32[4]

    def body(lax):
        return lambda a: getattr(lax, fn)(a, "i", axis_index_groups=[[0, 1], [2, 3]])
    with pytest.raises(NotImplementedError):
        jax.vmap(body(jax.lax), axis_name="i")(x)
    with pytest.raises(NotImplementedError, match="not supported under vmap"):
        minijax.vmap(body(mlax), axis_name="i")(x)


def test_tuple_name_mistakes():
    with pytest.raises(ValueError, match="names an axis twice"):
        nested(minijax, lambda a: mlax.all_gather(a, ("i", "i")))(V)
    with pytest.raises(NameError, match="unbound axis name: 'k'"):
        nested(minijax, lambda a: mlax.axis_index(("i", "k")))(V)
    with pytest.raises(ValueError, match="outside the axis"):
        nested(minijax, lambda a: mlax.ppermute(a, IJ, [(0, 8)]))(V)
