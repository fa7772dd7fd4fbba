"""Small eager and indexing differences from JAX that users meet (issue 18 and parity).

Each case runs the same call through minijax and JAX and compares values, dtypes,
weak types, errors and their types, and -- where the point is the programs an eager
call makes -- the programs lowered (`tests/program_counting.py`):

1. an eager primitive with a NumPy operand converts it with NumPy, not with a
   conversion program per dtype;
2. `jnp.asarray` of a Python scalar, a list or a NumPy array while tracing compiles
   nothing (it was one small program per kind of scalar per process);
3. eager `lax.stop_gradient` hands its operand back without a program;
4. `lax.scatter_apply` refuses an `update_shape` that is not its updates' shape;
5. `allow_negative_indices` on `dynamic_slice`, `dynamic_update_slice` and their
   `*_in_dim` / `*_index_in_dim` helpers;
6. a static int index out of range is clamped, eagerly, under jit and under vmap, and
   an IndexError under JAX's `jax_check_static_indices` flag.

Shapes are this file's own, so no other test's program serves either side.
"""
import contextlib
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.testing import assert_trees_match
from tests.library_helpers import assert_same_outcome
from tests.program_counting import counted, programs


# -- 1. NumPy operands of an eager primitive ------------------------------------------------

_X17 = jnp.arange(17, dtype=jnp.float32)

NUMPY_OPERAND_CASES = {
    "int32 scalar start": lambda lax: lax.dynamic_slice(_X17, (np.int32(3),), (2,)),
    "int16 scalar start": lambda lax: lax.dynamic_slice(_X17, (np.int16(-4),), (3,)),
    "float64 array operand": lambda lax: lax.mul(_X17, np.linspace(0, 1, 17)),
    "float32 scalar operand": lambda lax: lax.max(_X17[:5], np.full(5, np.float32(2.5))),
}


@pytest.mark.parametrize("name", NUMPY_OPERAND_CASES)
def test_numpy_operand_needs_no_conversion_program(name):
    case = NUMPY_OPERAND_CASES[name]
    want, jax_first = counted(lambda: case(jax.lax))
    got, mini_first = counted(lambda: case(minijax.lax))
    assert_trees_match(got, want)
    # the primitive's own program at most, never a program converting the operand
    assert mini_first <= 1 and mini_first <= jax_first, (mini_first, jax_first)
    again, mini_repeat = counted(lambda: case(minijax.lax))
    assert mini_repeat == 0
    assert_trees_match(again, want)


