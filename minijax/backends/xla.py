"""The XLA backend: each primitive becomes `jax.lax` calls inside `jax.jit`.

Read `lowering_rules` first: one entry per primitive, `rule(*values, **params) ->
list of values`, where the values are whatever `jax.lax` accepts (tracers of
`jax.jit`, when running inside a compiled program). `lower_jaxpr` walks a jaxpr and
applies the rules in order, so running it under `jax.jit` hands XLA one program.

Three things are built on that table:

* `eager_impls` (in `ir/trace.py`) -- op-by-op execution on concrete arrays. Each
  (primitive, params, input avals) gets one small `jax.jit`-compiled function,
  cached, so a repeated eager op costs a dictionary lookup plus JAX's dispatch
  (`eager_dispatch.py`).
* `compile_jaxpr(jaxpr)` -- a whole jaxpr as one `jax.jit` function, cached by
  jaxpr identity; `minijax.jit` and the eager impl of the `jit` primitive use it.
  `compile_jaxpr_by_text` caches by the exact text instead, for programs that are
  rebuilt equal on every call (an eager loop or branch over refs).
* `lower_closed_jaxpr(closed_jaxpr, out_tree, args, kwargs)` -- JAX's own `Lowered`
  object for the program on the pytrees of a call, so `.as_text()` shows the
  StableHLO and `.compile()` gives `cost_analysis()` / `memory_analysis()`.

This module never sees a ref: refs are discharged before lowering.
"""
from __future__ import annotations

import functools
import warnings

import jax
import jax.numpy as jnp
from jax import lax
import ml_dtypes
import numpy as np

from ..ir import primitives as P
from ..ir.core import Eqn, Jaxpr, Literal, Var, literal_value
from ..ir.types import is_integer
from ..ir.selection_primitives import optimization_barrier_p
from ..ir.printer import dumps, NotSerializableError
from ..ir.primitives import register_rule_table, GenericPath
from ..ir.custom_primitives import (custom_jvp_call_p, custom_vjp_call_p, custom_lin_p,
                                    custom_vmap_call_p)
from ..transforms.custom_derivatives import custom_lin_forward
from ..transforms.dce import dce_jaxpr
from .jax_features import LAX_HAS_LOG2

lowering_rules: dict = register_rule_table(
    "xla", {}, GenericPath(lambda prim: prim.ref_op, "refs are discharged before lowering"))


def _register_single(prim, fn):
    """Register `fn(*values, **params) -> value` for a single-result primitive."""
    lowering_rules[prim] = lambda *args, **params: [fn(*args, **params)]


# -- elementwise --------------------------------------------------------------------

_UNARY = {
    "neg": lax.neg, "sin": lax.sin, "cos": lax.cos, "tan": lax.tan, "asin": lax.asin,
    "acos": lax.acos, "atan": lax.atan, "sinh": lax.sinh, "cosh": lax.cosh,
    "tanh": lax.tanh, "asinh": lax.asinh, "acosh": lax.acosh, "atanh": lax.atanh,
    "exp": lax.exp, "exp2": lax.exp2, "log": lax.log, "log1p": lax.log1p,
    "expm1": lax.expm1, "logistic": lax.logistic, "sqrt": lax.sqrt, "rsqrt": lax.rsqrt,
    "cbrt": lax.cbrt, "erf": lax.erf, "floor": lax.floor, "ceil": lax.ceil,
    "abs": lax.abs, "sign": lax.sign, "square": lax.square, "is_finite": lax.is_finite,
    "not": lax.bitwise_not, "stop_gradient": lambda x: x,
}
_BINARY = {
    "add": lax.add, "sub": lax.sub, "mul": lax.mul, "div": lax.div, "rem": lax.rem,
    "pow": lax.pow, "max": lax.max, "min": lax.min, "atan2": lax.atan2,
    "and": lax.bitwise_and, "or": lax.bitwise_or, "xor": lax.bitwise_xor,
    "eq": lax.eq, "ne": lax.ne, "lt": lax.lt, "le": lax.le, "gt": lax.gt, "ge": lax.ge,
}


