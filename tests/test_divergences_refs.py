"""Pins for `minijax/divergences/refs_surface.py`: for each record, JAX's behaviour on the
installed version *and* minijax's. When a JAX release changes one, its test fails and
the record can be revisited."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mjnp
from minijax.testing import JAX_VERSION, assert_trees_match
from tests.test_divergences import pins

X = np.arange(6, dtype=np.float32).reshape(2, 3)
V = np.array([1.0, 2.0, 3.0], np.float32)


def _both_ways(lib):
    """`f` eagerly and under the library's jit."""
    return [lambda f: f, lib.jit]


def _contents(r):
    return np.asarray(r[...])


# -- indexing -------------------------------------------------------------------------------

@pins("ref_list_index_crashes")
def test_list_index():
    for wrap in _both_ways(jax):
        for idx in ([0, 1, 1], ([0, 1], [2, 0])):
            with pytest.raises(ValueError, match="too many values to unpack"):
                wrap(lambda r: r[idx])(jax.new_ref(X))
    for wrap in _both_ways(minijax):
        m = minijax.new_ref(X)
        np.testing.assert_array_equal(wrap(lambda r: r[[0, 1], [2, 0]])(m), [2.0, 3.0])
        with pytest.raises(TypeError, match=r"non-tuple sequence .* r\[np.array\(seq\)\]"):
            wrap(lambda r: r[[0, 1, 1]])(m)
        np.testing.assert_array_equal(wrap(lambda r: r[np.array([0, 1, 1])])(m),
                                      X[[0, 1, 1]])


@pins("ref_float_index_accepted")
def test_float_index():
    for wrap in _both_ways(jax):
        np.testing.assert_array_equal(wrap(lambda r: r[1.0])(jax.new_ref(X)), X[1])
    with pytest.raises(TypeError, match="Indexer must have integer or boolean type"):
        jnp.asarray(X)[1.0]
    for wrap in _both_ways(minijax):
        with pytest.raises(TypeError, match="cannot index a ref with 1.0 of type float"):
            wrap(lambda r: r[1.0])(minijax.new_ref(X))


@pins("ref_negative_static_index_out_of_range_clamps")
def test_negative_static_index_out_of_range():
    for wrap in _both_ways(jax):
        np.testing.assert_array_equal(wrap(lambda r: r[-3])(jax.new_ref(X)), X[0])
    with pytest.raises(ValueError, match="Out of bound indexer"):
        jax.new_ref(X)[2]
    for wrap in _both_ways(minijax):
        with pytest.raises(IndexError, match="index -3 is out of bounds for axis 0 with size 2"):
            wrap(lambda r: r[-3])(minijax.new_ref(X))


@pins("ref_boolean_mask_index_crashes")
def test_boolean_mask():
    mask = np.array([True, False])
    for wrap in _both_ways(jax):
        with pytest.raises(IndexError, match="but 3 were indexed"):
            wrap(lambda r: r[mask])(jax.new_ref(X))
    np.testing.assert_array_equal(jnp.asarray(X)[mask], X[mask])
    mask2 = np.array([[True, False, True], [False, False, True]])
    for wrap in _both_ways(minijax):
        m = minijax.new_ref(X)
        np.testing.assert_array_equal(wrap(lambda r: r[mask])(m), X[mask])
        np.testing.assert_array_equal(wrap(lambda r: r[:, [True, False, True]])(m),
                                      X[:, [True, False, True]])
        np.testing.assert_array_equal(wrap(lambda r: r[mask2])(m), X[mask2])

        def write(r):
            r[mask2] = -1.0
        wrap(write)(m)
        expected = X.copy()
        expected[mask2] = -1.0
        np.testing.assert_array_equal(_contents(m), expected)
    with pytest.raises(TypeError, match="a boolean mask index must be concrete"):
        minijax.jit(lambda r, b: r[b])(minijax.new_ref(X), mask)
    with pytest.raises(IndexError, match=r"boolean index of shape \(3,\) does not match "
                       r"the indexed axes \(2,\)"):
        minijax.new_ref(X)[np.array([True, False, True])]


