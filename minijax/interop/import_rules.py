"""The import table: one entry per JAX primitive, translating its params to minijax's.

Read `importing.py` first: it walks a JAX jaxpr and calls these rules with minijax
values (tracers while importing). Each rule ends in `bind`s of minijax primitives,
or in minijax's public API where minijax has a canonical form JAX spells otherwise
(ref indexing, custom derivatives).

Hints JAX carries and minijax does not model -- shardings, memory spaces, an op's
`accuracy` or `out_dtype` -- are accepted only at their "no hint" value; a program
that sets one is refused by name rather than silently changed. A contraction's
`precision` is not such a hint: on a GPU it decides whether float32 products use
TensorFloat-32, on a TPU how many bfloat16 passes they take, so it is kept
(`import_precision`). (The placement params of a `jit` equation are ignored:
minijax's `jit` has none.)

The table continues in `import_rules_calls.py` (checkpoint, custom derivatives) and
`import_rules_numeric.py` (bits, special functions, complex, linear algebra, windows,
keys).
"""
from __future__ import annotations

import math

import jax
import numpy as np
from jax import lax, tree_util
from jax.sharding import NamedSharding, SingleDeviceSharding

from .. import debug
from ..frontend import refs as mini_refs
from ..ir import primitives as P
from ..ir.control_flow_primitives import (cond_p, while_p, scan_p, debug_callback_p,
                                          debug_print_p, pure_callback_p, io_callback_p)
from ..transforms.batching import AxisFrame
from ..ir import collective_primitives as C
from ..ir.collective_primitives import as_names
from ..frontend.sharding import sharding_params
from ..ir.shard_map_primitive import shard_map_p, sharding_constraint_p
from ..ir.trace import MinijaxError, bind, aval_of, current_trace, set_current_trace
from .importing import register_import, import_body, import_bodies, as_one_call


class UnsupportedParamError(MinijaxError, NotImplementedError):
    """A JAX param value minijax cannot represent (a sharding, a precision, ...)."""


def _refuse_hint(prim_name, params, *names):
    for name in names:
        value = params.get(name)
        if value is not None and value != () and value is not False:
            raise UnsupportedParamError(
                f"cannot import {prim_name} with {name}={value!r}: minijax does not model "
                f"{name}")


def _single(prim):
    return lambda *args, **params: [bind(prim, *args, **params)]


# -- elementwise ---------------------------------------------------------------------------

_ELEMENTWISE = [
    "neg", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
    "acosh", "atanh", "exp", "exp2", "log", "log2", "log1p", "expm1", "logistic", "sqrt",
    "rsqrt", "cbrt", "erf", "floor", "ceil", "abs", "sign", "square", "one_minus_square",
    "is_finite", "not", "stop_gradient", "add", "sub", "mul", "div", "rem", "pow", "max",
    "min", "atan2", "and", "or", "xor", "eq", "ne", "lt", "le", "gt", "ge", "select_n", "clamp",
]


def expand_unit_dims(args):
    """`args` of an elementwise JAX equation, with size-1 axes expanded: JAX's jaxprs
    may combine `f32[2]` with `f32[1]` (its random samplers do), where minijax's
    elementwise ops take equal shapes or rank 0."""
    if not _mixes_shapes(args):
        return args
    shape = np.broadcast_shapes(*[aval_of(a).shape for a in args if aval_of(a).shape])
    return [bind(P.broadcast_in_dim_p, a, shape=shape, broadcast_dimensions=tuple(
        range(len(shape)))) if aval_of(a).shape not in ((), shape) else a
            for a in args]


def _mixes_shapes(args) -> bool:
    return len({aval_of(a).shape for a in args if aval_of(a).shape}) > 1


