"""JAX's params on minijax's primitives: what `Primitive.bind` does with the params
of JAX's own equations.

A program written against JAX's primitive objects (`lax.exp_p.bind(x, accuracy=None)`,
a custom interpreter replaying `eqn.params` of JAX's jaxpr) binds minijax's primitive
with JAX's params. One adapter per primitive translates them: JAX-only params at
their neutral value (`accuracy=None`, `sharding=None`, `out_sharding=None`, ...) are
dropped, and JAX's parameter objects (`GatherDimensionNumbers`, `FftType`,
`RandomAlgorithm`, `GatherScatterMode`, `Precision`) become minijax's plain params.
A JAX-only param with a value minijax cannot honour is refused by name. Primitives
whose params are jaxprs (`cond`, `while`, `scan`, the custom-derivative calls,
`linear_solve`) take minijax's own params, as minijax's equations hold them.

The `bind` method loads this module on its first use with params; most of minijax
binds through `trace.bind`, which takes minijax's params only.
"""
from __future__ import annotations

from .registry import primitives_by_name


def _refuse(prim, key, value, why="minijax's primitive has no such parameter"):
    raise NotImplementedError(
        f"{prim}.bind: JAX's parameter {key}={value!r} is not supported ({why}); "
        f"bind it with {key} left at its default")


def _enum_name(value):
    return str(getattr(value, "name", value))


def _dropping(prim, neutral):
    """An adapter that drops JAX-only params whose value is `neutral[key]`."""
    def adapt(args, params):
        if not params.keys() & neutral.keys():
            return params
        out = {}
        for key, value in params.items():
            if key not in neutral:
                out[key] = value
            elif not _is_neutral(value, neutral[key]):
                _refuse(prim, key, value)
        return out
    return adapt


def _is_neutral(value, neutral):
    if neutral is None:
        return value is None
    if isinstance(neutral, frozenset):
        return value in neutral
    return value == neutral


def _conj_adapter(args, params):
    # JAX records the operand's dtype, which the operand itself already says.
    params = dict(params)
    params.pop("input_dtype", None)
    return params


def _fft_adapter(args, params):
    if "fft_type" in params:
        params = dict(params, fft_type=_enum_name(params["fft_type"]).upper())
    return params


def _rng_bit_adapter(args, params):
    params = _drop(params, out_sharding=None, prim="rng_bit_generator")
    if "algorithm" in params and not isinstance(params["algorithm"], int):
        params["algorithm"] = int(params["algorithm"].value)
    return params


def _drop(params, *, prim, **neutral):
    return _dropping(prim, neutral)((), params)


# `unique_indices` / `indices_are_sorted` only let XLA pick a faster kernel: dropping
# either keeps the result.
_PROMISE = frozenset({False, True})


def _mode(value):
    mode = _enum_name(value).lower()
    # An in-bounds promise allows any out-of-bounds behaviour; clamping is one.
    return {"fill_or_drop": "fill", "promise_in_bounds": "clip"}.get(mode, mode)


def _gather_adapter(args, params):
    if "dimension_numbers" not in params:
        return params
    params = _drop(dict(params), prim="gather", unique_indices=_PROMISE,
                   indices_are_sorted=_PROMISE, fill_value=None)
    d = params.pop("dimension_numbers")
    if tuple(getattr(d, "operand_batching_dims", ())):
        _refuse("gather", "operand_batching_dims", d.operand_batching_dims)
    return dict(params, offset_dims=tuple(d.offset_dims),
                collapsed_slice_dims=tuple(d.collapsed_slice_dims),
                start_index_map=tuple(d.start_index_map), mode=_mode(params["mode"]))


