"""Functions that build functions: `vectorize`, `apply_along_axis`, `apply_over_axes`,
`fromfunction`.

`vectorize` is `vmap` with NumPy's broadcasting, as in JAX: the function is written
for one element (or, with a gufunc `signature` such as "(m,n),(n)->(m)", for one set
of core dimensions), and each leading (loop) dimension of the broadcast inputs adds
one `vmap`. An input whose loop dimension has size 1 is not mapped along it (it is
squeezed and given `in_axes=None`), so nothing is broadcast into a large array; a
loop dimension where every input has size 1 is added back to the result at the end.
`apply_along_axis` is one `vmap` per other axis, and so is `fromfunction` (one per
axis of its grid: the function sees scalar indices, as in JAX).
"""
from __future__ import annotations

import functools
import re

from jax import tree_util

from ..frontend.vmap import vmap
from ._creation import arange, asarray
from ._promotion import shape_of, canonicalize_axis, static_int
from ._shape import broadcast_shapes, expand_dims, squeeze

__all__ = ["vectorize", "apply_along_axis", "apply_over_axes", "fromfunction"]

_DIMENSION_LIST = r"\((\w+(?:,\s*\w+)*)?\)"
_SIGNATURE = re.compile(rf"^\s*{_DIMENSION_LIST}(?:\s*,\s*{_DIMENSION_LIST})*\s*->"
                        rf"\s*{_DIMENSION_LIST}(?:\s*,\s*{_DIMENSION_LIST})*\s*$")


def _parse_signature(signature: str):
    """'(m,n),(n)->(m)' -> ([('m', 'n'), ('n',)], [('m',)])."""
    if not _SIGNATURE.match(signature):
        raise ValueError(f"vectorize: not a valid gufunc signature: {signature!r}")
    inputs, outputs = signature.split("->")

    def dims(side):
        return [tuple(d.strip() for d in group.split(",") if d.strip())
                for group in re.findall(r"\(([^()]*)\)", side)]
    return dims(inputs), dims(outputs)


def _core_sizes(args, core_dims):
    """The broadcast loop shape of the arguments and the size of each core dimension."""
    sizes = {}
    loop_shapes = []
    for position, (arg, dims) in enumerate(zip(args, core_dims)):
        shape = shape_of(arg)
        if len(shape) < len(dims):
            raise ValueError(f"vectorize: input {position} has shape {shape}, fewer "
                             f"dimensions than its core dimensions {dims}")
        core = shape[len(shape) - len(dims):]
        for name, size in zip(dims, core):
            if sizes.setdefault(name, size) != size:
                raise ValueError(f"vectorize: inconsistent size for core dimension "
                                 f"{name!r}: {sizes[name]} vs {size}")
        loop_shapes.append(shape[:len(shape) - len(dims)])
    return tuple(broadcast_shapes(*loop_shapes)), sizes


def _checked_outputs(func, sizes, output_dims):
    """`func`, checking that its outputs have the core shapes the signature says."""
    if output_dims is None:
        return func

    def checked(*args):
        out = func(*args)
        outs = out if isinstance(out, tuple) else (out,)
        if len(outs) != len(output_dims) or (len(output_dims) > 1
                                              and not isinstance(out, tuple)):
            raise TypeError(f"vectorize: the function returned {len(outs)} output(s) "
                            f"but the signature has {len(output_dims)}")
        for index, (value, dims) in enumerate(zip(outs, output_dims)):
            shape = shape_of(value)
            if len(shape) != len(dims):
                raise ValueError(f"vectorize: output {index} has shape {shape}, not the "
                                 f"{len(dims)} core dimension(s) {dims} of the signature")
            for name, size in zip(dims, shape):
                if sizes.setdefault(name, size) != size:
                    raise ValueError(f"vectorize: output {index} has size {size} for core "
                                     f"dimension {name!r}, which is {sizes[name]}")
        return out
    return checked