@pins("ref_concrete_array_index_out_of_range_outside_jit")
def test_concrete_array_index_out_of_range():
    i = jnp.int32(7)
    if JAX_VERSION >= (0, 12):          # fixed in 0.12: clamped eagerly and under grad
        np.testing.assert_array_equal(jax.new_ref(X)[i], X[1])
        np.testing.assert_array_equal(jax.grad(lambda x: jax.new_ref(x)[i])(V), [0.0, 0.0, 1.0])
    else:
        with pytest.raises(ValueError, match="Out of bound indexer: idx=7, dim=2"):
            jax.new_ref(X)[i]
        with pytest.raises(ValueError, match="Out of bound indexer: idx=7, dim=3"):
            jax.grad(lambda x: jax.new_ref(x)[i])(V)
    np.testing.assert_array_equal(jax.jit(lambda r, i: r[i])(jax.new_ref(X), i), X[1])
    m = minijax.new_ref(X)
    np.testing.assert_array_equal(m[i], X[1])
    np.testing.assert_array_equal(minijax.jit(lambda r, i: r[i])(m, i), X[1])
    np.testing.assert_array_equal(minijax.grad(lambda x: minijax.new_ref(x)[i])(V),
                                  [0.0, 0.0, 1.0])


@pins("ref_closed_over_scalar_array_index_under_jit_crashes")
def test_closed_over_scalar_array_index_under_jit():
    i = jnp.int32(1)

    def read_and_write(r):
        r[i] = r[i] * 10.0
        return r[i]
    if JAX_VERSION >= (0, 12):          # fixed in 0.12: both run
        np.testing.assert_array_equal(jax.jit(lambda r: r[i])(jax.new_ref(X)), X[1])
        r = jax.new_ref(X)
        np.testing.assert_array_equal(jax.jit(read_and_write)(r), X[1] * 10)
        np.testing.assert_array_equal(_contents(r), [X[0], X[1] * 10])
    else:
        with pytest.raises(jax.errors.TracerBoolConversionError):
            jax.jit(lambda r: r[i])(jax.new_ref(X))
        with pytest.raises(jax.errors.TracerBoolConversionError):
            jax.jit(read_and_write)(jax.new_ref(X))
    np.testing.assert_array_equal(jax.jit(lambda r, i: r[i])(jax.new_ref(X), i), X[1])
    m = minijax.new_ref(X)
    np.testing.assert_array_equal(minijax.jit(read_and_write)(m), X[1] * 10)
    np.testing.assert_array_equal(_contents(m), [X[0], X[1] * 10])



@pins("ref_ds_view_loses_its_clamp_under_a_traced_index")
def test_ds_view_clamp_under_a_traced_index():
    rows = np.arange(30, dtype=np.float32).reshape(5, 6)

    def through_views(lib):
        def f(m, i, j):
            r = lib.new_ref(m)
            return r.at[lib.ds(i, 4)][1:3, j], r.at[lib.ds(i, 4)][1:3, 0]
        return lib.jit(f)
    traced, static = through_views(jax)(rows, 3, 0)
    np.testing.assert_array_equal(static, rows[2:4, 0])
    if JAX_VERSION >= (0, 12):          # fixed in 0.12: the traced j reads the same rows
        np.testing.assert_array_equal(traced, rows[2:4, 0])
    else:
        np.testing.assert_array_equal(traced, rows[3:5, 0])
    for got in through_views(minijax)(rows, 3, 0):
        np.testing.assert_array_equal(got, rows[2:4, 0])


@pins("ref_eager_ds_array_start_fails")
def test_eager_ds_array_start():
    # a shape and starts no other test accesses eagerly: JAX's failure depends on
    # whether the same access ran before with a Python int start
    x = np.arange(7, dtype=np.float32)
    r = jax.new_ref(x)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        r[jax.ds(jnp.int32(3), 2)]
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.ref.addupdate(r, jax.ds(jnp.int32(2), 2), np.ones(2, np.float32))
    out_of_range = (jax.errors.TracerBoolConversionError if JAX_VERSION >= (0, 12)
                    else ValueError)
    with pytest.raises(out_of_range):
        r[jax.ds(jnp.int32(6), 3)] = np.zeros(3, np.float32)
    np.testing.assert_array_equal(_contents(r), x)
    np.testing.assert_array_equal(r[jax.ds(1, 2)], x[1:3])
    np.testing.assert_array_equal(
        jax.jit(lambda r, i: r[jax.ds(i, 3)])(r, jnp.int32(6)), x[4:])
    m = minijax.new_ref(x)
    np.testing.assert_array_equal(m[minijax.ds(jnp.int32(3), 2)], x[3:5])
    minijax.ref.addupdate(m, minijax.ds(jnp.int32(2), 2), np.ones(2, np.float32))
    m[minijax.ds(jnp.int32(6), 3)] = np.zeros(3, np.float32)
    np.testing.assert_array_equal(_contents(m), [0, 1, 3, 4, 0, 0, 0])


