"""Small behaviours where minijax used to part from JAX: each is checked against JAX on
the same inputs (values, or the exception type)."""
from __future__ import annotations

import numpy as np
import pytest

from minijax.testing import assert_trees_match
from tests.library_helpers import assert_same_outcome
from tests.test_divergences import pins

I8 = np.array([1, 2], np.int8)
U8 = np.array([1, 2], np.uint8)
U32 = np.array([1], np.uint32)
F32 = np.ones(2, np.float32)


# A Python int meeting a narrower integer array wraps into its dtype; it must still
# fit the weak int32 it is passed to a jnp function as (u32 + 2**31 is refused too).
PYTHON_INT_OPERANDS = [
    lambda jax: jax.numpy.add(I8, 300),
    lambda jax: jax.numpy.asarray(I8) + 300,
    lambda jax: 300 - jax.numpy.asarray(U8),
    lambda jax: jax.numpy.multiply(I8, -200),
    lambda jax: jax.numpy.maximum(U8, -1),
    lambda jax: jax.numpy.where(I8 > 1, I8, 300),
    lambda jax: jax.numpy.clip(I8, 0, 300),
    lambda jax: jax.numpy.equal(I8, 300),
    lambda jax: jax.numpy.add(I8, 2**31 - 1),
    lambda jax: jax.numpy.add(I8, 2**31),
    lambda jax: jax.numpy.add(U32, 2**31),
    lambda jax: jax.numpy.add(F32, 2**40),
    lambda jax: jax.lax.add(I8, 300),
    lambda jax: jax.numpy.full_like(I8, 2**31),
    lambda jax: jax.numpy.pad(I8, 1, constant_values=300),
    # jnp.array converts Python ints with NumPy, which refuses what the dtype lacks.
    lambda jax: jax.numpy.array([1, 300], jax.numpy.int8),
    lambda jax: jax.numpy.asarray(-1, jax.numpy.uint8),
    lambda jax: jax.numpy.array(np.array([300]), jax.numpy.int8),
]


def test_python_int_operands_wrap_as_in_jax():
    for case in PYTHON_INT_OPERANDS:
        assert_same_outcome(case)


def test_python_int_operands_wrap_under_jit():
    def f(jax, x, u):
        return x + 300, x * 128, u - 1, jax.numpy.subtract(x, -2**31)

    assert_same_outcome(lambda jax: jax.jit(lambda x, u: f(jax, x, u))(I8, U8))
    assert_same_outcome(lambda jax: jax.jit(lambda u: u + 2**31)(U32))


# JAX's lax and jnp check axes with ValueError (not NumPy's AxisError, nor a TypeError
# from the type rule): out of range, repeated, or squeezed though not of size 1.
X3 = np.ones((1, 2, 1), np.float32)
AXIS_MISTAKES = [
    lambda jax: jax.lax.squeeze(X3, (1,)),
    lambda jax: jax.lax.squeeze(X3, (3,)),
    lambda jax: jax.lax.squeeze(X3, (0, -3)),
    lambda jax: jax.lax.squeeze(X3, (-1,)),
    lambda jax: jax.lax.expand_dims(X3, (-5,)),
    lambda jax: jax.lax.expand_dims(X3, (0, 0)),
    lambda jax: jax.numpy.squeeze(X3, 3),
    lambda jax: jax.numpy.sum(X3, axis=5),
    lambda jax: jax.numpy.sort(np.float32(1), axis=0),
]


def test_axis_mistakes_raise_jaxs_exception_types():
    for case in AXIS_MISTAKES:
        assert_same_outcome(case)
    assert_same_outcome(lambda jax: jax.jit(lambda x: jax.lax.squeeze(x, (1,)))(X3))


