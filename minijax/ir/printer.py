"""Jaxpr -> text: the human view (`pp_jaxpr`, what `print(jaxpr)` shows) and the
exact form (`dumps`), which `parser.loads` reads back without losing a bit.

Read `core.py` first. The layout follows `jax.make_jaxpr` so the two can be read side
by side; the grammar in `parser.py`'s docstring is the contract both modules keep:

    { lambda a:f32[3]; b:f32[3] c:Ref{f32[]}. let
        d:f32[3] = add b a
        e:f32[] <- c[...]
        f:f32[] = reduce_sum[axes=(0,)] d
        c[...] <- f
        g:i32[3] = jit[
          jaxpr={ lambda ; h:f32[3]. let
              i:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] h
            in (i,) }
          name='to_int'
        ] d
      in (g, e, 2.0:f32[]) }

* Every binder carries its type and every literal its type (`2.0:f32[]`). Variable
  names run a, b, ..., z, ba, bb, ... in reading order and are unique across the whole
  text, nested jaxprs included, so a name always means one variable.
* Params sit in brackets, sorted by name. They are broken one per line when they
  contain a nested jaxpr or would make the line longer than 80 columns.
* An equation with no outputs is written without `=`: `free_ref c`.
* Ref sugar: `x:f32[] <- r[...]` (get), `r[...] <- v` (swap whose result is unused),
  `y:f32[], r[...] <- r[...], v` (swap), `r[...] += v` (addupdate). With an
  `indexer` param the place shows it: `r[1:3, i, None]`, `r.T[0]`,
  `r.at[1:3].reshape(2, 1)[0]` (see ref_indexing.py; `_index_text` writes it).

The exact form (`dumps`) adds two things: weak types (`f32[]~`) and the values of the
closed-over constants, written after their binders: `{ lambda a:f32[2] = [0.5, nan];`.
Array elements are written so that parsing gives back the same bits (see
`format_array`): shortest round-tripping decimals, `nan`/`-nan`/`inf`/`-inf`/`-0.0`,
`complex(re, im)` for complex numbers, and `bits(0x7fc00001)` for the rare NaN whose
payload is not the default one.

Param values the text form writes: None, bools, ints, floats, strings (always in single
quotes), dtypes (bare names: float32, bfloat16, bool), tuples, lists, jaxprs, and
*registered objects*. An object is registered with

    register_param_type(cls, name, constructor=cls)

and must have a method `param_args(self) -> tuple` returning params-writable values.
It is written as a call, `name(arg, ...)`, and the parser rebuilds it with
`param_constructors[name](*args)`. (Remat policies use this for
`save_only_these_names('h')`.) The human view writes any other object as `<repr>`,
which is readable but does not parse; `dumps` refuses such objects.
"""
from __future__ import annotations

import itertools
import string
from typing import Any, Callable

import numpy as np

from .core import Jaxpr, ClosedJaxpr, Var, Literal
from .registry import primitives_by_name
from .trace import MinijaxError
from .types import (RefType, bfloat16, float0, is_key, key_tag, keys_as_numpy, is_float,
                    is_integer, NARROW_FLOATS, NARROW_INTS)
from .ref_indexing import (RefIndexer, indexer_shapes, index_text, view_text,
                           decode_indexer)

__all__ = ["pp_jaxpr", "dumps", "register_param_type", "param_types",
           "param_constructors", "format_array", "float_array", "Bits", "DTYPES_BY_NAME"]

LINE_WIDTH = 80

# -- registered param objects ---------------------------------------------------------

param_types: dict[type, str] = {}                  # class -> name written in the text
param_constructors: dict[str, Callable[..., Any]] = {}  # name -> callable(*args)


def register_param_type(cls: type, name: str, constructor: Callable[..., Any] | None = None):
    """Let params hold instances of `cls`, written as `name(*obj.param_args())`."""
    param_types[cls] = name
    param_constructors[name] = cls if constructor is None else constructor


# A ref op's indexer is normally shown in the sugar (`r.at[0][1:3]`); this generic
# form is for the rare equation the sugar cannot show.
register_param_type(RefIndexer, "indexer", decode_indexer)

