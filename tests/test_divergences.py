"""Every entry of the known-divergence registry (`minijax/divergences/`), pinned
from both sides: JAX's current behaviour *and* minijax's.

A pin is strict on the JAX versions its entry was seen on (`jax_version`, a
comma-separated list) and on those it records JAX doing as intended (`intended_on`:
a release that fixed it, or one before a regression; the pin branches on
`JAX_VERSION` and asserts the intended behaviour there). On those, a JAX release
that changes the behaviour (or a minijax change that drifts) fails the test. On any
other JAX version (Python 3.12+ gets a newer jax than 3.11) JAX may legitimately
behave otherwise, so a failing pin is reported as XFAIL naming the entry and the
version: re-check the entry there, and add the version to one of the two lists."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
from minijax.divergences import DIVERGENCES, DIVERGENCES_BY_NAME
from minijax.testing import JAX_VERSION

X = np.arange(6, dtype=np.float32).reshape(2, 3)
PINNED = {}


def seen_on_this_jax(name) -> bool:
    """Whether registry entry `name` was recorded on the JAX version installed."""
    return jax.__version__ in _versions(DIVERGENCES_BY_NAME[name].jax_version)


def _versions(listed) -> set:
    return {v.strip() for v in listed.split(",") if v.strip()}


def intended_on_this_jax(name) -> bool:
    """Whether entry `name` records the installed JAX doing as intended."""
    return jax.__version__ in _versions(DIVERGENCES_BY_NAME[name].intended_on)


def pins(name):
    def register(test):
        assert name in DIVERGENCES_BY_NAME, f"no registry entry {name!r}"
        PINNED[name] = test
        if seen_on_this_jax(name) or intended_on_this_jax(name):
            return test

        @functools.wraps(test)
        def on_another_jax(*args, **kwargs):
            try:
                return test(*args, **kwargs)
            except (Exception, pytest.fail.Exception) as error:
                pytest.xfail(f"{name}: jax {jax.__version__} does not behave as recorded "
                             f"on {DIVERGENCES_BY_NAME[name].jax_version} "
                             f"({type(error).__name__}); re-check the entry")
        return on_another_jax
    return register


def test_every_entry_is_pinned_and_well_formed():
    """Each entry has a pinning test: here (`@pins(name)`), or in another test
    module that names the entry (so each area can keep its pins with its tests)."""
    import pathlib
    here = pathlib.Path(__file__).parent
    elsewhere = "".join(p.read_text() for p in here.glob("test_*.py") if p.name != pathlib.Path(__file__).name)
    unpinned = [d.name for d in DIVERGENCES
                if d.name not in PINNED and f'"{d.name}"' not in elsewhere]
    assert not unpinned, f"registry entries without a pinning test: {unpinned}"
    for d in DIVERGENCES:
        assert d.jax_version and d.jax_behaviour and d.minijax_behaviour and d.reason


def test_each_entry_names_the_jax_versions_it_was_seen_on():
    # `pins` is strict exactly on these versions, so each must be a real version.
    import re
    for d in DIVERGENCES:
        versions = [v.strip() for v in d.jax_version.split(",")]
        intended = [v.strip() for v in d.intended_on.split(",")] if d.intended_on else []
        assert all(re.fullmatch(r"\d+\.\d+\.\d+(\.\d+)?", v)
                   for v in versions + intended), d
        # a version does as intended or diverges, not both
        assert not set(versions) & set(intended), d


def test_jax_version_is_a_tuple_of_its_release_numbers():
    # the one version tests branch on (minijax.testing.JAX_VERSION)
    from minijax.testing import JAX_VERSION, parse_version
    assert parse_version("0.12.0.1") == (0, 12, 0, 1) > (0, 12) > parse_version("0.11.2")
    assert parse_version("0.13.0.dev20260101") == parse_version("0.13.0rc1") == (0, 13, 0)
    assert JAX_VERSION == parse_version(jax.__version__) >= (0, 10)


@pins("ref_none_index_adds_no_axis")
def test_none_index():
    r = jax.new_ref(X)
    assert r[None].shape == (2, 3)
    assert jax.jit(lambda r: r[None])(r).shape == (2, 3)
    with pytest.raises(ValueError, match="not enough values to unpack"):
        r[None, 0]
    m = minijax.new_ref(X)
    assert m[None].shape == (1, 2, 3) == X[None].shape
    assert m[None, 0].shape == (1, 3) == X[None, 0].shape
    assert minijax.jit(lambda r: r[None])(m).shape == (1, 2, 3)


@pins("ref_static_index_out_of_range_under_jit")
def test_static_out_of_range():
    r = jax.new_ref(X)
    with pytest.raises(ValueError, match="Out of bound"):
        r[5]
    np.testing.assert_array_equal(jax.jit(lambda r: r[5])(r), X[1])
    m = minijax.new_ref(X)
    for f in (lambda r: r[5], minijax.jit(lambda r: r[5])):
        with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 2"):
            f(m)


@pins("gather_gradient_drops_clamped_index")
def test_gather_gradient_of_a_clamped_index():
    x = np.array([1., 2., 3.], np.float32)
    weights = np.array([10., 1.], np.float32)

    def loss(np_lib):
        return lambda x: (np_lib.asarray(x)[np.array([5, 0])] * weights).sum()
    assert float(loss(jnp)(x)) == float(loss(minijax.numpy)(x)) == 31.0   # reads x[2]
    for grad_of in (jax.grad, lambda f: jax.jit(jax.grad(f))):
        np.testing.assert_array_equal(grad_of(loss(jnp))(x), [1., 0., 0.])
    for grad_of in (minijax.grad, lambda f: minijax.jit(minijax.grad(f))):
        np.testing.assert_array_equal(grad_of(loss(minijax.numpy))(x), [1., 0., 10.])
    # JAX's own clipping read differentiates as minijax's does
    clipped = lambda x: (jnp.asarray(x).at[np.array([5, 0])].get(mode="clip") * weights).sum()
    np.testing.assert_array_equal(jax.grad(clipped)(x), [1., 0., 10.])


@pins("ref_eager_views")
def test_eager_views():
    r = jax.new_ref(X)
    if JAX_VERSION >= (0, 12):          # 0.12 added eager r.at views
        r.at[1][0] = 9.0
        assert float(r[1, 0]) == 9.0 and float(r.at[1][2]) == 5.0
    else:
        with pytest.raises(NotImplementedError):
            r.at[0]
    assert not hasattr(r, "T") and not hasattr(r, "reshape")
    # a view JAX has under jit only
    assert float(jax.jit(lambda r: r.reshape(3, 2)[2, 1])(jax.new_ref(X))) == 5.0
    m = minijax.new_ref(X)
    m.at[1][0] = 9.0
    assert float(m[1, 0]) == 9.0 and float(m.at[1][2]) == 5.0
    assert m.T.shape == (3, 2) and m.reshape(3, 2)[2, 1] == 5.0


@pins("ref_transpose_view_under_jit")
def test_transpose_view_under_jit():
    with pytest.raises(NotImplementedError, match="TransposeTransform"):
        jax.jit(lambda r: r.T[0])(jax.new_ref(X))
    np.testing.assert_array_equal(minijax.jit(lambda r: r.T[0])(minijax.new_ref(X)), X.T[0])


@pins("ref_write_broadcasts_scalar")
def test_write_broadcasts():
    r = jax.new_ref(X)
    with pytest.raises(ValueError, match="Invalid shape for `swap`"):
        r[...] = 2.0
    m = minijax.new_ref(X)
    m[...] = 2.0
    minijax.jit(lambda r: r.__setitem__(0, 1.0))(m)
    np.testing.assert_array_equal(np.asarray(m[...]), [[1, 1, 1], [2, 2, 2]])


@pins("ref_use_after_freeze")
def test_use_after_freeze():
    r = jax.new_ref(X)
    jax.freeze(r)
    np.testing.assert_array_equal(r[...], X)
    np.testing.assert_array_equal(jax.freeze(r), X)
    m = minijax.new_ref(X)
    minijax.freeze(m)
    with pytest.raises(minijax.RefError, match="used after freeze"):
        m[...]
    with pytest.raises(minijax.RefError, match="used after freeze"):
        minijax.freeze(m)


@pins("ref_use_after_free")
def test_use_after_free():
    r = jax.new_ref(X)
    jax.free_ref(r)
    np.testing.assert_array_equal(r[...], X)
    m = minijax.new_ref(X)
    minijax.free_ref(m)
    with pytest.raises(minijax.RefError, match="used after free_ref"):
        m[...]


@pins("ref_freeze_argument_under_jit")
def test_freeze_argument():
    with pytest.raises(IndexError, match="list index out of range"):
        jax.jit(jax.freeze)(jax.new_ref(1.0))
    with pytest.raises(minijax.RefError, match="only the code that created a ref may freeze"):
        minijax.jit(minijax.freeze)(minijax.new_ref(1.0))


@pins("ref_of_a_ref")
def test_ref_of_a_ref():
    with pytest.raises(AssertionError):
        jax.new_ref(jax.new_ref(1.0))
    with pytest.raises(minijax.RefError, match="cannot make a ref of a ref"):
        minijax.new_ref(minijax.new_ref(1.0))


@pins("ref_asarray")
def test_asarray():
    with pytest.raises(ValueError, match="Out of bound indexer"):
        np.asarray(jax.new_ref(X))
    with pytest.raises(minijax.RefError, match=r"np.asarray\(r\[...\]\)"):
        np.asarray(minijax.new_ref(X))


@pins("ref_empty_ref_eager")
def test_empty_ref_eager():
    spec = jax.ShapeDtypeStruct((2,), jnp.float32)
    with pytest.raises(NotImplementedError):
        jax.empty_ref(spec)
    assert minijax.empty_ref(spec).shape == (2,)


@pins("remat_grad_external_ref_effect_runs_twice")
def test_remat_grad_external_ref():
    def make(lib):
        @lib.remat
        def f(y, x_ref):
            out = y * x_ref[...]
            x_ref[...] += 1.0
            return out
        return f
    x_ref = jax.new_ref(1.0)
    jax.grad(make(jax))(1.0, x_ref)
    assert float(x_ref[...]) == 3.0            # the increment ran twice
    if not hasattr(minijax, "remat"):
        pytest.skip("minijax.remat is not exported yet")
    m_ref = minijax.new_ref(1.0)
    g = minijax.grad(make(minijax))(1.0, m_ref)
    assert float(m_ref[...]) == 2.0 and float(g) == 1.0


def _while_program(lib, r):
    def body(c):
        r[0] += 1.0
        return c + 1
    return lambda: lib.lax.while_loop(lambda c: (r[0] < 5.0) & (c < 20), body, 0)


@pins("ref_while_condition_reads_stale_value_under_jit")
def test_while_condition_stale_under_jit():
    r = jax.new_ref(np.zeros(2, np.float32))
    assert int(jax.jit(_while_program(jax, r))()) == 20    # ran until the bound c < 20
    m = minijax.new_ref(np.zeros(2, np.float32))
    assert int(minijax.jit(_while_program(minijax, m))()) == 5
    assert float(m[0]) == 5.0


@pins("ref_while_condition_and_body_share_ref_eagerly")
def test_while_shared_ref_eagerly():
    with pytest.raises(ValueError, match="only one reference to a mutable array"):
        _while_program(jax, jax.new_ref(np.zeros(2, np.float32)))()
    m = minijax.new_ref(np.zeros(2, np.float32))
    assert int(_while_program(minijax, m)()) == 5


@pins("max_min_tangent_of_a_weak_argument_is_strong")
def test_max_tangent_of_a_python_scalar():
    def f(api):
        return lambda x: api.lax.max(api.lax.atan(x), x)
    expected = ((jax.grad, 1.0), (jax.jacfwd, 1.0), (jax.hessian, 0.0))
    if JAX_VERSION >= (0, 11):     # 0.11's rewritten jvp: a strong grad, jacfwd crashes
        grad = jax.grad(f(jax))(1.5)
        assert (float(grad), grad.weak_type) == (1.0, False)
        assert jax.jacrev(f(jax))(1.5).weak_type
        for transform in (jax.jacfwd, jax.hessian):
            with pytest.raises(AttributeError, match="has no attribute 'dtype'"):
                transform(f(jax))(1.5)
    else:                          # 0.10.2 does as minijax
        for transform, value in expected:
            result = transform(f(jax))(1.5)
            assert (float(result), result.dtype, result.weak_type) == (value, np.float32, True)
    for transform, value in zip((minijax.grad, minijax.jacfwd, minijax.hessian),
                                (value for _, value in expected)):
        result = transform(f(minijax))(1.5)
        assert (float(result), result.dtype, result.weak_type) == (value, np.float32, True)


@pins("asinh_forward_derivative_of_a_python_scalar_crashes")
def test_asinh_forward_derivative_of_a_python_scalar():
    def f(api):
        return lambda x: api.numpy.sum(api.lax.asinh(x))
    expected = jax.jacrev(jax.jacrev(f(jax)))(-0.25)
    assert expected.weak_type
    if JAX_VERSION >= (0, 12):      # the scaled asinh jvp 0.12 introduced crashes
        for transform in (jax.jacfwd, jax.hessian):
            with pytest.raises(AttributeError, match="has no attribute 'dtype'"):
                transform(f(jax))(-0.25)
    else:                           # 0.10.2 and 0.11.2 give both
        hessian = jax.hessian(f(jax))(-0.25)
        assert hessian.weak_type and np.float32(hessian) == np.float32(expected)
        assert float(jax.jacfwd(f(jax))(-0.25)) == float(jax.grad(f(jax))(-0.25))
    result = minijax.hessian(f(minijax))(-0.25)
    assert result.weak_type and np.float32(result) == np.float32(expected)
    assert float(minijax.jacfwd(f(minijax))(-0.25)) == float(jax.grad(f(jax))(-0.25))


@pins("jax_checkpoint_grad_of_a_barrier_with_a_constant_tangent_fails")
def test_checkpoint_grad_of_a_barrier_with_a_constant_tangent():
    def f(api):
        g = api.custom_jvp(lambda d: d)
        g.defjvp(lambda p, t: (p[0], api.numpy.zeros_like(t[0])))
        return lambda a: api.lax.optimization_barrier((a, g(a)))[0]
    assert float(jax.grad(f(jax))(1.0)) == 1.0          # without the checkpoint
    if JAX_VERSION >= (0, 11):
        with pytest.raises(AttributeError, match="has no attribute 'accum'"):
            jax.grad(jax.checkpoint(f(jax)))(1.0)
    else:                                                # 0.10.2 differentiates it
        assert float(jax.grad(jax.checkpoint(f(jax)))(1.0)) == 1.0
    for policy in ("nothing_saveable", "everything_saveable"):
        remat = minijax.checkpoint(f(minijax),
                                   policy=getattr(minijax.checkpoint_policies, policy))
        assert float(minijax.grad(remat)(1.0)) == 1.0