def _unary_rule(fn):
    return lambda x: fn(x)


def _binary_rule(fn):
    def rule(x, y):
        # The IR lets a rank-0 operand stand for a splat of itself; lax wants equal shapes.
        x_shape, y_shape = np.shape(x), np.shape(y)
        if x_shape != y_shape:
            if x_shape == ():
                x = lax.broadcast_in_dim(x, y_shape, ())
            else:
                y = lax.broadcast_in_dim(y, x_shape, ())
        return fn(x, y)
    return rule


for _name, _fn in _UNARY.items():
    _register_single(P.primitives_by_name[_name], _unary_rule(_fn))
for _name, _fn in _BINARY.items():
    _register_single(P.primitives_by_name[_name], _binary_rule(_fn))


def _log2_by_log(x):
    # What JAX >= 0.11 lowers its log2 to (log times a constant 1/log 2), for a JAX
    # that has no lax.log2 (0.10).
    log = lax.log(x)   # (x may be a Python scalar, a literal)
    return lax.mul(log, np.asarray(1 / np.log(2), log.dtype))


_register_single(P.log2_p, lax.log2 if LAX_HAS_LOG2 else _log2_by_log)


def one_minus_square(x):
    """(1 + x) * (1 - x): the same three operations JAX (0.11 on) lowers its
    `one_minus_square` to, so the values agree bit for bit on every JAX version."""
    one = lax.full_like(x, 1)
    return lax.mul(lax.add(one, x), lax.sub(one, x))


_register_single(P.one_minus_square_p, one_minus_square)
_register_single(P.round_p, lambda x, *, rounding_method=0:
                 lax.round(x, lax.RoundingMethod(rounding_method)))
_register_single(P.integer_pow_p, lambda x, *, y: lax.integer_pow(x, y))


def _select_n(which, *cases):
    shape = np.shape(cases[0])
    if np.shape(which) != shape:
        which = lax.broadcast_in_dim(which, shape, ())
    return lax.select_n(which, *cases)


def _clamp(lo, x, hi):
    return lax.clamp(lo, x, hi)


_register_single(P.select_n_p, _select_n)
_register_single(P.clamp_p, _clamp)


# The Python scalar of each kind JAX makes weakly typed (x64 off: f32, i32, c64).
_WEAK_KIND_ZERO = {"f": 0.0, "i": 0, "c": 0j}


def weakened(x):
    """`x` (a JAX value) as a weakly typed value, where JAX has a weak type of its dtype.

    JAX's public API has no "make weak" operation, but two of its functions keep a
    weak template's weak type: `lax.full_like(template, scalar)` and `.at[...].set`
    (scatter into a weak operand). The template is `lax.full(shape, 0.0)` (or `0`,
    `0j`), weak because a Python scalar fills it; when its dtype is not `x`'s (a
    float16 value, say: JAX has no weak float16 with x64 off) `x` stays as it is."""
    x = jnp.asarray(x)
    zero = _WEAK_KIND_ZERO.get(x.dtype.kind)
    if x.weak_type or zero is None:
        return x
    template = lax.full((), zero)
    if template.dtype != x.dtype:
        return x
    if x.ndim == 0:
        return lax.full_like(template, x)
    return lax.full(x.shape, zero).at[...].set(x)


def weak_as_typed(avals, values) -> list:
    """`values`, each made weak where its minijax aval is weak (`weakened`)."""
    return [weakened(value) if getattr(aval, "weak_type", False) else value
            for aval, value in zip(avals, values)]


_FLOAT4 = np.dtype(ml_dtypes.float4_e2m1fn)


def _convert_element_type(x, *, new_dtype, weak_type=False):
    if (np.iscomplexobj(x) if not hasattr(x, "dtype") else
            np.issubdtype(x.dtype, np.complexfloating)) and not np.issubdtype(
                new_dtype, np.complexfloating):
        # JAX's lowering keeps the real part; its traced convert warns while doing so
        x = lax.real(x)
    if getattr(x, "dtype", None) == _FLOAT4 and is_integer(new_dtype):
        # XLA on CPU sends float4's largest value, 6.0, to the integer's maximum (as
        # if it were infinite); float32 holds every float4 exactly, so go through it
        # (divergence float4_six_converts_to_the_int_maximum).
        x = lax.convert_element_type(x, np.float32)
    converted = lax.convert_element_type(x, new_dtype)
    return weakened(converted) if weak_type else converted