def test_the_fuzz_rows_of_eager_ds_array_starts_are_explained():
    """Both of JAX's failures (the out-of-range one on 0.10/0.11 as the fuzzer met it,
    seed 2212:139) are the record's, in the eager row only and with minijax running."""
    from minijax.divergences.fuzz import FUZZ_ROW_MATCHERS
    from minijax.testing.report import Row
    explains = FUZZ_ROW_MATCHERS["ref_eager_ds_array_start_fails"]
    for error in ("TracerBoolConversionError: Attempted boolean conversion",
                  "ValueError: Out of bound slice: start=2, dim=2."):
        assert explains("eager", Row("eager", "error", jax_error=error))
        assert not explains("jit", Row("jit", "error", jax_error=error))
        assert not explains("eager", Row("eager", "error", jax_error=error,
                                         minijax_error="ValueError: no"))
    assert not explains("eager", Row("eager", "error", jax_error="ValueError: other"))


@pins("ref_strided_ds_out_of_range_reads_and_writes_differ")
def test_strided_ds_out_of_range():
    x = np.arange(8, dtype=np.float32)
    v = np.array([-1.0, -2.0, -3.0], np.float32)

    def read_then_write(lib):
        def f(x, i):
            r = lib.new_ref(x)
            read = r[lib.ds(i, 3, 2)]
            r[lib.ds(i, 3, 2)] = v
            return read, r[...]
        return lib.jit(f)
    read, written = read_then_write(jax)(x, 7)
    np.testing.assert_array_equal(read, [7, 7, 7])
    np.testing.assert_array_equal(written, np.r_[x[:7], -1])
    read, written = read_then_write(minijax)(x, 7)
    np.testing.assert_array_equal(read, [3, 5, 7])
    np.testing.assert_array_equal(written, [0, 1, 2, -1, 4, -2, 6, -3])


def _add_at_out_of_range(ref_mod):
    def f(r):
        ref_mod.addupdate(r, np.array([5, 0]), np.ones((2, 3), np.float32))
        r[np.array([5, 0])] = r[np.array([5, 0])] + 10.0
    return f


@pins("ref_out_of_range_integer_array_writes_dropped")
def test_out_of_range_integer_array_writes():
    idx = np.array([5, 0])
    for wrap in _both_ways(jax):
        r = jax.new_ref(X)
        np.testing.assert_array_equal(wrap(lambda r: r[idx])(r), X[[1, 0]])   # clamped
        wrap(_add_at_out_of_range(jax.ref))(r)
        np.testing.assert_array_equal(_contents(r), np.stack([X[0] + 11, X[1]]))
    for wrap in _both_ways(minijax):
        m = minijax.new_ref(X)
        wrap(_add_at_out_of_range(minijax.ref))(m)
        np.testing.assert_array_equal(_contents(m), X + 11)


