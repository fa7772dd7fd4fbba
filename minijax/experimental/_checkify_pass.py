"""The checkify pass: run a jaxpr with an error value threaded through it.

`checkify(f)` first traces `f` to a jaxpr. This pass then *re-traces* that jaxpr, the
way minijax's trace-based passes do (`transforms/ad_util.eval_jaxpr`): it walks the
equations, binding each in the current trace, so whatever trace is current (eager,
`jit`'s staging, `vmap`'s batching, `grad`'s JVP) handles the result. What this pass
adds is one more value carried from equation to equation: the `Error`
(`_checkify_errors.py`). Each primitive either

* has a *check rule* here: bind the primitive, then compute from its inputs or outputs
  whether it failed (a NaN came out, a divisor was zero, an index was out of bounds)
  and merge that into the error -- these computations are ordinary minijax operations,
  so they are traced like the program's own;
* is a `check` (a `debug_callback` equation whose callback is a `CheckMarker`): its
  operands *are* an error, which is merged in instead of being raised -- this is what
  "functionalizing" a check means;
* carries bodies (`cond`, `while`, `scan`, `jit`, `remat`): the bodies are checkified
  too, with the error as an extra operand and result, and the control flow is rebuilt
  through the public `lax.switch` / `lax.while_loop` / `lax.scan`; a call (`jit`,
  `remat`) is inlined; a `shard_map` (and so a `pmap`) is rebound with the error as
  extra operands and one row of it per device as extra results (`_shard_map`);
* or none of these: it is bound unchanged.

A loop carry and the branches of a `cond` must have the same types on every path, so
before rebuilding one the pass finds every error *effect* its bodies can raise
(`effects_of`, a walk over the jaxpr that mirrors the rules) and gives the incoming
error an empty slot for each (`with_placeholders`). Each check site gets a *code*
from the `Context` as the pass meets it; the message for a code is stored once, in
the context's metadata, and becomes the returned `Error`'s aux data.

A `custom_jvp` or `custom_vjp` call whose body can fail is rebuilt as a new custom
function whose body is the checkified one and whose rules are the original ones (the
error gets no tangent or cotangent), so its derivative is still the user's.
"""
from __future__ import annotations

import numpy as np
from jax import tree_util

from .. import lax
from .. import numpy as jnp
from ..ir import control_flow_primitives as CF
from ..ir.core import Literal, literal_value
from ..ir.shard_map_primitive import block_shape, manual_axes, shard_map_p
from ..ir.staging import convert_constvars_to_invars, trace_to_jaxpr
from ..ir.trace import Tracer, aval_of, bind, current_trace, set_current_trace
from ..ir.source_info import source_info_from
from ..ir.types import float0
from ..transforms.custom_derivatives import custom_jvp, custom_vjp
from ..transforms.batching import AxisFrame
from ..transforms.vmap import Batched, not_mapped
from ._checkify_errors import (DivisionByZeroError, Error, ErrorEffect, NaNError,
                               OOBError, ERROR_CLASSES, batch_shape, flatten_slots,
                               reduce_batched, throw_error, unflatten_slots, update_error,
                               with_placeholders, with_rows)

# The primitives that can make a NaN, by name (JAX's list, as far as minijax has them).
NAN_PRIMITIVES = frozenset("""
    acos acosh add asin asinh atan2 atan atanh bessel_i0e bessel_i1e cbrt
    conv_general_dilated cos cosh cumlogsumexp cummax cummin cumprod cumsum digamma
    dot_general erf_inv erf erfc exp exp2 expm1 fft igamma_grad_a igamma igammac
    integer_pow lgamma linear_solve log1p log2 log logistic mul pad pow psum reduce
    reduce_prod reduce_sum reduce_window reduce_window_sum regularized_incomplete_beta
    rem rng_uniform rsqrt sin sinh sqrt sub tan tanh div""".split())
SCATTERS = frozenset({"scatter", "scatter_add", "scatter_mul", "scatter_min",
                      "scatter_max"})
