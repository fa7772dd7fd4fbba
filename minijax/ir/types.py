"""Abstract values ("avals"): what the IR knows about a value without its contents.

Read this first when learning the IR. Every variable in a jaxpr carries one of:

* `ShapedArray(shape, dtype, weak_type)` -- an array of known shape and dtype.
  `weak_type` marks values that came from Python scalars: as in JAX they take the
  dtype of whatever strongly typed value they meet (`x_f16 * 2.0` stays f16).
* `RefType(ShapedArray)` -- a mutable box holding an array of that type. A ref is
  never an array: it is read with `get` and written with `swap`/`addupdate`.
* Key arrays (`minijax.random`) are `ShapedArray`s of a key dtype: `KEY_DTYPE` (each
  element one threefry2x32 key), or `RBG_KEY_DTYPE` / `URBG_KEY_DTYPE` (JAX's 'rbg'
  and 'unsafe_rbg' keys, four words each); see `random_primitives.py`.

Two spellings. As Python objects avals print as JAX's do (`str(jax.typeof(x))`):
`float32[3,4]`, `~float32[]` for a weak type, `Ref{float32[3]}`, `key<fry>[3]`, and
`repr` is `ShapedArray(float32[3,4], weak_type=True)`; error messages show that. The
IR's text form (`type_text`) uses the short names a jaxpr prints: `f32[3,4]`, `i32[]`,
`bool[2]`, `Ref{f32[3]}`, `key<fry>[3]` (`key<rbg>`, `key<urbg>`), `f8_e4m3fn[4]`, `i4[]`.
Its human view omits weak types, exactly as `jax.make_jaxpr` does; the exact form
(`minijax.ir.dumps`) marks them with a trailing `~` (`f32[]~`) so a round trip loses
nothing.
"""
from __future__ import annotations

import functools

import numpy as np
import ml_dtypes

float0 = np.dtype([("float0", np.void, 0)])
bfloat16 = np.dtype(ml_dtypes.bfloat16)

# JAX's narrow dtypes (quantization formats), all from ml_dtypes, with the short names
# JAX's jaxprs print. NumPy reports most of them as kind 'V' (void), so the kind tests
# below name them explicitly. Each is one byte per element in memory.
NARROW_FLOAT_NAMES = {
    "float8_e4m3fn": "f8_e4m3fn", "float8_e5m2": "f8_e5m2",
    "float8_e4m3fnuz": "f8_e4m3fnuz", "float8_e5m2fnuz": "f8_e5m2fnuz",
    "float8_e4m3b11fnuz": "f8_e4m3b11fnuz", "float8_e4m3": "f8_e4m3",
    "float8_e3m4": "f8_e3m4", "float8_e8m0fnu": "f8_e8m0fnu",
    "float4_e2m1fn": "f4_e2m1fn", "float6_e2m3fn": "f6_e2m3fn",
    "float6_e3m2fn": "f6_e3m2fn"}
NARROW_INT_NAMES = {"int4": "i4", "uint4": "u4", "int2": "i2", "uint2": "u2",
                    "int1": "i1", "uint1": "u1"}
NARROW_FLOATS = frozenset(np.dtype(getattr(ml_dtypes, n)) for n in NARROW_FLOAT_NAMES)
NARROW_INTS = frozenset(np.dtype(getattr(ml_dtypes, n)) for n in NARROW_INT_NAMES)
_NARROW_UNSIGNED = frozenset(np.dtype(getattr(ml_dtypes, n)) for n in NARROW_INT_NAMES
                             if n.startswith("u"))
# The dtype of a threefry2x32 key: one element holds the key's two uint32 words. Shape
# ops move whole keys; arithmetic refuses the dtype (`is_key`).
KEY_DTYPE = np.dtype([("fry", np.uint32, (2,))])
# The keys of JAX's other two implementations, 'rbg' and 'unsafe_rbg': four words each.
# The field name is JAX's tag for the implementation (`key<rbg>`, `key<urbg>`).
RBG_KEY_DTYPE = np.dtype([("rbg", np.uint32, (4,))])
URBG_KEY_DTYPE = np.dtype([("urbg", np.uint32, (4,))])
# JAX's name of each implementation, and its key dtype here.
KEY_DTYPES = {"threefry2x32": KEY_DTYPE, "rbg": RBG_KEY_DTYPE, "unsafe_rbg": URBG_KEY_DTYPE}
_IMPL_OF_KEY_DTYPE = {dtype: impl for impl, dtype in KEY_DTYPES.items()}
_KEY_DTYPE_OF_TAG = {dtype.names[0]: dtype for dtype in KEY_DTYPES.values()}

