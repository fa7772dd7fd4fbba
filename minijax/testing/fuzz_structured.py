"""The fuzzer's structured operations: control flow, refs, checkpoint, custom
derivatives and debug printing, as entries of the same table as fuzz_ops.py.

Each body is a child builder (fuzz_builder.py) with its own seeded stream, so it
comes out the same however often it is traced. A body's outputs are `coerce`d to
the types its construct requires (a branch returns what the other branches return,
a loop body returns its carry). Loops have static or small data-dependent trip
counts, so every program terminates. Custom derivative rules are correct by
construction: the jvp rule of `custom_jvp(g)` is minijax's own `jvp` of `g`, the vjp
rule of `custom_vjp(g)` minijax's `vjp` of `g`.
"""
from __future__ import annotations

import numpy as np

import minijax
import minijax.ad_checkpoint  # noqa: F401 -- imported by name, as on JAX
import minijax.lax as lax
import minijax.numpy as jnp
from ..ir.ref_python_index import DSlice
from ..ir.types import is_bool, is_float
from .fuzz_ops import op, floating, numeric

POLICIES = (
    ("nothing_saveable",), ("everything_saveable",), ("dots_saveable",),
    ("dots_with_no_batch_dims_saveable",), ("save_only_these_names", "a"),
    ("save_any_names_but_these", "a"), ("save_anything_except_these_names", "b"),
    ("checkpoint_dots",), ("save_from_both_policies", "dots_saveable", "save_only_these_names"),
)


def nests(build):
    """Mark an op that builds a nested body (not offered beyond the depth limit)."""
    build.nests = True
    return build


def _body(b, seed, values, steps=None, **kwargs):
    child = b.child(seed, values, **kwargs)
    child.run(child.rng.randint(1, 3) if steps is None else steps)
    return child


# -- calls and control flow -----------------------------------------------------------------------------------

@op("jit", ["jit"], "control_flow", weight=0.3)
@nests
def _jit(b):
    operands = b.pick_many(lambda a: True)
    if not operands:
        return None
    seed = b.rng.getrandbits(63)

    def body(*xs):
        return _body(b, seed, xs, closure=False).pool[-1]
    return [minijax.jit(body)(*operands)]


@op("cond", ["cond"], "control_flow", weight=0.5, smooth=False)
@nests
def _cond(b):
    operands = b.pick_many(lambda a: True)
    if not operands:
        return None
    avals = [b.aval(x) for x in operands]
    branches = b.rng.choice([2, 2, 3])
    seeds = [b.rng.getrandbits(63) for _ in range(branches)]

    def branch(seed):
        def body(*xs):
            child = _body(b, seed, xs)
            return tuple(child.coerce(a) for a in avals)
        return body
    if branches == 2:
        return list(lax.cond(b.scalar_predicate(), branch(seeds[0]), branch(seeds[1]),
                             *operands))
    return list(lax.switch(b.traced_index(branches), [branch(s) for s in seeds], *operands))


@op("while_loop", ["while"], "control_flow", weight=0.4)
@nests
def _while(b):
    operands = b.pick_many(lambda a: True)
    if not operands:
        return None
    avals = [b.aval(x) for x in operands]
    bound, seed = b.rng.randint(0, 3), b.rng.getrandbits(63)
    data_bound = b.rng.random() < 0.3

    def cond_fun(carry):
        go = carry[0] < bound
        if data_bound:      # also stop when the data says so
            go = jnp.logical_and(go, jnp.sum(carry[1]).astype(jnp.float32) < 1e6)
        return go

    def body_fun(carry):
        child = _body(b, seed, carry)
        return (carry[0] + 1,) + tuple(child.coerce(a) for a in avals)
    out = lax.while_loop(cond_fun, body_fun, (jnp.int32(0),) + tuple(operands))
    return list(out[1:])


@op("fori_loop", ["scan", "while"], "control_flow", weight=0.5)
@nests
def _fori(b):
    operands = b.pick_many(lambda a: True)
    if not operands:
        return None
    avals = [b.aval(x) for x in operands]
    seed, upper = b.rng.getrandbits(63), b.rng.randint(0, 3)

    def body(i, carry):
        child = _body(b, seed, (i,) + tuple(carry))
        return tuple(child.coerce(a) for a in avals)
    return list(lax.fori_loop(0, upper, body, tuple(operands)))


