"""The eager calls session 16 made cheaper (issue #18, benchmarks/eager_dispatch.py)
keep their results and errors and stay on JAX's C++ dispatch when repeated:

* `jitted_eagerly` functions run a generated frame with the function's own
  parameters (`frontend/eager_jit.py`, `_fast_caller`): a call spelled with a static
  argument by position or by keyword, or with two optional arguments, is one program;
* `jnp.where(c, x, y)` is one cached program, as JAX's jitted `_where`;
* `random.normal`/`uniform` with a concrete raw key wrap it inside their program;
* a `jnp.ufunc` instance's call is its function's frame, with `out`/`where` refused;
* `root_modes.everywhere`, the flag read before the per-thread one, is False while
  any thread is off the direct path, so that thread's calls keep their checks;
* (session 23) a function of JAX's sharding in types (`dot`, `matmul`, ...) is its
  frame with `out_sharding=None` added, any other value handed to the placing wrapper;
* (session 18) a call with one static argument goes to an executable with that
  value bound, found by a dict lookup in the frame, instead of JAX's C++ static
  handling: still one trace and one program per value, the same results and errors.
"""
import inspect
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
import minijax.random as mrandom
from minijax.ir import root_modes
from minijax.testing import assert_trees_match
from tests.library_helpers import assert_same_outcome
from tests.program_counting import programs

no_tracing = getattr(jax, "no_tracing", None)

_M = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
_V = np.linspace(-1, 1, 5, dtype=np.float32)

# name -> (minijax call, JAX call), each of the module (mnp / jnp, random).
CALLS = {
    "where": lambda np_, m, v: np_.where(v > 0, v, 0.0),
    "where, int scalar": lambda np_, m, v: np_.where(v > 0, 2, v),
    "nanmean, axis by position": lambda np_, m, v: np_.nanmean(m, 1),
    "nanmean, two optionals": lambda np_, m, v: np_.nanmean(m, axis=0, keepdims=True),
    "sum, where by keyword": lambda np_, m, v: np_.sum(m, where=m > 0.5),
    "ufunc add": lambda np_, m, v: np_.add(m, 1.0),
    "block": lambda np_, m, v: np_.block([[m, m], [m, m]]),
}


@pytest.mark.parametrize("name", CALLS)
def test_calls_match_jax_and_repeat_in_cpp_dispatch(name):
    call = CALLS[name]
    m, v = jnp.asarray(_M), jnp.asarray(_V)
    expected = call(jnp, m, v)
    for _ in range(2):
        assert_trees_match(call(mnp, m, v), expected)
    if no_tracing is not None:      # (jax 0.10.2 has none)
        with no_tracing():
            assert_trees_match(call(mnp, m, v), expected)


def test_static_argument_by_position_or_keyword_is_one_program():
    m = jnp.asarray(_M[:2])       # a shape no other test here uses
    with programs("lowered") as made:
        by_keyword, by_position = mnp.nanmean(m, axis=1), mnp.nanmean(m, 1)
    assert len(made) == 1
    assert_trees_match([by_keyword, by_position], [jnp.nanmean(m, axis=1)] * 2)


def test_one_static_argument_calls_the_executable_of_its_value():
    m, m2 = jnp.asarray(_M[:, :3]), jnp.asarray(_M[1:, :3])     # shapes only this test uses
    bound = mnp.nanmean.eager_jit.call_cache().bound["axis"]
    with programs("lowered") as made:
        first = [mnp.nanmean(m, axis=0), mnp.nanmean(m, 0), mnp.nanmean(m2, 0)]
    assert len(made) == 2       # one per shape, whichever way `axis` came
    assert bound[0][0] is int
    assert_trees_match(first, [jnp.nanmean(m, 0)] * 2 + [jnp.nanmean(m2, 0)])
    if no_tracing is not None:
        with no_tracing():
            assert_trees_match(mnp.nanmean(m2, axis=0), jnp.nanmean(m2, 0))
    # Equal values of other types (JAX keys static values by type too), and a call
    # after the caches were emptied.
    for axis in (False, 0.0, (0,)):
        assert_same_outcome(lambda lib: lib.numpy.nanmean(m, axis=axis))
    assert bound[0][0] is int
    minijax.clear_caches()
    assert not bound
    assert_trees_match(mnp.nanmean(m, 1), jnp.nanmean(m, 1))
    assert list(bound) == [1]