INDEXING = frozenset({"gather", "dynamic_slice", "dynamic_update_slice"}) | SCATTERS

NAN_EFFECT = ErrorEffect("NaNError", ())
DIV_EFFECT = ErrorEffect("DivisionByZeroError", ())
OOB_EFFECT = ErrorEffect("OOBError", (((3,), "int32"),))


class CheckMarker:
    """The callback of the `debug_callback` equation a `check` leaves in a program.
    `checkify` recognizes it and merges the error it carries; anywhere else (a `check`
    that was never checkified, run eagerly) calling it raises the error."""

    def __init__(self, error_tree, effects, debug: bool):
        self.error_tree, self.effects, self.debug = error_tree, tuple(effects), debug

    def __call__(self, *leaves):
        if not self.debug:
            error = _unflatten_error(self.error_tree, leaves)
            throw_error(error)

    def __repr__(self):
        return "checkify.debug_check" if self.debug else "checkify.check"

    def vmap_rule(self, axis_size, values, dims):
        """A vmapped `check` is one check of one error: of the lanes that failed, the
        last one's (JAX's check batching rule, 0.10-0.12), not one check per lane,
        which would report the first."""
        rows = [jnp.broadcast_to(v, (axis_size, *np.shape(v))) if d is not_mapped
                else jnp.moveaxis(v, d, 0) for v, d in zip(values, dims)]
        error = reduce_batched(_unflatten_error(self.error_tree, rows))
        leaves, tree = tree_util.tree_flatten(error)
        if not any(isinstance(leaf, Tracer) for leaf in leaves):
            if not self.debug:        # an eager vmap: raised here, as `check` raises
                throw_error(error)
        else:
            bind(CF.debug_callback_p, *leaves, callback=CheckMarker(tree, self.effects,
                                                                     self.debug))
        return Batched([], [])


def _unflatten_error(tree, leaves) -> Error:
    return tree_util.tree_unflatten(tree, list(leaves))


class Context:
    """The codes handed out so far and what each means (class name, static message
    parts), shared by every body of one `checkify` call."""

    def __init__(self, enabled):
        self.enabled = frozenset(enabled)
        self.metadata: dict[int, tuple] = {}

    def on(self, cls) -> bool:
        return cls in self.enabled

    def add(self, error: Error, cls, static, pred, payload=()) -> Error:
        code = len(self.metadata)
        self.metadata[code] = (cls.__name__, static)
        return update_error(error, cls.effect(payload), pred, np.int32(code), payload)


def _is_check(eqn) -> bool:
    return eqn.primitive is CF.debug_callback_p and isinstance(eqn.params["callback"],
                                                               CheckMarker)


def effects_of(jaxpr, enabled) -> set:
    """Every error effect the pass can add while running `jaxpr` (its bodies
    included), so loops and conds can give their error a slot for each up front."""
    found = set()
    on = frozenset(enabled)
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if _is_check(eqn):
            found |= {e for e in eqn.params["callback"].effects
                      if ERROR_CLASSES[e[0]] in on}
            continue
        if name == "div" and DivisionByZeroError in on:
            found.add(DIV_EFFECT)
        if name in NAN_PRIMITIVES and NaNError in on:
            found.add(NAN_EFFECT)
        if name in INDEXING and OOBError in on:
            found.add(OOB_EFFECT)
            if name in SCATTERS and NaNError in on:
                found.add(NAN_EFFECT)
        for body in _bodies(eqn):
            found |= effects_of(body, enabled)
    return found


def _bodies(eqn):
    params = eqn.params
    if eqn.primitive is CF.cond_p:
        return list(params["branches"])
    if eqn.primitive is CF.while_p:
        return [params["cond_jaxpr"], params["body_jaxpr"]]
    if eqn.primitive is CF.scan_p:
        return [params["jaxpr"]]
    if name_of(eqn) in ("jit", "remat"):
        return [params["jaxpr"]]
    if name_of(eqn) in ("custom_jvp_call", "custom_vjp_call"):
        return [params["call_jaxpr"]]
    if eqn.primitive is shard_map_p:
        return [params["jaxpr"]]
    return []


