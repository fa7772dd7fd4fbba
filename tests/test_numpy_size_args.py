"""`nonzero`, `flatnonzero`, `argwhere` and one-argument `where` with a static `size=`
(the first `size` positions, padded with `fill_value`) on traced values, against JAX:
under jit, vmap and inside grad; without `size` they need concrete input, as in JAX."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from tests.numpy_helpers import assert_values_close, check, rand

GRID = np.array([[0, 1, 0], [2, 0, 3]], np.float32)


@pytest.mark.parametrize("size", [0, 2, 3, 5])
def test_nonzero_family_with_size(size):
    check(lambda np_module, x: (np_module.nonzero(x, size=size),
                                np_module.flatnonzero(x, size=size),
                                np_module.argwhere(x, size=size),
                                np_module.where(x, size=size)), GRID)


def test_fill_values():
    check(lambda np_module, x: (np_module.nonzero(x, size=5, fill_value=(-1, 9)),
                                np_module.nonzero(x, size=5, fill_value=-2),
                                np_module.flatnonzero(x, size=5, fill_value=-1),
                                np_module.argwhere(x, size=5, fill_value=(7, 8)),
                                np_module.where(x > 1, size=3, fill_value=4)), GRID)


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.float32, np.complex64])
def test_dtypes_and_ranks(dtype):
    x = rand((2, 2, 3), dtype, low=0, high=2)
    check(lambda np_module, x: np_module.nonzero(x, size=7, fill_value=(1, 1, 2)), x)
    check(lambda np_module, x: np_module.argwhere(x[0, 0], size=2), x)
    check(lambda np_module, x: (np_module.argwhere(x[0, 0, 0], size=2),
                                np_module.argwhere(x[0, 0, 0], size=0)), x)


def test_method_and_concrete_forms():
    check(lambda np_module, x: x.nonzero(size=4, fill_value=-1), GRID)
    for fn in [lambda n, x: n.nonzero(x), lambda n, x: n.flatnonzero(x),
               lambda n, x: n.argwhere(x), lambda n, x: n.where(x > 0),
               lambda n, x: n.argwhere(x[1, 0])]:
        assert_values_close(fn(mnp, GRID), fn(jnp, GRID))
    # A NumPy array closed over by a jitted function is concrete: no size needed
    # (JAX refuses it under jit; minijax counts the NumPy value).
    assert_values_close(minijax.jit(lambda: (mnp.nonzero(GRID), mnp.argwhere(GRID)))(),
                        (jnp.nonzero(GRID), jnp.argwhere(GRID)))


def test_vmap_and_grad():
    batch = np.stack([GRID, GRID[::-1], np.zeros_like(GRID)])
    assert_values_close(minijax.vmap(lambda x: mnp.nonzero(x, size=4, fill_value=-1))(batch),
                        jax.jit(jax.vmap(lambda x: jnp.nonzero(x, size=4, fill_value=-1)))(batch))
    assert_values_close(minijax.vmap(lambda x: mnp.argwhere(x, size=3))(batch),
                        jax.jit(jax.vmap(lambda x: jnp.argwhere(x, size=3)))(batch))
    assert_values_close(minijax.vmap(lambda x: mnp.flatnonzero(x, size=2))(batch),
                        jax.jit(jax.vmap(lambda x: jnp.flatnonzero(x, size=2)))(batch))

    def picked_sum(np_module, x):  # gradient flows through the gathered values
        rows, cols = np_module.nonzero(x > 0.5, size=3)
        return (x[rows, cols] ** 2).sum()
    x = rand((2, 3))
    assert_values_close(minijax.grad(lambda x: picked_sum(mnp, x))(x),
                        jax.jit(jax.grad(lambda x: picked_sum(jnp, x)))(x))


def test_errors():
    for name in ["nonzero", "flatnonzero", "argwhere"]:
        with pytest.raises(minijax.errors.ConcretizationTypeError, match="size="):
            minijax.jit(lambda x: getattr(mnp, name)(x))(GRID)
        with pytest.raises(TypeError):  # JAX's ConcretizationTypeError
            jax.jit(lambda x: getattr(jnp, name)(x))(GRID)
    with pytest.raises(minijax.errors.ConcretizationTypeError, match="size="):
        minijax.jit(lambda x: mnp.where(x))(GRID)
    with pytest.raises(ValueError, match="0-d"):
        mnp.nonzero(np.float32(1), size=1)
    with pytest.raises(ValueError, match="fill_value"):
        mnp.nonzero(GRID, size=2, fill_value=(1, 2, 3))
    with pytest.raises(ValueError):
        jnp.nonzero(GRID, size=2, fill_value=(1, 2, 3))
    with pytest.raises(ValueError, match="one-argument"):
        mnp.where(GRID > 0, GRID, 0.0, size=2)
    with pytest.raises(ValueError):
        jnp.where(GRID > 0, GRID, 0.0, size=2)
    with pytest.raises(ValueError, match="non-negative"):
        minijax.jit(lambda x: mnp.nonzero(x, size=-1))(GRID)


ROWS = np.array([[3, 1], [1, 2], [3, 1], [0, 5]], np.float32)


@pytest.mark.parametrize("axis,size", [(0, 5), (0, 2), (1, 3), (-1, 1), (0, 3)])
def test_unique_along_axis_with_size(axis, size):
    # Both forms in one program per side (one compile each, not two).
    check(lambda np_module, x: (np_module.unique(x, axis=axis, size=size, return_index=True,
                                                 return_inverse=True, return_counts=True),
                                np_module.unique(x, axis=axis, size=size, fill_value=-1)),
          ROWS)


@pytest.mark.parametrize("dtype", [np.int32, np.bool_, np.float32])
def test_unique_along_axis_ranks_and_dtypes(dtype):
    x = rand((4, 2, 3), dtype, low=0, high=2)
    x[2] = x[0]
    # Every axis in one program per side (one compile each, not three).
    check(lambda np_module, x: tuple(np_module.unique(x, axis=axis, size=4, return_counts=True,
                                                      return_inverse=True)
                                     for axis in (0, 1, 2)), x)


def test_unique_along_axis_grad_vmap_and_concrete():
    def loss(np_module, x):
        values = np_module.unique(x, axis=0, size=3, fill_value=0.0)
        return (values ** 2).sum()
    assert_values_close(minijax.grad(lambda x: loss(mnp, x))(ROWS),
                        jax.jit(jax.grad(lambda x: loss(jnp, x)))(ROWS))
    batch = np.stack([ROWS, ROWS[::-1] * 2])
    assert_values_close(minijax.vmap(lambda x: mnp.unique(x, axis=0, size=4))(batch),
                        jax.jit(jax.vmap(lambda x: jnp.unique(x, axis=0, size=4)))(batch))
    # Without size, concrete input is counted eagerly (NumPy), as before.
    assert_values_close(mnp.unique(ROWS, axis=0), jnp.unique(ROWS, axis=0))
    with pytest.raises(minijax.errors.ConcretizationTypeError, match="size="):
        minijax.jit(lambda x: mnp.unique(x, axis=0))(ROWS)
    with pytest.raises(ValueError):
        mnp.unique(ROWS, axis=2, size=2)


@pytest.mark.parametrize("equal_nan", [True, False])
def test_unique_along_axis_nan_rows(equal_nan):
    x = np.array([[np.nan, 1], [1, 2], [np.nan, 1], [0, 5]], np.float32)
    check(lambda np_module, x: np_module.unique(x, axis=0, size=4, equal_nan=equal_nan,
                                                return_counts=True), x)



def test_an_eager_unique_with_size_is_one_program_and_its_transforms_few():
    # Shapes no other test uses, so the programs counted are made here. JAX's unique is
    # jitted in parts (4 programs eagerly; its eager grad below makes 44, its vmap 17);
    # minijax's sized unique is one cached program (op by op it made 13, 69 and 37),
    # and its eager grad and vmap transform it whole.
    from tests.program_counting import programs
    x = np.array([[3, 1], [1, 2], [3, 1], [0, 5], [1, 2]], np.float32)
    for call in (lambda n, x: n.unique(x, axis=0, size=3, return_counts=True),
                 lambda n, x: n.unique(x, size=2, fill_value=-1.0, return_inverse=True)):
        call(mnp, x[:4])    # (constants the body makes while tracing, once a process)
        with programs("lowered") as first:
            ours = call(mnp, x)
        with programs("lowered") as repeat:
            call(mnp, x * 2)
        assert (len(first), len(repeat)) == (1, 0)
        assert_values_close(ours, jax.jit(lambda x: call(jnp, x))(x))

    def loss(np_module, x):
        return (np_module.unique(x, axis=0, size=3, fill_value=0.0) ** 3).sum()
    batch = np.stack([x, x[::-1] * 2])
    with programs("lowered") as made_by_grad:
        grad = minijax.grad(lambda x: loss(mnp, x))(x)
    with programs("lowered") as made_by_vmap:
        mapped = minijax.vmap(lambda x: mnp.unique(x, axis=0, size=4))(batch)
    assert len(made_by_grad) <= 10 and len(made_by_vmap) == 1, (made_by_grad, made_by_vmap)
    # (JAX's side, compared to a tolerance, as one jitted program)
    assert_values_close((grad, mapped), jax.jit(lambda x, b: (
        jax.grad(lambda x: loss(jnp, x))(x),
        jax.vmap(lambda x: jnp.unique(x, axis=0, size=4))(b)))(x, batch))


def test_an_eager_nonzero_is_one_program_per_shape_size_and_fill():
    # JAX's nonzero, jitted in parts, makes 18 programs eagerly; op by op minijax made 27
    from tests.program_counting import programs
    x = np.array([[0, 4, 0, 1], [2, 0, 0, 3], [0, 0, 5, 0]], np.float32)   # its own shape
    mnp.nonzero(x[:2], size=2)    # (constants the body makes while tracing, once a process)
    # (a Python int fill outside 0..127 takes the op-by-op path, as every jitted_eagerly
    # function's does: the body checks it against the dtype)
    # Without size the count (5) is the size: size=5's program serves it.
    for kwargs, made in ((dict(size=5), 1), (dict(), 0), (dict(size=5, fill_value=7), 1),
                         (dict(size=5, fill_value=np.int32(-1)), 1)):
        with programs("lowered") as first:
            ours = mnp.nonzero(x, **kwargs)
        with programs("lowered") as repeat:
            mnp.nonzero(x * 2, **kwargs)
        assert (len(first), len(repeat)) == (made, 0), kwargs
        # (JAX's side as one jitted program; the count, 5, as the size without one)
        expected = jax.jit(lambda x, fill: jnp.nonzero(x, size=5, fill_value=fill))(
            x, kwargs.get("fill_value", 0))
        assert_values_close(ours, expected)
    # a complex fill is converted to int32 op by op, which refuses it, as before
    with pytest.raises(TypeError):
        mnp.nonzero(GRID[0], size=2, fill_value=1 + 2j)


@pytest.mark.parametrize("make", [
    lambda np_, n: np_.ones((n,)), lambda np_, n: np_.zeros(n),
    lambda np_, n: np_.full((n, 2), 1.0), lambda np_, n: np_.eye(n),
    lambda np_, n: np_.ones(3).reshape(n), lambda np_, n: np_.broadcast_to(1.0, (n,))])
def test_a_traced_size_in_a_shape_is_jax_type_error(make):
    # JAX's plain TypeError (not its ConcretizationTypeError subclass), with its words;
    # minijax's is a TypeError of minijax's own (every error about a program is one)
    errors = []
    for lib, np_ in ((jax, jnp), (minijax, mnp)):
        with pytest.raises(TypeError) as info:
            lib.jit(lambda n: make(np_, n))(3)
        errors.append(info.value)
    assert type(errors[0]) is TypeError
    assert isinstance(errors[1], minijax.MinijaxError)
    assert not isinstance(errors[1], minijax.errors.ConcretizationTypeError)
    assert str(errors[1]).startswith("Shapes must be 1D sequences of concrete values")


def test_repeat_with_traced_repeats_and_a_static_total_length_matches_jax():
    # total_repeat_length was ignored, so traced repeats failed under jit; past
    # sum(repeats) the last value repeats, beyond the total values are dropped
    def repeats(np_, a, r):
        return tuple(np_.repeat(a, r, axis=1, total_repeat_length=t) for t in (5, 4, 7, 1)) \
            + (np_.repeat(a, 2, total_repeat_length=3),)
    check(repeats, np.array([[1, 2], [3, 4]], np.int32), np.array([2, 3], np.int32))
    grad_of = lambda lib, np_: lib.grad(lambda x: np_.repeat(
        x, np.array([1, 3]), total_repeat_length=3).sum())(np.array([1.0, 2.0], np.float32))
    assert_values_close(grad_of(minijax, mnp), grad_of(jax, jnp))


def test_delete_of_traced_unique_indices_matches_jax():
    # assume_unique_indices=True lets jit delete traced indices (minijax needed them
    # static); negative ones count from the end, ones past the end delete nothing
    def deleted(np_, x, i, j):
        return (np_.delete(x, i, assume_unique_indices=True),
                np_.delete(x.reshape(2, 5), j, axis=1, assume_unique_indices=True))
    check(deleted, np.arange(10.0, dtype=np.float32), np.array([1, -1, 12], np.int32),
          np.array([3, 0], np.int32))


def test_eye_and_tri_take_a_traced_diagonal_offset_as_jax():
    # k only moves the comparison of row and column iotas (minijax needed it static)
    check(lambda np_, k: (np_.eye(3, k=k), np_.tri(2, 3, k), np_.eye(2, 3, k=k, dtype=int)),
          np.int32(1))
    check(lambda np_, k: (np_.eye(3, k=k), np_.tri(3, k=k)), np.int32(-1))
