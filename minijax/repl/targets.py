"""What a `:command` operates on: a *target*, read from the text after the command.

Read `session.py` first. Most commands take `EXPR [OPTIONS]`:

    :ir f(1.0, r)                     a call: the function and its arguments
    :grad loss(w, x) argnums=1        options are keyword (or positional) arguments
    :remat f(x) dots_saveable         ... here a positional policy
    :eval j                           a jaxpr from `:parse` / `:load`, on zeros
    :eval j(1.0, 2.0)                 the same jaxpr on these arguments

A call is *not* run: its callee and arguments are evaluated separately, so the
command can trace, transform or lower the callee on exactly those arguments.
`split_expr` finds where EXPR ends and the options begin; `read_target` builds the
`Target`.
"""
from __future__ import annotations

import ast
import io
import keyword
import tokenize
from typing import Any, Callable, NamedTuple

import numpy as np

import minijax
from minijax.ir import ClosedJaxpr, Jaxpr, RefType
from minijax.transforms import eval_jaxpr as bind_jaxpr


class UsageError(Exception):
    """A command was typed wrongly; the message says how to type it."""


class Target(NamedTuple):
    fun: Callable            # called as fun(*args, **kwargs)
    args: tuple
    kwargs: dict
    label: str               # the EXPR text, for headings
    jaxpr: Any = None        # the ClosedJaxpr when the target is a named jaxpr


# Tokens after which a second atom at bracket depth 0 must start something new.
_ENDS_ATOM = {tokenize.NAME, tokenize.NUMBER, tokenize.STRING}
_CONTINUES = set(keyword.kwlist) - {"True", "False", "None"}


def split_expr(text: str) -> tuple[str, str]:
    """`"f(x, y) argnums=1"` -> `("f(x, y)", "argnums=1")`.

    Python never puts two atoms side by side at bracket depth 0 (`f(x) g` is not an
    expression), so the first such place ends EXPR -- unless the second is a keyword
    like `if` or `for` that continues an expression."""
    text = text.strip()
    depth, previous = 0, None
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
            elif token.type == tokenize.OP and token.string in ")]}":
                depth -= 1
            elif (depth == 0 and previous is not None and token.type in _ENDS_ATOM
                  and token.string not in _CONTINUES
                  and (previous.type in _ENDS_ATOM or previous.string in ")]}")
                  and previous.string not in _CONTINUES):
                offset = token.start[1] if token.start[0] == 1 else len(text)
                return text[:offset].strip(), text[offset:].strip()
            if token.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER):
                previous = token
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # unbalanced brackets: let the Python parser report it properly below
    return text, ""


def parse_options(text: str, namespace: dict, extra: dict | None = None) -> tuple[list, dict]:
    """Options `a, b, k=v` evaluated as call arguments in the session's namespace,
    with `extra` names (say, the remat policies) visible too."""
    if not text:
        return [], {}
    try:
        call = ast.parse(f"_({text})", mode="eval").body
    except SyntaxError:
        raise UsageError(f"cannot read the options {text!r}: write them as Python "
                         f"arguments, e.g. `argnums=1` or `dots_saveable`") from None
    scope = {**(extra or {}), **namespace}
    evaluate = lambda node: eval(compile(ast.Expression(node), "<options>", "eval"), scope)
    return ([evaluate(a) for a in call.args],
            {k.arg: evaluate(k.value) for k in call.keywords})


def jaxpr_as_fun(closed: ClosedJaxpr) -> Callable:
    """A Python function that runs `closed` in whatever trace is current, so the
    public transforms (grad, vmap, jit) apply to a parsed jaxpr like to any function."""
    def fun(*args):
        outs = bind_jaxpr(closed.jaxpr, closed.consts, args)
        return outs[0] if len(outs) == 1 else tuple(outs)
    fun.__name__ = "parsed_jaxpr"
    return fun


def example_inputs(jaxpr) -> list:
    """Zeros (and fresh refs of zeros) of the jaxpr's input types: a parsed jaxpr
    carries types but no values."""
    out = []
    for var in jaxpr.invars:
        aval = var.aval
        inner = aval.inner if isinstance(aval, RefType) else aval
        zeros = np.zeros(inner.shape, inner.dtype)
        out.append(minijax.new_ref(zeros) if isinstance(aval, RefType) else zeros)
    return out


def as_closed(value) -> ClosedJaxpr | None:
    if isinstance(value, ClosedJaxpr):
        return value
    if isinstance(value, Jaxpr):
        if value.constvars:
            raise UsageError("this jaxpr has constvars without values; use a closed "
                             "jaxpr (from make_jaxpr, :parse or :load)")
        return ClosedJaxpr(value, [])
    return None


def read_target(expr: str, namespace: dict) -> Target:
    """EXPR as a Target: a call `callee(args...)`, or a name bound to a jaxpr."""
    if not expr:
        raise UsageError("this command needs an expression, e.g. `f(1.0)` or a jaxpr's name")
    try:
        node = ast.parse(expr, mode="eval").body
    except SyntaxError as error:
        raise UsageError(f"{expr!r} is not a Python expression ({error.msg})") from None

    def evaluate(sub):
        return eval(compile(ast.Expression(sub), "<expr>", "eval"), namespace)

    if not isinstance(node, ast.Call):
        closed = as_closed(evaluate(node))
        if closed is None:
            raise UsageError(f"{expr!r} is neither a call like `f(1.0)` nor a jaxpr; "
                             f"write the call whose IR you want")
        return Target(jaxpr_as_fun(closed), tuple(example_inputs(closed.jaxpr)), {},
                      expr, closed)
    callee = evaluate(node.func)
    args, kwargs = [], {}
    for arg in node.args:
        if isinstance(arg, ast.Starred):
            args.extend(evaluate(arg.value))
        else:
            args.append(evaluate(arg))
    for kw in node.keywords:
        if kw.arg is None:
            kwargs.update(evaluate(kw.value))
        else:
            kwargs[kw.arg] = evaluate(kw.value)
    closed = as_closed(callee)
    if closed is not None:
        if kwargs:
            raise UsageError("a jaxpr takes positional arguments only")
        return Target(jaxpr_as_fun(closed), tuple(args), {}, expr, closed)
    if not callable(callee):
        raise UsageError(f"{ast.unparse(node.func)!r} is a {type(callee).__name__}, "
                         f"not a function")
    return Target(callee, tuple(args), kwargs, expr)


def trace(target: Target) -> ClosedJaxpr:
    """The target's jaxpr: the parsed one itself, or what `make_jaxpr` traces."""
    if target.jaxpr is not None and _same_inputs(target.jaxpr, target.args):
        return target.jaxpr
    return minijax.make_jaxpr(target.fun)(*target.args, **target.kwargs)


def _same_inputs(closed, args) -> bool:
    return len(args) == len(closed.jaxpr.invars)
