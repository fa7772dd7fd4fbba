"""Integer parameters of `minijax.lax` functions (sizes, axes, indices, counts), checked
as JAX checks them: a float, even an integral one (`2.0`, `np.float32(2)`), is a
TypeError naming the parameter, never rounded with `int()`.

Rounding would also let `(2.0,)` reach a program compiled for `(2,)`, since eager
dispatch and the tracing caches key on equal values (`2.0 == 2`). NumPy integers and
concrete integer arrays pass (`operator.index`); a tracer's own error (a
ConcretizationTypeError) is left as it is.
"""
from __future__ import annotations

import operator


def _index(fname, name, value, what):
    try:
        return operator.index(value)
    except TypeError as e:
        if type(e) is not TypeError:      # a tracer's concretization error
            raise
        where = f"{fname}: " if fname else ""
        raise TypeError(f"{where}{name} must be {what}, got {value!r} of type "
                        f"{type(value).__name__}") from None


def index(fname: str, name: str, value) -> int:
    """`value` as a Python int, or a TypeError naming `fname`'s parameter `name`."""
    if type(value) is int:
        return value
    return _index(fname, name, value, "an integer")


def indices(fname: str, name: str, values) -> tuple:
    """The sequence `values` as a tuple of Python ints (the same check per element).
    `fname` may be None where the parameter's name says enough."""
    try:
        items = tuple(values)
    except TypeError:
        where = f"{fname}: " if fname else ""
        raise TypeError(f"{where}{name} must be a sequence of integers, got "
                        f"{values!r}") from None
    return tuple(v if type(v) is int else _index(fname, name, v, "integers")
                 for v in items)


def shape(fname: str, name: str, value) -> tuple:
    """A shape argument as JAX's `canonicalize_shape` takes it: a Python int is the
    shape of one axis (`random.normal(key, 3)`, `lax.reshape(x, 6)`), anything else a
    sequence of integers. A NumPy integer is not a Python int, so it is refused, as
    in JAX."""
    return (int(value),) if isinstance(value, int) else indices(fname, name, value)


def distinct_axes(fname: str, dimensions, ndim: int) -> tuple:
    """`dimensions` made non-negative and sorted, checked as JAX's lax checks them: an
    axis out of range or repeated is a ValueError."""
    axes = []
    for d in indices(fname, "dimensions", dimensions):
        if not -ndim <= d < ndim:
            raise ValueError(f"{fname}: axis {d} is out of bounds for array of "
                             f"dimension {ndim}")
        axes.append(d % ndim)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{fname}: repeated axis in {tuple(axes)}")
    return tuple(sorted(axes))
