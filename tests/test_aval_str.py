"""Avals print as JAX's do: `str`, `repr` and `str_short` of what `typeof`, `.aval`,
`eval_shape` and `make_jaxpr(return_shape=True)` give, for a table of values, against
JAX on the same inputs. JAX 0.10.2, 0.11.2 and 0.12.0.1 print all of these alike.
The IR's text form keeps the short names (`f32[2]`), as a JAX jaxpr does."""
import jax
import ml_dtypes
import numpy as np
import pytest

import minijax

F32 = np.ones((2, 3), np.float32)

# name -> lib -> the object whose printing is compared
TYPEOF = {
    "array": lambda lib: F32,
    "float64 made float32": lambda lib: np.ones(2),
    "numpy scalar": lambda lib: np.float32(1),
    "weak float": lambda lib: 1.0,
    "weak int": lambda lib: 3,
    "weak complex": lambda lib: 1j,
    "bool": lambda lib: True,
    "weak array": lambda lib: lib.numpy.asarray(1.0),
    "bfloat16": lambda lib: np.ones(2, ml_dtypes.bfloat16),
    "float8": lambda lib: np.ones(2, ml_dtypes.float8_e4m3fn),
    "int4": lambda lib: np.ones(2, ml_dtypes.int4),
    "empty uint8": lambda lib: np.ones((0, 3), np.uint8),
    "key": lambda lib: lib.random.key(0),
    # (wrapped, not split: a split compiles a Threefry program on each side)
    "keys": lambda lib: lib.random.wrap_key_data(np.zeros((3, 2), np.uint32)),
    "raw key": lambda lib: lib.random.PRNGKey(0),
    "ref": lambda lib: lib.new_ref(np.ones(3, np.float32)),
    "int8 ref": lambda lib: lib.new_ref(np.ones(2, np.int8)),
    # JAX 0.10.2 keeps the weak type inside the ref, 0.11+ drops it; a ref's type
    # prints without it on all of them
    "weak ref": lambda lib: lib.new_ref(1.0),
}


def _texts(aval):
    return (str(aval), repr(aval), aval.str_short(), aval.str_short(short_dtypes=True))


@pytest.mark.parametrize("name", list(TYPEOF))
def test_typeof_prints_as_jax(name):
    ours, theirs = (_texts(lib.typeof(TYPEOF[name](lib))) for lib in (minijax, jax))
    assert ours == theirs


def test_float0_prints_as_jax():
    def f(lib):
        return lib.grad(lambda x, y: x * 2.0, argnums=1, allow_int=True)(1.0, np.int32(1))
    assert _texts(minijax.typeof(f(minijax))) == _texts(jax.typeof(f(jax))) \
        == ("float0[]", "ShapedArray(float0[])", "float0[]", "float0[]")


@pytest.mark.parametrize("transform", ["jit", "vmap", "grad"])
def test_traced_avals_print_as_jax(transform):
    seen = {}

    def run(lib):
        def f(x):
            seen.setdefault(lib.__name__, []).extend(
                [*_texts(lib.typeof(x)), repr(x.aval), str(x.aval)])
            return (x * 2.0).sum()
        x = np.ones((3, 2), np.float32)
        # Traced under `eval_shape`: the transformation makes the same kind of tracer, and
        # nothing compiles (eagerly, `grad` compiled a program per operation).
        lib.eval_shape(getattr(lib, transform)(f), x)
    run(minijax)
    run(jax)
    assert seen["minijax"] == seen["jax"]


SHAPES = {
    "eval_shape": lambda lib: lib.eval_shape(lambda x: x * 2, F32),
    "weak eval_shape": lambda lib: lib.eval_shape(lambda x: x * 2, 1.0),
    "key eval_shape": lambda lib: lib.eval_shape(lambda: lib.random.split(lib.random.key(0))),
    "jit eval_shape": lambda lib: lib.jit(lambda x: (x, x > 0)).eval_shape(F32),
    "return_shape": lambda lib: lib.make_jaxpr(lambda x: (x * 2, x), return_shape=True)(1.0)[1],
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_shape_dtype_structs_print_as_jax(name):
    ours, theirs = (SHAPES[name](lib) for lib in (minijax, jax))
    assert (str(ours), repr(ours)) == (str(theirs), repr(theirs))


def test_shape_dtype_struct_of_keys_feeds_back():
    keys = minijax.eval_shape(lambda: minijax.random.split(minijax.random.key(0)))
    assert keys.dtype == jax.random.key_dtype("threefry2x32")
    assert str(minijax.jit(lambda k: k[0]).eval_shape(keys)) == \
        "ShapeDtypeStruct(shape=(), dtype=key<fry>)"
    # a lowered program's out_info too, as JAX's
    jax_keys = jax.random.split(jax.random.key(0))
    assert str(minijax.jit(lambda k: k[0]).lower(keys).out_info) == \
        str(jax.jit(lambda k: k[0]).lower(jax_keys).out_info)


def test_text_form_keeps_short_names():
    text = str(minijax.make_jaxpr(lambda x, r: x * r[...])(1.0, minijax.new_ref(F32)))
    assert "a:f32[] b:Ref{f32[2,3]}" in text
    aval = minijax.typeof(np.ones(2, ml_dtypes.float8_e4m3fn))
    assert (aval.type_text(), str(aval)) == ("f8_e4m3fn[2]", "float8_e4m3fn[2]")
    assert minijax.typeof(1.0).type_text(exact=True) == "f32[]~"


# Type mismatches in control flow name the first differing component and its types in
# JAX's spelling and words (JAX's messages name the body's argument; ours its path).
MISMATCHES = {
    "scan carry": (
        lambda lib: lib.lax.scan(lambda c, x: ((c[0], c[1].astype(np.int32)), x),
                                 (np.ones(2, np.float32), np.ones(3, np.float32)),
                                 np.ones(3, np.float32)),
        r"\[1\] has type float32\[3\] but the corresponding output carry component has "
        r"type int32\[3\], so the dtypes do not match"),
    "while carry": (
        lambda lib: lib.lax.while_loop(lambda c: False, lambda c: c[:1],
                                       np.ones(2, np.float32)),
        r"input carry (c )?has type float32\[2\] but the corresponding output carry component "
        r"has type float32\[1\], so the shapes do not match"),
    "cond outputs": (
        lambda lib: lib.lax.cond(True, lambda: (np.ones(2, np.float32), 1),
                                 lambda: (np.ones(2, np.float32), 1.0)),
        r"true_fun.* at path \[1\] has type int32\[\] but the corresponding output of "
        r"false_fun.* has type float32\[\], so the dtypes do not match"),
}


@pytest.mark.parametrize("name", list(MISMATCHES))
def test_control_flow_mismatches_read_as_jax(name):
    run, message = MISMATCHES[name]
    for lib in (minijax, jax):
        with pytest.raises(TypeError, match=message):
            run(lib)


def test_binary_shape_mismatch_reads_as_jax():
    x, y = np.ones(2, np.float32), np.ones(3, np.float32)
    for lib in (minijax, jax):
        with pytest.raises(TypeError) as info:
            lib.lax.add(x, y)
        assert str(info.value) == "add got incompatible shapes for broadcasting: (2,), (3,)."
