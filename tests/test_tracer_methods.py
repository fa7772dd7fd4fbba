"""Array methods and attributes of traced values (`x.real`, `x.conj()`, `x.view(...)`,
`round(x)`, ...) against JAX's tracers: under jit (values, dtypes, weak types), grad and
vmap, plus the jax.Array queries a traced value refuses, with JAX's exception types."""
import copy

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.testing import JAX_VERSION, assert_trees_match
from tests.numpy_helpers import assert_values_close, check, rand

REAL = rand((3,))
COMPLEX = (rand((3,)) + 1j * rand((3,))).astype(np.complex64)


def both(method_fn, *args, grad=True, vmap=True):
    """`method_fn(x, ...)` (method syntax only) under jit, and under grad/vmap of both
    libraries' own transforms (minijax's eagerly; JAX's, the oracle, in one jax.jit
    program rather than one per primitive)."""
    check(lambda np_module, *a: method_fn(*a), *args)
    if vmap:
        batched = [np.stack([a, a[::-1]]) for a in args]
        assert_values_close(minijax.vmap(method_fn)(*batched),
                            jax.jit(jax.vmap(method_fn))(*batched))
    if grad:
        loss = lambda *a: sum(jnp.real(jnp.sum(leaf))
                              for leaf in jax.tree_util.tree_leaves(method_fn(*a)))
        mloss = lambda *a: sum(mnp.real(mnp.sum(leaf))
                               for leaf in jax.tree_util.tree_leaves(method_fn(*a)))
        assert_values_close(minijax.grad(mloss)(*args), jax.jit(jax.grad(loss))(*args))


@pytest.mark.parametrize("x", [REAL, COMPLEX], ids=["real", "complex"])
def test_real_imag_conj(x):
    both(lambda x: x.real + 2 * x.imag, x, grad=x.dtype.kind == "f")
    both(lambda x: x.conj() * x.conjugate(), x, grad=x.dtype.kind == "f")
    both(lambda x: (x * 2.0).real, x, grad=x.dtype.kind == "f")


def test_real_imag_weak_scalar_and_int():
    check(lambda np_module, s: (s.real, s.imag, s.conj()), 2.5)
    check(lambda np_module, i: (i.real, i.imag, i.conj()), np.arange(3, dtype=np.int32))


def test_grad_through_complex_parts():
    def f(x):
        z = x * (1 + 2j)
        return (z.real * z.imag + z.conj().real).sum()
    expected = jax.jit(jax.grad(f))(REAL)    # JAX's side in one program (to a tolerance)
    assert_values_close(minijax.grad(f)(REAL), expected)
    assert_values_close(minijax.jit(minijax.grad(f))(REAL), expected)


def test_searchsorted_argpartition_choose_compress():
    table = np.array([-1.0, 0.5, 2.0], np.float32)
    both(lambda t, v: t.searchsorted(v), table, REAL, grad=False, vmap=False)
    both(lambda t, v: t.searchsorted(v, side="right"), table, table, grad=False, vmap=False)
    tables, queries = np.sort(rand((2, 3)), axis=1), rand((2, 4))
    assert_values_close(minijax.vmap(lambda t, v: t.searchsorted(v))(tables, queries),
                        jax.jit(jax.vmap(lambda t, v: t.searchsorted(v)))(tables, queries))
    both(lambda x: x.argpartition(1), rand((2, 4)), grad=False)
    both(lambda x: x.argpartition(0, axis=0), rand((3, 2)), grad=False)
    idx = np.array([0, 2, 1], np.int32)
    both(lambda i, a, b, c: i.choose([a, b, c], mode="clip"), idx, REAL, REAL * 2, REAL[::-1],
         grad=False)
    check(lambda np_module, i, a: i.choose([a, a * 2], mode="wrap"), idx, REAL)
    both(lambda x: x.compress(x > 0, size=2, fill_value=-7), REAL)
    both(lambda x: x.compress(np.array([True, False]), axis=1, size=1), rand((2, 3)))


@pytest.mark.parametrize("source,target,shape", [
    (np.float32, np.int32, (2, 3)), (np.float32, np.int16, (3,)),
    (np.int16, np.float32, (2, 4)), (np.uint8, np.bool_, (4,)), (np.bool_, np.uint8, (3,)),
    (np.float32, np.complex64, (2, 4)), (np.complex64, np.float32, (3,)),
    (np.float32, np.uint8, ()), (np.int32, None, (2,)),
])
def test_view(source, target, shape):
    x = rand(shape, source, low=0, high=2) if source in (np.uint8, np.bool_) else rand(shape, source)
    if source == np.complex64:
        x = (rand(shape) + 1j * rand(shape)).astype(source)
    check(lambda np_module, x: x.view(target) if target is not np.uint8 or shape
          else x.view(np.float32), x)


def test_view_errors():
    with pytest.raises(ValueError, match="last axis"):
        minijax.jit(lambda x: x.view(np.float32))(np.zeros(3, np.int16))
    with pytest.raises(ValueError, match="0d"):
        minijax.jit(lambda x: x.view(np.int16))(np.float32(1))
    with pytest.raises(NotImplementedError, match="type"):
        minijax.jit(lambda x: x.view(np.int32, type=np.ndarray))(REAL)