def _elementwise(prim):
    def rule(*args, accuracy=None, out_dtype=None, **params):
        _refuse_hint(prim.name, {"accuracy": accuracy, "out_dtype": out_dtype},
                     "accuracy", "out_dtype")
        if not _mixes_shapes(args):
            return [bind(prim, *args, **params)]
        # Expanded, the one JAX operation is several minijax ones: one call, so that an
        # eager evaluation of the program compiles one program for it (`as_one_call`).
        return as_one_call(prim.name, _expanded_elementwise, *args, prim=prim, **params)
    return rule


def _expanded_elementwise(*args, prim, **params):
    return [bind(prim, *expand_unit_dims(args), **params)]


for _name in _ELEMENTWISE:
    _prim = P.primitives_by_name[_name]
    register_import(_name, _prim, _elementwise(_prim))

register_import("integer_pow", P.integer_pow_p,
                lambda x, *, y: [bind(P.integer_pow_p, x, y=int(y))])
register_import("round", P.round_p, lambda x, *, rounding_method:
                [bind(P.round_p, x, rounding_method=int(rounding_method))])
register_import("convert_element_type", P.convert_element_type_p,
                lambda x, *, new_dtype, weak_type, sharding=None:
                [bind(P.convert_element_type_p, x, new_dtype=np.dtype(new_dtype),
                      weak_type=bool(weak_type))])


# -- shapes --------------------------------------------------------------------------------

def _ints(xs):
    return tuple(int(x) for x in xs)


def _broadcast_in_dim(x, *dyn, shape, broadcast_dimensions, sharding=None):
    _refuse_hint("broadcast_in_dim", {"sharding": sharding}, "sharding")
    if dyn:
        raise UnsupportedParamError("cannot import broadcast_in_dim with dynamic shapes")
    return [bind(P.broadcast_in_dim_p, x, shape=_ints(shape),
                 broadcast_dimensions=_ints(broadcast_dimensions))]


def _reshape(x, *dyn, new_sizes, dimensions, sharding=None):
    _refuse_hint("reshape", {"sharding": sharding, "dimensions": dimensions},
                 "sharding", "dimensions")
    return [bind(P.reshape_p, x, new_sizes=_ints(new_sizes), dimensions=None)]


register_import("broadcast_in_dim", P.broadcast_in_dim_p, _broadcast_in_dim)
register_import("reshape", P.reshape_p, _reshape)
register_import("transpose", P.transpose_p, lambda x, *, permutation:
                [bind(P.transpose_p, x, permutation=_ints(permutation))])
register_import("squeeze", P.squeeze_p, lambda x, *, dimensions:
                [bind(P.squeeze_p, x, dimensions=_ints(dimensions))])
register_import("rev", P.rev_p, lambda x, *, dimensions:
                [bind(P.rev_p, x, dimensions=_ints(dimensions))])
register_import("concatenate", P.concatenate_p, lambda *xs, dimension:
                [bind(P.concatenate_p, *xs, dimension=int(dimension))])
register_import("pad", P.pad_p, lambda x, v, *, padding_config: [bind(
    P.pad_p, x, v, padding_config=tuple(_ints(c) for c in padding_config))])
register_import("slice", P.slice_p, lambda x, *, start_indices, limit_indices, strides:
                [bind(P.slice_p, x, start_indices=_ints(start_indices),
                      limit_indices=_ints(limit_indices),
                      strides=None if strides is None else _ints(strides))])
register_import("dynamic_slice", P.dynamic_slice_p, lambda x, *starts, slice_sizes:
                [bind(P.dynamic_slice_p, x, *starts, slice_sizes=_ints(slice_sizes))])
register_import("dynamic_update_slice", P.dynamic_update_slice_p,
                _single(P.dynamic_update_slice_p))


# -- reductions, contractions, scans ----------------------------------------------------------

def _reduction(prim):
    def rule(x, *, axes, out_sharding=None):
        _refuse_hint(prim.name, {"out_sharding": out_sharding}, "out_sharding")
        return [bind(prim, x, axes=_ints(axes))]
    return rule