def name_of(eqn) -> str:
    return eqn.primitive.name


def checkify_jaxpr(ctx: Context, jaxpr, consts, error: Error, args):
    """Run `jaxpr` on `consts` and `args` in the current trace with `error` threaded
    through: `(error, outputs)`."""
    env = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))

    def read(atom):
        return literal_value(atom) if type(atom) is Literal else env[atom]

    for eqn in jaxpr.eqns:
        inputs = [read(a) for a in eqn.inputs]
        with source_info_from(eqn):
            error, outs = _run_equation(ctx, error, eqn, inputs)
        env.update(zip(eqn.outputs, outs))
    return error, [read(a) for a in jaxpr.outvars]


def _bind(eqn, inputs):
    return current_trace().process_primitive(eqn.primitive, inputs, eqn.params)


def _run_equation(ctx, error, eqn, inputs):
    name = name_of(eqn)
    if _is_check(eqn):
        return _discharge_check(ctx, error, eqn, inputs), []
    if eqn.primitive is CF.cond_p:
        return _cond(ctx, error, eqn, inputs)
    if eqn.primitive is CF.while_p:
        return _while(ctx, error, eqn, inputs)
    if eqn.primitive is CF.scan_p:
        return _scan(ctx, error, eqn, inputs)
    if name in ("jit", "remat"):
        return checkify_jaxpr(ctx, eqn.params["jaxpr"], [], error, inputs)
    if eqn.primitive is shard_map_p and (error._pred or effects_of(eqn.params["jaxpr"],
                                                                   ctx.enabled)):
        return _shard_map(ctx, error, eqn, inputs)
    if name in ("custom_jvp_call", "custom_vjp_call") and effects_of(
            eqn.params["call_jaxpr"], ctx.enabled):
        rebuild = _custom_jvp if name == "custom_jvp_call" else _custom_vjp
        return rebuild(ctx, error, eqn, inputs)
    if name == "div" and ctx.on(DivisionByZeroError):
        error = ctx.add(error, DivisionByZeroError, (), jnp.any(jnp.equal(inputs[1], 0)))
    outs = _bind(eqn, inputs)
    if name in INDEXING and ctx.on(OOBError):
        error = _index_check(ctx, error, eqn, inputs)
        if name in SCATTERS:
            error = _nan_check(ctx, error, name, outs)
    elif name in NAN_PRIMITIVES:
        error = _nan_check(ctx, error, name, outs)
    return error, outs


def _nan_check(ctx, error, name, outs):
    if not ctx.on(NaNError):
        return error
    flags = [jnp.any(jnp.isnan(o)) for o in outs
             if jnp.issubdtype(jnp.result_type(o), jnp.inexact)]
    if not flags:
        return error
    any_nan = flags[0] if len(flags) == 1 else jnp.any(jnp.stack(flags))
    return ctx.add(error, NaNError, (name,), any_nan)


# -- index checks --------------------------------------------------------------------

def _oob_payload(oob_mask, indices, dims_map, operand_shape):
    """The first out-of-bounds index, its axis and that axis's size (JAX's payload)."""
    flat_idx = jnp.argmin(jnp.logical_not(oob_mask).ravel())
    multi_idx = jnp.unravel_index(flat_idx, jnp.shape(indices))
    oob_axis = jnp.array(dims_map, np.int32)[multi_idx[-1]]
    oob_axis_size = jnp.array(operand_shape, np.int32)[oob_axis]
    oob_index = jnp.ravel(indices)[flat_idx]
    return jnp.stack([oob_index.astype(np.int32), oob_axis, oob_axis_size])