# Short names used in the text form, in both directions.
_SHORT_NAMES = {
    np.dtype("bool"): "bool",
    np.dtype("int8"): "i8", np.dtype("int16"): "i16",
    np.dtype("int32"): "i32", np.dtype("int64"): "i64",
    np.dtype("uint8"): "u8", np.dtype("uint16"): "u16",
    np.dtype("uint32"): "u32", np.dtype("uint64"): "u64",
    np.dtype("float16"): "f16", bfloat16: "bf16",
    np.dtype("float32"): "f32", np.dtype("float64"): "f64",
    np.dtype("complex64"): "c64", np.dtype("complex128"): "c128",
    float0: "float0", KEY_DTYPE: "key<fry>", RBG_KEY_DTYPE: "key<rbg>",
    URBG_KEY_DTYPE: "key<urbg>",
    **{np.dtype(getattr(ml_dtypes, long)): short
       for long, short in {**NARROW_FLOAT_NAMES, **NARROW_INT_NAMES}.items()},
}
_DTYPES_BY_SHORT_NAME = {name: dtype for dtype, name in _SHORT_NAMES.items()}
_LONG_NAMES = {float0: "float0", KEY_DTYPE: "key<fry>", bfloat16: "bfloat16",
               **{np.dtype(getattr(ml_dtypes, n)): n
                  for n in (*NARROW_FLOAT_NAMES, *NARROW_INT_NAMES)}}


def dtype_short_name(dtype) -> str:
    return _SHORT_NAMES[np.dtype(dtype)]


def dtype_long_name(dtype) -> str:
    """The dtype's name as JAX prints it in an aval (`float32`, `bfloat16`, `int4`,
    `float0`, `key<fry>`): NumPy's own name except where NumPy's is a structured
    `void` or ml_dtypes' class name."""
    dtype = np.dtype(dtype)
    name = _LONG_NAMES.get(dtype)
    return name if name is not None else dtype.name


def dtype_from_short_name(name: str) -> np.dtype:
    try:
        return _DTYPES_BY_SHORT_NAME[name]
    except KeyError:
        raise ValueError(f"unknown dtype name {name!r}; expected one of "
                         f"{sorted(_DTYPES_BY_SHORT_NAME)}") from None


def canonical_dtype(dtype) -> np.dtype:
    """The dtype a value of `dtype` takes in minijax (x64 off, as JAX's default)."""
    dtype = np.dtype(dtype)
    return _X32.get(dtype, dtype)


_X32 = {np.dtype("float64"): np.dtype("float32"), np.dtype("int64"): np.dtype("int32"),
        np.dtype("uint64"): np.dtype("uint32"), np.dtype("complex128"): np.dtype("complex64")}


# Dtype kinds by NumPy's one-letter code ('f' float, 'c' complex, 'i'/'u' integer,
# 'b' bool); bfloat16 and the narrow dtypes from ml_dtypes report kind 'V', so they
# are named explicitly.
def is_float(dtype) -> bool:
    dtype = np.dtype(dtype)
    return dtype.kind == "f" or dtype == bfloat16 or dtype in NARROW_FLOATS


def is_complex(dtype) -> bool:
    return np.dtype(dtype).kind == "c"


def is_inexact(dtype) -> bool:
    return is_float(dtype) or is_complex(dtype)


def is_integer(dtype) -> bool:
    dtype = np.dtype(dtype)
    return dtype.kind in "iu" or dtype in NARROW_INTS


def is_unsigned(dtype) -> bool:
    dtype = np.dtype(dtype)
    return dtype.kind == "u" or dtype in _NARROW_UNSIGNED


def is_narrow(dtype) -> bool:
    """A narrow float or integer (under 8 bits of value, or an 8-bit float)."""
    dtype = np.dtype(dtype)
    return dtype in NARROW_FLOATS or dtype in NARROW_INTS


def is_bool(dtype) -> bool:
    return np.dtype(dtype).kind == "b"


def is_key(dtype) -> bool:
    return np.dtype(dtype) in _IMPL_OF_KEY_DTYPE


def key_impl_name(dtype) -> str:
    """JAX's name of the PRNG implementation whose keys have `dtype`."""
    return _IMPL_OF_KEY_DTYPE[np.dtype(dtype)]


def key_tag(dtype) -> str:
    """The tag of a key dtype (`fry`, `rbg`, `urbg`): its one field."""
    return np.dtype(dtype).names[0]


def key_size(dtype) -> int:
    """How many uint32 words one key of `dtype` holds."""
    dtype = np.dtype(dtype)
    return dtype.fields[dtype.names[0]][0].shape[0]