@op("scan", ["scan"], "control_flow", weight=0.8)
@nests
def _scan(b):
    xs = b.pick(lambda a: len(a.shape) >= 1)
    carries = b.pick_many(lambda a: True) if b.rng.random() < 0.8 else []
    if xs is None and not carries:
        return None
    avals = [b.aval(x) for x in carries]
    seed = b.rng.getrandbits(63)
    length = None if xs is not None else b.rng.randint(0, 3)

    def body(carry, x):
        child = _body(b, seed, tuple(carry) + (() if x is None else (x,)))
        y = child.pool[-1]
        return tuple(child.coerce(a) for a in avals), y
    carry, ys = lax.scan(body, tuple(carries), xs, length=length,
                         reverse=b.rng.random() < 0.4)
    return list(carry) + [ys]


@op("map", ["scan"], "control_flow", weight=0.3)
@nests
def _map(b):
    xs = b.pick(lambda a: len(a.shape) >= 1)
    if xs is None:
        return None
    seed = b.rng.getrandbits(63)
    batch_size = b.rng.choice([None, 1, 2])

    def body(x):
        # with batch_size the body is vmapped: a write to a ref it closes over would
        # differ per example, which vmap (JAX's too) rejects; such bodies get no refs
        refs = [] if batch_size else None
        return _body(b, seed, (x,), refs=refs).pool[-1]
    return [lax.map(body, xs, batch_size=batch_size)]


# -- refs -------------------------------------------------------------------------------------------

def _pick_ref(b, owned_only=False):
    refs = [(r, owned) for r, owned in b.refs if owned or not owned_only]
    return b.rng.choice(refs) if refs else (None, False)


@op("ref_new", ["new_ref"], "refs", weight=0.4)
def _ref_new(b):
    x = b.pick(lambda a: numeric(a) and not a.weak_type)
    if x is None:
        return None
    b.refs.append((minijax.new_ref(x), True))
    return None


def _ref_index(b, shape):
    """An indexer of a ref of `shape`: everything, an integer, a slice, a traced index,
    or a `ds` slice of a traced start (which may be out of range: it is clamped)."""
    if not shape or shape[0] == 0:
        return ...
    kind = b.rng.randrange(5)
    if kind == 1:
        return b.rng.randrange(-shape[0], shape[0])
    if kind == 2:
        return slice(b.rng.randrange(shape[0]), None)
    if kind == 3:
        return b.traced_index(shape[0])
    if kind == 4:
        # unit stride: JAX clamps a strided ds out of range position by position when
        # reading and drops the positions when writing (a registered divergence)
        return minijax.ds(b.traced_index(shape[0]) + b.rng.randrange(3),
                          b.rng.randrange(1, shape[0] + 1))
    return ...


@op("ref_get", ["get"], "refs", weight=0.6)
def _ref_get(b):
    ref, _ = _pick_ref(b)
    if ref is None:
        return None
    return [ref[_ref_index(b, b.aval(ref).shape)]]


def _update_for(b, ref, index):
    """A value to write at `ref[index]` (`index` as `_ref_index` makes them)."""
    shape = b.aval(ref).shape
    if index is Ellipsis:
        part = shape
    elif isinstance(index, slice):
        part = (shape[0] - index.start,) + shape[1:]
    elif isinstance(index, DSlice):
        part = (index.size,) + shape[1:]
    else:
        part = shape[1:]
    return b.value_of(part, b.aval(ref).dtype)


@op("ref_set", ["swap"], "refs", weight=0.6)
def _ref_set(b):
    ref, _ = _pick_ref(b)
    if ref is None:
        return None
    index = _ref_index(b, b.aval(ref).shape)
    ref[index] = _update_for(b, ref, index)
    return None


@op("ref_add", ["addupdate", "get", "swap"], "refs", weight=0.6)
def _ref_add(b):
    ref, _ = _pick_ref(b)
    if ref is None or is_bool(b.aval(ref).dtype):
        return None
    index = _ref_index(b, b.aval(ref).shape)
    update = _update_for(b, ref, index)
    if b.rng.random() < 0.5:
        ref[index] += update
    else:
        minijax.ref.addupdate(ref, index, update)
    return None


@op("ref_view", ["get", "swap"], "refs", weight=0.3)
def _ref_view(b):
    ref, _ = _pick_ref(b)
    if ref is None or not b.aval(ref).shape or b.aval(ref).shape[0] < 2:
        return None
    view = ref.at[1:]
    if b.rng.random() < 0.5:
        return [view[...]]
    view[...] = _update_for(b, view, ...)
    return None