def _index_check(ctx, error, eqn, inputs):
    name, params = name_of(eqn), eqn.params
    operand = inputs[0]
    shape = tuple(jnp.shape(operand))
    if name in ("dynamic_slice", "dynamic_update_slice"):
        starts = inputs[1:] if name == "dynamic_slice" else inputs[2:]
        if not starts:
            return error
        sizes = (params["slice_sizes"] if name == "dynamic_slice"
                 else jnp.shape(inputs[1]))
        indices = jnp.stack([jnp.asarray(s) for s in starts])
        dims = np.array(shape, dtype=indices.dtype)
        oob = (indices < 0) | (indices + np.array(sizes, dtype=indices.dtype) > dims)
        dims_map = list(range(len(shape)))
    elif name == "gather":
        indices = inputs[1]
        index_map = list(params["start_index_map"])
        upper = (np.array(shape)[index_map]
                 - np.array(params["slice_sizes"])[index_map]).astype(indices.dtype)
        oob = (indices < 0) | (indices > upper)
        dims_map = index_map
    else:
        indices, updates = inputs[1], inputs[2]
        oob, dims_map = _scatter_oob(shape, indices, jnp.shape(updates), params)
    payload = _oob_payload(oob, indices, dims_map, shape)
    return ctx.add(error, OOBError, (name, shape), jnp.any(oob), [payload])


def _scatter_oob(shape, indices, updates_shape, params):
    window_dims = iter(params["update_window_dims"])
    slice_sizes = [1 if i in params["inserted_window_dims"]
                   else updates_shape[next(window_dims)] for i in range(len(shape))]
    index_map = list(params["scatter_dims_to_operand_dims"])
    upper = np.array([shape[i] - slice_sizes[i] for i in index_map], np.int64)
    upper = np.minimum(upper, np.iinfo(indices.dtype).max).astype(indices.dtype)
    return (indices < 0) | (indices > upper), index_map


# -- check: the error a `check` carries joins the threaded one ---------------------

def _discharge_check(ctx, error, eqn, inputs):
    """Merge the error a `check` carries. Its codes count from 0 in its own numbering,
    so they are shifted past every code handed out so far."""
    marker = eqn.params["callback"]
    new = _unflatten_error(marker.error_tree, inputs)
    offset = len(ctx.metadata)
    for code, meta in sorted(new._metadata.items()):
        ctx.metadata[offset + code] = meta
    # Codes the marker's error never uses still take numbers, so later ones stay apart.
    for code in range(len(new._metadata), max(new._metadata, default=-1) + 1):
        ctx.metadata.setdefault(offset + code, ("FailedCheckError", ("", None)))
    for effect in sorted(new._pred):
        if ERROR_CLASSES[effect[0]] not in ctx.enabled:
            continue
        code = jnp.asarray(new._code[effect], np.int32) + np.int32(offset)
        error = update_error(error, effect, new._pred[effect], code,
                             new._payload[effect])
    return error


# -- bodies ----------------------------------------------------------------------------

def _checkified_body(ctx, jaxpr, effects, metadata):
    def body(error_leaves, args):
        error = unflatten_slots(effects, error_leaves, metadata)
        error, outs = checkify_jaxpr(ctx, jaxpr, [], error, list(args))
        return flatten_slots(error)[0], outs
    return body


def _padded(ctx, error, jaxprs):
    effects, sizes = set(), set()
    for jaxpr in jaxprs:
        effects |= effects_of(jaxpr, ctx.enabled)
        sizes |= _map_sizes(jaxpr)
    error = with_placeholders(error, effects)
    # A shard_map in a body returns the error per device; the carry (or every branch)
    # must have that type from the start. Maps of different sizes cannot share one.
    if error._pred and len(sizes) == 1 and not batch_shape(error):
        error = with_rows(error, sizes.pop())
    leaves, order = flatten_slots(error)
    return leaves, order


def _cond(ctx, error, eqn, inputs):
    branches = eqn.params["branches"]
    leaves, order = _padded(ctx, error, branches)
    bodies = [_checkified_body(ctx, b, order, error._metadata) for b in branches]
    index, operands = inputs[0], inputs[1:]
    leaves, outs = lax.switch(index, bodies, leaves, operands)
    return unflatten_slots(order, leaves, error._metadata), list(outs)


