"""The public `shard_map`: a function of global arrays written per shard.

`shard_map(f, mesh=mesh, in_specs=..., out_specs=...)(*args)` traces `f` once, at the
per-shard (block) shapes the specs give, into the body of a `shard_map` primitive
(`ir/shard_map_primitive.py`), and binds it on the global arguments. Inside `f` the
mesh's axis names are bound, so `lax.psum(x, 'x')` and the other collectives
(`frontend/collectives.py`) see them: tracing happens under an `AxisFrame`, a trace
that only tells the collectives the mesh's axis sizes and passes every primitive on.

Without `mesh=` the mesh is the one `jax.set_mesh` put in context where the mapped
function is called (an `AbstractMesh`: the params then say `device_ids=None`).
`smap` is `shard_map` over one axis of the context mesh, its specs spelled as `vmap`'s
axes.

The rest is the primitive's rules: lowering hands the body to JAX's `shard_map`
inside `jax.jit` (`backends/xla_collectives.py`); jvp, transpose and vmap transform
the body (`transforms/shard_map_rules.py`).
"""
from __future__ import annotations

from jax import tree_util
from jax.sharding import AbstractMesh, PartitionSpec

from ..backends.xla_collectives import context_mesh, mesh_axes_of

from ..ir.shard_map_primitive import shard_map_p, block_shape
from ..ir.staging import trace_to_jaxpr, convert_constvars_to_invars
from ..ir.trace import bind, aval_of, current_trace, set_current_trace
from ..ir.types import RefType
from ..transforms.batching import AxisFrame
from .pytrees import fun_name

__all__ = ["shard_map", "smap", "mesh_params", "mesh_or_context"]


def mesh_params(mesh) -> dict:
    """`mesh_axes` and `device_ids` params for a `Mesh`, or for an `AbstractMesh` (the
    context mesh: `device_ids=None`, see `ir/shard_map_primitive.py`)."""
    device_ids = None if isinstance(mesh, AbstractMesh) else tuple(
        int(d.id) for d in mesh.devices.flat)
    return dict(mesh_axes=mesh_axes_of(mesh), device_ids=device_ids)


def mesh_or_context(mesh, what: str, error=ValueError):
    """`mesh`, or when it is None the context mesh; no mesh at all is `error`, worded
    as JAX words it."""
    if mesh is None:
        mesh = context_mesh()
        if mesh is None:
            raise error(f"{what} needs the context mesh, and none is set: define one "
                        f"with `jax.set_mesh(mesh)` (or pass the mesh itself)")
    return mesh



def _spec_tuple(spec, mesh_sizes, what, auto=()) -> tuple:
    """A `PartitionSpec` as the primitive's spec: one entry per dimension, None or a
    tuple of axis names (of `mesh_sizes`; the mesh's `auto` axes may not be named)."""
    if not isinstance(spec, PartitionSpec):
        raise TypeError(f"shard_map {what} must be PartitionSpecs (or pytrees of them), "
                        f"got {spec!r}")
    entries = []
    for entry in spec:
        names = None if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
        for name in names or ():
            if name in auto:
                raise ValueError(f"shard_map {what} {spec} names the axis {name!r}, which "
                                 f"is not one of the manual axes {tuple(mesh_sizes)} "
                                 f"(axis_names=)")
            if name not in mesh_sizes:
                raise ValueError(f"shard_map {what} {spec} names the axis {name!r}, which "
                                 f"is not an axis of the mesh {tuple(mesh_sizes)}")
        entries.append(names)
    return tuple(entries)


def _block_aval(aval, spec, mesh_sizes):
    """The type of one device's block of an input: a ref's block is a ref."""
    if isinstance(aval, RefType):
        return RefType(_block_aval(aval.inner, spec, mesh_sizes))
    return aval.update(shape=block_shape(aval.shape, spec, mesh_sizes))