_register_single(P.convert_element_type_p, _convert_element_type)


# -- shapes ---------------------------------------------------------------------------

_register_single(P.broadcast_in_dim_p, lambda x, *, shape, broadcast_dimensions:
                 lax.broadcast_in_dim(x, shape, broadcast_dimensions))
_register_single(P.reshape_p, lambda x, *, new_sizes, dimensions=None:
                 lax.reshape(x, new_sizes))
_register_single(P.transpose_p, lambda x, *, permutation: lax.transpose(x, permutation))
_register_single(P.squeeze_p, lambda x, *, dimensions: lax.squeeze(x, dimensions))
_register_single(P.expand_dims_p, lambda x, *, dimensions: lax.expand_dims(x, dimensions))


def _rev(x, *, dimensions):
    # XLA's simplifier (jaxlib 0.10, CPU) aborts the process on a reverse of a scatter
    # that overwrites its whole operand ("Invalid binary instruction opcode map"),
    # which is how `weakened` makes a non-scalar value weak: so a weak operand goes
    # through a barrier that keeps the two apart. A scatter of the user's own program
    # is kept apart from a rev before lowering (`barrier_between_scatter_and_rev`).
    if getattr(x, "weak_type", False) and x.ndim:
        x = lax.optimization_barrier(x)
    return lax.rev(x, dimensions)


_register_single(P.rev_p, _rev)
_register_single(P.concatenate_p, lambda *xs, dimension: lax.concatenate(xs, dimension))
_register_single(P.pad_p, lambda x, padding_value, *, padding_config:
                 lax.pad(x, padding_value, padding_config))
_register_single(P.slice_p, lambda x, *, start_indices, limit_indices, strides=None:
                 lax.slice(x, start_indices, limit_indices, strides))
# The primitives clamp start indices (XLA's rule) and nothing more: negative indices
# were already counted from the end by minijax.lax, as jax.lax does before its primitive.
_register_single(P.dynamic_slice_p, lambda x, *starts, slice_sizes:
                 lax.dynamic_slice(x, starts, slice_sizes, allow_negative_indices=False))
_register_single(P.dynamic_update_slice_p, lambda x, update, *starts:
                 lax.dynamic_update_slice(x, update, starts, allow_negative_indices=False))


# -- reductions, contractions, scans ---------------------------------------------------

_register_single(P.reduce_sum_p, lambda x, *, axes: lax.reduce_sum(x, axes))
_register_single(P.reduce_prod_p, lambda x, *, axes: lax.reduce_prod(x, axes))
_register_single(P.reduce_max_p, lambda x, *, axes: lax.reduce_max(x, axes))
_register_single(P.reduce_min_p, lambda x, *, axes: lax.reduce_min(x, axes))
_register_single(P.reduce_and_p, lambda x, *, axes: lax.reduce_and(x, axes))
_register_single(P.reduce_or_p, lambda x, *, axes: lax.reduce_or(x, axes))
_register_single(P.argmax_p, lambda x, *, axes, index_dtype:
                 lax.argmax(x, axes[0], index_dtype))
_register_single(P.argmin_p, lambda x, *, axes, index_dtype:
                 lax.argmin(x, axes[0], index_dtype))


def precision_enum(precision):
    """A contraction's `precision` param (None, a pair of names such as
    ('HIGHEST', 'HIGHEST'), or a dot algorithm preset's name) as the `lax.Precision`
    members or `lax.DotAlgorithmPreset` JAX takes."""
    if isinstance(precision, str):
        return lax.DotAlgorithmPreset[precision]
    return None if precision is None else tuple(lax.Precision[name] for name in precision)