for _prim in (P.reduce_sum_p, P.reduce_prod_p, P.reduce_max_p, P.reduce_min_p,
              P.reduce_and_p, P.reduce_or_p):
    register_import(_prim.name, _prim, _reduction(_prim))
for _prim in (P.argmax_p, P.argmin_p):
    register_import(_prim.name, _prim, lambda x, *, axes, index_dtype, _p=_prim:
                    [bind(_p, x, axes=_ints(axes), index_dtype=np.dtype(index_dtype))])


def import_precision(prim_name, precision):
    """A contraction's JAX `precision` param as minijax's: None, or a pair of
    `lax.Precision` names. JAX's trace holds None, a pair of `Precision` values (what
    `precision=` and `jax_default_matmul_precision` canonicalize to), a
    `lax.DotAlgorithmPreset` (its name), or a `lax.DotAlgorithm`, which minijax does
    not model and refuses."""
    if precision is None:
        return None
    if isinstance(precision, lax.DotAlgorithmPreset):
        return precision.name
    pair = precision if isinstance(precision, (tuple, list)) else (precision, precision)
    if len(pair) != 2 or not all(isinstance(p, lax.Precision) for p in pair):
        raise UnsupportedParamError(
            f"cannot import {prim_name} with precision={precision!r}: minijax models "
            f"lax.Precision values and lax.DotAlgorithmPreset, not lax.DotAlgorithm")
    return tuple(p.name for p in pair)


def _dot_general(lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None,
                 out_sharding=None):
    _refuse_hint("dot_general", {"out_sharding": out_sharding}, "out_sharding")
    (lc, rc), (lb, rb) = dimension_numbers
    preferred = None if preferred_element_type is None else np.dtype(preferred_element_type)
    return [bind(P.dot_general_p, lhs, rhs,
                 dimension_numbers=((_ints(lc), _ints(rc)), (_ints(lb), _ints(rb))),
                 precision=import_precision("dot_general", precision),
                 preferred_element_type=preferred)]


register_import("dot_general", P.dot_general_p, _dot_general)
register_import("iota", P.iota_p, lambda *, dtype, shape, dimension, sharding=None:
                [bind(P.iota_p, dtype=np.dtype(dtype), shape=_ints(shape),
                      dimension=int(dimension))])
for _prim in (P.cumsum_p, P.cumprod_p, P.cummax_p, P.cummin_p):
    register_import(_prim.name, _prim, lambda x, *, axis, reverse, _p=_prim:
                    [bind(_p, x, axis=int(axis), reverse=bool(reverse))])
register_import("sort", P.sort_p, lambda *xs, dimension, is_stable, num_keys: list(
    bind(P.sort_p, *xs, dimension=int(dimension), is_stable=bool(is_stable),
         num_keys=int(num_keys))))


def _mode(mode) -> str:
    name = getattr(mode, "name", str(mode)).upper()
    if name in ("CLIP", "PROMISE_IN_BOUNDS"):
        return "clip"
    if name == "FILL_OR_DROP":
        return "fill"
    raise UnsupportedParamError(f"cannot import the gather/scatter mode {mode}")


def _no_batching_dims(prim_name, dnums, *names):
    for name in names:
        if tuple(getattr(dnums, name, ())):
            raise UnsupportedParamError(f"cannot import {prim_name} with {name}: minijax's "
                                        f"{prim_name} has no batching dimensions")


def _gather(operand, indices, *, dimension_numbers, slice_sizes, mode, fill_value=None,
            indices_are_sorted=False, unique_indices=False):
    _no_batching_dims("gather", dimension_numbers, "operand_batching_dims",
                      "start_indices_batching_dims")
    if fill_value is not None:
        raise UnsupportedParamError("cannot import gather with a fill_value")
    d = dimension_numbers
    return [bind(P.gather_p, operand, indices, offset_dims=_ints(d.offset_dims),
                 collapsed_slice_dims=_ints(d.collapsed_slice_dims),
                 start_index_map=_ints(d.start_index_map), slice_sizes=_ints(slice_sizes),
                 mode=_mode(mode))]


