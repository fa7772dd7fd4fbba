"""The fuzzer's program builder: a random well-typed minijax program, one equation at a time.

A program is built by *tracing* a Python function with `minijax.make_jaxpr`: the
function holds a `Builder`, whose pool is the values in scope (the arguments at
first), and repeatedly picks an operation of `fuzz_ops.OPS` by weight, lets it take
operands from the pool and call minijax's public API, and adds the results to the
pool. So every equation is made by its primitive's own type rule, and the result is
an ordinary traced program -- verified, printable, exportable with `to_jax`.

Nested bodies (branches, loop bodies, checkpointed and custom-derivative functions)
get a child builder with its own random stream, seeded from the parent: a body may
be traced more than once (JAX's rules do), and must come out the same every time.

All randomness comes from one `random.Random`, so a seed names a program; passing
Hypothesis's `st.randoms()` instead makes the choices shrinkable (strategies.py).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

import minijax
import minijax.lax as lax
import minijax.numpy as jnp
from ..ir.trace import aval_of
from ..ir.types import bfloat16, is_bool, is_float, is_integer
from . import fuzz_ops
from .fuzz_ops import OPS

DTYPES = (np.dtype(np.float32), np.dtype(np.float16), bfloat16, np.dtype(np.int32),
          np.dtype(np.uint32), np.dtype(bool))
BASE_SHAPES = ((), (1,), (3,), (2, 3), (0,), (2, 0), (1, 3), (3, 1))
MAX_DEPTH = 2

# Edge values per kind of dtype; a program's inputs draw from them with some
# probability when the `edge_values` feature is on.
_FLOAT_EDGES = (0.0, -0.0, 1.0, -1.0, -2.5, 1e30, -1e30, 1e-30, np.inf, -np.inf, np.nan)
_FLOAT16_EDGES = (0.0, -0.0, 1.0, -1.0, -2.5, 6e4, 1e-7, np.inf, -np.inf, np.nan)
_INT_EDGES = (0, 1, -1, 2 ** 31 - 1, -2 ** 31, 7)
_UINT_EDGES = (0, 1, 2 ** 32 - 1, 7)


@dataclass
class Shared:
    """What every builder of one program shares: its settings and what it used."""
    features: frozenset
    dtypes: tuple
    used_features: set = field(default_factory=set)
    used_ops: set = field(default_factory=set)
    smooth: bool = True       # every op differentiable everywhere (finite differences apply)
    size: int = 8


class Builder:
    def __init__(self, rng: random.Random, shared: Shared, pool, refs=(), depth=0):
        self.rng, self.shared, self.depth = rng, shared, depth
        self.pool = list(pool)
        self.refs = list(refs)       # (ref, owned): owned refs were made in this scope
        self.dtypes = shared.dtypes

    # -- the pool ---------------------------------------------------------------------------------

    @staticmethod
    def aval(x):
        return aval_of(x)

    def pick(self, predicate):
        """A value in scope whose aval satisfies `predicate`, most often a recent one
        (so later equations use earlier results), or None."""
        candidates = [v for v in self.pool if predicate(self.aval(v))]
        if not candidates:
            return None
        if self.rng.random() < 0.6:
            return candidates[-1 - min(self.rng.randrange(3), len(candidates) - 1)]
        return self.rng.choice(candidates)

    def pick_many(self, predicate, most=2):
        chosen = []
        for _ in range(self.rng.randint(1, most)):
            v = self.pick(predicate)
            if v is not None and all(v is not c for c in chosen):
                chosen.append(v)
        return chosen

    def partner(self, x, predicate):
        """A second operand for an elementwise op with `x`: the same shape, or one
        that broadcasts against it (a scalar, a trailing part, ones)."""
        shape = self.aval(x).shape

        def broadcasts(aval):
            a, b = aval.shape[::-1], shape[::-1]
            return all(p == q or p == 1 or q == 1 for p, q in zip(a, b))
        y = self.pick(lambda a: predicate(a) and broadcasts(a))
        return y if y is not None else self.same_type(x)

    def same_type(self, x):
        aval = self.aval(x)
        return self.value_of(aval.shape, aval.dtype, avoid=x)

    def value_of(self, shape, dtype, avoid=None):
        """A value of exactly this shape and dtype: one in scope, or made from one."""
        shape, dtype = tuple(shape), np.dtype(dtype)
        exact = [v for v in self.pool if v is not avoid and self.aval(v).shape == shape
                 and self.aval(v).dtype == dtype]
        if exact and self.rng.random() < 0.8:
            return self.rng.choice(exact[-3:])
        return self.derive(shape, dtype)

    def derive(self, shape, dtype):
        """A value of `shape` and `dtype` computed from something in scope: a scalar
        summary of a value, converted, broadcast and spread by an iota."""
        source = self.pick(lambda a: not is_bool(a.dtype)) if self.pool else None
        scalar = (jnp.sum(source) if source is not None else jnp.float32(0.5))
        if is_bool(dtype):
            base = jnp.broadcast_to(jnp.greater(scalar, 0), shape)
            return jnp.logical_xor(base, lax.broadcasted_iota(np.int32, shape, 0) % 2 == 1) \
                if shape else base
        scalar = self.safe_convert(scalar, dtype)
        out = lax.broadcast_in_dim(scalar, shape, ())
        if shape:
            out = lax.add(out, lax.broadcasted_iota(dtype, shape, len(shape) - 1))
        return out

    @staticmethod
    def safe_convert(x, dtype):
        """`x` as `dtype`, defined everywhere: float -> integer conversions of nan or
        out-of-range values are platform-defined, so those are mapped into range first."""
        source = jnp.result_type(x)
        dtype = np.dtype(dtype)
        if is_float(source) and not is_float(dtype):
            x = jnp.where(lax.is_finite(x), lax.clamp(np.array(-100, source), x,
                                                    np.array(100, source)), 0).astype(source)
            if is_bool(dtype):
                return jnp.greater(x, 0)
        if dtype == np.uint32 and not is_bool(source) and source != np.uint32:
            x = jnp.abs(x) if not is_integer(source) else lax.bitwise_and(
                x, fuzz_ops.weak_constant(0x7FFFFFFF, x))
        return lax.convert_element_type(x, dtype)

    def coerce(self, aval):
        """A value of exactly `aval` (shape, dtype, weak type): for the outputs of a
        branch or a loop body, which must match their inputs."""
        candidates = [v for v in self.pool if self.aval(v).shape == aval.shape
                      and self.aval(v).dtype == aval.dtype]
        value = (candidates[-1] if candidates and self.rng.random() < 0.7 else
                 self.rng.choice(candidates) if candidates else self.derive(aval.shape, aval.dtype))
        if bool(self.aval(value).weak_type) != bool(aval.weak_type):
            value = lax.convert_element_type(value, aval.dtype, weak_type=bool(aval.weak_type))
        return value

    def predicate_like(self, x):
        shape = self.aval(x).shape
        found = self.pick(lambda a: is_bool(a.dtype) and a.shape in (shape, ()))
        return found if found is not None else self.value_of(shape, bool)

    def scalar_predicate(self):
        found = self.pick(lambda a: is_bool(a.dtype) and a.shape == ())
        if found is not None:
            return found
        x = self.pick(lambda a: not is_bool(a.dtype))
        if x is None:
            return jnp.bool_(True)
        return jnp.greater(jnp.sum(x), 0)

    def traced_index(self, size):
        """A traced int32 scalar in [-size, size) computed from the data."""
        x = self.pick(lambda a: is_integer(a.dtype))
        if x is None:
            x = self.pick(lambda a: not is_bool(a.dtype))
        if x is None:
            return jnp.int32(0)
        total = self.safe_convert(jnp.sum(x), np.int32)
        index = jnp.remainder(total, size)
        return index - size if self.rng.random() < 0.3 else index

    def note_smooth(self, smooth: bool):
        if not smooth:
            self.shared.smooth = False

    # -- building -----------------------------------------------------------------------------

    def child(self, seed, values, refs=None, closure=True):
        """The builder of a nested body: its own stream, the body's values in scope
        (and, with `closure`, the enclosing values too, which the body closes over)."""
        pool = (self.pool if closure else []) + list(values)
        refs = [(r, False) for r, _ in self.refs] if refs is None else refs
        return Builder(random.Random(seed), self.shared, pool, refs, self.depth + 1)

    def applicable_ops(self):
        fuzz_ops.load_entries()
        return [o for o in OPS.values() if o.feature in self.shared.features
                and (self.depth < MAX_DEPTH or not getattr(o.build, "nests", False))]

    def run(self, steps):
        ops = self.applicable_ops()
        weights = [o.weight for o in ops]
        for _ in range(steps):
            chosen = self.rng.choices(ops, weights)[0]
            values = chosen.build(self)
            if not values:
                continue
            self.pool.extend(values)
            self.shared.used_features.add(chosen.feature)
            self.shared.used_ops.add(chosen.name)
            self.note_smooth(chosen.smooth)
        return self

    def outputs(self, most=3):
        """Some recent values as the program's outputs, a float one first if any."""
        chosen = []
        floats = [v for v in self.pool if is_float(self.aval(v).dtype)]
        if floats:
            chosen.append(floats[-1])
        for _ in range(self.rng.randint(0, most - 1)):
            v = self.pick(lambda a: True)
            if v is not None and all(v is not c for c in chosen):
                chosen.append(v)
        return tuple(chosen) if chosen else (jnp.float32(0.0),)


