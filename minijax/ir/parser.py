"""Text -> Jaxpr: `parse_jaxpr` reads the human view, `loads` the exact form.

Read `printer.py` first (it explains the text form) and `grammar.lark` (the grammar,
with the exact form's syntax for constants). This module turns text back into
immutable core objects:

* Parsing is one LALR pass. lark calls `_Builder`'s methods as it reduces each rule,
  left to right, so no parse tree is built: equations are made as they are read.
  That is also how scoping works: reading `{ lambda` opens a fresh scope (nested
  jaxprs are closed, they see none of the outer names), binders are defined when
  read, and a variable must be defined before it is used. An equation's outputs are
  defined only after its inputs are resolved, so `a:f32[] = sin a` is an error.
* Primitives are looked up by name in `primitives_by_name`, and every equation's
  effects are recomputed with `effects_of`, exactly as tracing computes them. Types
  are taken from the text as written; checking them is the verifier's job.
* Registered param objects (`save_only_these_names('h')`) are rebuilt through
  `param_constructors` (see printer.py for the protocol).
* Every error is a `ParseError` naming line and column, quoting the line, and saying
  what was expected.
"""
from __future__ import annotations

import ast
import os
import threading

import numpy as np
from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.lexer import PatternStr

from .core import Var, Literal, Eqn, Jaxpr, ClosedJaxpr
from .primitives import primitives_by_name, effects_of, get_p, swap_p, addupdate_p
from .printer import DTYPES_BY_NAME, Bits, OpaqueParam, float_array, param_constructors
from .ref_indexing import RefIndexer, Transpose, Reshape, build_index, step_shape, \
    indexer_shape
from .trace import MinijaxError
from .types import float0
from .types import (ShapedArray, RefType, dtype_from_short_name, bfloat16, KEY_DTYPE,
                    keys_as_jax)

__all__ = ["parse_jaxpr", "loads", "ParseError", "param_constructors"]

_GRAMMAR_PATH = os.path.join(os.path.dirname(__file__), "grammar.lark")


class ParseError(MinijaxError, ValueError):
    """Malformed IR text. `line` and `column` are 1-based."""

    def __init__(self, message: str, line: int, column: int, text: str | None = None):
        self.message, self.line, self.column = message, line, column
        where = f"line {line}, column {column}: {message}"
        lines = text.splitlines() if text is not None else []
        if 1 <= line <= len(lines):
            where += f"\n    {lines[line - 1]}\n    {' ' * (column - 1)}^"
        super().__init__(where)


class _Call:
    """`name(args)` in a value, kept unconverted until we know what it must be."""
    __slots__ = ("name", "args")

    def __init__(self, name: Token, args):
        self.name, self.args = name, args


_NAMED_PARAM_VALUES = {"True": True, "False": False, "None": None, "inf": float("inf"),
                       "-inf": float("-inf"), "nan": float("nan"), "-nan": float("-nan")}
_NAMED_FLOATS = {"inf", "-inf", "nan", "-nan"}


def _number(token: Token):
    text = token.value
    if "x" in text:
        return int(text, 16)
    return float(text) if any(c in text for c in ".eE") else int(text)