def _without_excluded(func, excluded, args, kwargs):
    """Bind the excluded positional arguments (and every keyword argument) into func.
    (JAX drops keyword arguments not named in `excluded`: a registered divergence.)"""
    static = {i: args[i] for i in excluded if isinstance(i, int) and i < len(args)}
    dynamic = [a for i, a in enumerate(args) if i not in static]

    def bound(*dynamic_args):
        it = iter(dynamic_args)
        full = [static[i] if i in static else next(it) for i in range(len(args))]
        return func(*full, **kwargs)
    return bound, dynamic


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """`pyfunc` mapped with `vmap` over the broadcast leading dimensions of its inputs.

    `excluded`: positions (or keyword names) of arguments passed through unmapped;
    every keyword argument is passed through unmapped. `signature`: a gufunc signature naming each input's and
    output's trailing core dimensions; without it every input is mapped elementwise."""
    if any(not isinstance(i, (int, str)) for i in excluded):
        raise TypeError(f"vectorize: excluded must hold argument positions (ints) or "
                        f"keyword names (strs), got {excluded!r}")
    if any(isinstance(i, int) and i < 0 for i in excluded):
        raise ValueError(f"vectorize: excluded={excluded!r} contains negative positions")
    if signature is not None and not isinstance(signature, str):
        raise TypeError(f"vectorize: signature must be a string, got {signature!r}")
    parsed = None if signature is None else _parse_signature(signature)

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        func, dynamic = _without_excluded(pyfunc, set(excluded), args, kwargs)
        if parsed is None:
            input_dims, output_dims = [()] * len(dynamic), None
        else:
            input_dims, output_dims = parsed
            if len(input_dims) != len(dynamic):
                raise TypeError(f"vectorize: the signature {signature!r} has "
                                f"{len(input_dims)} input(s), got {len(dynamic)}")
        # None arguments (allowed at scalar core positions) are passed through too.
        nones = {i for i, a in enumerate(dynamic) if a is None}
        if nones:
            if any(input_dims[i] for i in nones):
                raise ValueError(f"vectorize: cannot pass None where the signature "
                                 f"{signature!r} has core dimensions")
            func, dynamic = _without_excluded(func, nones, dynamic, {})
            input_dims = [d for i, d in enumerate(input_dims) if i not in nones]
        dynamic = [asarray(a) for a in dynamic]
        loop_shape, sizes = _core_sizes(dynamic, input_dims)
        mapped = _checked_outputs(func, sizes, output_dims)
        squeezed, filled_shapes = [], []
        for arg, dims in zip(dynamic, input_dims):
            shape = shape_of(arg)
            loop = shape[:len(shape) - len(dims)]
            ones = tuple(i for i, n in enumerate(loop) if n == 1)
            squeezed.append(squeeze(arg, ones) if ones else arg)
            filled_shapes.append((1,) * (len(loop_shape) - len(loop)) + loop)
        kept_axes = []
        for axis in reversed(range(len(loop_shape))):
            in_axes = tuple(None if shape[axis] == 1 else 0 for shape in filled_shapes)
            if all(a is None for a in in_axes):
                kept_axes.append(axis)
            else:
                mapped = vmap(mapped, in_axes)
        result = mapped(*squeezed)
        if not kept_axes:
            return result
        return tree_util.tree_map(lambda r: expand_dims(r, tuple(sorted(kept_axes))), result)
    return wrapped


def apply_along_axis(func1d, axis: int, arr, *args, **kwargs):
    """`func1d` applied to every 1-d slice of `arr` along `axis`; the slices' results
    (of any shape) take that axis's place."""
    arr = asarray(arr)
    ndim = len(shape_of(arr))
    axis = canonicalize_axis("apply_along_axis", axis, ndim)
    func = lambda slice_: func1d(slice_, *args, **kwargs)  # noqa: E731
    for _ in range(ndim - axis - 1):
        func = vmap(func, in_axes=-1, out_axes=-1)
    for _ in range(axis):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(arr)


def apply_over_axes(func, a, axes):
    """`a = func(a, axis)` for each axis in turn; a result one rank smaller gets the
    axis back (size 1), as a reduction with keepdims."""
    a = asarray(a)
    if not hasattr(axes, "__iter__"):
        raise TypeError(f"apply_over_axes: axes must be a sequence of axes (as in JAX), "
                        f"got {axes!r}")
    for axis in axes:
        before = len(shape_of(a))
        b = func(a, axis)
        if len(shape_of(b)) == before - 1:
            b = expand_dims(b, canonicalize_axis("apply_over_axes", axis, before))
        elif len(shape_of(b)) != before:
            raise ValueError("apply_over_axes: function is not returning an array of "
                             "the correct shape")
        a = b
    return a


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """The array whose element at `(i, j, ...)` is `function(i, j, ...)`. As in JAX
    (unlike NumPy), the function is vmapped, so it sees scalar indices."""
    shape = tuple(static_int("fromfunction", n, "shape") for n in
                  ((shape,) if isinstance(shape, int) else shape))
    for axis in range(len(shape)):
        in_axes = tuple(0 if other == axis else None for other in range(len(shape)))
        function = vmap(function, in_axes=in_axes[::-1])
    return function(*(arange(n, dtype=dtype) for n in shape), **kwargs)