# -- arguments --------------------------------------------------------------------------------------

def random_value(rng, shape, dtype, edges: bool):
    dtype = np.dtype(dtype)
    size = int(np.prod(shape))
    if is_bool(dtype):
        return np.array([rng.random() < 0.5 for _ in range(size)], bool).reshape(shape)
    if is_integer(dtype):
        low = 0 if dtype == np.uint32 else -5
        table = _UINT_EDGES if dtype == np.uint32 else _INT_EDGES
        values = [rng.choice(table) if edges and rng.random() < 0.2 else rng.randint(low, 5)
                  for _ in range(size)]
        return np.array(values, np.int64).astype(dtype).reshape(shape)
    table = _FLOAT_EDGES if dtype == np.float32 else _FLOAT16_EDGES
    values = [rng.choice(table) if edges and rng.random() < 0.15 else
              round(rng.uniform(-2.0, 2.0), 3) for _ in range(size)]
    return np.array(values, np.float32).astype(dtype).reshape(shape)


def _variant(rng, shape):
    """A shape that broadcasts against `shape`: itself, a trailing part, or with 1s."""
    kind = rng.randrange(4)
    if kind == 1 and shape:
        return shape[rng.randrange(len(shape)):]
    if kind == 2 and shape:
        return tuple(1 if rng.random() < 0.5 else d for d in shape)
    return shape


def make_arguments(rng, shared: Shared, safe: bool = False):
    """The program's arguments: arrays of broadcast-compatible shapes (the first a
    float, so there is something to differentiate), perhaps a weakly typed Python
    scalar and a ref."""
    base = rng.choice(BASE_SHAPES)
    edges = "edge_values" in shared.features and not safe
    leaves = [random_value(rng, base, np.float32 if rng.random() < 0.7 else
                           rng.choice([d for d in shared.dtypes if is_float(d)]), edges)]
    for _ in range(rng.randint(0, 2)):
        leaves.append(random_value(rng, _variant(rng, base), rng.choice(shared.dtypes), edges))
    if "weak_types" in shared.features and rng.random() < 0.3:
        leaves.append(rng.choice([1.5, -0.25, 3]))
    if "refs" in shared.features and rng.random() < 0.3:
        leaves.append(minijax.new_ref(random_value(rng, base, np.float32, edges)))
    return leaves


__all__ = ["Builder", "Shared", "DTYPES", "make_arguments", "random_value", "fuzz_ops"]