def _dot_general(lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None):
    return lax.dot_general(lhs, rhs, dimension_numbers, precision=precision_enum(precision),
                           preferred_element_type=preferred_element_type)


_register_single(P.dot_general_p, _dot_general)
_register_single(P.iota_p, lambda *, dtype, shape, dimension:
                 lax.broadcasted_iota(dtype, shape, dimension))
for _prim, _fn in [(P.cumsum_p, lax.cumsum), (P.cumprod_p, lax.cumprod),
                   (P.cummax_p, lax.cummax), (P.cummin_p, lax.cummin)]:
    _register_single(_prim, functools.partial(
        lambda fn, x, *, axis, reverse=False: fn(x, axis, reverse), _fn))
lowering_rules[P.sort_p] = lambda *xs, dimension, is_stable=True, num_keys=1: list(
    lax.sort(xs, dimension=dimension, is_stable=is_stable, num_keys=num_keys))


def _gather(operand, indices, *, offset_dims, collapsed_slice_dims, start_index_map,
            slice_sizes, mode="clip"):
    dnums = lax.GatherDimensionNumbers(offset_dims=tuple(offset_dims),
                                       collapsed_slice_dims=tuple(collapsed_slice_dims),
                                       start_index_map=tuple(start_index_map))
    return lax.gather(operand, indices, dnums, tuple(slice_sizes), mode=mode)


def _scatter_rule(fn):
    def rule(operand, indices, updates, *, update_window_dims, inserted_window_dims,
             scatter_dims_to_operand_dims, mode="fill"):
        dnums = lax.ScatterDimensionNumbers(
            update_window_dims=tuple(update_window_dims),
            inserted_window_dims=tuple(inserted_window_dims),
            scatter_dims_to_operand_dims=tuple(scatter_dims_to_operand_dims))
        return fn(operand, indices, updates, dnums, mode=mode)
    return rule


_register_single(P.gather_p, _gather)
_register_single(P.scatter_p, _scatter_rule(lax.scatter))
_register_single(P.scatter_add_p, _scatter_rule(lax.scatter_add))
_register_single(P.scatter_mul_p, _scatter_rule(lax.scatter_mul))
_register_single(P.scatter_min_p, _scatter_rule(lax.scatter_min))
_register_single(P.scatter_max_p, _scatter_rule(lax.scatter_max))


# -- calls ------------------------------------------------------------------------------

def _jit_call(*args, jaxpr, name, inline=False):
    # Inlined: the whole program is one XLA computation, which XLA optimises as a unit.
    return lower_jaxpr(jaxpr, (), args)


lowering_rules[P.jit_p] = _jit_call


def _custom_call(*args, call_jaxpr, num_consts, rule, name):
    # A custom derivative rule only matters to AD; the program runs its primal body.
    return lower_jaxpr(call_jaxpr, (), args)


lowering_rules[custom_jvp_call_p] = _custom_call
lowering_rules[custom_vjp_call_p] = _custom_call
lowering_rules[custom_vmap_call_p] = _custom_call


def _custom_lin(*args, rule, num_residuals, name):
    # Forward mode through a custom_vjp function: its tangent map where it has one
    # (minijax's checkpointed loops), JAX's error otherwise.
    closed = custom_lin_forward(rule, num_residuals, name)
    return lower_jaxpr(closed.jaxpr, closed.consts, args)


lowering_rules[custom_lin_p] = _custom_lin


# -- interpreting a jaxpr with the table ------------------------------------------------

def interpret_with_table(jaxpr, consts, args, table: dict, missing) -> list:
    """Run `jaxpr` on JAX values by calling `table[eqn.primitive]` for each equation
    (the lowering table here; the interop bridge's export table). A weak literal
    reaches JAX as a Python scalar, so JAX keeps it weak (`literal_value`).
    `missing(primitive)` is the exception for a primitive without a rule."""
    env = {}

    def read(atom):
        return literal_value(atom) if isinstance(atom, Literal) else env[atom]

    for var, value in zip(jaxpr.constvars, consts):
        env[var] = value
    for var, value in zip(jaxpr.invars, args):
        env[var] = value
    for eqn in jaxpr.eqns:
        rule = table.get(eqn.primitive)
        if rule is None:
            raise missing(eqn.primitive)
        scope = getattr(eqn.source_info, "scope", None)
        if scope is None:
            outs = rule(*map(read, eqn.inputs), **eqn.params)
        else:       # traced inside `named_scope`s: JAX names the ops it emits so
            with jax.named_scope(scope):
                outs = rule(*map(read, eqn.inputs), **eqn.params)
        for var, value in zip(eqn.outputs, outs):
            env[var] = value
    return [read(v) for v in jaxpr.outvars]