# Dtypes as param values are written by their NumPy names. float0 gets its JAX name
# because NumPy calls the structured dtype behind it just 'void'.
DTYPES_BY_NAME: dict[str, np.dtype] = {
    **{name: np.dtype(name) for name in (
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "complex64", "complex128")},
    "bfloat16": bfloat16, "float0": float0,
    **{d.name: d for d in (*NARROW_FLOATS, *NARROW_INTS)},
}
_NAMES_BY_DTYPE = {dtype: name for name, dtype in DTYPES_BY_NAME.items()}


# -- array elements, both directions --------------------------------------------------
#
# The printer and the parser share these functions so that "what the parser will make
# of this text" is computed by the same code the printer uses to check its output.

class NotSerializableError(ValueError):
    """`dumps` met a param that is a live Python object (a custom rule's function):
    the human view can describe it, the exact form cannot carry it."""


class OpaqueParam:
    """A param the human view could only describe (`<jvp=f_jvp>`): a Python object
    such as a custom derivative rule, read back from text. It prints as it was read;
    calling it says why it cannot run."""
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __eq__(self, other):
        return isinstance(other, OpaqueParam) and other.text == self.text

    def __hash__(self):
        return hash(("OpaqueParam", self.text))

    def __repr__(self):
        return self.text

    def __call__(self, *args, **kwargs):
        raise MinijaxError(f"<{self.text}> was a Python object in the traced program; a "
                           f"program read from text keeps only its description, so it "
                           f"cannot be called. Trace the Python function instead.")


class Bits:
    """A float element given by its bit pattern: `bits(0x7fc00001)` in the text."""
    __slots__ = ("bits",)

    def __init__(self, bits: int):
        self.bits = int(bits)


def _uint_view(array: np.ndarray) -> np.ndarray:
    return array.view(np.dtype(f"u{array.dtype.itemsize}"))


def float_array(values, dtype) -> np.ndarray:
    """A 1-d array of a float dtype from Python floats/ints and `Bits`, as the parser
    makes it: parse each decimal as a Python float, then cast to `dtype`."""
    dtype = np.dtype(dtype)
    with np.errstate(invalid="ignore", over="ignore"):   # NaNs and infs are values here
        out = np.array([0.0 if isinstance(v, Bits) else v for v in values],
                       np.float64).astype(dtype)
    for i, v in enumerate(values):
        if isinstance(v, Bits):
            _uint_view(out)[i] = v.bits
    return out


def _shortest_text(x: float, dtype) -> str:
    # NumPy prints float16/32/64 scalars with the shortest round-tripping digits, but
    # not bfloat16 and the narrow floats (ml_dtypes prints 6 significant digits):
    # search the precision.
    for precision in range(1, 10):
        text = f"{x:.{precision}g}"
        if float_array([float(text)], dtype)[0] == x:
            if "e" in text and "e" not in repr(x):
                return repr(x)      # 448.0, not 4.5e+02: the exact value reads better
            return text if any(c in text for c in ".en") else text + ".0"
    return repr(x)


def _float_texts(flat: np.ndarray) -> list[str]:
    dtype = flat.dtype
    if dtype == bfloat16 or dtype in NARROW_FLOATS:
        texts = [_shortest_text(x, dtype) for x in flat.astype(np.float32).tolist()]
    elif dtype == np.float64:
        texts = [repr(x) for x in flat.tolist()]
    else:
        texts = [str(x) for x in flat]
    # The decimal strings round-trip for ordinary values; check it, and fix the cases
    # that do not: NaNs with the sign bit or a payload, and (in theory) a value that
    # decimal -> float64 -> dtype rounds twice. float64 holds every narrower float
    # exactly, so its repr is always a correct fallback for non-NaNs.
    back = float_array([float(t) for t in texts], dtype)
    for i in np.flatnonzero(_uint_view(back) != _uint_view(flat)):
        x = flat[i:i + 1]
        with np.errstate(invalid="ignore"):       # signalling NaNs are values here
            is_nan, negative = bool(np.isnan(x[0])), bool(np.signbit(x[0]))
        if is_nan:
            text = "-nan" if negative else "nan"
            same = _uint_view(float_array([float(text)], dtype)) == _uint_view(x)
            texts[i] = text if same[0] else f"bits({hex(int(_uint_view(x)[0]))})"
        else:
            texts[i] = repr(float(x[0]))
    return texts