def _while(ctx, error, eqn, inputs):
    p = eqn.params
    cond_consts = inputs[:p["cond_nconsts"]]
    body_consts = inputs[p["cond_nconsts"]:p["cond_nconsts"] + p["body_nconsts"]]
    carry = inputs[p["cond_nconsts"] + p["body_nconsts"]:]
    cond_jaxpr, body_jaxpr = p["cond_jaxpr"], p["body_jaxpr"]
    # The predicate's own checks run on the initial carry here, and on each new carry
    # inside the body, so every predicate the loop evaluates is checked once.
    error, _ = checkify_jaxpr(ctx, cond_jaxpr, [], error, [*cond_consts, *carry])
    leaves, order = _padded(ctx, error, [cond_jaxpr, body_jaxpr])
    metadata = error._metadata

    def cond_fun(state):
        dropped = Context(ctx.enabled)   # its errors were recorded by the body
        _, (pred,) = checkify_jaxpr(dropped, cond_jaxpr, [], Error({}, {}, {}, {}),
                                    [*cond_consts, *state[1]])
        return pred

    def body_fun(state):
        err = unflatten_slots(order, state[0], metadata)
        err, new_carry = checkify_jaxpr(ctx, body_jaxpr, [], err,
                                        [*body_consts, *state[1]])
        err, _ = checkify_jaxpr(ctx, cond_jaxpr, [], err, [*cond_consts, *new_carry])
        return flatten_slots(err)[0], new_carry

    leaves, carry = lax.while_loop(cond_fun, body_fun, (leaves, list(carry)))
    return unflatten_slots(order, leaves, metadata), list(carry)


def _scan(ctx, error, eqn, inputs):
    p = eqn.params
    n_consts, n_carry = p["num_consts"], p["num_carry"]
    consts, carry, xs = (inputs[:n_consts], inputs[n_consts:n_consts + n_carry],
                         inputs[n_consts + n_carry:])
    leaves, order = _padded(ctx, error, [p["jaxpr"]])
    metadata = error._metadata

    def body(state, x):
        err = unflatten_slots(order, state[0], metadata)
        err, outs = checkify_jaxpr(ctx, p["jaxpr"], [], err, [*consts, *state[1], *x])
        return (flatten_slots(err)[0], outs[:n_carry]), outs[n_carry:]

    (leaves, carry), ys = lax.scan(body, (leaves, list(carry)), list(xs),
                                   length=p["length"], reverse=p["reverse"],
                                   unroll=p["unroll"])
    return unflatten_slots(order, leaves, metadata), [*carry, *ys]


def _device_count(params) -> int:
    return int(np.prod([size for _, size in manual_axes(params["mesh_axes"],
                                                        params.get("auto_axes", ()))]))


def _map_sizes(jaxpr) -> set:
    """The device counts of the shard_maps `jaxpr` runs (not those inside them)."""
    sizes = set()
    for eqn in jaxpr.eqns:
        if eqn.primitive is shard_map_p:
            sizes.add(_device_count(eqn.params))
        else:
            for body in _bodies(eqn):
                sizes |= _map_sizes(body)
    return sizes