def _no_lowering(primitive):
    return primitive.missing_rule_error("xla", NotImplementedError(
        f"the XLA backend has no lowering for {primitive.name}; "
        f"refs must be discharged before lowering"))


def lower_jaxpr(jaxpr, consts, args) -> list:
    """Evaluate `jaxpr` with `jax.lax` calls; meant to run inside `jax.jit`.

    An output minijax types as weak is made weak on the JAX side too (`weakened`):
    JAX's own rules may have made it strong on the way (a weak `convert_element_type`
    is the usual case), and a weak result is what a JAX user gets from the same program.

    Dead code is dropped first, as JAX does before lowering: what no output needs is
    never lowered, so a dead `custom_lin` (the forward mode of a custom_vjp function
    whose result is unused) does not raise under jit or in a loop body, as in JAX."""
    jaxpr = barrier_between_scatter_and_rev(dce_jaxpr(jaxpr).jaxpr)
    outs = interpret_with_table(jaxpr, consts, args, lowering_rules, _no_lowering)
    return weak_as_typed([var.aval for var in jaxpr.outvars], outs)


_SCATTERS = frozenset({P.scatter_p, P.scatter_add_p, P.scatter_mul_p, P.scatter_min_p,
                       P.scatter_max_p})


def barrier_between_scatter_and_rev(jaxpr):
    """`jaxpr` with an `optimization_barrier` put between each scatter and a `rev` of
    its result (lowering makes it after dropping dead code).

    XLA's algebraic simplifier (jaxlib 0.10, CPU) aborts the whole process on a reverse
    of a scatter that overwrites all of its operand (`jnp.flip(z.at[:].set(x))` under
    `jax.jit`: registry entry `xla_aborts_on_rev_of_a_whole_operand_scatter`). The
    barrier keeps XLA from looking through to the scatter. The rev may sit in a `jit`
    call (`jnp.flip` is one in an imported JAX program): calls are inlined into one
    XLA program, so the barrier goes on the call's input. A program without a scatter
    is returned as it is, after one look at each equation."""
    scattered = {eqn.outputs[0] for eqn in jaxpr.eqns if eqn.primitive in _SCATTERS}
    if not scattered:
        return jaxpr
    eqns, apart = [], {}                      # a scattered var -> its barrier's output
    for eqn in jaxpr.eqns:
        at = [i for i in _reversed_positions(eqn) if eqn.inputs[i] in scattered]
        if at:
            inputs = list(eqn.inputs)
            for i in at:
                var = inputs[i]
                if var not in apart:
                    apart[var] = Var(var.aval)
                    eqns.append(Eqn(optimization_barrier_p, (var,), {}, (apart[var],)))
                inputs[i] = apart[var]
            eqn = eqn.replace(inputs=tuple(inputs))
        eqns.append(eqn)
    return Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, jaxpr.outvars)


def _reversed_positions(eqn) -> list:
    """The positions of `eqn`'s inputs that a `rev` takes as they are: its operand, or
    an input a `jit` call passes to one."""
    if eqn.primitive is P.rev_p:
        return [0] if isinstance(eqn.inputs[0], Var) else []
    if eqn.primitive is not P.jit_p:
        return []
    inner = eqn.params["jaxpr"]
    position = {var: i for i, var in enumerate(inner.invars)}
    return sorted({position[operand] for inner_eqn in inner.eqns
                   for operand in (inner_eqn.inputs[i]
                                   for i in _reversed_positions(inner_eqn))
                   if operand in position})