def _element_texts(flat: np.ndarray) -> list[str]:
    kind = flat.dtype.kind
    if flat.dtype == np.bool_:
        return ["True" if x else "False" for x in flat.tolist()]
    if is_integer(flat.dtype):     # NumPy's ints, and the narrow ones as Python ints
        return [str(x) for x in flat.astype(np.int64).tolist()]
    if kind == "c":
        real, imag = _float_texts(flat.real.copy()), _float_texts(flat.imag.copy())
        return [f"complex({r}, {i})" for r, i in zip(real, imag)]
    if is_float(flat.dtype):
        return _float_texts(flat)
    if flat.dtype == float0:  # the tangent type of integers: no information, written 0
        return ["0"] * flat.size
    if is_key(flat.dtype):  # a key by its words: fry(a, b), rbg(a, b, c, d), ...
        tag = key_tag(flat.dtype)
        return [f"{tag}({', '.join(map(str, words))})" for words in flat[tag].tolist()]
    raise ValueError(f"the text form cannot write values of dtype {flat.dtype}")


def format_array(value) -> str:
    """The elements of an array: a scalar as `1.5`, an array as nested `[...]` lists."""
    array = np.asarray(value)
    texts = iter(_element_texts(array.reshape(-1)))

    def nest(shape):
        if not shape:
            return next(texts)
        return "[" + ", ".join(nest(shape[1:]) for _ in range(shape[0])) + "]"
    return nest(array.shape)


# -- printing --------------------------------------------------------------------------

# Names the grammar gives a meaning to (keywords), or that would read like a value.
_RESERVED_NAMES = frozenset({"in", "let", "lambda", "nan", "inf"})


def _fresh_names():
    letters = string.ascii_lowercase
    for length in itertools.count(1):
        # Like JAX: a..z, then ba..zz, then baa..: no leading 'a' past one letter.
        for first in letters if length == 1 else letters[1:]:
            for rest in itertools.product(letters, repeat=length - 1):
                name = first + "".join(rest)
                if name not in _RESERVED_NAMES:
                    yield name


def _quote(text: str) -> str:
    """`text` as a Python single-quoted literal, which the parser decodes with
    `ast.literal_eval`."""
    if text.isprintable() and "'" not in text and "\\" not in text:
        return f"'{text}'"
    escaped = {"\\": "\\\\", "'": "\\'"}
    return "'" + "".join(escaped.get(c) or (c if c.isprintable() else repr(c)[1:-1])
                         for c in text) + "'"


