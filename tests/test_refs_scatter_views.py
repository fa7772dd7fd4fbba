"""Multiply / min / max updates (issue 17). Arrays have them as primitives
(`x.at[i].multiply/min/max`: scatter_mul/min/max); JAX's ref views have get, set and
swap only -- no multiply-update -- so a ref view is updated by reading and writing
through it (`v[...] = v[...] * y`), which minijax follows. The interop bridge
imports JAX's scatter-mul/min/max."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mjnp
from minijax.interop import trace_with_jax
from minijax.testing import assert_trees_match

X = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
IDX = np.array([1, 3, 1], np.int32)
UPD = np.array([4.0, -1.0, 0.25], np.float32)
KINDS = ["multiply", "min", "max"]


def _update(kind):
    return lambda x, u: getattr(x.at[IDX], kind)(u)


@pytest.mark.parametrize("kind", KINDS)
def test_imported_scatter_variants_match_jax(kind):
    from minijax.backends.reference import eval_closed_jaxpr
    closed = trace_with_jax(_update(kind))(X, UPD)
    assert f"scatter_{'mul' if kind == 'multiply' else kind}" in str(closed)
    want = _update(kind)(jjnp.asarray(X), UPD)
    assert_trees_match(minijax.jit(lambda x, u: _update(kind)(x, u))(X, UPD), want)
    np.testing.assert_allclose(np.asarray(eval_closed_jaxpr(closed, X, UPD)[0]), want)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("use_jit", [False, True])
def test_a_multiply_min_max_update_through_a_ref_view(kind, use_jit):
    op = {"multiply": lambda a, b: a * b, "min": lambda a, b: np.minimum(a, b),
          "max": lambda a, b: np.maximum(a, b)}[kind]
    mop = {"multiply": lambda a, b: a * b, "min": mjnp.minimum, "max": mjnp.maximum}[kind]
    r = minijax.new_ref(X.reshape(2, 2))

    def f(u):
        view = r.at[1]
        view[...] = mop(view[...], u)        # JAX's views have no .multiply: read, write
        return view[0]
    out = (minijax.jit(f) if use_jit else f)(UPD[:2])
    want = X.reshape(2, 2).copy()
    want[1] = op(want[1], UPD[:2])
    np.testing.assert_allclose(np.asarray(r[...]), want)
    np.testing.assert_allclose(float(out), want[1, 0])
    assert not hasattr(r.at[1], kind)         # as JAX's TransformedRef