@pins("ref_arithmetic_on_a_ref_misreported")
def test_arithmetic_on_a_ref():
    r = jax.new_ref(X)
    for f, name in [(lambda r: r + 1, "_add"), (lambda r: r > 0, "_gt"),
                    (lambda r: r.sum(), "sum")]:
        with pytest.raises(AttributeError, match=f"'AbstractRef' object has no attribute "
                           f"'{name}'"):
            jax.jit(f)(r)
    # 0.12 names the ref and says to read it; the jit errors above stay
    with pytest.raises(TypeError, match=r"sin got a Ref of type Ref\{float32\[2,3\]\}.*"
                       r"Did you forget to read its value" if JAX_VERSION >= (0, 12)
                       else "got <class .*DynamicJaxprTracer"):
        jnp.sin(r)
    m = minijax.new_ref(X)
    for f in (lambda r: r + 1, lambda r: r > 0, lambda r: mjnp.sin(r)):
        for wrap in _both_ways(minijax):
            with pytest.raises((TypeError, minijax.RefError), match=r"a ref is not an array.* "
                               r"r\[\.\.\.\]"):
                wrap(f)(m)
    with pytest.raises(TypeError, match=r"reduce_sum: operand must be an array, got the ref "
                       r"Ref\{float32\[2,3\]\}; a ref is not an array"):
        minijax.jit(lambda r: r.sum())(m)


# -- writes and dtypes -------------------------------------------------------------------------

@pins("ref_python_scalar_write_kinds")
def test_python_scalar_write_kinds():
    c = np.zeros(2, np.complex64)

    def write(r, idx, v):
        r[idx] = v
    for wrap in _both_ways(jax):
        with pytest.raises(ValueError, match="Invalid dtype for `swap`"):
            wrap(lambda r: write(r, 0, 2.5))(jax.new_ref(c))
        with pytest.raises(ValueError, match="Invalid dtype for `swap`"):
            wrap(lambda r: write(r, (0, 0), True))(jax.new_ref(X))
        with pytest.raises(ValueError, match="Invalid dtype for `swap`"):
            wrap(lambda r: write(r, (0, 0), 7))(jax.new_ref(X))
    for wrap in _both_ways(minijax):
        m, f = minijax.new_ref(c), minijax.new_ref(X)
        wrap(lambda r: write(r, 0, 2.5))(m)
        wrap(lambda r: write(r, (0, 0), True))(f)
        wrap(lambda r: write(r, (1, 0), 7))(f)
        np.testing.assert_array_equal(_contents(m), [2.5, 0])
        assert float(f[0, 0]) == 1.0 and float(f[1, 0]) == 7.0
        with pytest.raises(minijax.RefError, match="Python float 2.5 in a ref of dtype int32"):
            wrap(lambda r: write(r, 0, 2.5))(minijax.new_ref(np.zeros(2, np.int32)))
    np.testing.assert_array_equal(jnp.asarray(c).at[0].set(2.5), [2.5, 0])


def _store_strong_then_add_half(lib, hnp):
    def f():
        r = lib.new_ref(1.0)
        r[...] = hnp.float32(5.0)
        return r[...] + np.float16(1)
    return f


@pins("ref_weak_type_sticks_to_the_ref")
def test_weak_type_sticks_to_the_ref():
    fixed = JAX_VERSION >= (0, 11)      # 0.11's ref of a Python float is strong
    for wrap in _both_ways(jax):
        out = wrap(_store_strong_then_add_half(jax, jnp))()
        assert out.dtype == (np.float32 if fixed else np.float16) and float(out) == 6.0
    assert jax.new_ref(1.0)[...].weak_type != fixed
    for wrap in _both_ways(minijax):
        out = wrap(_store_strong_then_add_half(minijax, mjnp))()
        assert out.dtype == np.float32 and float(out) == 6.0
    assert not minijax.new_ref(1.0)[...].weak_type


# -- methods and views -------------------------------------------------------------------------

@pins("ref_eager_methods_missing")
def test_eager_methods():
    r = jax.new_ref(X)
    for name in ("get", "set", "swap"):
        assert not hasattr(r, name)
    np.testing.assert_array_equal(jax.jit(lambda r: r.get())(r), X)
    with pytest.raises(TypeError, match="has no len"):
        jax.jit(lambda r: np.float32(len(r.at[1:])))(r)
    m = minijax.new_ref(X)
    np.testing.assert_array_equal(m.get(), X)
    np.testing.assert_array_equal(m.swap(np.zeros(3, np.float32), 1), X[1])
    m.set(np.ones(3, np.float32), 0)
    np.testing.assert_array_equal(_contents(m), [[1, 1, 1], [0, 0, 0]])
    assert len(m.at[1:]) == 1
    assert float(minijax.jit(lambda r: np.float32(len(r.at[1:])))(m)) == 1.0