@op("ref_freeze", ["freeze"], "refs", weight=0.3)
def _ref_freeze(b):
    ref, owned = _pick_ref(b, owned_only=True)
    if ref is None:
        return None
    b.refs = [(r, o) for r, o in b.refs if r is not ref]
    return [minijax.freeze(ref)]


# -- checkpoint, custom derivatives, debug printing -------------------------------------------------

def _policy(spec):
    name, *args = spec
    policies = minijax.checkpoint_policies
    if name == "save_from_both_policies":
        return policies.save_from_both_policies(getattr(policies, args[0]),
                                                policies.save_only_these_names("a"))
    policy = getattr(policies, name)
    return policy(*args) if args else policy


@op("checkpoint", ["remat"], "remat", weight=0.6)
@nests
def _checkpoint(b):
    operands = b.pick_many(lambda a: True)
    if not operands:
        return None
    seed, spec = b.rng.getrandbits(63), b.rng.choice(POLICIES)
    prevent_cse = b.rng.random() < 0.5

    def body(*xs):
        child = _body(b, seed, xs, closure=False)
        return child.outputs(2)
    return list(minijax.checkpoint(body, policy=_policy(spec), prevent_cse=prevent_cse)(*operands))


@op("checkpoint_name", ["name"], "remat", weight=0.4)
def _checkpoint_name(b):
    x = b.pick(lambda a: True)
    if x is None:
        return None
    return [minijax.ad_checkpoint.checkpoint_name(x, b.rng.choice(["a", "b"]))]


def _float_body(b, seed, operands):
    """A function of float operands to one float value: the primal of a custom rule."""
    def g(*xs):
        # `custom_vjp` calls its fwd with the primal values as they are: a NumPy array
        # for a NumPy argument (JAX hands fwd a NumPy subclass there too), which the
        # builder's operations would meet as an operand without `.at` (finding F52).
        xs = tuple(jnp.asarray(x) for x in xs)
        child = _body(b, seed, xs, closure=False, refs=[])
        floats = [v for v in child.pool if is_float(child.aval(v).dtype)
                  and child.aval(v).dtype == child.aval(xs[0]).dtype]
        return floats[-1] if floats else xs[0]
    return g


@op("custom_jvp", ["custom_jvp_call"], "custom_derivatives", weight=0.4)
@nests
def _custom_jvp(b):
    operands = b.pick_many(floating)
    if not operands:
        return None
    g = _float_body(b, b.rng.getrandbits(63), operands)
    f = minijax.custom_jvp(g)

    @f.defjvp
    def rule(primals, tangents):
        return minijax.jvp(g, primals, tangents)
    return [f(*operands)]


@op("custom_vjp", ["custom_vjp_call"], "custom_derivatives", weight=0.4)
@nests
def _custom_vjp(b):
    operands = b.pick_many(floating)
    if not operands:
        return None
    g = _float_body(b, b.rng.getrandbits(63), operands)
    f = minijax.custom_vjp(g)

    def fwd(*xs):
        return g(*xs), xs

    def bwd(residuals, cotangent):
        return minijax.vjp(g, *residuals)[1](cotangent)
    f.defvjp(fwd, bwd)
    return [f(*operands)]


@op("custom_linear_solve", ["custom_linear_solve"], "custom_derivatives", weight=0.3)
def _custom_linear_solve(b):
    # A diagonal operator 1 + c² (never singular) on b: its solve is a division, so
    # both libraries' implicit derivatives can be compared with the exact ones.
    rhs = b.pick(floating)
    if rhs is None:
        return None
    shape, dtype = b.aval(rhs).shape, b.aval(rhs).dtype
    c = b.pick(lambda a: floating(a) and a.dtype == dtype and a.shape in ((), shape))
    diagonal = 1.0 + c * c
    symmetric = b.rng.random() < 0.5
    transpose = None if symmetric else (lambda vecmat, r: r / diagonal)
    return [lax.custom_linear_solve(lambda v: diagonal * v, rhs, lambda mv, r: r / diagonal,
                                    transpose, symmetric=symmetric)]


@op("debug_print", ["debug_print"], "debug", weight=0.2)
def _debug_print(b):
    x = b.pick(lambda a: True)
    if x is None:
        return None
    minijax.debug.print("fuzz {} {x}", b.rng.randrange(100), x=x, ordered=b.rng.random() < 0.5)
    return None


__all__ = ["POLICIES"]