def broadcast_specs(specs, tree, what, caller="shard_map") -> list:
    """One `PartitionSpec` (or None) per leaf of `tree`, from `specs`, a tree prefix
    of it; `what` and `caller` name them in the error for a prefix that does not fit."""
    flat = []
    try:
        tree_util.tree_map(lambda spec, sub: flat.extend(
            [spec] * len(tree_util.tree_leaves(sub))), specs, tree,
            is_leaf=lambda x: isinstance(x, PartitionSpec) or x is None)
    except ValueError:
        subject = {"in_specs": "arguments", "out_specs": "outputs"}.get(what, "values")
        raise ValueError(f"{caller} {what} must be a tree prefix of the {subject}, got "
                         f"{specs!r}") from None
    return flat


def shard_map(f=None, /, *, out_specs, in_specs=None, mesh=None, axis_names=frozenset(),
              check_vma=True):
    """Map `f` over the shards of its arguments on `mesh`, as `jax.shard_map`.

    `in_specs`/`out_specs`: pytree prefixes of the arguments/results whose leaves are
    `PartitionSpec`s saying which mesh axes split each dimension. Inside `f` the
    mesh's axis names are bound for the collectives. `axis_names`: the mesh axes `f`
    is written per shard over (default: all); along the others `f` sees whole arrays
    and XLA lays them out. minijax treats every value as possibly different on every
    device (JAX's `check_vma=False`), which gives the same values and derivatives;
    `check_vma=True` only brings JAX's refusal of a grouped `psum`."""
    if f is None:
        return lambda g: shard_map(g, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                   axis_names=axis_names, check_vma=check_vma)
    if mesh is None:        # the context mesh where the mapped function is called
        return _on_context_mesh(f, out_specs, in_specs, axis_names, check_vma)
    if in_specs is None:
        raise TypeError("shard_map needs in_specs (minijax does not infer them)")
    unknown = set(axis_names) - set(mesh.axis_names)
    if unknown:
        raise ValueError(f"shard_map axis_names {sorted(unknown)} are not axes of the mesh "
                         f"{tuple(mesh.axis_names)}")
    mesh_axes, device_ids = mesh_params(mesh).values()
    auto = tuple(name for name, _ in mesh_axes if axis_names and name not in axis_names)
    mesh_sizes = {name: size for name, size in mesh_axes if name not in auto}  # manual

    def mapped(*args):
        leaves, in_tree = tree_util.tree_flatten(args)
        prefix = tuple(in_specs) if isinstance(in_specs, list) else in_specs
        specs = [_spec_tuple(s, mesh_sizes, "in_specs", auto)
                 for s in broadcast_specs(prefix, args, "in_specs")]
        block_avals = [_block_aval(aval_of(x), spec, mesh_sizes)
                       for x, spec in zip(leaves, specs)]
        out_tree_box = []

        def body(*blocks):
            outs = f(*tree_util.tree_unflatten(in_tree, list(blocks)))
            out_leaves, out_tree = tree_util.tree_flatten(outs)
            if any(isinstance(aval_of(leaf), RefType) for leaf in out_leaves):
                # JAX refuses this too ("Eager shard_map cannot return a jax.Ref")
                raise ValueError(f"{fun_name(f)}: a shard_map cannot return a ref; "
                                 f"return its value (r[...]), or pass the ref in and "
                                 f"write to it")
            out_tree_box.append((outs, out_tree))
            return out_leaves

        with set_current_trace(AxisFrame(current_trace(), mesh_sizes, check_vma)):
            closed = trace_to_jaxpr(body, block_avals)
        outs_example, out_tree = out_tree_box[0]
        # (`smap` passes a function of the outputs: its specs depend on their ranks)
        out_prefix = out_specs(outs_example) if callable(out_specs) else out_specs
        o_specs = [_spec_tuple(s, mesh_sizes, "out_specs", auto)
                   for s in broadcast_specs(out_prefix, outs_example, "out_specs")]
        n_consts = len(closed.jaxpr.constvars)
        jaxpr = convert_constvars_to_invars(closed.jaxpr)
        results = bind(shard_map_p, *closed.consts, *leaves, jaxpr=jaxpr,
                       mesh_axes=mesh_axes, device_ids=device_ids,
                       in_specs=((),) * n_consts + tuple(specs),
                       out_specs=tuple(o_specs), **({"auto_axes": auto} if auto else {}))
        return tree_util.tree_unflatten(out_tree, list(results))
    mapped.__name__ = f"shard_map({fun_name(f)})"
    return mapped