# A key array's value at run time is a jax.Array of JAX's own `key<fry>` dtype (so it
# passes through `jax.jit` and prints as JAX's keys do); the NumPy evaluator holds keys
# as NumPy arrays of `KEY_DTYPE`. These two convert, through the words of the keys;
# they are the only place the IR layer touches JAX, and only to unwrap or wrap data.

def keys_as_numpy(keys) -> np.ndarray:
    """`keys` (a jax.Array of keys, or already NumPy) as a NumPy array of a key dtype."""
    if isinstance(keys, np.ndarray) and is_key(keys.dtype):
        return keys
    if isinstance(keys, np.void) and is_key(keys.dtype):   # one element of a key array
        return np.asarray(keys)
    from jax import random
    words = np.ascontiguousarray(random.key_data(keys), np.uint32)
    return words.view(dtype_of_jax(keys.dtype))[..., 0]


def keys_as_jax(keys):
    """`keys` (a NumPy array of a key dtype, or already a jax.Array) as a jax.Array of keys."""
    if not (isinstance(keys, np.ndarray) and is_key(keys.dtype)):
        return keys
    from jax import random
    return random.wrap_key_data(np.ascontiguousarray(keys[key_tag(keys.dtype)]),
                                impl=key_impl_name(keys.dtype))


_PYTHON_INT = frozenset((int,))


class ShapedArray:
    """The type of an array: shape, dtype and whether the dtype is weak."""
    __slots__ = ("shape", "dtype", "weak_type", "_hash")

    def __init__(self, shape, dtype, weak_type: bool = False):
        # Built for every traced value, so the common case (a tuple of Python ints
        # and a NumPy dtype) skips the conversions (and the test runs no Python loop).
        if type(shape) is not tuple or not set(map(type, shape)) <= _PYTHON_INT:
            shape = tuple(map(int, shape))
        self.shape = shape
        self.dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self._hash = hash((shape, self.dtype, self.weak_type))

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def update(self, shape=None, dtype=None, weak_type=None) -> "ShapedArray":
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def strip_weak_type(self) -> "ShapedArray":
        return self.update(weak_type=False) if self.weak_type else self

    def __eq__(self, other):
        return (isinstance(other, ShapedArray) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return self._hash

    @property
    def sharding(self):
        """JAX's avals carry a sharding; minijax's model none, so this is the one JAX's
        type of an unsharded array has: a `NamedSharding` on the empty mesh, no axis
        sharded. Libraries read it to pass on (`out_sharding=jax.typeof(x).sharding`)."""
        from jax.sharding import AbstractMesh, NamedSharding, PartitionSpec
        return NamedSharding(AbstractMesh((), ()), PartitionSpec(*[None] * self.ndim))

    def type_text(self, exact: bool = False) -> str:
        """The type in the IR's text form: `f32[3]`; `f32[]~` when `exact` and weak."""
        text = f"{dtype_short_name(self.dtype)}[{','.join(map(str, self.shape))}]"
        return text + "~" if exact and self.weak_type else text

    def str_short(self, short_dtypes: bool = False, mesh_axis_types: bool = False) -> str:
        """JAX's method: `float32[3]` (`f32[3]` with `short_dtypes`), no weak mark.
        minijax's avals carry no sharding, so `mesh_axis_types` adds nothing."""
        if short_dtypes:
            return self.type_text()
        return f"{dtype_long_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    def __str__(self):
        return "~" + self.str_short() if self.weak_type else self.str_short()

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short()}{weak})"


class RefType:
    """The type of a mutable array reference holding values of type `inner`."""
    __slots__ = ("inner",)

    def __init__(self, inner: ShapedArray):
        if not isinstance(inner, ShapedArray):
            raise TypeError(f"a Ref holds an array, not {inner!r}")
        self.inner = inner

    shape = property(lambda self: self.inner.shape)
    dtype = property(lambda self: self.inner.dtype)
    ndim = property(lambda self: self.inner.ndim)
    size = property(lambda self: self.inner.size)
    weak_type = property(lambda self: self.inner.weak_type)

    def strip_weak_type(self) -> "RefType":
        return RefType(self.inner.strip_weak_type()) if self.inner.weak_type else self

    def __eq__(self, other):
        return isinstance(other, RefType) and self.inner == other.inner

    def __hash__(self):
        return hash(("Ref", self.inner))

    def type_text(self, exact: bool = False) -> str:
        return f"Ref{{{self.inner.type_text(exact)}}}"

    # JAX prints a ref's type without its contents' weak mark, in str and repr alike.
    def str_short(self, short_dtypes: bool = False, mesh_axis_types: bool = False) -> str:
        return f"Ref{{{self.inner.str_short(short_dtypes, mesh_axis_types)}}}"

    __str__ = __repr__ = str_short