def _addupdate_view(ref_mod):
    def f(r):
        ref_mod.addupdate(r.at[1], 0, np.float32(5))
    return f


@pins("ref_addupdate_through_view_under_jit")
def test_addupdate_through_view():
    message = ("Multiple indexers are not supported for `addupdate`" if JAX_VERSION >= (0, 11)
               else "Only single indexer is supported")       # reworded in 0.11
    with pytest.raises(NotImplementedError, match=message):
        jax.jit(_addupdate_view(jax.ref))(jax.new_ref(X))
    expected = X.copy()
    expected[1, 0] += 5
    for wrap in _both_ways(minijax):
        m = minijax.new_ref(X)
        wrap(_addupdate_view(minijax.ref))(m)
        np.testing.assert_array_equal(_contents(m), expected)


def _write_through_reshape(ref_mod, how):
    def f(r):
        if how == "set":
            r.reshape(6)[1:4] = np.ones(3, np.float32)
            r.at[1].reshape(3, 1)[2] = np.full(1, 9.0, np.float32)
        elif how == "swap":
            return ref_mod.swap(r.reshape(6), 2, np.float32(10))
        else:
            ref_mod.addupdate(r.reshape(6), 2, np.float32(10))
    return f


@pins("ref_write_through_reshape_view_under_jit")
def test_write_through_reshape_view_under_jit():
    np.testing.assert_array_equal(jax.jit(lambda r: r.reshape(6)[4])(jax.new_ref(X)), 4.0)
    written = X.copy()
    written.reshape(6)[1:4] = 1.0
    written[1].reshape(3, 1)[2] = 9.0
    swapped, added = X.copy(), X.copy()
    swapped.reshape(6)[2] = 10.0
    added.reshape(6)[2] += 10.0
    cases = (("set", written), ("swap", swapped), ("addupdate", added))
    if JAX_VERSION >= (0, 11):          # fixed in 0.11: the writes go through the view
        for how, expected in cases:
            r = jax.new_ref(X)
            out = jax.jit(_write_through_reshape(jax.ref, how))(r)
            np.testing.assert_array_equal(_contents(r), expected)
            assert how != "swap" or float(out) == 2.0
    else:
        for how in ("set", "swap"):
            with pytest.raises(ValueError, match="Length of slice indices must match"):
                jax.jit(_write_through_reshape(jax.ref, how))(jax.new_ref(X))
        with pytest.raises(NotImplementedError, match="Only single indexer is supported"):
            jax.jit(_write_through_reshape(jax.ref, "addupdate"))(jax.new_ref(X))
    for wrap in _both_ways(minijax):
        for how, expected in cases:
            m = minijax.new_ref(X)
            out = wrap(_write_through_reshape(minijax.ref, how))(m)
            np.testing.assert_array_equal(_contents(m), expected)
            if how == "swap":
                assert float(out) == 2.0


def _through_views(lib, hnp):
    def f(x):
        r = lib.new_ref(hnp.zeros((2, 3), np.float32))
        r.at[1][...] = x * x
        r.at[0].at[1:][...] = x[:2]
        r.reshape(6)[2:5] += x
        return r[...].sum(0)
    return f


def _without_views(x):
    r = np.zeros((2, 3), np.float32)
    r = jnp.asarray(r).at[1].set(x * x).at[0, 1:].set(x[:2])
    flat = r.reshape(6).at[2:5].add(x)
    return flat.reshape(2, 3).sum(0)


@pins("jax_ref_views_under_autodiff_fail")
def test_views_under_autodiff():
    fj, fm = _through_views(jax, jnp), _through_views(minijax, mjnp)
    with pytest.raises(TypeError, match="Cannot transform type: GradTracer"):
        jax.grad(lambda x: fj(x).sum())(V)
    with pytest.raises(TypeError, match="Cannot transform type: JVPTracer"):
        jax.jvp(fj, (V,), (V,))
    with pytest.raises(TypeError, match="Cannot transform type"):
        jax.jacrev(fj)(V)
    _match(minijax.jvp(fm, (V,), (V,)), jax.jvp(_without_views, (V,), (V,)))
    _match(minijax.grad(lambda x: fm(x).sum())(V), jax.grad(lambda x: _without_views(x).sum())(V))
    _match(minijax.jacfwd(fm)(V), jax.jacfwd(_without_views)(V))
    _match(minijax.jacrev(fm)(V), jax.jacrev(_without_views)(V))
    _match(minijax.linearize(fm, V)[1](V), jax.linearize(_without_views, V)[1](V))