def _shard_map(ctx, error, eqn, inputs):
    """A `shard_map` whose body is checkified on every device, as JAX's: the error
    goes in replicated, each device's error comes out as one row of an error with a
    leading axis of the mesh's size (manual axes, row-major), so `get()` names each
    failing device's first error ("at mapped index k: ..."), as for a vmap.

    An error that is already per device (a shard_map ran before on a mesh of this
    size) goes in split, row k to device k; one of another size is first reduced to
    one error, as a `check` reduces a batched one."""
    p = eqn.params
    mesh = dict(manual_axes(p["mesh_axes"], p.get("auto_axes", ())))
    names = tuple(mesh)
    split = batch_shape(error) == (_device_count(p),)
    if batch_shape(error) and not split:
        error = reduce_batched(error)
    leaves, order = _padded(ctx, error, [p["jaxpr"]])
    metadata = error._metadata
    error_specs = [(names,) if split else () for _ in leaves]
    in_specs = (*error_specs, *p["in_specs"])
    blocks = [aval_of(x).update(shape=block_shape(aval_of(x).shape, spec, mesh))
              for x, spec in zip(leaves, error_specs)]
    blocks += [v.aval for v in p["jaxpr"].invars]

    def body(*args):
        error_leaves = args[:len(leaves)]
        if split:
            error_leaves = [jnp.squeeze(e, 0) for e in error_leaves]
        err = unflatten_slots(order, error_leaves, metadata)
        err, outs = checkify_jaxpr(ctx, p["jaxpr"], [], err, list(args[len(leaves):]))
        return [*(jnp.expand_dims(e, 0) for e in flatten_slots(err)[0]), *outs]

    with set_current_trace(AxisFrame(current_trace(), mesh)):
        closed = trace_to_jaxpr(body, blocks)
    n_consts = len(closed.jaxpr.constvars)
    params = dict(p, jaxpr=convert_constvars_to_invars(closed.jaxpr),
                  in_specs=((),) * n_consts + in_specs,
                  out_specs=((names,),) * len(leaves) + tuple(p["out_specs"]))
    results = bind(shard_map_p, *closed.consts, *leaves, *inputs, **params)
    return (unflatten_slots(order, results[:len(leaves)], metadata),
            list(results[len(leaves):]))


def _checked_call(ctx, error, eqn, inputs):
    """The pieces both custom calls are rebuilt from: the padded error leaves and a
    function running the checkified body on (error leaves, consts, args)."""
    p = eqn.params
    leaves, order = _padded(ctx, error, [p["call_jaxpr"]])
    metadata = error._metadata

    def checked(error_leaves, consts, args):
        err = unflatten_slots(order, error_leaves, metadata)
        err, outs = checkify_jaxpr(ctx, p["call_jaxpr"], [], err, [*consts, *args])
        return flatten_slots(err)[0], outs

    def finish(call):
        consts, args = inputs[:p["num_consts"]], inputs[p["num_consts"]:]
        out_leaves, outs = call(leaves, list(consts), list(args))
        return unflatten_slots(order, out_leaves, metadata), list(outs)
    return checked, finish


def _custom_jvp(ctx, error, eqn, inputs):
    checked, finish = _checked_call(ctx, error, eqn, inputs)
    rule = eqn.params["rule"]
    call = custom_jvp(checked)

    def call_jvp(primals, tangents):
        error_leaves, consts, args = primals
        out_leaves, outs = call(error_leaves, consts, args)
        site = rule.site
        _, tangents_out = rule.jvp(*site.nondiff, site.dyn_tree(list(args)),
                                   site.dyn_tree(list(tangents[2])))
        no_tangents = [np.zeros(np.shape(x), float0) for x in out_leaves]
        return (out_leaves, outs), (no_tangents, tree_util.tree_leaves(tangents_out))

    call.defjvp(call_jvp)
    return finish(call)


def _custom_vjp(ctx, error, eqn, inputs):
    checked, finish = _checked_call(ctx, error, eqn, inputs)
    rule = eqn.params["rule"]
    site = rule.site
    call = custom_vjp(checked)

    def call_fwd(error_leaves, consts, args):
        # The checks run on the body; the residuals are the user's fwd's.
        out = checked(error_leaves, consts, args)
        _, residuals = rule.fwd(*site.full_args(list(args)))
        return out, residuals

    def call_bwd(residuals, cts):
        ct = tree_util.tree_unflatten(site.out_tree, list(cts[1]))
        cts_in = rule.bwd(*site.nondiff, residuals, ct)
        arg_cts = []
        for ct_in, arg in zip(cts_in, site.dyn_tree(site.leaves)):
            n = len(tree_util.tree_leaves(arg))
            arg_cts += [None] * n if ct_in is None else tree_util.tree_leaves(
                ct_in, is_leaf=lambda x: x is None)
        return None, None, arg_cts

    call.defvjp(call_fwd, call_bwd)
    return finish(call)