def _on_context_mesh(f, out_specs, in_specs, axis_names, check_vma):
    def mapped(*args):
        mesh = mesh_or_context(None, "shard_map without mesh=")
        return shard_map(f, mesh=mesh, out_specs=out_specs, in_specs=in_specs,
                         axis_names=axis_names, check_vma=check_vma)(*args)
    mapped.__name__ = f"shard_map({fun_name(f)})"
    return mapped


class _InferFromArgs:
    """`smap`'s default `in_axes`: JAX reads them off the arguments' shardings in types
    (Explicit mesh axes only)."""

    def __repr__(self):
        return "Infer"


Infer = _InferFromArgs()


def _axis_specs(axes, tree, what, axis_name) -> object:
    """`tree` with each leaf replaced by the `PartitionSpec` splitting dimension `axis`
    (its entry of the prefix `axes`) by `axis_name`; None: replicated. A negative axis
    counts from the end, as `smap`'s docstring says (JAX's names dimension 0 for
    every negative axis: registry entry smap_negative_axis_names_the_first_dimension)."""
    leaves, structure = tree_util.tree_flatten(tree)
    specs = []
    for axis, leaf in zip(broadcast_specs(axes, tree, what, caller="smap"), leaves):
        if axis is None:
            specs.append(PartitionSpec())
            continue
        ndim = len(aval_of(leaf).shape)
        if not -ndim <= axis < ndim:
            raise ValueError(f"smap {what} {axis} is out of range for a value of rank {ndim} "
                             f"(axes are in [-{ndim}, {ndim}))")
        specs.append(PartitionSpec(*[None] * (axis % ndim), axis_name))
    return tree_util.tree_unflatten(structure, specs)


def smap(f=None, /, *, in_axes=Infer, out_axes, axis_name):
    """`jax.smap`: `shard_map` of `f` over the one context-mesh axis `axis_name`
    (`jax.set_mesh`), the other mesh axes left to XLA. `in_axes`/`out_axes` say which
    dimension of each argument/result that axis splits (an int, None for a replicated
    value, or a tuple per positional argument), as `vmap`'s do, except that each
    instance of `f` sees a shard, not a slice."""
    if f is None:
        return lambda g: smap(g, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
    if isinstance(axis_name, (list, tuple)):
        raise TypeError(f"smap axis_name should be a `str` or a `Hashable`, but got "
                        f"{axis_name}")
    if in_axes is not Infer:
        if in_axes is not None and not isinstance(in_axes, (int, tuple)):
            raise TypeError(f"smap in_axes must be an int, None, jax.sharding.Infer, or a "
                            f"tuple of entries for the positional arguments, got {in_axes}")
        if not all(isinstance(a, int) for a in tree_util.tree_leaves(in_axes)):
            raise TypeError(f"smap in_axes must have ints or None as leaves, got {in_axes}")
    if not all(isinstance(a, int) for a in tree_util.tree_leaves(out_axes)):
        raise TypeError(f"smap out_axes must be an int, None, or a (nested) container of "
                        f"those, got {out_axes}")

    def mapped(*args):
        mesh = mesh_or_context(None, "smap")
        if axis_name not in mesh.axis_names:
            raise ValueError(f"smap axis_name {axis_name!r} is not an axis of the context "
                             f"mesh {tuple(mesh.axis_names)}")
        if in_axes is Infer:
            kind = dict(zip(mesh.axis_names, mesh.axis_types))[axis_name]
            # JAX infers the axes of Explicit axes from the arguments' types, which
            # minijax's types do not carry (docs/named_axes.md, "Not yet done").
            raise TypeError(f"smap: in_axes was not specified when axis_name={axis_name!r} "
                            f"is of type {kind}" + (
                                "; minijax does not infer them from the arguments' "
                                "shardings: pass in_axes" if "Explicit" in str(kind) else ""))
        return shard_map(
            f, mesh=mesh, in_specs=_axis_specs(in_axes, args, "in_axes", axis_name),
            out_specs=lambda outs: _axis_specs(out_axes, outs, "out_axes", axis_name),
            axis_names=frozenset({axis_name}))(*args)
    mapped.__name__ = f"smap({fun_name(f)})"
    return mapped