@pytest.mark.parametrize("sampler", ["normal", "uniform"])
def test_random_with_a_raw_key_is_one_program_equal_to_jax_and_jit(sampler):
    key = mrandom.PRNGKey(7)
    draw = getattr(mrandom, sampler)
    with programs("lowered") as made:
        eager = draw(key, (6,))
    assert len(made) == 1        # no eager random_wrap before the sampler's program
    assert_trees_match(eager, getattr(jax.random, sampler)(jax.random.PRNGKey(7), (6,)))
    assert_trees_match(eager, minijax.jit(lambda k: draw(k, (6,)))(key))
    if no_tracing is not None:
        draw(key, (6,))
        with no_tracing():
            assert_trees_match(draw(key, (6,)), eager)


def test_random_keeps_its_key_errors():
    for bad, jax_bad in [(jnp.zeros(3, np.uint32), jnp.zeros(3, np.uint32)),
                         (jnp.zeros(2, np.int32), jnp.zeros(2, np.int32))]:
        with pytest.raises(TypeError) as ours:
            mrandom.normal(bad, (2,))
        with pytest.raises(TypeError):
            jax.random.normal(jax_bad, (2,))
        assert "key" in str(ours.value)


def test_ufunc_call_is_the_function_frame_with_numpy_keywords():
    assert type(mnp.add) is mnp.ufunc and isinstance(mnp.multiply, mnp.ufunc)
    assert str(inspect.signature(mnp.add)) == "(*args, out=None, where=None)"
    v = jnp.asarray(_V)
    assert_trees_match(mnp.add(v, v, out=None, where=None), jnp.add(v, v))
    for keyword in ("out", "where"):
        with pytest.raises(NotImplementedError, match=f"{keyword} argument of"):
            mnp.add(v, v, **{keyword: v})
        with pytest.raises(NotImplementedError):
            jnp.add(v, v, **{keyword: v})
    # The operands are checked first, as JAX's ufunc does.
    with pytest.raises(TypeError):
        jnp.add([1.0], v, out=v)
    with pytest.raises(TypeError, match="add"):
        mnp.add([1.0], v, out=v)
    user = mnp.frompyfunc(lambda a, b: a * b + 1, 2, 1)
    assert_trees_match(user(v, v), v * v + 1)
    with pytest.raises(NotImplementedError, match="out argument of"):
        user(v, v, out=v)


@pytest.mark.parametrize("name", ["dot", "matmul", "ravel", "percentile"])
def test_out_sharding_is_a_keyword_of_the_frame(name):
    fun = getattr(mnp, name)
    assert "out_sharding" in inspect.signature(fun).parameters
    assert "eager frame of" in fun.__code__.co_filename     # no wrapper in front of it
    m = jnp.asarray(_M)
    args = {"dot": (m, m.T), "matmul": (m, m.T), "ravel": (m,), "percentile": (m, 30.0)}[name]
    expected = getattr(jnp, name)(*args)
    unsharded = minijax.typeof(mnp.ones(1)).sharding
    minijax.clear_caches()
    with programs("lowered") as made:     # one program, however out_sharding is spelled
        for out_sharding in (None, unsharded, None):
            assert_trees_match(fun(*args, out_sharding=out_sharding), expected)
        assert_trees_match(fun(*args), expected)
    assert len(made) == 1
    with pytest.raises(TypeError, match="out_sharding"):
        fun(*args, out_sharding="x")


def test_a_thread_off_the_direct_path_keeps_its_checks():
    negative = jnp.asarray(_V[:1])     # -1
    mnp.log(negative)           # cached: an unchecked call would return the NaN
    inside, leave = threading.Event(), threading.Event()
    seen = {}

    def worker():
        with minijax.debug_nans(True):
            seen["flag"] = root_modes.everywhere.direct
            inside.set()
            leave.wait(10)
            try:
                mnp.log(negative)
            except FloatingPointError as error:
                seen["error"] = error

    thread = threading.Thread(target=worker)
    thread.start()
    inside.wait(10)
    # This thread is still direct: its calls run compiled while the other one checks.
    assert not root_modes.everywhere.direct and root_modes.modes.direct
    assert np.isnan(mnp.log(negative)).all()
    leave.set()
    thread.join(10)
    assert seen["flag"] is False and "error" in seen
    assert root_modes.everywhere.direct