def test_numpy_operand_overflow_wraps_as_in_jax():
    # a 64-bit value out of the 32-bit range: JAX's transfer wraps it (a float becomes
    # inf); the eager primitive sees the same value. NumPy's overflow warning comes
    # from JAX's Python dispatch, which converts only on a program's first call (its C++
    # path converts silently after), in either library: an earlier test's call decides
    # whether it shows, so it is not asserted.
    big = np.int64(2**33 + 5)
    assert_trees_match(minijax.lax.add(big, np.int32(1)), jax.lax.add(big, np.int32(1)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got, want = minijax.lax.neg(np.float64(1e300)), jax.lax.neg(np.float64(1e300))
    assert_trees_match(got, want)
    assert_trees_match(got, -jnp.float32(np.inf))


# -- 2. jnp.asarray while tracing ------------------------------------------------------------

_TRACED_CONSTANTS = [2.5, 7, True, 1 - 2j, [1, 2], [1.5, 2], np.arange(3.0), np.int16(4)]


@pytest.mark.parametrize("value", _TRACED_CONSTANTS, ids=repr)
def test_asarray_while_tracing_compiles_nothing(value):
    minijax.clear_caches()     # a program made once per process would be made again
    x = np.ones(3, np.float32)
    with programs("lowered") as made:
        jaxpr = minijax.make_jaxpr(lambda x: (x, mnp.asarray(value)))(x)
    assert len(made) == 0
    with programs("lowered") as made_by_jax:
        jax.make_jaxpr(lambda x: (x, jnp.asarray(value)))(x)
    assert len(made_by_jax) == 0
    assert jaxpr.out_avals[1].shape == np.shape(value)
    # the constant itself, eagerly: the same dtype and weak type as JAX's
    assert_trees_match(mnp.asarray(value), jnp.asarray(value))


TRACED_FUNCTIONS = {
    "jnp.pad": lambda m, x: m.numpy.pad(x, 1),
    "jnp.trapezoid": lambda m, x: m.numpy.trapezoid(x, dx=0.5),
    "scipy.linalg.block_diag": lambda m, x: m.scipy.linalg.block_diag(x[:2], x[1:]),
    "scipy.special.gammasgn": lambda m, x: m.scipy.special.gammasgn(x),
}


@pytest.mark.parametrize("name", TRACED_FUNCTIONS)
def test_functions_converting_scalars_trace_without_programs(name):
    import jax.scipy.linalg, jax.scipy.special  # noqa: E401,F401
    import minijax.scipy.linalg, minijax.scipy.special  # noqa: E401,F401
    fun = TRACED_FUNCTIONS[name]
    x = np.linspace(-2.5, 2, 3, dtype=np.float32)
    minijax.clear_caches()
    with programs("lowered") as made:
        minijax.make_jaxpr(lambda x: fun(minijax, x))(x)
    assert len(made) == 0
    assert_trees_match(minijax.jit(lambda x: fun(minijax, x))(x), fun(jax, x), rtol=1e-6)


def test_asarray_of_a_too_large_int_is_jaxs_overflow_error():
    for asarray in (jnp.asarray, mnp.asarray):
        with pytest.raises(OverflowError, match="too large"):
            asarray(2**40)


# -- 3. eager stop_gradient ------------------------------------------------------------------

def _as_jax_array(leaf):
    # JAX hands a Python or NumPy operand back as a typed host scalar or array of its
    # own; as an array it has the dtype and weak type compared here.
    return leaf if isinstance(leaf, jax.Array) else jnp.asarray(leaf)


def test_eager_stop_gradient_hands_the_array_back():
    x = jnp.arange(7.0) * 0.5
    for lax in (jax.lax, minijax.lax):
        out, made = counted(lambda: lax.stop_gradient(x))
        assert out is x and made == 0


@pytest.mark.parametrize("value", [2.5, 3, True, 1j, np.float64(0.25), np.arange(4.0),
                                   np.arange(3, dtype=np.int16)], ids=repr)
def test_eager_stop_gradient_of_host_values(value):
    want, _ = counted(lambda: jax.lax.stop_gradient(value))
    got, made = counted(lambda: minijax.lax.stop_gradient(value))
    assert made == 0
    assert_trees_match(_as_jax_array(got), _as_jax_array(want))
    assert type(got) is bool if type(value) is bool else True


def test_eager_stop_gradient_of_a_tree_and_of_non_values():
    tree = {"a": jnp.ones(3), "b": [1, np.float32(2)], "c": None}
    want = jax.tree_util.tree_map(_as_jax_array, jax.lax.stop_gradient(tree))
    got, made = counted(lambda: minijax.lax.stop_gradient(tree))
    assert made == 0 and got["a"] is tree["a"]
    assert_trees_match(jax.tree_util.tree_map(_as_jax_array, got), want)
    for bad in ("a", np.array(["x"])):
        assert_same_outcome(lambda lib: lib.lax.stop_gradient(bad))


def test_stop_gradient_still_stops_gradients():
    f = lambda lib: lib.grad(lambda x: lib.lax.stop_gradient(x) * x)(3.0)
    assert_trees_match(f(minijax), f(jax))


# -- 4. scatter_apply's update_shape -----------------------------------------------------

_OPERAND = np.arange(12, dtype=np.float32).reshape(3, 4)
_ROWS = np.array([[1], [2]], np.int32)


@pytest.mark.parametrize("update_shape,window", [
    ((2, 4), True), ((2, 2), True), ((4, 2), True), ((2,), True), ((), True),
    ((2,), False), ((), False), ((3,), False), ((2, 1), False)], ids=str)
def test_scatter_apply_update_shape(update_shape, window):
    operand = _OPERAND if window else _OPERAND[0]

    def case(lib):
        dnums = lib.lax.ScatterDimensionNumbers(
            update_window_dims=(1,) if window else (), inserted_window_dims=(0,),
            scatter_dims_to_operand_dims=(0,))
        return lib.lax.scatter_apply(operand, _ROWS, lambda v: v * 10 + 1, dnums,
                                     update_shape=update_shape)
    assert_same_outcome(case)


def test_scatter_apply_wrong_update_shape_message():
    dnums = minijax.lax.ScatterDimensionNumbers(
        update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    with pytest.raises(TypeError, match=r"rank 1, got update_shape \(\) of rank 0"):
        minijax.lax.scatter_apply(_OPERAND[0], _ROWS, jnp.sin, dnums, update_shape=())
    with pytest.raises(TypeError, match=r"update_shape \(3,\) has bound 3 .* bound 2"):
        minijax.lax.scatter_apply(_OPERAND[0], _ROWS, jnp.sin, dnums, update_shape=(3,))


# -- 5. allow_negative_indices ---------------------------------------------------------------

_V = np.arange(6, dtype=np.float32) * 1.5
_M = np.arange(12, dtype=np.float32).reshape(3, 4)


def _index_cases(lax, allow):
    kw = {"allow_negative_indices": allow}
    return {
        "dynamic_index_in_dim -1": lambda i=-1: lax.dynamic_index_in_dim(_V, i, **kw),
        "dynamic_index_in_dim -2 flat": lambda i=-2: lax.dynamic_index_in_dim(
            _M, i, 1, False, **kw),
        "dynamic_index_in_dim np -2": lambda i=np.int32(-2): lax.dynamic_index_in_dim(
            _V, i, **kw),
        "dynamic_update_index_in_dim -1": lambda i=-1: lax.dynamic_update_index_in_dim(
            _V, 9.0, i, 0, **kw),
        "dynamic_update_index_in_dim row": lambda i=-1: lax.dynamic_update_index_in_dim(
            _M, np.ones(4, np.float32), i, 0, **kw),
        "dynamic_slice_in_dim -3": lambda i=-3: lax.dynamic_slice_in_dim(_V, i, 2, **kw),
        "dynamic_update_slice_in_dim -1": lambda i=-1: lax.dynamic_update_slice_in_dim(
            _M, np.zeros((3, 2), np.float32), i, 1, **kw),
        "dynamic_slice -1": lambda i=-1: lax.dynamic_slice(_M, (i, 1), (2, 2), **kw),
        "dynamic_slice per axis": lambda i=-1: lax.dynamic_slice(
            _M, (i, i), (1, 2), allow_negative_indices=(allow, True)),
        "dynamic_update_slice -2": lambda i=-2: lax.dynamic_update_slice(
            _V, np.ones(2, np.float32), (i,), **kw),
        "dynamic_slice in range": lambda i=2: lax.dynamic_slice(_V, (i,), (3,), **kw),
    }


_CASE_NAMES = list(_index_cases(jax.lax, True))


@pytest.mark.parametrize("allow", [True, False])
@pytest.mark.parametrize("name", _CASE_NAMES)
def test_allow_negative_indices_static(name, allow):
    # a static negative index with negatives not allowed: the *_in_dim and plain
    # slices raise ValueError; JAX jits the *_index_in_dim helpers, so there the
    # index is traced and clamped
    assert_same_outcome(lambda lib: _index_cases(lib.lax, allow)[name]())


@pytest.mark.parametrize("allow", [True, False])
@pytest.mark.parametrize("name", _CASE_NAMES)
def test_allow_negative_indices_traced(name, allow):
    # the index traced under jit, and batched under vmap (in range, -1, far out)
    def jitted(lib):
        return lib.jit(lambda i: _index_cases(lib.lax, allow)[name](i))(np.int32(-1))

    def batched(lib):
        return lib.vmap(lambda i: _index_cases(lib.lax, allow)[name](i))(
            np.array([1, -1, -9, 7], np.int32))
    assert_same_outcome(jitted)
    assert_same_outcome(batched)


# -- 6. static int indices out of range -------------------------------------------------------

_A = np.arange(3, dtype=np.float32) + 0.5
_B = np.arange(6, dtype=np.float32).reshape(2, 3)

OUT_OF_RANGE_READS = {
    "x[5]": (_A, lambda x: x[5]),
    "x[3]": (_A, lambda x: x[3]),
    "x[-4]": (_A, lambda x: x[-4]),
    "x[np.int32(7)]": (_A, lambda x: x[np.int32(7)]),
    "x[1, 3]": (_B, lambda x: x[1, 3]),
    "x[-9, None, 1:]": (_B, lambda x: x[-9, None, 1:]),
    "x[:, 4]": (_B, lambda x: x[:, 4]),
    "x[2, [0, 2]]": (_B, lambda x: x[2, np.array([0, 2])]),
    "x.at[5].get()": (_A, lambda x: x.at[5].get()),
}


@pytest.mark.parametrize("name", OUT_OF_RANGE_READS)
def test_static_index_out_of_range_is_clamped(name):
    x, read = OUT_OF_RANGE_READS[name]
    assert_same_outcome(lambda lib: read(jnp.asarray(x)) if lib is jax
                         else read(mnp.asarray(x)))
    assert_same_outcome(lambda lib: lib.jit(read)(x))
    assert_same_outcome(lambda lib: lib.vmap(read)(np.stack([x, -x])))
    if "[0, 2]" in name:
        # JAX's gradient leaves out the clamped position its forward pass read:
        # registered, "gather_gradient_drops_clamped_index" (test_divergences.py)
        return
    assert_trees_match(minijax.grad(lambda x: read(x).sum())(x),
                       jax.grad(lambda x: read(x).sum())(x))


@contextlib.contextmanager
def _jax_checks_static_indices():
    jax.config.update("jax_check_static_indices", True)
    try:
        yield
    finally:
        jax.config.update("jax_check_static_indices", False)


@pytest.mark.parametrize("name", ["x[5]", "x[-4]", "x[1, 3]", "x[np.int32(7)]"])
def test_static_index_out_of_range_under_jaxs_check_flag(name):
    x, read = OUT_OF_RANGE_READS[name]
    with _jax_checks_static_indices():
        assert_same_outcome(lambda lib: lib.jit(lambda x: read(x))(x))
        with pytest.raises(IndexError, match="out of bounds"):
            minijax.make_jaxpr(read)(x)


def test_a_jitted_function_is_traced_again_when_jaxs_index_flag_changes():
    x, read = OUT_OF_RANGE_READS["x[5]"]
    ours, theirs = minijax.jit(read), jax.jit(read)
    assert_trees_match(ours(x), theirs(x))           # clamped
    with _jax_checks_static_indices():
        for fun in (ours, theirs):
            with pytest.raises(IndexError, match="out of bounds"):
                fun(x)
    assert_trees_match(ours(x), theirs(x))           # clamped again, from the cache


def test_static_index_of_an_empty_axis_is_an_index_error():
    assert_same_outcome(lambda lib: lib.jit(lambda x: x[0])(np.ones((0, 2), np.float32)))