class _Printer:
    """One printing job: owns the name counter shared by all nested jaxprs."""

    def __init__(self, exact: bool):
        self.exact = exact
        self._names: dict[int, str] = {}      # id(Var) -> name
        self._keep_alive: list[Var] = []      # so ids stay unique while we print
        self._fresh = _fresh_names()
        self._type_texts: dict = {}

    # names and atoms

    def type_text(self, aval) -> str:
        text = self._type_texts.get(aval)
        if text is None:
            text = self._type_texts[aval] = aval.type_text(self.exact)
        return text

    def name(self, var: Var) -> str:
        name = self._names.get(id(var))
        if name is None:
            # First sight of a var outside a binder: the jaxpr is ill scoped; name it
            # anyway so the text shows the problem and the parser reports it.
            name = self._names[id(var)] = next(self._fresh)
            self._keep_alive.append(var)
        return name

    def binder(self, var: Var) -> str:
        name = self._names[id(var)] = next(self._fresh)
        self._keep_alive.append(var)
        return f"{name}:{self.type_text(var.aval)}"

    def atom(self, atom) -> str:
        if isinstance(atom, Literal):
            return f"{format_array(atom.value)}:{self.type_text(atom.aval)}"
        return self.name(atom)

    # jaxprs

    def jaxpr(self, jaxpr: Jaxpr, indent: int, consts=None) -> str:
        """`jaxpr` with its header at the current column and its body at `indent`+4."""
        constvars = [self.binder(v) for v in jaxpr.constvars]
        if consts is not None:
            constvars = [f"{text} = {format_array(_const_array(value, var))}"
                         for text, value, var in zip(constvars, consts, jaxpr.constvars)]
        invars = [self.binder(v) for v in jaxpr.invars]
        lines = [f"{{ lambda {' '.join(constvars)}; {' '.join(invars)}. let"]
        used = {id(a) for eqn in jaxpr.eqns for a in eqn.inputs}
        used.update(id(a) for a in jaxpr.outvars)
        for eqn in jaxpr.eqns:
            lines.append(self.eqn(eqn, indent + 4, used))
        outs = [self.atom(a) for a in jaxpr.outvars]
        outs_text = f"({outs[0]},)" if len(outs) == 1 else f"({', '.join(outs)})"
        lines.append(f"{' ' * (indent + 2)}in {outs_text} }}")
        return "\n".join(lines)

    def eqn(self, eqn, indent: int, used: set) -> str:
        sugar = _REF_SUGAR.get(eqn.primitive.name)
        if sugar is not None and _is_sugarable(eqn):
            return " " * indent + sugar(self, eqn, used)
        if self.exact and primitives_by_name.get(eqn.primitive.name) is not eqn.primitive:
            # Names of user primitives may repeat, and `loads` knows the catalogue only:
            # a text would stand for programs that differ (a compile cache keyed by it).
            raise NotSerializableError(f"the exact text form cannot carry the user "
                                       f"primitive {eqn.primitive.name}")
        lhs = " ".join(self.binder(v) for v in eqn.outputs)
        head = " " * indent + (f"{lhs} = " if lhs else "") + eqn.primitive.name
        params = [f"{k}={self.param(v, indent + 2)}" for k, v in sorted(eqn.params.items())]
        args = "".join(" " + self.atom(a) for a in eqn.inputs)
        if not params:
            return head + args
        one_line = f"{head}[{' '.join(params)}]{args}"
        if len(one_line) <= LINE_WIDTH and not any("\n" in p for p in params):
            return one_line
        pad = " " * (indent + 2)
        return (f"{head}[\n" + "".join(f"{pad}{p}\n" for p in params)
                + " " * indent + "]" + args)

    # ref sugar

    def place(self, ref, eqn) -> str:
        return f"{self.name(ref)}{_index_text(eqn, self.atom)}"

    def get_sugar(self, eqn, used) -> str:
        return f"{self.binder(eqn.outputs[0])} <- {self.place(eqn.inputs[0], eqn)}"

    def swap_sugar(self, eqn, used) -> str:
        ref, value = eqn.inputs[:2]
        place = self.place(ref, eqn)
        if id(eqn.outputs[0]) not in used:
            return f"{place} <- {self.atom(value)}"
        return f"{self.binder(eqn.outputs[0])}, {place} <- {place}, {self.atom(value)}"

    def addupdate_sugar(self, eqn, used) -> str:
        ref, value = eqn.inputs[:2]
        return f"{self.place(ref, eqn)} += {self.atom(value)}"

    # params

    def param(self, value, indent: int) -> str:
        if isinstance(value, Jaxpr):
            return self.jaxpr(value, indent)
        if isinstance(value, ClosedJaxpr):
            return self.jaxpr(value.jaxpr, indent, value.consts if self.exact else None)
        if value is None or isinstance(value, (bool, np.bool_)):
            return str(None if value is None else bool(value))
        if isinstance(value, (int, np.integer)):
            return str(int(value))
        if isinstance(value, (float, np.floating)):
            return repr(float(value))
        if isinstance(value, str):
            return _quote(value)
        if isinstance(value, np.dtype) or (isinstance(value, type)
                                           and issubclass(value, np.generic)):
            return _NAMES_BY_DTYPE[np.dtype(value)]
        if isinstance(value, tuple):
            items = [self.param(v, indent) for v in value]
            return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
        if isinstance(value, list):
            return f"[{', '.join(self.param(v, indent) for v in value)}]"
        if isinstance(value, OpaqueParam):
            if self.exact:
                raise NotSerializableError(f"the exact text form cannot carry the Python "
                                           f"object <{value.text}>")
            return f"<{value.text}>"
        name = param_types.get(type(value))
        if name is not None:
            return f"{name}({', '.join(self.param(v, indent) for v in value.param_args())})"
        if self.exact:
            raise NotSerializableError(
                f"the text form cannot write a param of type {type(value).__name__} "
                f"({value!r}); register it with minijax.ir.printer.register_param_type")
        return f"<{value!r}>"