PYTHON_SCALAR_AVALS = {bool: ShapedArray((), np.bool_), int: ShapedArray((), np.int32, True),
                    float: ShapedArray((), np.float32, True),
                    complex: ShapedArray((), np.complex64, True)}


def is_ref_type(aval) -> bool:
    return isinstance(aval, RefType)


def dtype_of_jax(dtype) -> np.dtype:
    """The minijax dtype of a jax.Array or JAX tracer of `dtype`: JAX's key dtypes
    `key<fry>`, `key<rbg>`, `key<urbg>` are the key dtypes here; any other dtype is
    NumPy's own."""
    text = str(dtype)
    if text.startswith("key<"):
        tag = text[4:-1]
        if tag not in _KEY_DTYPE_OF_TAG:
            raise TypeError(f"minijax keys use the threefry2x32, rbg and unsafe_rbg "
                            f"implementations, got a key array of dtype {dtype}")
        return _KEY_DTYPE_OF_TAG[tag]
    return np.dtype(dtype)


# The avals of NumPy arrays by (shape, dtype), shared: every input leaf of a trace asks
# for one and a network's leaves have few distinct types, so one lookup replaces
# building an aval, and the signature memo (`registry.signature_of`) then compares its
# keys' avals by identity. Avals are immutable, so sharing one changes nothing else.
_ndarray_avals: dict = {}
_MAX_NDARRAY_AVALS = 4096


def _new_ndarray_aval(shape, dtype) -> ShapedArray:
    if len(_ndarray_avals) >= _MAX_NDARRAY_AVALS:
        _ndarray_avals.clear()
    aval = _ndarray_avals[(shape, dtype)] = ShapedArray(shape, canonical_dtype(dtype))
    return aval


def forget_shared_avals():
    """Drop the shared avals of NumPy arrays (new ones are made on demand)."""
    _ndarray_avals.clear()


def aval_of_value(value) -> ShapedArray:
    """The aval of a concrete value: a Python scalar (weak), NumPy or jax array.

    Every eager operand and every constant a trace meets comes here, so the cases are
    ordered by frequency and Python scalars share their (immutable) avals."""
    if type(value) is np.ndarray:      # the common case first: every input leaf
        aval = _ndarray_avals.get((value.shape, value.dtype))
        return aval if aval is not None else _new_ndarray_aval(value.shape, value.dtype)
    scalar = PYTHON_SCALAR_AVALS.get(type(value))
    if scalar is not None:
        return scalar
    aval = getattr(value, "aval", None)
    if isinstance(aval, (ShapedArray, RefType)):
        return aval
    dtype = getattr(value, "dtype", None)
    shape = getattr(value, "shape", None)
    if isinstance(dtype, np.dtype) and shape is not None:
        # A jax.Array of numbers (no key check: formatting a dtype as text is slow) or a
        # NumPy scalar, strongly typed even where it subclasses a Python scalar.
        return ShapedArray(shape, canonical_dtype(dtype), bool(getattr(value, "weak_type", False)))
    if isinstance(value, bool):        # subclasses of Python scalars (an IntEnum)
        return PYTHON_SCALAR_AVALS[bool]
    if isinstance(value, int):
        return PYTHON_SCALAR_AVALS[int]
    if isinstance(value, float):
        return PYTHON_SCALAR_AVALS[float]
    if isinstance(value, complex):
        return PYTHON_SCALAR_AVALS[complex]
    if str(dtype).startswith("key<"):  # a jax.Array of keys (minijax's runtime key value)
        return ShapedArray(shape, dtype_of_jax(dtype))
    if dtype is None or shape is None:
        raise TypeError(f"{type(value).__name__} is not a valid minijax value: expected an "
                        f"array, a NumPy value or a Python scalar, got {value!r}")
    weak = bool(getattr(value, "weak_type", False))
    return ShapedArray(shape, canonical_dtype(dtype), weak)


@functools.cache
def jax_array_type() -> type:
    """The concrete type of a JAX array, read off a fresh one on first use.

    Not at import: making an array starts JAX's backend, and computing one (as
    `jnp.zeros` does) also lowers and compiles a program, which cost every
    `import minijax` about a quarter of a second. The type is the same in every
    process state, so the cache needs no reset. `ensure_compile_time_eval` keeps the
    array concrete under an enclosing JAX trace.
    """
    import jax
    with jax.ensure_compile_time_eval():
        return type(jax.device_put(np.zeros((), np.float32)))