# lax's integer parameters (sizes, axes, indices, counts) refuse floats, even integral
# ones, with a TypeError, as JAX's do. JAX checks many of them in shape rules, after
# its eager dispatch cache, which takes `(2.0,)` for a `(2,)` seen before (JAX
# 0.10-0.12); a trace in a fresh interpreter is the oracle that earlier calls cannot
# change.
V4 = np.arange(4, dtype=np.float32)
M23 = np.ones((2, 3), np.float32)
# (float16 operands of shapes few other tests use)
V4H, M23H = V4.astype(np.float16), M23[:, :1].astype(np.float16)
FLOAT_INT_PARAMETERS = [
    lambda jax: jax.lax.iota(np.int32, 4.0),
    lambda jax: jax.lax.iota(np.int32, np.float32(4)),
    lambda jax: jax.lax.broadcasted_iota(np.int32, (2.0, 3), 1),
    lambda jax: jax.lax.slice(V4H, (1.0,), (3,)),
    lambda jax: jax.lax.dynamic_slice(V4H, (1,), (2.0,)),
    lambda jax: jax.lax.dynamic_slice(V4H, (1.0,), (2,)),
    lambda jax: jax.lax.dynamic_slice_in_dim(V4H, 1, 2.0),
    lambda jax: jax.lax.reduce_window(V4H, 0.0, jax.lax.add, (2.0,), (1,), "VALID"),
    lambda jax: jax.lax.reduce_window(V4H, 0.0, jax.lax.add, (2,), (1,), ((0.0, 1),)),
    lambda jax: jax.lax.pad(V4H, 0.0, ((1.0, 0, 0),)),
    lambda jax: jax.lax.pad(V4H, 0.0, ((1, 0, np.float32(1)),)),
    lambda jax: jax.lax.rev(V4H, (0.0,)),
    lambda jax: jax.lax.top_k(V4H, 2.0),
    lambda jax: jax.lax.approx_max_k(V4H, 2.0),
    lambda jax: jax.lax.reshape(V4H, (2.0, 2)),
    lambda jax: jax.lax.transpose(M23H, (1.0, 0)),
    lambda jax: jax.lax.squeeze(M23H[:1], (0.0,)),
    lambda jax: jax.lax.argmax(M23H, 1.0, np.int32),
    lambda jax: jax.lax.concatenate([M23H[:, :1], M23H[:, :1]], 1.0),
    lambda jax: jax.lax.sort(M23H, dimension=1.0),
    lambda jax: jax.lax.dot_general(M23H, M23H, (((1.0,), (1,)), ((), ()))),
    lambda jax: jax.lax.reduce_precision(V4H, 5.0, 10),
    lambda jax: jax.lax.split(V4H, (2.0, 2)),
]


def _traced_outcomes(lib):
    """Per case: 'ok', or the name of the exception `lib`'s trace of it raised."""
    names = []
    for case in FLOAT_INT_PARAMETERS:
        try:
            lib.make_jaxpr(lambda: case(lib))()
            names.append("ok")
        except Exception as error:     # noqa: BLE001 -- the type is what is compared
            names.append(type(error).__name__)
    return names