def _scatter(prim):
    def rule(operand, indices, updates, *, dimension_numbers, mode, update_jaxpr=None,
             update_consts=(), indices_are_sorted=False, unique_indices=False):
        d = dimension_numbers
        _no_batching_dims(prim.name, d, "operand_batching_dims",
                          "scatter_indices_batching_dims")
        return [bind(prim, operand, indices, updates,
                     update_window_dims=_ints(d.update_window_dims),
                     inserted_window_dims=_ints(d.inserted_window_dims),
                     scatter_dims_to_operand_dims=_ints(d.scatter_dims_to_operand_dims),
                     mode=_mode(mode))]
    return rule


register_import("gather", P.gather_p, _gather)
register_import("scatter", P.scatter_p, _scatter(P.scatter_p))
register_import("scatter-add", P.scatter_add_p, _scatter(P.scatter_add_p))
register_import("scatter-mul", P.scatter_mul_p, _scatter(P.scatter_mul_p))
register_import("scatter-min", P.scatter_min_p, _scatter(P.scatter_min_p))
register_import("scatter-max", P.scatter_max_p, _scatter(P.scatter_max_p))


# -- calls and control flow ----------------------------------------------------------------------

def _call(*args, jaxpr=None, call_jaxpr=None, name="jit", **hints):
    body, consts = import_body(jaxpr if jaxpr is not None else call_jaxpr)
    return list(bind(P.jit_p, *consts, *args, jaxpr=body, name=str(name)))


register_import("pjit", P.jit_p, _call)
register_import("jit", P.jit_p, _call)
register_import("closed_call", P.jit_p, _call)
register_import("eval_jaxpr", P.jit_p, _call)      # JAX 0.11's name for closed_call
register_import("core_call", P.jit_p, _call)


def _cond(index, *operands, branches, **hints):
    bodies, consts = import_bodies(branches)
    index = bind(P.convert_element_type_p, index, new_dtype=np.dtype(np.int32),
                 weak_type=False) if aval_of(index).dtype != np.int32 else index
    return list(bind(cond_p, index, *consts, *operands, branches=tuple(bodies)))