def placement_key(placement: dict | None) -> tuple:
    """`jit`'s `device`/`backend`/`compiler_options` (a dict, those given) as a
    hashable key for the caches of compiled programs."""
    return tuple(sorted((name, tuple(sorted(value.items())) if isinstance(value, dict)
                         else value) for name, value in (placement or {}).items()))


def jit_with_placement(run, placement: tuple = (), **options):
    """`jax.jit(run, **options)`, compiled with the `placement` of `placement_key`."""
    given = {name: dict(value) if name == "compiler_options" else value
             for name, value in placement}
    with warnings.catch_warnings():
        # the user's `jit(device=...)` already gave JAX's deprecation warning
        warnings.simplefilter("ignore", DeprecationWarning)
        return jax.jit(run, **options, **given)


@functools.lru_cache(maxsize=4096)
def compile_jaxpr(jaxpr, donate_argnums: tuple = (), placement: tuple = ()):
    """One `jax.jit` function running `jaxpr` (constvars first, then invars). The
    inputs at `donate_argnums` are donated: XLA may reuse their buffers for outputs,
    and the arrays passed there are deleted by the call, as in `jax.jit`. `placement`
    (`placement_key`) is the device, backend and XLA options of the user's `jit`."""
    n_consts = len(jaxpr.constvars)

    def run(*args):
        return lower_jaxpr(jaxpr, args[:n_consts], args[n_consts:])
    run.__name__ = "minijax_program"
    return jit_with_placement(run, placement, donate_argnums=donate_argnums)


# exact text of a jaxpr -> its compiled function. Cleared by `clear_caches`.
_compiled_by_text: dict = {}


def compile_jaxpr_by_text(jaxpr):
    """`compile_jaxpr`, shared by every jaxpr with the same exact text. An eager
    `cond`/`while`/`scan` traces its bodies anew on each call; the equal program it
    makes must not cost a new XLA compile. (A jaxpr whose params hold Python objects
    the text cannot carry, such as a callback, is cached by identity only.)"""
    try:
        text = dumps(jaxpr)
    except NotSerializableError:
        return compile_jaxpr(jaxpr)
    fn = _compiled_by_text.get(text)
    if fn is None:
        fn = _compiled_by_text[text] = compile_jaxpr(jaxpr)
    return fn


def lower_closed_jaxpr(closed_jaxpr, out_tree, args, kwargs, donate_argnums: tuple = (),
                       donate_argnames: tuple = (), placement: tuple = (),
                       name: str = "minijax_program", lowering_platforms=None):
    """JAX's `Lowered` object for `closed_jaxpr` (consts embedded) as a function of
    the pytrees `(args, kwargs)`, whose leaves are its inputs, returning the pytree
    `out_tree` of its outputs; the positional arguments at `donate_argnums` and the
    keyword arguments named in `donate_argnames` are donated. Its executable takes
    and returns the pytrees themselves, so a call of it is flattened, checked against
    the types lowered and unflattened by JAX's C++. `name` names the program (JAX
    names its module `jit_<name>` and its ops `jit(<name>)/...`); `lowering_platforms`
    (JAX's `Traced.lower` option) lowers it for other platforms than this machine's."""
    jaxpr, consts = closed_jaxpr.jaxpr, closed_jaxpr.consts

    def run(*args, **kwargs):
        outs = lower_jaxpr(jaxpr, consts, jax.tree_util.tree_leaves((args, kwargs)))
        return jax.tree_util.tree_unflatten(out_tree, outs)
    run.__name__ = run.__qualname__ = name
    jitted = jit_with_placement(run, placement, donate_argnums=donate_argnums,
                                donate_argnames=donate_argnames)
    if lowering_platforms is None:
        return jitted.lower(*args, **kwargs)
    return jitted.trace(*args, **kwargs).lower(lowering_platforms=lowering_platforms)


def clear_caches():
    """Forget the compiled whole programs (`eager_dispatch` has its own caches)."""
    compile_jaxpr.cache_clear()
    _compiled_by_text.clear()