def test_float_integer_parameters_raise_as_in_jax():
    # JAX's side in a fresh interpreter: even its traces have caches that compare
    # params by value (after test_eager_jit_coverage, JAX 0.10.2 traced
    # `concatenate(..., 1.0)` without a word), so the suite's order must not decide.
    import json
    import subprocess
    import sys
    import minijax
    code = ("import json, jax; from tests.test_small_differences import _traced_outcomes; "
            "print(json.dumps(_traced_outcomes(jax)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert _traced_outcomes(minijax) == json.loads(done.stdout.strip().splitlines()[-1])
    # Where JAX takes an integral float (the axis of a cumulative op), minijax does too.
    assert_same_outcome(lambda jax: (jax.lax.cumsum(M23, 1.0), jax.lax.cumlogsumexp(M23, 1.0),
                                     jax.lax.broadcasted_iota(np.int32, (2, 3), 1.0)))


def test_float_integer_parameters_after_their_int_twins():
    # minijax's eager programs and memos, keyed by equal params, must not serve the
    # float spelling of a call made before with ints.
    import minijax
    lax = minijax.lax
    lax.iota(np.int32, 4), lax.rev(V4, (0,)), lax.slice(V4, (1,), (3,))
    lax.dot_general(M23, M23, (((1,), (1,)), ((), ())))
    for mistake, words in [(lambda: lax.iota(np.int32, 4.0), "iota: size must be"),
                           (lambda: lax.rev(V4, (0.0,)), "rev: dimensions must be"),
                           (lambda: lax.slice(V4, (1,), (np.float64(3),)),
                            "slice: limit_indices must be"),
                           (lambda: lax.slice(V4, (1,), (3,), (1.0,)), "strides must be"),
                           # (JAX's trace takes num_keys=1.0, its eager call refuses it.)
                           (lambda: lax.sort((M23, M23), num_keys=1.0), "num_keys must be"),
                           (lambda: lax.dot_general(M23, M23, (((1.0,), (1,)), ((), ()))),
                            "dimension_numbers must be")]:
        with pytest.raises(TypeError, match=words):
            mistake()
    with pytest.raises(TypeError, match="pad: padding_config must be integers"):
        minijax.jit(lambda v: lax.pad(v, 0.0, ((1, 0, 0.0),)))(V4)
    with pytest.raises(TypeError, match="window_dimensions must be integers"):
        lax.reduce_window(V4, 0.0, lax.add, (2.0,), (1,), "VALID")


def test_static_tuple_elements_of_another_type_are_checked_again():
    # JAX's jnp functions check `axis` before their jit, whose cache compares a tuple
    # by value: after `axis=(0,)`, `axis=(0.0,)` is still a TypeError, in JAX and
    # minijax alike, at the root (keyword or position) and under a transformation.
    x = np.ones((2, 3), np.float32)
    calls = [lambda jax, a=a: jax.numpy.sum(x, axis=a)
             for a in ((0,), (0.0,), (np.float32(1),), (np.int32(1),), (0, 1), (0, 1.0))]
    calls += [lambda jax: jax.numpy.max(x, (1,)), lambda jax: jax.numpy.max(x, (1.0,)),
              lambda jax: jax.vmap(lambda r: jax.numpy.sum(r, axis=(0,)))(x),
              lambda jax: jax.vmap(lambda r: jax.numpy.sum(r, axis=(0.0,)))(x),
              lambda jax: jax.numpy.sum(x, axis=((0,),))]
    for call in calls:
        assert_same_outcome(call)


def test_a_list_operand_error_names_the_function_and_position():
    # JAX 0.10-0.12: "<fn> requires ndarray or scalar arguments, got <type> at position N."
    import jax
    import minijax
    for call in (lambda jnp: jnp.sum([1, 2, 3]), lambda jnp: jnp.add(np.ones(1), [1.0]),
                 lambda jnp: jnp.where([True], 1, 2), lambda jnp: jnp.power(2.0, (1.0,))):
        with pytest.raises(TypeError) as theirs:
            call(jax.numpy)
        with pytest.raises(TypeError) as ours:
            call(minijax.numpy)
        ours, theirs = str(ours.value), str(theirs.value)
        # (The words around the type's text: which function, and which position.)
        assert ours.split(" got ")[0] == theirs.split(" got ")[0], (ours, theirs)
        assert ours.rsplit(" at ", 1)[1] == theirs.rsplit(" at ", 1)[1], (ours, theirs)


def test_a_vmapped_check_reports_the_last_failing_element():
    # JAX's batching rule of `check` keeps, of the lanes that failed, the last (0.10-0.12);
    # a checkify inside the vmap reports every lane instead (tested elsewhere).
    import jax
    import minijax

    def messages(lib):
        checkify = lib.experimental.checkify

        def f(x):
            checkify.check(x < 2, "first: {x}", x=x)
            checkify.check(x < 3, "second: {x}", x=x)
            return x
        x = lib.numpy.arange(6.0)      # (JAX 0.10-0.12's vmapped check fails on a NumPy x)
        whole = checkify.checkify(lib.vmap(f))(x)[0].get()
        nested = checkify.checkify(lib.vmap(lib.vmap(f)))(x.reshape(2, 3))[0].get()
        with pytest.raises(Exception) as eager:
            lib.vmap(f)(x)
        return whole, nested, str(eager.value)
    import jax.experimental.checkify  # noqa: F401
    import minijax.experimental.checkify  # noqa: F401
    assert messages(minijax) == messages(jax)
    assert messages(minijax)[0].startswith("first: 5.0")


def test_a_draw_past_2_32_words_with_threefry_partitionable_off_is_made_in_blocks(
        monkeypatch):
    # JAX (0.10-0.12) draws more than 2**32 - 2 words with the flag off as blocks of
    # 2**32 - 1 words, each under a key split from the draw's key; such a draw is only
    # traced here, and the block layout is checked at a block size of 5 words against
    # JAX's split and its public threefry_2x32.
    import jax
    import minijax
    from jax.extend.random import threefry_2x32
    from minijax.frontend import threefry_layout
    before = [lib.config.jax_threefry_partitionable for lib in (jax, minijax)]
    try:
        for lib in (jax, minijax):
            lib.config.update("jax_threefry_partitionable", False)
        shapes = [lib.eval_shape(lambda k, lib=lib: lib.random.bits(k, (2**32 + 5,)),
                                 lib.random.key(0)) for lib in (jax, minijax)]
        assert [(s.shape, np.dtype(s.dtype)) for s in shapes] == [((2**32 + 5,), np.uint32)] * 2
        monkeypatch.setattr(threefry_layout, "STREAM_BLOCK", 5)
        minijax.clear_caches()
        keys = np.asarray(jax.random.key_data(jax.random.split(jax.random.key(0), 3)))
        want = np.concatenate([threefry_2x32(keys[i], np.arange(n, dtype=np.uint32))
                               for i, n in enumerate((5, 5, 2))])
        np.testing.assert_array_equal(minijax.random.bits(minijax.random.key(0), (12,)), want)
    finally:
        for lib, value in zip((jax, minijax), before):
            lib.config.update("jax_threefry_partitionable", value)
        minijax.clear_caches()      # (no program of the 5-word blocks may outlive this)


# -- axes given as sequences ----------------------------------------------------------------

_BOX = np.zeros((4, 5), np.float32)
_BOX[1:3, 1:4] = 1


@pytest.mark.parametrize("case", [
    lambda jax: jax.numpy.size(_BOX, axis=(0, 1)),
    lambda jax: jax.numpy.size(_BOX, axis=[-1]),
    lambda jax: jax.numpy.size(_BOX, axis=2),
    lambda jax: jax.numpy.trim_zeros(_BOX),
    lambda jax: jax.numpy.trim_zeros(_BOX, "f", axis=1),
    lambda jax: jax.numpy.trim_zeros(_BOX, "b", axis=(0, -1)),
    lambda jax: jax.numpy.trim_zeros(_BOX, axis=[0]),
    lambda jax: jax.numpy.trim_zeros(_BOX, "x"),
    lambda jax: jax.numpy.trim_zeros(_BOX, axis=2),
    lambda jax: jax.numpy.trim_zeros(np.zeros((3, 2), np.int32)),
    lambda jax: jax.numpy.trim_zeros(np.array([0, 0, 2, 0, 1, 0], np.int32), "f"),
    lambda jax: jax.numpy.trim_zeros(np.float32(2)),
])
def test_size_and_trim_zeros_take_sequences_of_axes(case):
    # jnp.size counts along several axes; trim_zeros trims N-d arrays along `axis`
    assert_same_outcome(case)


@pins("a_list_axis_of_a_jitted_jnp_function_is_an_unhashable_static")
def test_a_list_axis_is_a_sequence_of_axes_or_refused_as_not_an_int():
    import jax
    import minijax
    x = np.arange(6, dtype=np.float32).reshape(2, 3) + 1
    for name in ("nanmean", "nanvar", "nansum", "nanmax", "median", "count_nonzero"):
        with pytest.raises(ValueError, match="Non-hashable static arguments"):
            getattr(jax.numpy, name)(x, axis=[0])
        assert_trees_match(getattr(minijax.numpy, name)(x, axis=[0]),
                           getattr(jax.numpy, name)(x, axis=(0,)))
    # as JAX's own reductions that are not jits of their own take it
    assert_trees_match(jax.numpy.sum(x, axis=[0]), jax.numpy.sum(x, axis=(0,)))
    for name in ("trapezoid", "cumsum", "sort"):
        with pytest.raises(ValueError, match="Non-hashable static arguments"):
            getattr(jax.numpy, name)(x, axis=[0])
        with pytest.raises(TypeError):
            getattr(minijax.numpy, name)(x, axis=[0])


_FRESH_JAX_RUNS_FLOAT_PARAMETERS = """
import json, jax, numpy as np
v, m = np.arange(4, dtype=np.float32), np.ones((2, 3), np.float32)
calls = [lambda s: jax.lax.slice(v, (1,), (3,), (s,)),
         lambda k: jax.lax.sort((m, m), num_keys=k)]
def outcome(call, value):
    try:
        call(value)
        return "ok"
    except Exception as error:
        return type(error).__name__
print(json.dumps([outcome(call, 1.0) for call in calls]))
"""


@pins("float_slice_strides_and_sort_num_keys_trace_but_do_not_run")
def test_float_strides_and_num_keys_are_refused_where_jax_traces_them():
    import json
    import subprocess
    import sys
    import jax
    import minijax
    calls = [lambda lax: lax.slice(V4, (1,), (3,), (1.0,)),
             lambda lax: lax.sort((M23, M23), num_keys=1.0)]
    for call in calls:
        assert "1.0" in str(jax.make_jaxpr(lambda: call(jax.lax))())   # JAX traces it
        with pytest.raises(TypeError, match="must be"):
            minijax.make_jaxpr(lambda: call(minijax.lax))()
        with pytest.raises(TypeError, match="must be"):
            call(minijax.lax)
    # Run eagerly, JAX's answer depends on what ran before in the process (its caches
    # compare params by value: after the int spelling, the float one can run), so a
    # fresh interpreter shows it: there JAX fails to run them.
    done = subprocess.run([sys.executable, "-c", _FRESH_JAX_RUNS_FLOAT_PARAMETERS],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == ["AttributeError", "TypeError"]