def _scatter_adapter(name):
    def adapt(args, params):
        if "dimension_numbers" not in params:
            return params
        params = dict(params)
        # JAX's scatter carries the combining function as a jaxpr; minijax's
        # primitive is that function (scatter_add adds), so the jaxpr says nothing more.
        params.pop("update_jaxpr", None)
        params = _drop(params, prim=name, update_consts=(), unique_indices=_PROMISE,
                       indices_are_sorted=_PROMISE)
        d = params.pop("dimension_numbers")
        if tuple(getattr(d, "operand_batching_dims", ())):
            _refuse(name, "operand_batching_dims", d.operand_batching_dims)
        return dict(params, update_window_dims=tuple(d.update_window_dims),
                    inserted_window_dims=tuple(d.inserted_window_dims),
                    scatter_dims_to_operand_dims=tuple(d.scatter_dims_to_operand_dims),
                    mode=_mode(params.get("mode", "fill")))
    return adapt


def _one_name(names):
    # JAX's equations spell one axis as a 1-tuple; minijax's as the name itself.
    return names[0] if isinstance(names, tuple) and len(names) == 1 else names


def _all_gather_adapter(args, params):
    if "all_gather_dimension" not in params:
        return params
    params = _drop(dict(params), prim="all_gather", axis_index_groups=None)
    return dict(params, axis=params.pop("all_gather_dimension"),
                axis_name=_one_name(params["axis_name"]))


def _contraction_adapter(name):
    drop = _dropping(name, _NEUTRAL[name])

    def adapt(args, params):
        params = drop(args, params)
        # JAX's equations hold a pair of `Precision` members or a `DotAlgorithmPreset`
        # (what `jax_default_matmul_precision` fills in, too); minijax's hold the names.
        precision = params.get("precision")
        if isinstance(precision, tuple):
            return dict(params, precision=tuple(_enum_name(p) for p in precision))
        if precision is not None:
            return dict(params, precision=_enum_name(precision))
        return params
    return adapt


def _ppermute_adapter(args, params):
    return dict(params, axis_name=_one_name(params["axis_name"]))


_ACCURACY = {"accuracy": None}
_NEUTRAL = {
    **{name: _ACCURACY for name in "cbrt cos erfc exp exp2 expm1 log log1p log2 logistic "
                                   "rsqrt sin sqrt tan tanh".split()},
    "mul": {"out_dtype": None},
    **{name: {"out_sharding": None} for name in
       "reduce_sum reduce_max reduce_min reduce_prod reduce_and reduce_or dot_general "
       "conv_general_dilated".split()},
    **{name: {"sharding": None} for name in
       "broadcast_in_dim iota reshape convert_element_type".split()},
    # minijax's equations hold axis_index_groups only where groups are given
    **{name: {"axis_index_groups": None} for name in ("psum", "pmax", "pmin")},
    "eigh": {"subset_by_index": None, "algorithm": None},
    "svd": {"subset_by_index": None, "algorithm": None},
    "qr": {"pivoting": False, "use_magma": None},
    "eig": {"implementation": None},
    "schur": {"sort_eig_vals": False, "select_callable": None},
}


def _adapters_by_name():
    table = {name: _dropping(name, neutral) for name, neutral in _NEUTRAL.items()}
    table.update((name, _contraction_adapter(name))
                 for name in ("dot_general", "conv_general_dilated"))
    table.update(conj=_conj_adapter, fft=_fft_adapter, rng_bit_generator=_rng_bit_adapter,
                 gather=_gather_adapter, all_gather=_all_gather_adapter,
                 ppermute=_ppermute_adapter)
    table.update((name, _scatter_adapter(name)) for name in
                 ("scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"))
    return table


_ADAPTERS = _adapters_by_name()       # primitive name -> adapter; fixed at import


def adapt(prim, args, params):
    """`params` for `prim.bind`: JAX's translated into minijax's own; minijax's own,
    and any params of a primitive of the user's (which may share a catalogue name),
    pass through as they are."""
    adapter = _ADAPTERS.get(prim.name)
    if adapter is None or primitives_by_name.get(prim.name) is not prim:
        return params
    return adapter(args, params)
