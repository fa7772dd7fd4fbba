"""lax functions check their operands' dtypes as JAX's do: a Python scalar has its own
weak dtype (int32, float32, complex64 or bool) and is not converted to the other
operand's, so `lax.add(f32_array, 4)` and `lax.add(f16_array, 2.0)` are TypeErrors,
while `lax.add(f32_array, 4.0)` and `jnp.add(f16_array, 2.0)` are fine."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.testing import assert_trees_match

F32, F16 = np.ones(2, np.float32), np.ones(2, np.float16)
I32, I8, B = np.arange(2, dtype=np.int32), np.arange(2, dtype=np.int8), np.array([True, False])
C64 = np.ones(2, np.complex64)

CALLS = {
    "add f32 int": ("add", F32, 4), "add f32 float": ("add", F32, 4.0),
    "add f16 float": ("add", F16, 2.0), "add int f32": ("add", 4, F32),
    "add np.float32 int": ("add", np.float32(1), 4), "add i32 int": ("add", I32, 2),
    "add i32 float": ("add", I32, 2.0), "add float int": ("add", 2.0, 3),
    "add float float": ("add", 2.0, 3.0), "add int int": ("add", 2, 3),
    "add f32 i32 arrays": ("add", F32, I32), "sub c64 float": ("sub", C64, 1.0),
    "sub c64 complex": ("sub", C64, 1j), "mul f32 float": ("mul", F32, 3.0),
    "div f32 int": ("div", F32, 2), "rem i32 int": ("rem", I32, 2),
    "max f16 float": ("max", F16, 0.0), "min f32 float": ("min", F32, 0.5),
    "atan2 float f32": ("atan2", 1.0, F32), "nextafter f16 float": ("nextafter", F16, 1.0),
    "eq i8 int": ("eq", I8, 1), "lt f32 float": ("lt", F32, 2.0),
    "bitwise_and bool bool": ("bitwise_and", B, True),
    "bitwise_and i32 bool": ("bitwise_and", I32, True),
    "bitwise_or i8 int": ("bitwise_or", I8, 1), "shift_left i8 int": ("shift_left", I8, 1),
    "shift_left i32 int": ("shift_left", I32, 1),
    "pow f32 int": ("pow", F32, 2), "pow f16 int": ("pow", F16, 2),
    "pow f16 float": ("pow", F16, 2.0), "pow float f16": ("pow", 2.0, F16),
    "pow f32 i8 array": ("pow", F32 * 2, I8 + 2),
    "clamp floats around f32": ("clamp", 0.0, F32, 1.0),
    "clamp with an int": ("clamp", 0.0, F32, 1), "clamp around f16": ("clamp", 0.0, F16, 1.0),
}


def _call(lax, name, args):
    return getattr(lax, name)(*args)


@pytest.mark.parametrize("case", list(CALLS))
def test_lax_operand_dtypes_as_jax(case):
    name, *args = CALLS[case]
    try:
        expected = _call(jax.lax, name, args)
    except TypeError as error:
        with pytest.raises(TypeError) as ours:
            _call(minijax.lax, name, args)
        # The same words up to JAX's tip, which names the jnp function to use instead.
        assert str(ours.value).split(" (Tip")[0] == str(error).split(" (Tip")[0]
        return
    assert_trees_match(_call(minijax.lax, name, args), expected)
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    if arrays:   # under jit, with the arrays traced
        positions = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]

        def with_traced(lax):
            def f(*traced):
                full = list(args)
                for i, t in zip(positions, traced):
                    full[i] = t
                return _call(lax, name, full)
            return f
        assert_trees_match(minijax.jit(with_traced(minijax.lax))(*arrays),
                           jax.jit(with_traced(jax.lax))(*arrays))


def test_the_tip_names_the_promoting_function():
    with pytest.raises(TypeError, match=r"Tip: jnp.maximum is a similar function"):
        minijax.lax.max(F16, 0.0)


def test_numpy_still_promotes_python_scalars():
    for np_lib_case in [lambda np_lib: np_lib.add(F16, 2.0), lambda np_lib: F32 * np_lib.int32(2),
                        lambda np_lib: np_lib.maximum(np_lib.asarray(I8), 1),
                        lambda np_lib: np_lib.power(np_lib.asarray(F16), 2.0)]:
        assert_trees_match(np_lib_case(mnp), np_lib_case(jnp))
    assert_trees_match(minijax.lax.fori_loop(np.int16(0), np.int16(3), lambda i, x: x + i, 0.0),
                       jax.lax.fori_loop(np.int16(0), np.int16(3), lambda i, x: x + i, 0.0))
    assert_trees_match(minijax.grad(lambda x: minijax.lax.pow(x, 3))(2.0),
                       jax.grad(lambda x: jax.lax.pow(x, 3))(2.0))