class _Builder(Transformer):
    """lark's callbacks, one per grammar rule (or alias), called bottom-up."""
    __visit_tokens__ = False

    def __init__(self):
        super().__init__()
        self._types: dict[str, object] = {}      # type token text -> aval

    def reset(self, text: str, require_values: bool):
        self.text = text
        self.require_values = require_values
        self.scopes: list[dict[str, Var]] = []

    def error(self, message: str, token) -> ParseError:
        return ParseError(message, getattr(token, "line", 0), getattr(token, "column", 0),
                          self.text)

    # -- variables and types --------------------------------------------------------

    def define(self, name: Token, aval) -> Var:
        scope = self.scopes[-1]
        if name.value in scope:
            raise self.error(f"variable '{name}' is defined twice", name)
        var = scope[name.value] = Var(aval)
        return var

    def lookup(self, name: Token) -> Var:
        var = self.scopes[-1].get(name.value)
        if var is None:
            raise self.error(f"undefined variable '{name}'", name)
        return var

    def aval(self, token: Token):
        aval = self._types.get(token.value)
        if aval is None:
            aval = self._types[token.value] = self._parse_type(token)
        return aval

    def _parse_type(self, token: Token):
        text, column = token.value, token.column
        is_ref = text.startswith("Ref{")
        if is_ref:
            text, column = text[4:-1], column + 4
        dtype_name, rest = text.split("[", 1)
        try:
            dtype = dtype_from_short_name(dtype_name)
        except ValueError as e:
            raise ParseError(str(e), token.line, column, self.text) from None
        dims = rest[:rest.index("]")].replace(" ", "")
        shape = tuple(int(d) for d in dims.split(",")) if dims else ()
        inner = ShapedArray(shape, dtype, weak_type=text.endswith("~"))
        return RefType(inner) if is_ref else inner

    # -- jaxprs -----------------------------------------------------------------------

    def start(self, children):
        return children[0]

    def lambda_open(self, children):
        self.scopes.append({})

    def constvars(self, children):
        consts = []
        for name, aval, node in children:
            value = None if node is None else self.elements(node, aval, name)
            consts.append((self.define(name, aval), value, name))
        return consts

    def constvar(self, children):
        name, type_token = children[0], children[1]
        return name, self.aval(type_token), children[2] if len(children) > 2 else None

    def invars(self, children):
        return [self.define(name, aval) for name, aval in children]

    def binder(self, children):
        return children[0], self.aval(children[1])

    def outvars(self, children):
        return children

    def jaxpr(self, children):
        _, consts, invars, *eqns, outvars = children
        self.scopes.pop()
        jaxpr = Jaxpr([var for var, _, _ in consts], invars, eqns, outvars)
        missing = [name for _, value, name in consts if value is None]
        if missing and (len(missing) < len(consts) or self.require_values
                        and not self.scopes):
            raise self.error(f"constvar '{missing[0]}' has no value; the exact form "
                             f"writes `{missing[0]}:TYPE = VALUE`", missing[0])
        if consts and not missing:
            return ClosedJaxpr(jaxpr, [value for _, value, _ in consts])
        return jaxpr

    # -- equations --------------------------------------------------------------------

    def make_eqn(self, prim, inputs, params, outputs, where: Token) -> Eqn:
        try:
            effects = effects_of(prim, [a.aval for a in inputs], params)
        except Exception as e:  # an effect rule meeting ill-typed input fails anyhow
            raise self.error(f"cannot work out the effects of {prim.name}: {e}",
                             where) from None
        return Eqn(prim, inputs, params, outputs, effects, source_info=None)  # text has none

    def eqn(self, children):
        outputs, (prim, params, inputs, where) = children
        outvars = [self.define(name, aval) for name, aval in outputs]
        return self.make_eqn(prim, inputs, params, outvars, where)

    def eqn_without_outputs(self, children):
        prim, params, inputs, where = children[0]
        return self.make_eqn(prim, inputs, params, [], where)

    def outputs(self, children):
        return children

    def operation(self, children):
        name, params, *inputs = children
        prim = primitives_by_name.get(name.value)
        if prim is None:
            raise self.error(f"unknown primitive '{name}'", name)
        return prim, params, inputs, name

    def params(self, children):
        params = {}
        for name, value in children:
            if name.value in params:
                raise self.error(f"param '{name}' is given twice", name)
            params[name.value] = value
        return params

    def param(self, children):
        return children[0], self.param_value(children[1])

    # -- ref sugar --------------------------------------------------------------------
    #
    # `place` resolves `r.at[..].T[..]` step by step against the ref's shape, turning
    # each index into an `Index` with `ref_indexing.build_index` (the same function
    # `r[...]` uses in Python, so the text means what the Python would) and collecting
    # dynamic index atoms, which become the equation's trailing inputs.

    def place(self, children):
        name, *views, index = children
        ref = self.lookup(name)
        if not isinstance(ref.aval, RefType):
            raise self.error(f"'{name}' is indexed like a ref but has type {ref.aval}", name)
        shape, steps, dynamic = ref.aval.shape, [], []
        for kind, payload in [*views, ("index", index)]:
            if kind == "index":
                step, values = self._index_step(shape, payload, name)
                dynamic += values
            else:
                step = Transpose(tuple(payload) if kind == "transpose"
                                 else tuple(reversed(range(len(shape)))))
                step = Reshape(tuple(payload)) if kind == "reshape" else step
            try:
                shape = step_shape(shape, step, [a.aval for a in values]
                                   if kind == "index" else [])
            except ValueError as e:
                raise self.error(f"bad index of '{name}': {e}", name) from None
            steps.append(step)
        if len(steps) == 1 and not steps[0].items:
            return ref, {}, [], name
        return ref, {"indexer": RefIndexer(tuple(steps))}, dynamic, name

    def _index_step(self, shape, raw_items, anchor):
        def error(cls, message):
            return self.error(f"bad index of '{anchor}': {message}", anchor)
        index, values = build_index(shape, tuple(raw_items),
                                    lambda x: isinstance(x, (Var, Literal)), error)
        return index, values

    def view_at(self, children):
        return "index", children[0]

    def view_t(self, children):
        return "T", None

    def view_reshape(self, children):
        return "reshape", children[0]

    def view_transpose(self, children):
        return "transpose", children[0]

    def int_list(self, children):
        return [self.scalar(token, int, "an integer") for token in children]

    def index(self, children):
        return children

    def index_ellipsis(self, children):
        return Ellipsis

    def index_name(self, children):
        return None if children[0].value == "None" else self.lookup(children[0])

    def index_int(self, children):
        return self.scalar(children[0], int, "an integer index")

    def index_literal(self, children):
        return self.literal(children)

    def index_slice(self, children):
        parts, current = [], None
        for child in children:
            if child == ":":
                parts.append(current)
                current = None
            else:
                current = self.scalar(child, int, "an integer slice bound")
        parts.append(current)
        return slice(*parts)

    def get(self, children):
        (name, aval), (ref, params, dynamic, where) = children
        return self.make_eqn(get_p, [ref, *dynamic], params, [self.define(name, aval)],
                             where)

    def swap_unused(self, children):
        (ref, params, dynamic, where), value = children
        out = Var(_place_aval(ref, params, dynamic))
        return self.make_eqn(swap_p, [ref, value, *dynamic], params, [out], where)

    def swap(self, children):
        (name, aval), (ref, params, dynamic, where), (ref2, params2, dynamic2, where2), \
            value = children
        if ref2 is not ref or params2 != params or not all(
                _same_atom(a, b) for a, b in zip(dynamic, dynamic2)) or len(dynamic) != len(dynamic2):
            raise self.error("a swap reads and writes the same place; expected the "
                             "place written before '<-' here", where2)
        return self.make_eqn(swap_p, [ref, value, *dynamic], params,
                             [self.define(name, aval)], where)

    def addupdate(self, children):
        (ref, params, dynamic, where), value = children
        return self.make_eqn(addupdate_p, [ref, value, *dynamic], params, [], where)

    # -- atoms and values -------------------------------------------------------------

    def var(self, children):
        return self.lookup(children[0])

    def literal(self, children):
        node, type_token = children
        aval = self.aval(type_token)
        if not isinstance(aval, ShapedArray) or aval.shape != ():
            raise self.error(f"a literal must have a scalar array type, not {aval}",
                             type_token)
        return Literal(self.elements(node, aval, type_token), aval)

    def negative(self, children):
        name = children[0]
        return Token.new_borrow_pos("NAME", "-" + name.value, name)

    def tuple(self, children):
        return tuple(children)

    def list(self, children):
        return list(children)

    def call(self, children):
        return _Call(children[0], children[1:])

    def param_value(self, node):
        if isinstance(node, Token):
            if node.type == "NUMBER":
                return _number(node)
            if node.type == "STRING":
                return ast.literal_eval(node.value)
            if node.type == "OPAQUE":
                return OpaqueParam(node.value[1:-1])
            if node.value in _NAMED_PARAM_VALUES:
                return _NAMED_PARAM_VALUES[node.value]
            dtype = DTYPES_BY_NAME.get(node.value)
            if dtype is None:
                raise self.error(f"unknown name '{node}' in a param value; expected "
                                 f"True, False, None, inf, nan or a dtype name such as "
                                 f"float32", node)
            return dtype
        if isinstance(node, tuple):
            return tuple(self.param_value(item) for item in node)
        if isinstance(node, list):
            return [self.param_value(item) for item in node]
        if isinstance(node, _Call):
            constructor = param_constructors.get(node.name.value)
            if constructor is None:
                raise self.error(f"unknown param constructor '{node.name}'; known: "
                                 f"{sorted(param_constructors) or 'none'}", node.name)
            args = [self.param_value(arg) for arg in node.args]
            try:
                return constructor(*args)
            except Exception as e:  # a user-registered constructor rejecting its args
                raise self.error(f"{node.name}(...) failed: {e}", node.name) from None
        return node     # a nested Jaxpr or ClosedJaxpr

    # -- array elements ---------------------------------------------------------------

    def elements(self, node, aval, anchor: Token) -> np.ndarray:
        """The array of type `aval` that `node` (a scalar or nested lists) spells."""
        if not isinstance(aval, ShapedArray):
            raise self.error(f"cannot write a value for type {aval}", anchor)
        flat = []

        def walk(node, shape):
            if not shape:
                if isinstance(node, (list, tuple)):
                    raise self.error(f"expected a scalar element of {aval}, got a list",
                                     anchor)
                flat.append(node)
                return
            if not isinstance(node, list) or len(node) != shape[0]:
                raise self.error(f"the value does not have the shape of {aval}: expected "
                                 f"a list of {shape[0]} along an axis", anchor)
            for item in node:
                walk(item, shape[1:])
        walk(node, aval.shape)
        if aval.dtype == KEY_DTYPE:   # keys are jax.Arrays at run time
            return keys_as_jax(self.keys_of(flat).reshape(aval.shape))
        return self.array_of(flat, aval.dtype).reshape(aval.shape)

    def keys_of(self, flat) -> np.ndarray:
        """Keys written `fry(k1, k2)`, as a NumPy array of KEY_DTYPE."""
        words = []
        for node in flat:
            if not (isinstance(node, _Call) and node.name.value == "fry"
                    and len(node.args) == 2):
                raise self.error("a key is written fry(WORD, WORD)", _position(node))
            words.append([self.scalar(arg, int, "a uint32 word") for arg in node.args])
        try:
            array = np.array(words, np.uint32).reshape(len(flat), 2)
        except OverflowError as e:
            raise self.error(f"{e} for a key word (uint32)", _position(flat[0])) from None
        return array.view(KEY_DTYPE)[:, 0]

    def array_of(self, flat, dtype) -> np.ndarray:
        if dtype == float0:
            for n in flat:
                if self.scalar(n, int, "0") != 0:
                    raise self.error("a float0 value is written 0", _position(n))
            return np.zeros(len(flat), float0)
        if dtype == np.bool_:
            return np.array([self.scalar(n, bool, "True or False") for n in flat], bool)
        if dtype.kind in "iu":
            values = [self.scalar(n, int, "an integer") for n in flat]
            try:
                return np.array(values, dtype)
            except OverflowError as e:
                raise self.error(f"{e} for {dtype.name}", _position(flat[0])) from None
        if dtype.kind == "f" or dtype == bfloat16:
            return float_array([self.float_scalar(n) for n in flat], dtype)
        if dtype.kind == "c":
            parts = [self.complex_parts(n) for n in flat]
            part_dtype = np.empty(0, dtype).real.dtype
            out = np.empty(len(flat), dtype)
            out.real = float_array([re for re, _ in parts], part_dtype)
            out.imag = float_array([im for _, im in parts], part_dtype)
            return out
        raise self.error(f"cannot read values of dtype {dtype}", _position(flat[0]))

    def scalar(self, node, kind, expected):
        if isinstance(node, Token):
            if kind is bool and node.value in ("True", "False"):
                return node.value == "True"
            if kind is int and node.type == "NUMBER" and not isinstance(_number(node), float):
                return _number(node)
        raise self.error(f"expected {expected}, got {_describe(node)}", _position(node))

    def float_scalar(self, node):
        if isinstance(node, Token) and (node.type == "NUMBER" or node.value in _NAMED_FLOATS):
            return float(node.value) if node.type != "NUMBER" else _number(node)
        if (isinstance(node, _Call) and node.name.value == "bits" and len(node.args) == 1
                and isinstance(node.args[0], Token) and node.args[0].type == "NUMBER"):
            return Bits(_number(node.args[0]))
        raise self.error(f"expected a float (a number, nan, inf or bits(0x...)), got "
                         f"{_describe(node)}", _position(node))

    def complex_parts(self, node):
        if isinstance(node, _Call) and node.name.value == "complex" and len(node.args) == 2:
            return self.float_scalar(node.args[0]), self.float_scalar(node.args[1])
        return self.float_scalar(node), 0.0