def _match(a, b):
    assert_trees_match(a, b, check_weak_types=False, rtol=1e-6, atol=1e-6)


# -- freeze, free_ref, empty_ref -----------------------------------------------------------------

def _freeze_then(lib, use):
    def f(x):
        r = lib.new_ref(x)
        v = lib.freeze(r)
        return use(r, v)
    return f


def _read(r, v):
    return v + r[...]


def _write(r, v):
    r[0] = 7.0
    return v


@pins("ref_use_after_freeze_under_jit")
def test_use_after_freeze_under_jit():
    # The frozen value unused: JAX lets the read and the write through.
    np.testing.assert_array_equal(jax.jit(_freeze_then(jax, lambda r, v: r[...] * 2))(V), V * 2)
    np.testing.assert_array_equal(
        jax.jit(_freeze_then(jax, lambda r, v: (r.__setitem__(0, 7.0), r[...])[1]))(V),
        [7.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="`get` must be called on `Ref` types"):
        jax.jit(_freeze_then(jax, _read))(V)
    if JAX_VERSION >= (0, 12):          # 0.12 lets this write through too
        np.testing.assert_array_equal(jax.jit(_freeze_then(jax, _write))(V), V)
    else:
        with pytest.raises(AttributeError, match="inner_aval"):
            jax.jit(_freeze_then(jax, _write))(V)
    for use, doing in [(lambda r, v: r[...] * 2, "get"), (_read, "get"), (_write, "set")]:
        with pytest.raises(minijax.RefError, match=rf"is used after freeze \(at .*\) by {doing}"):
            minijax.jit(_freeze_then(minijax, use))(V)


def _consume_twice(lib, how):
    def f(x):
        r = lib.new_ref(x)
        if how == "freeze":
            return lib.freeze(r) + lib.freeze(r)
        lib.free_ref(r)
        lib.free_ref(r)
        return x
    return f


@pins("ref_consumed_twice_under_jit_crashes")
def test_consumed_twice_under_jit():
    for how in ("freeze", "free_ref"):
        with pytest.raises(KeyError):
            jax.jit(_consume_twice(jax, how))(V)
        with pytest.raises(minijax.RefError, match=rf"is used after {how} .* by {how}"):
            minijax.jit(_consume_twice(minijax, how))(V)
    r = jax.new_ref(V)
    with pytest.raises(KeyError):
        jax.jit(lambda: jax.freeze(r))()
    m = minijax.new_ref(V)
    with pytest.raises(minijax.RefError, match="only the code that created a ref may freeze it"):
        minijax.jit(lambda: minijax.freeze(m))()
    np.testing.assert_array_equal(_contents(m), V)


def _write_both(a, b):
    a[0] = 10.0
    b[1] = 20.0


@pins("ref_shallow_copy_aliases")
def test_shallow_copy():
    import copy
    r = jax.new_ref(V)
    c = copy.copy(r)
    c[0] = 5.0
    assert float(r[0]) == 5.0                                    # one buffer, two names
    with pytest.raises(jax.errors.JaxRuntimeError, match="donate the same buffer twice"):
        jax.jit(_write_both)(r, c)
    d = copy.deepcopy(r)
    d[0] = 7.0
    assert float(r[0]) == 5.0
    m = minijax.new_ref(V)
    with pytest.raises(minijax.RefError, match=r"copy.copy of the Ref\{float32\[3\]\} .* "
                       r"\(aliasing\)"):
        copy.copy(m)
    tree = copy.deepcopy({"a": m, "b": [m]})
    tree["a"][0] = 7.0
    assert tree["b"][0] is tree["a"] and float(m[0]) == 1.0 and float(tree["a"][0]) == 7.0


def _empty_like_ref(lib, r):
    def f():
        e = lib.empty_ref(lib.typeof(r))
        e[...] = np.ones(3, np.float32)
        return lib.freeze(e)
    return f


@pins("ref_empty_ref_of_a_ref_type_crashes")
def test_empty_ref_of_a_ref_type():
    with pytest.raises(AssertionError):
        jax.jit(_empty_like_ref(jax, jax.new_ref(V)))()
    m = minijax.new_ref(V)
    for wrap in _both_ways(minijax):
        np.testing.assert_array_equal(wrap(_empty_like_ref(minijax, m))(), np.ones(3))


# -- autodiff ------------------------------------------------------------------------------------

def _with_counter(lib, counter, log):
    def f(x):
        counter[...] += 1.0
        log[0] = 1.0
        return x * x
    return f


@pins("jax_jacfwd_with_closed_over_ref_write_fails")
def test_jacfwd_with_closed_over_ref_write():
    c, log = jax.new_ref(np.float32(0)), jax.new_ref(np.zeros(2, np.float32))
    for jac in (jax.jacfwd, lambda f: jax.hessian(lambda x: f(x).sum())):
        with pytest.raises(Exception, match="performing a set/swap operation with vmapped "
                           "value on an unbatched array reference"):
            jac(_with_counter(jax, c, log))(V)
    np.testing.assert_array_equal(jax.jacrev(_with_counter(jax, c, log))(V), np.diag(2 * V))
    m, mlog = minijax.new_ref(np.float32(0)), minijax.new_ref(np.zeros(2, np.float32))
    f = _with_counter(minijax, m, mlog)
    np.testing.assert_array_equal(minijax.jacfwd(f)(V), np.diag(2 * V))
    assert float(m[...]) == 1.0
    np.testing.assert_array_equal(minijax.hessian(lambda x: f(x).sum())(V), 2 * np.eye(3))
    assert float(m[...]) == 2.0 and float(mlog[0]) == 1.0


def _writes_then_reads(r, x):
    r[...] = x * 2.0
    return r[...].sum()


@pins("jax_jvp_array_tangent_for_ref_primal_crashes")
def test_jvp_array_tangent_for_ref_primal():
    r = jax.new_ref(V)
    with pytest.raises(AttributeError, match="'numpy.ndarray' object has no attribute 'aval'"):
        jax.jvp(_writes_then_reads, (r, V), (np.ones(3, np.float32), V))
    np.testing.assert_array_equal(_contents(r), V * 2)          # written before the crash
    with pytest.raises(ValueError, match="`get` must be called on `Ref` types"):
        jax.jvp(lambda r, x: r[...] * x, (jax.new_ref(V), V), (np.ones(3, np.float32), V))
    m = minijax.new_ref(V)
    with pytest.raises(minijax.MinijaxError, match=r"a primal of type Ref\{float32\[3\]\} needs a "
                       r"tangent of type Ref\{float32\[3\]\}"):
        minijax.jvp(_writes_then_reads, (m, V), (np.ones(3, np.float32), V))
    np.testing.assert_array_equal(_contents(m), V)


def _read_out_of_range(lib):
    return lambda x: lib.new_ref(x)[np.array([5, 0])]


@pins("jax_grad_of_out_of_range_integer_array_read_drops_cotangent")
def test_grad_of_out_of_range_read():
    t = np.array([1.0, 2.0, 3.0], np.float32)
    fj, fm = _read_out_of_range(jax), _read_out_of_range(minijax)
    _, tangent = jax.jvp(fj, (V,), (t,))
    np.testing.assert_array_equal(tangent, [3.0, 1.0])         # y[0] follows x[2]
    np.testing.assert_array_equal(jax.jacrev(fj)(V), [[0, 0, 0], [1, 0, 0]])
    np.testing.assert_array_equal(jax.grad(lambda x: fj(x)[0])(V), [0, 0, 0])
    expected = [[0, 0, 1], [1, 0, 0]]
    np.testing.assert_array_equal(minijax.jacrev(fm)(V), expected)
    np.testing.assert_array_equal(minijax.jacfwd(fm)(V), expected)
    np.testing.assert_array_equal(minijax.jit(minijax.grad(lambda x: fm(x)[0]))(V), [0, 0, 1])
    _match(minijax.jvp(fm, (V,), (t,)), jax.jvp(fj, (V,), (t,)))
