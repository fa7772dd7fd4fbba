"""`minijax.ops.segment_sum/prod/max/min` against `jax.ops`: eager and under jit, with
ids out of range (dropped, or clamped with mode='clip'), negative ids (dropped, not
counted from the end), empty segments (the identity), bucket_size, integer and bool
data, num_segments inferred; and under jvp, grad and vmap (p21's graph network is the
program that needed them)."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mjnp
from minijax.testing import assert_trees_match

KINDS = ["segment_sum", "segment_prod", "segment_max", "segment_min"]
RNG = np.random.default_rng(13)
DATA = RNG.standard_normal((7, 3)).astype(np.float32)
IDS = np.array([0, 2, 2, -1, 5, 0, 2], np.int32)     # -1 and 5 fall outside 4 segments
TOL = dict(rtol=1e-6, atol=1e-6)


def ops(lib, kind):
    return getattr(lib.ops, kind)


@pytest.mark.parametrize("kind", KINDS)
def test_values_eager_and_jitted(kind):
    cases = [dict(num_segments=4), dict(num_segments=4, mode="clip"),
             dict(num_segments=4, mode=jax.lax.GatherScatterMode.FILL_OR_DROP),
             dict(num_segments=3, bucket_size=3), dict(num_segments=0),
             dict(num_segments=4, indices_are_sorted=True, unique_indices=False)]
    for kwargs in cases:
        expected = ops(jax, kind)(DATA, IDS, **kwargs)
        assert_trees_match(ops(minijax, kind)(DATA, IDS, **kwargs), expected, **TOL,
                           what=f"{kind} {kwargs}")
        assert_trees_match(
            minijax.jit(lambda d, i: ops(minijax, kind)(d, i, **kwargs))(DATA, IDS),
            jax.jit(lambda d, i: ops(jax, kind)(d, i, **kwargs))(DATA, IDS), **TOL,
            what=f"jit {kind} {kwargs}")
    # num_segments inferred from concrete ids: max(ids) + 1 segments
    ids = np.array([1, 0, 3, 1, 3, 3, 0], np.int32)
    assert_trees_match(ops(minijax, kind)(DATA, ids), ops(jax, kind)(DATA, ids), **TOL)


@pytest.mark.parametrize("kind", KINDS)
def test_integer_bool_and_scalar_data(kind):
    ids = np.array([0, 1, 1, 3, 0], np.int32)
    ints = np.array([5, -2, 7, 1, 3], np.int32)
    bools = np.array([True, False, True, False, False])
    for data in (ints, ints.astype(np.int8), ints.astype(np.uint8), bools,
                 np.arange(10.0, dtype=np.float32).reshape(5, 2)):
        if kind in ("segment_sum", "segment_prod") and data.dtype == np.bool_:
            for lib in (minijax, jax):       # add and mul refuse bool in both
                with pytest.raises(TypeError, match="bool"):
                    ops(lib, kind)(data, ids, 4)
            continue
        assert_trees_match(ops(minijax, kind)(data, ids, 4), ops(jax, kind)(data, ids, 4),
                           what=f"{kind} {data.dtype}")
    # a Python scalar broadcasts to the ids, and the result is not weakly typed
    assert_trees_match(ops(minijax, kind)(2.0, ids, 4), ops(jax, kind)(2.0, ids, 4))


@pytest.mark.parametrize("kind", KINDS)
def test_transforms(kind):
    data = DATA + 0.1 * np.arange(21, dtype=np.float32).reshape(7, 3)  # no ties
    weights = np.arange(1, 13, dtype=np.float32).reshape(4, 3)

    def program(lib):
        f = lambda d, i: ops(lib, kind)(d, i, num_segments=4)  # noqa: E731

        def run(d, t, ds, ids):
            return {"jvp": lib.jvp(lambda d: f(d, IDS), (d,), (t,)),
                    "grad": lib.grad(lambda d: (f(d, IDS) * weights).sum())(d),
                    "vmap_data": lib.vmap(f, (0, None))(ds, IDS),
                    "vmap_ids": lib.vmap(f, (None, 0))(d, ids),
                    "grad_vmap": lib.grad(lambda ds: lib.vmap(f, (0, None))(ds, IDS).sum())(ds)}
        return run
    ids = np.stack([IDS, IDS[::-1], np.zeros(7, np.int32)])
    args = (data, np.ones_like(data), np.stack([data, -data]), ids)
    if kind == "segment_prod":
        # JAX differentiates scatter_mul only with unique indices; values only here
        f = lambda lib: jax.jit(lambda ds, ids: lib.vmap(  # noqa: E731
            lambda d, i: ops(lib, kind)(d, i, 4), (0, 0))(ds, ids))
        minijax_f = minijax.jit(lambda ds, ids: minijax.vmap(
            lambda d, i: ops(minijax, kind)(d, i, 4), (0, 0))(ds, ids))
        assert_trees_match(minijax_f(args[2], ids[:2]), f(jax)(args[2], ids[:2]), **TOL)
        return
    assert_trees_match(minijax.jit(program(minijax))(*args),
                       jax.jit(program(jax))(*args), rtol=1e-5, atol=1e-5)


def test_errors_match_jax():
    for lib in (minijax, jax):
        with pytest.raises(TypeError):                 # a list is no array
            lib.ops.segment_sum([1.0, 2.0], np.array([0, 1]), 2)
        with pytest.raises(ValueError, match="non-negative"):
            lib.ops.segment_sum(DATA, IDS, -1)
        with pytest.raises(Exception):                 # concrete ids needed under jit
            lib.jit(lambda d, i: lib.ops.segment_max(d, i))(DATA, IDS)
    with pytest.raises(TypeError, match="segment_ids must be integers"):
        minijax.ops.segment_sum(DATA, IDS.astype(np.float32), 4)
    with pytest.raises(NotImplementedError, match="out_sharding"):
        minijax.ops.segment_sum(DATA, IDS, 4, out_sharding=jax.P())
    with pytest.raises(minijax.errors.ConcretizationTypeError, match="num_segments"):
        minijax.jit(lambda d, i: minijax.ops.segment_sum(d, i))(DATA, IDS)


def test_ops_is_a_lazy_submodule_like_jax_ops():
    from minijax.ops import segment_sum
    assert segment_sum is minijax.ops.segment_sum
    assert "ops" in dir(minijax)
    assert sorted(n for n in dir(jax.ops) if n.startswith("segment")) == sorted(
        minijax.ops.__all__)
    import inspect
    for name in minijax.ops.__all__:          # JAX's parameters, in JAX's order
        assert list(inspect.signature(getattr(minijax.ops, name)).parameters) == list(
            inspect.signature(getattr(jax.ops, name)).parameters)
    assert mjnp.asarray(segment_sum(DATA, IDS, 4)).shape == jjnp.zeros((4, 3)).shape