def test_byteswap_round_copy_reversed_contains():
    both(lambda x: x.byteswap(), rand((3,), np.int32), grad=False)
    both(lambda x: x.byteswap(), REAL, grad=False)
    both(lambda x: (round(x), round(x, 1)), np.array([2.5, 3.5, -1.5, 1.26], np.float32),
         grad=False)
    both(lambda x: (copy.copy(x), copy.deepcopy(x)), REAL)
    both(lambda x: list(reversed(x)), rand((3, 2)))
    both(lambda x: x.__array_namespace__().sum(x), REAL)
    assert minijax.jit(lambda x: x.__array_namespace__() is mnp)(REAL) is not None
    with pytest.raises(minijax.errors.ConcretizationTypeError):
        minijax.jit(lambda x: 1.0 in x)(REAL)
    assert minijax.grad(lambda x: complex(x).real * x)(2.0) == 2.0


@pytest.mark.parametrize("name", ["addressable_shards", "global_shards", "committed",
                                  "is_fully_addressable", "is_fully_replicated"])
def test_buffer_properties_refused(name):
    with pytest.raises(TypeError, match=name):
        minijax.jit(lambda x: getattr(x, name))(REAL)
    with pytest.raises(TypeError):  # JAX's ConcretizationTypeError is a TypeError too
        jax.jit(lambda x: getattr(x, name))(REAL)


@pytest.mark.parametrize("name", ["devices", "delete", "is_deleted", "tobytes",
                                  "on_device_size_in_bytes", "unsafe_buffer_pointer"])
def test_buffer_methods_refused(name):
    with pytest.raises(minijax.errors.ConcretizationTypeError, match=name):
        minijax.jit(lambda x: getattr(x, name)())(REAL)


def test_device_sharding_flat_refused_like_jax():
    for name in ["device", "sharding"]:
        with pytest.raises(AttributeError, match=name):
            minijax.jit(lambda x: getattr(x, name))(REAL)
        with pytest.raises(AttributeError):
            jax.jit(lambda x: getattr(x, name))(REAL)
    with pytest.raises(NotImplementedError, match="flatten"):
        minijax.jit(lambda x: x.flat)(REAL)
    # jax.Array's memory_space raises ValueError on a tracer from JAX 0.11 (so that
    # hasattr cannot hide it; 0.10's tracers forwarded their aval's MemorySpace.Device).
    with pytest.raises(ValueError, match="memory_space"):
        minijax.jit(lambda x: x.memory_space)(REAL)
    if JAX_VERSION >= (0, 11):
        with pytest.raises(ValueError, match="memory_space"):
            jax.jit(lambda x: x.memory_space)(REAL)
    with pytest.raises(ValueError, match="immutable"):
        minijax.jit(lambda x: x.byteswap(inplace=True))(REAL)


def test_dir_of_tracer_covers_jax_array_methods():
    seen = {}
    minijax.jit(lambda x: seen.setdefault("names", set(dir(x))) and x)(REAL)
    jax.jit(lambda x: seen.setdefault("jax", set(dir(x))) and x)(REAL)
    public = {n for n in seen["jax"] if not n.startswith("_")}
    # JAX-internal tracer machinery, not part of the array API.
    internal = {"aval_mutable_qdd", "cur_qdd", "mutable_qdd", "full_lower", "get_const",
                "get_referent", "parent", "to_concrete_value", "val", "dimension_as_value"}
    assert sorted(public - internal - seen["names"]) == []


def test_to_device_of_a_traced_value_as_jax():
    # The array API's x.to_device(d) (an AttributeError on minijax's tracers): the
    # value itself, under jit, grad and vmap.
    def run(lib):
        d = lib.devices()[0]
        return (lib.jit(lambda x: x.to_device(d) * 2.0)(REAL),
                lib.grad(lambda x: (x.to_device(d) ** 2).sum())(REAL),
                lib.vmap(lambda x: x.to_device(d) + 1.0)(REAL))
    assert_trees_match(run(minijax), run(jax))


def test_isinstance_array_holds_for_traced_values_as_in_jax():
    # Libraries tell arrays from other pytree leaves with isinstance(leaf, jax.Array)
    # (equinox's is_array, optax's checks); JAX's tracers pass it, so minijax's must.
    def kinds(lib, numpy_module):
        seen = []

        def probe(x, n, key):
            seen.append((isinstance(x, lib.Array), isinstance(x, numpy_module.ndarray),
                         isinstance(n, lib.Array), isinstance(key, lib.Array),
                         isinstance(1.0, lib.Array), isinstance(np.ones(2), lib.Array)))
            return x.sum()
        key = lib.random.key(0)
        probe(REAL, 3, key)
        lib.jit(probe, static_argnums=1)(REAL, 3, key)
        lib.grad(probe)(REAL, 3, key)
        lib.vmap(probe, in_axes=(0, None, None))(np.stack([REAL, REAL]), 3, key)
        lib.lax.scan(lambda c, x: (c + probe(x, 3, key), None), 0.0, np.stack([REAL, REAL]))
        return seen
    assert kinds(minijax, mnp) == kinds(jax, jnp)
    assert mnp.ndarray is minijax.Array and issubclass(type(mnp.ones(2)), minijax.Array)
    assert not issubclass(np.ndarray, minijax.Array) and issubclass(minijax.Array, minijax.Array)
    traced_type = []
    minijax.jit(lambda x: traced_type.append(type(x)) or x)(REAL)
    assert issubclass(traced_type[0], minijax.Array)
