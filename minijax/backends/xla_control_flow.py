"""XLA lowering of the control-flow primitives: to XLA's own conditionals and loops.

Read `xla.py` first (the `lowering_rules` table and `lower_jaxpr`). Each body jaxpr
is lowered by `lower_jaxpr` inside a Python function handed to the matching
`jax.lax` construct, so the compiled program contains one XLA `conditional`,
`while` or scan loop -- never an unrolled copy per iteration:

    cond   -> jax.lax.switch (index already clamped by minijax.lax.switch)
    while  -> jax.lax.while_loop
    scan   -> jax.lax.scan (with `reverse` and `unroll`)
    custom_linear_solve -> its `solve` body, inline (the others serve derivatives)

Loop-invariant inputs (a body's consts) are closed over by those functions, as a
JAX user would write them. `debug_print` / `debug_callback` become an *ordered*
`jax.debug.callback`, so XLA keeps them in program order, once per execution.
"""
from __future__ import annotations

import functools
import sys

import jax
from jax import lax
from jax.experimental import io_callback

from ..ir import control_flow_primitives as CF
from ..ir.core import Jaxpr
from ..ir.linear_solve_primitive import linear_solve_p, split_operands
from ..ir.printer import dumps, NotSerializableError
from ..ir.trace import eager_impls
from .eager_dispatch import apply_primitive, eager_identity
from .xla import lowering_rules, lower_jaxpr


def _cond(index, *operands, branches):
    def branch_fn(jaxpr):
        return lambda *ops: lower_jaxpr(jaxpr, (), ops)
    return list(lax.switch(index, [branch_fn(b) for b in branches], *operands))