def _ref_index_parts(eqn):
    """(indexer, dynamic index inputs) of a get/swap/addupdate equation."""
    fixed = 1 if eqn.primitive.name == "get" else 2
    return eqn.params.get("indexer"), eqn.inputs[fixed:]


def _index_text(eqn, atom_text) -> str:
    """Where a ref op lands, as written after the ref's name: `[...]`, `[1:3, i]`,
    `.at[0].T[None]`. See ref_indexing.py for what each part means."""
    indexer, dynamic = _ref_index_parts(eqn)
    if indexer is None:
        return "[...]"
    shapes = indexer_shapes(eqn.inputs[0].aval.shape, indexer, [a.aval for a in dynamic])
    texts = iter([atom_text(a) for a in dynamic])
    views = "".join(view_text(step, shape, texts)
                    for step, shape in zip(indexer.views, shapes))
    return f"{views}[{index_text(indexer.final.items, shapes[-2], texts)}]"


def _is_sugarable(eqn) -> bool:
    # Sugar is only for the plain shapes of these ops; anything odd (extra params,
    # a literal where the ref goes, an indexer that does not fit the ref) prints
    # generically so nothing is hidden.
    name = eqn.primitive.name
    if set(eqn.params) - {"indexer"} or not eqn.inputs:
        return False
    ref = eqn.inputs[0]
    if not (isinstance(ref, Var) and isinstance(ref.aval, RefType)):
        return False
    if len(eqn.outputs) != (0 if name == "addupdate" else 1):
        return False
    indexer, dynamic = _ref_index_parts(eqn)
    if len(eqn.inputs) < (1 if name == "get" else 2):
        return False
    if indexer is None:
        return not dynamic
    if not isinstance(indexer, RefIndexer) or len(dynamic) != indexer.num_dynamic:
        return False
    try:
        indexer_shapes(ref.aval.shape, indexer, [a.aval for a in dynamic])
    except ValueError:
        return False
    return True


_REF_SUGAR = {"get": _Printer.get_sugar, "swap": _Printer.swap_sugar,
              "addupdate": _Printer.addupdate_sugar}


def _const_array(value, var: Var) -> np.ndarray:
    if isinstance(var.aval, RefType):
        # A closed-over ref is a live mutable box (say, an eager minijax.Ref): text
        # could hold its current contents but not the box itself.
        raise NotSerializableError(f"the exact text form cannot carry a closed-over ref "
                                   f"({var.aval.type_text()}); pass the ref as an argument "
                                   f"instead")
    array = keys_as_numpy(value) if is_key(var.aval.dtype) else np.asarray(value)
    if array.dtype != var.aval.dtype:
        array = array.astype(var.aval.dtype)
    if array.shape != var.aval.shape:
        raise ValueError(f"a constant of shape {array.shape} is bound to a constvar of "
                         f"type {var.aval.type_text()}")
    return array


def pp_jaxpr(jaxpr, exact: bool = False) -> str:
    """The text of a `Jaxpr` (or `ClosedJaxpr`). `exact=True` also writes weak types,
    and for a `ClosedJaxpr` the constants' values: that is `dumps`."""
    printer = _Printer(exact)
    if isinstance(jaxpr, ClosedJaxpr):
        return printer.jaxpr(jaxpr.jaxpr, 0, jaxpr.consts if exact else None)
    return printer.jaxpr(jaxpr, 0)


def dumps(closed_jaxpr) -> str:
    """The exact text of a closed jaxpr: `parser.loads(dumps(cj))` gives back the same
    program, weak types and constant values (to the bit) included."""
    if isinstance(closed_jaxpr, Jaxpr):
        closed_jaxpr = ClosedJaxpr(closed_jaxpr, [])   # errors if it has constvars
    return pp_jaxpr(closed_jaxpr, exact=True)