def _while(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts, rest = args[:cond_nconsts], args[cond_nconsts:]
    body_consts, carry = rest[:body_nconsts], rest[body_nconsts:]
    cond_body, cond_hoisted = import_body(cond_jaxpr)
    loop_body, body_hoisted = import_body(body_jaxpr)
    return list(bind(while_p, *cond_hoisted, *cond_consts, *body_hoisted, *body_consts,
                     *carry, cond_jaxpr=cond_body, body_jaxpr=loop_body,
                     cond_nconsts=len(cond_hoisted) + cond_nconsts,
                     body_nconsts=len(body_hoisted) + body_nconsts))


def _scan_counts(num_consts, num_carry, ft_in):
    """(consts, carries) of a JAX scan equation. Newer JAX releases replace the params
    `num_consts`/`num_carry` by `ft_in`, a flat tree of the three operand groups
    (consts, carries, xs) whose `unpack()` gives each group with its `vals`."""
    if ft_in is None:
        return int(num_consts), int(num_carry)
    consts, carries, _ = ft_in.unpack()
    return len(list(consts.vals)), len(list(carries.vals))


def _scan(*args, jaxpr, length, reverse, unroll, num_consts=None, num_carry=None,
          linear=None, _split_transpose=False, ft_in=None, ft_out=None):
    # ft_out (newer JAX) describes the outputs, which are the body's outputs in order.
    num_consts, num_carry = _scan_counts(num_consts, num_carry, ft_in)
    body, hoisted = import_body(jaxpr)
    unroll = int(unroll) if not isinstance(unroll, bool) else (length if unroll else 1)
    return list(bind(scan_p, *hoisted, *args, jaxpr=body,
                     num_consts=len(hoisted) + num_consts, num_carry=num_carry,
                     length=int(length), reverse=bool(reverse), unroll=unroll))


register_import("cond", cond_p, _cond)
register_import("while", while_p, _while)
register_import("scan", scan_p, _scan)


# -- refs -----------------------------------------------------------------------------------------

def _python_index(indexer):
    """A JAX `NDIndexer` (leaves already minijax values) as a Python index."""
    out = []
    for item in indexer.indices:
        if all(hasattr(item, a) for a in ("start", "size", "stride")):
            start = item.start
            if not isinstance(start, (int, np.integer)):
                # A traced start: JAX's `jax.ds`. (JAX clamps a strided one element by
                # element; minijax clamps the start so the whole slice fits. They
                # agree wherever the slice is in range.)
                out.append(mini_refs.ds(start, item.size, int(item.stride)))
                continue
            stop = start + item.size * item.stride
            out.append(slice(int(start), int(stop), int(item.stride)))
        else:
            out.append(item)
    return tuple(out)


def _place(ref, tree, leaves):
    """The minijax ref or view a JAX ref op's `tree` of indexers picks out, and the
    last index (applied by the op itself)."""
    transforms = tree_util.tree_unflatten(tree, list(leaves))
    target = ref
    for transform in transforms[:-1]:
        if not hasattr(transform, "indices"):
            raise UnsupportedParamError(f"cannot import the ref view {transform!r}")
        target = target.at[_python_index(transform)]
    if not transforms:
        return target, ...
    last = transforms[-1]
    if not hasattr(last, "indices"):
        raise UnsupportedParamError(f"cannot import the ref view {last!r}")
    return target, _python_index(last)


def _get(ref, *leaves, tree):
    target, idx = _place(ref, tree, leaves)
    return [mini_refs.get(target, idx)]


def _swap(ref, value, *leaves, tree):
    target, idx = _place(ref, tree, leaves)
    return [mini_refs.swap(target, idx, value)]


def _addupdate(ref, value, *leaves, tree):
    target, idx = _place(ref, tree, leaves)
    mini_refs.addupdate(target, idx, value)
    return []


def _new_ref(x, *, memory_space=None, kind=None, pin=False):
    # `pin` (newer JAX: lower to a pinned buffer) is placement, like memory_space.
    _refuse_hint("new_ref", {"memory_space": memory_space, "pin": pin}, "memory_space", "pin")
    return [mini_refs.new_ref(x, kind=kind)]


register_import("new_ref", P.new_ref_p, _new_ref)
register_import("get", P.get_p, _get)
register_import("swap", P.swap_p, _swap)
register_import("addupdate", P.addupdate_p, _addupdate)
register_import("freeze", P.freeze_p, lambda r: [mini_refs.freeze(r)])
register_import("free_ref", P.free_ref_p, lambda r: (mini_refs.free_ref(r), [])[1])


def _empty_ref(*, ty, memory_space=None, **hints):
    _refuse_hint("empty_ref", {"memory_space": memory_space}, "memory_space")
    inner = getattr(ty, "inner_aval", ty)
    return [bind(P.empty_ref_p, shape=_ints(inner.shape), dtype=np.dtype(inner.dtype))]


register_import("empty_ref", P.empty_ref_p, _empty_ref)


# -- host effects ---------------------------------------------------------------------------------

def _debug_callback(*args, callback, effect=None, partitioned=False, **hints):
    bind(debug_callback_p, *args, callback=callback)
    return []


register_import("debug_callback", debug_callback_p, _debug_callback)


class _ImportedPureCallback:
    """JAX's flat callback of a `pure_callback` equation, as minijax's param: flat
    NumPy values in, the list of results out."""
    __slots__ = ("jax_callback",)

    def __init__(self, jax_callback):
        self.jax_callback = jax_callback

    def __call__(self, *values):
        return list(self.jax_callback(*values))

    def __eq__(self, other):
        return type(other) is _ImportedPureCallback and other.jax_callback is self.jax_callback

    def __hash__(self):
        return id(self.jax_callback)

    def __repr__(self):
        # the user's function's name, as minijax's own callbacks print (JAX's wrapper's
        # repr nests angle brackets deeper than the text form's opaque values allow)
        user_function = getattr(self.jax_callback, "callback_func", self.jax_callback)
        return getattr(user_function, "__name__", type(user_function).__name__)


def _imported_host_call(name, callback, result_avals, sharding) -> dict:
    """The params a host callback's equation holds (one device only)."""
    if sharding is not None and len(getattr(sharding, "device_set", ())) > 1:
        raise UnsupportedParamError(f"cannot import {name} with sharding={sharding!r}: "
                                    f"minijax calls a callback on one device")
    return dict(callback=_ImportedPureCallback(callback),
                result_shapes=tuple(_ints(a.shape) for a in result_avals),
                result_dtypes=tuple(np.dtype(a.dtype) for a in result_avals))


def _pure_callback(*args, callback, result_avals, sharding=None, vmap_method=None, **hints):
    return bind(pure_callback_p, *args, vmap_method=vmap_method,
                **_imported_host_call("pure_callback", callback, result_avals, sharding))


register_import("pure_callback", pure_callback_p, _pure_callback)


def _io_callback(*args, callback, result_avals, sharding=None, ordered=False, **hints):
    return bind(io_callback_p, *args, ordered=bool(ordered),
                **_imported_host_call("io_callback", callback, result_avals, sharding))


register_import("io_callback", io_callback_p, _io_callback)


def _debug_print(*values, fmt, in_tree, static_args=(), **hints):
    if static_args:
        raise UnsupportedParamError("cannot import debug_print with static_args")
    args, kwargs = tree_util.tree_unflatten(in_tree, list(values))
    debug.print(fmt, *args, **kwargs)
    return []


register_import("debug_print", debug_print_p, _debug_print)


# -- collectives and shard_map --------------------------------------------------------------------

def _axis_name(axis_name):
    """JAX's axis_name param (a name or a tuple of them) as minijax's: one name as
    itself, several as a tuple."""
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    return names[0] if len(names) == 1 else tuple(names)


def _with_groups(params, groups) -> dict:
    if groups is None:
        return params
    return dict(params, axis_index_groups=tuple(tuple(int(i) for i in g) for g in groups))


def _collective_reduction(prim, positional):
    def rule(x, *, axes, axis_index_groups=None):
        # JAX's own vmap rewrites a named reduction into integer (array) axes
        ints = tuple(sorted(a for a in axes if isinstance(a, int)))
        names = tuple(a for a in axes if not isinstance(a, int))
        if ints:
            x = bind(positional, x, axes=ints)
        return [bind(prim, x, **_with_groups(dict(axes=names), axis_index_groups))
                if names else x]
    return rule


def _all_gather(x, *, all_gather_dimension, axis_name, axis_index_groups, axis_size, tiled,
                **hints):
    return [bind(C.all_gather_p, x, **_with_groups(dict(
        axis_name=_axis_name(axis_name), axis=int(all_gather_dimension), tiled=bool(tiled),
        axis_size=int(axis_size)), axis_index_groups))]


def _reduce_scatter(x, *, axis_name, scatter_dimension, axis_index_groups, axis_size, tiled):
    return [bind(C.psum_scatter_p, x, **_with_groups(dict(
        axis_name=_axis_name(axis_name), scatter_dimension=int(scatter_dimension),
        tiled=bool(tiled), axis_size=int(axis_size)), axis_index_groups))]


def _ppermute(x, *, axis_name, perm):
    return [bind(C.ppermute_p, x, axis_name=_axis_name(axis_name),
                 perm=tuple((int(s), int(d)) for s, d in perm))]


def _all_to_all(x, *, split_axis, concat_axis, axis_name, axis_index_groups, tiled):
    name = _axis_name(axis_name)
    sizes = _mesh_axis_sizes_in_scope()
    unsized = [n for n in as_names(name) if n not in sizes]
    if unsized:
        raise UnsupportedParamError(f"cannot import all_to_all over {unsized} outside a "
                                    f"shard_map that gives the axis size")
    size = (math.prod(sizes[n] for n in as_names(name)) if axis_index_groups is None
            else len(axis_index_groups[0]))
    return [bind(C.all_to_all_p, x, **_with_groups(dict(
        axis_name=name, split_axis=int(split_axis), concat_axis=int(concat_axis),
        tiled=bool(tiled), axis_size=size), axis_index_groups))]


def _axis_index(*, axis_name):
    return [bind(C.axis_index_p, axis_name=_axis_name(axis_name))]


def _mesh_axis_sizes_in_scope() -> dict:
    sizes, trace = {}, current_trace()
    while trace is not None:
        sizes = {**getattr(trace, "mesh_axis_sizes", {}), **sizes}
        trace = trace.parent
    return sizes


def _spec(spec) -> tuple:
    return tuple(None if entry is None else (entry,) if isinstance(entry, str)
                 else tuple(entry) for entry in spec)


def _shard_map(*args, mesh, in_specs, out_specs, jaxpr, check_vma=True,
               newly_manual_axes=None, **hints):
    sizes = dict(zip(mesh.axis_names, mesh.devices.shape))
    auto = () if newly_manual_axes is None else tuple(
        name for name in sizes if name not in newly_manual_axes)
    manual = {name: size for name, size in sizes.items() if name not in auto}
    with set_current_trace(AxisFrame(current_trace(), manual)):
        body, consts = import_body(jaxpr)
    return list(bind(shard_map_p, *consts, *args, jaxpr=body,
                     mesh_axes=tuple(sizes.items()),
                     device_ids=tuple(int(d.id) for d in mesh.devices.flat),
                     in_specs=((),) * len(consts) + tuple(map(_spec, in_specs)),
                     out_specs=tuple(map(_spec, out_specs)),
                     **({"auto_axes": auto} if auto else {})))


register_import("psum", C.psum_p, _collective_reduction(C.psum_p, P.reduce_sum_p))
register_import("pmax", C.pmax_p, _collective_reduction(C.pmax_p, P.reduce_max_p))
register_import("pmin", C.pmin_p, _collective_reduction(C.pmin_p, P.reduce_min_p))
register_import("all_gather", C.all_gather_p, _all_gather)
register_import("reduce_scatter", C.psum_scatter_p, _reduce_scatter)
register_import("ppermute", C.ppermute_p, _ppermute)
register_import("all_to_all", C.all_to_all_p, _all_to_all)
register_import("axis_index", C.axis_index_p, _axis_index)
register_import("shard_map", shard_map_p, _shard_map)


def _sharding_constraint(x, *, sharding, **hints):
    if not isinstance(sharding, (NamedSharding, SingleDeviceSharding)):
        raise UnsupportedParamError(f"cannot import a sharding constraint to {sharding!r}: "
                                    f"minijax takes NamedShardings and "
                                    f"SingleDeviceShardings")
    return [bind(sharding_constraint_p, x, **sharding_params(sharding))]


register_import("sharding_constraint", sharding_constraint_p, _sharding_constraint)


def _reshard(x, *, dst_sharding, **hints):
    # JAX's reshard to a layout on Explicit axes: the constraint that moves the array
    return [bind(sharding_constraint_p, x, **sharding_params(dst_sharding, moves=True))]


register_import("reshard", sharding_constraint_p, _reshard)
