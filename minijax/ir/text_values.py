"""Array elements in the text form: a constant's value or a literal -> a NumPy array.

`parser.py` reads a constvar's `= VALUE` and a literal's scalar without converting
them (what `1` means depends on the type written after it): number and name tokens
stay the scanner's `(kind, text, position)` tuples, `name(args)` becomes a `Call`,
`[..]` a Python list. `read_elements` then checks the nesting against the type's shape
and makes the array, bit for bit what the printer's `format_array` wrote: decimals
and `nan`/`inf` through `printer.float_array`, `bits(0x...)` as a bit pattern,
`complex(RE, IM)`, `fry(WORD, WORD)` for keys, True/False, ints (range-checked).

Errors go through the `error(message, position)` callback the parser passes, which
makes a `ParseError` pointing at `position`.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from .printer import Bits, float_array
from .types import (ShapedArray, float0, is_key, key_tag, key_size, keys_as_jax, is_float,
                    is_integer, NARROW_INTS)

__all__ = ["Call", "number", "read_integer", "read_elements"]

_NAMED_FLOATS = {"inf", "-inf", "nan", "-nan"}


class Call:
    """`name(args)` in a value: `complex(1.0, -2.0)`, `bits(0x7fc00001)`, `fry(1, 2)`."""
    __slots__ = ("name", "args")

    def __init__(self, name, args):
        self.name, self.args = name, args


def number(text: str):
    """The int or float a NUMBER token spells."""
    if "x" in text:
        return int(text, 16)
    return float(text) if "." in text or "e" in text or "E" in text else int(text)


def read_integer(node, expected: str, error) -> int:
    """An int from a NUMBER token; anything else is an error saying `expected`."""
    if type(node) is tuple and node[0] == "NUMBER":
        value = number(node[1])
        if not isinstance(value, float):
            return value
    raise error(f"expected {expected}, got {_describe(node)}", _position(node))


def read_elements(node, aval, anchor: int, error) -> np.ndarray:
    """The array of type `aval` that `node` (a scalar or nested lists) spells; shape
    errors point at `anchor`."""
    if not isinstance(aval, ShapedArray):
        raise error(f"cannot write a value for type {aval.type_text()}", anchor)
    if not aval.shape and type(node) is tuple:     # a literal: the common case
        flat = [node]
    else:
        flat = []
        _flatten(node, aval.shape, aval, flat, anchor, error)
    if is_key(aval.dtype):   # keys are jax.Arrays at run time
        return keys_as_jax(_keys(flat, aval.dtype, error).reshape(aval.shape))
    return _array(flat, aval.dtype, error).reshape(aval.shape)


def _flatten(node, shape, aval, flat, anchor, error):
    if not shape:
        if isinstance(node, list):
            raise error(f"expected a scalar element of {aval.type_text()}, got a list", anchor)
        flat.append(node)
        return
    if not isinstance(node, list) or len(node) != shape[0]:
        raise error(f"the value does not have the shape of {aval.type_text()}: expected a "
                    f"list of {shape[0]} along an axis", anchor)
    for item in node:
        _flatten(item, shape[1:], aval, flat, anchor, error)


def _keys(flat, dtype, error) -> np.ndarray:
    """Keys written by their words, `fry(k1, k2)` (or `rbg(...)`, `urbg(...)` with four),
    as a NumPy array of the key dtype `dtype`."""
    tag, size = key_tag(dtype), key_size(dtype)
    words = []
    for node in flat:
        if not (isinstance(node, Call) and node.name[1] == tag and len(node.args) == size):
            raise error(f"a key is written {tag}({', '.join(['WORD'] * size)})",
                        _position(node))
        words.append([read_integer(arg, "a uint32 word", error) for arg in node.args])
    try:
        array = np.array(words, np.uint32).reshape(len(flat), size)
    except OverflowError as e:
        raise error(f"{e} for a key word (uint32)", _position(flat[0])) from None
    return array.view(dtype)[:, 0]


def _array(flat, dtype, error) -> np.ndarray:
    if dtype == float0:
        for node in flat:
            if read_integer(node, "0", error) != 0:
                raise error("a float0 value is written 0", _position(node))
        return np.zeros(len(flat), float0)
    if dtype == np.bool_:
        return np.array([_bool(node, error) for node in flat], bool)
    if is_integer(dtype):
        values = [read_integer(node, "an integer", error) for node in flat]
        if dtype in NARROW_INTS:     # ml_dtypes wraps out-of-range ints silently
            info = ml_dtypes.iinfo(dtype)
            for node, v in zip(flat, values):
                if not info.min <= v <= info.max:
                    raise error(f"Python integer {v} out of bounds for {dtype.name}",
                                _position(node))
        try:
            return np.array(values, dtype)
        except OverflowError as e:
            raise error(f"{e} for {dtype.name}", _position(flat[0])) from None
    if is_float(dtype):
        return float_array([_float(node, error) for node in flat], dtype)
    if dtype.kind == "c":
        parts = [_complex_parts(node, error) for node in flat]
        part_dtype = np.empty(0, dtype).real.dtype
        out = np.empty(len(flat), dtype)
        out.real = float_array([re for re, _ in parts], part_dtype)
        out.imag = float_array([im for _, im in parts], part_dtype)
        return out
    raise error(f"cannot read values of dtype {dtype}", _position(flat[0]))


def _bool(node, error) -> bool:
    if type(node) is tuple and node[1] in ("True", "False"):
        return node[1] == "True"
    raise error(f"expected True or False, got {_describe(node)}", _position(node))


def _float(node, error):
    if type(node) is tuple:
        if node[0] == "NUMBER":
            return number(node[1])
        if node[1] in _NAMED_FLOATS:
            return float(node[1])
    elif (isinstance(node, Call) and node.name[1] == "bits" and len(node.args) == 1
            and type(node.args[0]) is tuple and node.args[0][0] == "NUMBER"):
        return Bits(number(node.args[0][1]))
    raise error(f"expected a float (a number, nan, inf or bits(0x...)), got "
                f"{_describe(node)}", _position(node))


def _complex_parts(node, error):
    if isinstance(node, Call) and node.name[1] == "complex" and len(node.args) == 2:
        return _float(node.args[0], error), _float(node.args[1], error)
    return _float(node, error), 0.0


def _position(node) -> int:
    if isinstance(node, Call):
        return node.name[2]
    return node[2] if type(node) is tuple else 0


def _describe(node) -> str:
    if type(node) is tuple:
        return repr(node[1])
    if isinstance(node, Call):
        return f"{node.name[1]}(...)"
    return type(node).__name__