def _place_aval(ref, params, dynamic) -> ShapedArray:
    """The type of the unused result of `r[idx] <- v`: the indexed part of the ref."""
    inner = ref.aval.inner
    indexer = params.get("indexer")
    if indexer is None:
        return inner
    return inner.update(shape=indexer_shape(inner.shape, indexer,
                                            [a.aval for a in dynamic]))


def _position(node):
    return node.name if isinstance(node, _Call) else node


def _describe(node) -> str:
    if isinstance(node, Token):
        return repr(node.value)
    if isinstance(node, _Call):
        return f"{node.name}(...)"
    return type(node).__name__


# -- lexing: where line breaks count ----------------------------------------------------

_OPENERS = {"LPAR": "RPAR", "LSQB": "RSQB", "LBRACE": "RBRACE"}
_CLOSERS = set(_OPENERS.values())


class _LineBreaks:
    """Keeps a line break only where it ends an equation: directly inside `{ }`, and
    not right after `{` or another kept line break (so blank lines cost nothing)."""
    always_accept = ("_NL",)

    def process(self, stream):
        open_brackets = []
        previous = None
        for token in stream:
            kind = token.type
            if kind == "_NL":
                if open_brackets and open_brackets[-1] == "LBRACE" and previous not in (
                        "_NL", "LBRACE"):
                    previous = kind
                    yield token
                continue
            if kind in _OPENERS:
                open_brackets.append(kind)
            elif kind in _CLOSERS and open_brackets:
                open_brackets.pop()    # a mismatch is the parser's to report
            previous = kind
            yield token


