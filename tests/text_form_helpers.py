"""Structural comparison of jaxprs, shared by the text-form tests: a program read
back from its text must be the traced one, up to the identity of its variables."""
import numpy as np

from minijax.ir import ClosedJaxpr, Jaxpr, Literal
from minijax.ir.printer import OpaqueParam


def same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return (a.dtype == b.dtype and a.shape == b.shape
            and a.tobytes() == b.tobytes())


def assert_same_program(a: Jaxpr, b: Jaxpr, exact: bool):
    """`b` is `a` up to variable identity; without `exact`, up to weak types too."""
    env = {}

    def same_aval(x, y):
        if not exact:
            x = x.strip_weak_type()
        assert x == y, (x, y)

    def bind_vars(xs, ys):
        assert len(xs) == len(ys)
        for x, y in zip(xs, ys):
            same_aval(x.aval, y.aval)
            env[id(x)] = y

    def same_atom(x, y):
        if isinstance(x, Literal):
            assert isinstance(y, Literal)
            same_aval(x.aval, y.aval)
            assert same_bits(x.value, y.value)
        else:
            assert env[id(x)] is y

    def same_param(x, y):
        if isinstance(x, (Jaxpr, ClosedJaxpr)):
            assert type(y) is (type(x) if exact else Jaxpr) or isinstance(y, type(x))
            assert_same_program(getattr(x, "jaxpr", x), getattr(y, "jaxpr", y), exact)
        elif isinstance(x, (tuple, list)):
            assert type(x) is type(y) and len(x) == len(y), (x, y)
            for u, v in zip(x, y):
                same_param(u, v)
        elif isinstance(y, OpaqueParam):    # a Python object: only its repr is written
            assert not exact and y.text == repr(x)
        else:
            assert x == y or x != x, (x, y)

    bind_vars(a.constvars, b.constvars)
    bind_vars(a.invars, b.invars)
    for ea, eb in zip(a.eqns, b.eqns, strict=True):
        assert ea.primitive is eb.primitive
        for xa, xb in zip(ea.inputs, eb.inputs, strict=True):
            same_atom(xa, xb)
        assert ea.params.keys() == eb.params.keys()
        for key, value in ea.params.items():
            same_param(value, eb.params[key])
        assert ea.effects == eb.effects
        bind_vars(ea.outputs, eb.outputs)
    for xa, xb in zip(a.outvars, b.outvars, strict=True):
        same_atom(xa, xb)