def _while(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts = args[:cond_nconsts]
    body_consts = args[cond_nconsts:cond_nconsts + body_nconsts]
    init = list(args[cond_nconsts + body_nconsts:])

    def cond_fn(carry):
        return lower_jaxpr(cond_jaxpr, (), (*cond_consts, *carry))[0]

    def body_fn(carry):
        return lower_jaxpr(body_jaxpr, (), (*body_consts, *carry))
    return list(lax.while_loop(cond_fn, body_fn, init))


def _scan(*args, jaxpr, num_consts, num_carry, length, reverse=False, unroll=1):
    consts = args[:num_consts]
    init = list(args[num_consts:num_consts + num_carry])
    xs = list(args[num_consts + num_carry:])

    def body_fn(carry, x_slices):
        outs = lower_jaxpr(jaxpr, (), (*consts, *carry, *x_slices))
        return outs[:num_carry], outs[num_carry:]
    carry, ys = lax.scan(body_fn, init, xs, length=length, reverse=reverse, unroll=unroll)
    return list(carry) + list(ys)


def _print_on_host(fmt, layout, *values):
    # Written to whatever sys.stdout is *now*, so tests capturing stdout see it.
    sys.stdout.write(CF.format_debug_print(fmt, layout, values) + "\n")


def _debug_print(*values, fmt, layout):
    jax.debug.callback(functools.partial(_print_on_host, fmt, layout), *values,
                       ordered=True)
    return []


def _debug_callback(*values, callback):
    jax.debug.callback(callback, *values, ordered=True)
    return []


lowering_rules[CF.cond_p] = _cond
lowering_rules[CF.while_p] = _while
lowering_rules[CF.scan_p] = _scan
lowering_rules[CF.debug_print_p] = _debug_print
lowering_rules[CF.debug_callback_p] = _debug_callback


def _pure_callback(*values, callback, result_shapes, result_dtypes, vmap_method):
    # A backend lowering target: JAX's own host-callback op inside the jitted program.
    # minijax batched it already (transforms/callback_rules.py), so JAX never vmaps it.
    results = [jax.ShapeDtypeStruct(tuple(shape), dtype)
               for shape, dtype in zip(result_shapes, result_dtypes)]
    return list(jax.pure_callback(lambda *args: tuple(callback(*args)), results, *values,
                                  vmap_method="sequential"))


lowering_rules[CF.pure_callback_p] = _pure_callback


def _linear_solve(*args, const_lengths, jaxprs):
    # What the equation means is its solve: the other bodies are for its derivatives.
    groups, b = split_operands(args, const_lengths)
    return lower_jaxpr(jaxprs[2], (), (*groups[2], *b))


lowering_rules[linear_solve_p] = _linear_solve


def _io_callback(*values, callback, result_shapes, result_dtypes, ordered):
    # JAX's own io_callback, always ordered: minijax runs every host effect in program
    # order (the examples of a vmapped unordered one in example order, as JAX's batching
    # of it does), and XLA may reorder unordered ones. JAX threads its runtime token
    # through ordered calls, so the order holds across compiled programs too.
    results = [jax.ShapeDtypeStruct(tuple(shape), dtype)
               for shape, dtype in zip(result_shapes, result_dtypes)]
    return list(io_callback(lambda *args: tuple(callback(*args)), results, *values,
                            ordered=True))


lowering_rules[CF.io_callback_p] = _io_callback


# -- eager dispatch ---------------------------------------------------------------------
#
# Each eager `lax.cond(...)` call traces its branches afresh, so its params hold new
# jaxpr objects every time, and `apply_primitive` (which caches by params) would
# compile a new XLA program per call. The same holds for every primitive with a body
# traced per call (an eager `shard_map`, registered in xla_collectives.py). Bodies take
# their closed-over values as inputs, so two bodies with the same *text* compute the
# same function: the first params seen with a given exact text stand in for all later
# ones, and the compiled program is reused. Bodies holding objects the text form
# cannot write exactly (a `debug.callback` function) fall back to identity.

_params_by_text: dict = {}
_MAX_CACHED = 2048


def _exact_text(value):
    if isinstance(value, Jaxpr):
        return dumps(value)
    if isinstance(value, tuple) and any(isinstance(v, Jaxpr) for v in value):
        return tuple(_exact_text(v) for v in value)
    return value


def apply_with_bodies(prim, *args, **params):
    """Eager execution of a primitive whose params hold body jaxprs: `apply_primitive`
    with the params first seen with the same exact text, so a body traced anew on
    each call reuses the program compiled for its first trace."""
    try:
        key = (prim, tuple(sorted((k, _exact_text(v)) for k, v in params.items())))
        hash(key)
    except (TypeError, ValueError, NotSerializableError):
        return apply_primitive(prim, *args, **params)
    canonical = _params_by_text.get(key)
    if canonical is None:
        if len(_params_by_text) >= _MAX_CACHED:
            _params_by_text.clear()
        canonical = _params_by_text[key] = params
    return apply_primitive(prim, *args, **canonical)


def clear_caches():
    _params_by_text.clear()


for _prim in (CF.cond_p, CF.while_p, CF.scan_p, linear_solve_p):
    eager_impls[_prim] = functools.partial(apply_with_bodies, _prim)
def _host_value(x):
    # What JAX's eager callback hands over: a jax.Array as it is, a Python number
    # weakly typed (`{'a': 3}` prints `Array(3, dtype=int32, weak_type=True)`), a NumPy
    # value in its canonical dtype. A compiled program would drop the weak types.
    x = eager_identity(x)
    return x if isinstance(x, jax.Array) else jax.device_put(x)


def _eager_host_effect(prim, *values, **params):
    # Run on the host now, as JAX's eager debug.print and debug.callback do, after the
    # callbacks of programs already dispatched (so prints stay in program order).
    values = [_host_value(v) for v in values]
    jax.effects_barrier()
    if prim is CF.debug_print_p:
        _print_on_host(params["fmt"], params["layout"], *values)
    else:
        params["callback"](*values)
    return []


for _prim in (CF.debug_print_p, CF.debug_callback_p):
    eager_impls[_prim] = functools.partial(_eager_host_effect, _prim)