# -- entry points -----------------------------------------------------------------------

_TOKEN_DESCRIPTIONS = {"NAME": "a name", "NUMBER": "a number", "STRING": "a quoted string",
                       "TYPE": "a type such as f32[3]", "REF_TYPE": "a type such as "
                       "Ref{f32[3]}", "_NL": "a line break", "$END": "the end of the text"}
_lock = threading.Lock()     # the builder holds per-parse state
_parser: tuple[Lark, _Builder] | None = None


def _get_parser() -> tuple[Lark, _Builder]:
    global _parser
    if _parser is None:
        builder = _Builder()
        with open(_GRAMMAR_PATH) as f:
            lark = Lark(f.read(), parser="lalr", lexer="contextual", postlex=_LineBreaks(),
                        transformer=builder, maybe_placeholders=False)
        _parser = lark, builder
    return _parser


def _describe_terminal(lark: Lark, name: str) -> str:
    if name in _TOKEN_DESCRIPTIONS:
        return _TOKEN_DESCRIPTIONS[name]
    try:
        pattern = lark.get_terminal(name).pattern
    except KeyError:
        return name
    return f"'{pattern.value}'" if isinstance(pattern, PatternStr) else name


def _translate(error: UnexpectedInput, text: str, lark: Lark) -> ParseError:
    line, column = error.line, error.column
    if isinstance(error, UnexpectedCharacters):
        found = repr(text[error.pos_in_stream])
        expected = error.allowed
    elif isinstance(error, UnexpectedToken) and error.token.type != "$END":
        found = "line break" if error.token.type == "_NL" else repr(error.token.value)
        expected = error.accepts or error.expected
    else:
        found = "end of text"
        expected = getattr(error, "expected", None) or ()
        lines = text.splitlines() or [""]
        line, column = len(lines), len(lines[-1]) + 1
    described = sorted({_describe_terminal(lark, name) for name in expected})
    message = f"unexpected {found}"
    if described:
        message += f"; expected {' or '.join(described)}"
    return ParseError(message, line, column, text)


def _parse(text: str, require_values: bool):
    with _lock:
        lark, builder = _get_parser()
        builder.reset(text, require_values)
        try:
            return lark.parse(text)
        except UnexpectedInput as e:
            raise _translate(e, text, lark) from None
        finally:
            builder.reset("", False)     # drop references to the half-built program


def parse_jaxpr(text: str) -> Jaxpr:
    """Read a jaxpr in the human view (`print(jaxpr)`). Constvars stay constvars;
    constant values, if the text has them, are dropped."""
    result = _parse(text, require_values=False)
    return result.jaxpr if isinstance(result, ClosedJaxpr) else result


def loads(text: str) -> ClosedJaxpr:
    """Read the exact form written by `dumps`: the same program, weak types and
    constant values included."""
    result = _parse(text, require_values=True)
    return result if isinstance(result, ClosedJaxpr) else ClosedJaxpr(result, [])


def _same_atom(a, b) -> bool:
    """One index atom written twice: the same variable, or equal literals (each
    literal in the text parses to its own `Literal`)."""
    if isinstance(a, Literal) and isinstance(b, Literal):
        return a.aval == b.aval and np.array_equal(a.value, b.value)
    return a is b
