"""Contractions: `matmul`, `dot`, `vdot`, `inner`, `outer`, `tensordot`, `einsum`.

Everything lowers to one `dot_general` per pair of operands, with
`preferred_element_type` set to the result dtype as JAX does, plus the transposes,
squeezes and sums needed to put axes where NumPy says they go:

* `matmul` batches over leading axes with broadcasting. Batch axes present in both
  operands with equal sizes become `dot_general` batch dimensions; an axis that is
  1 (or missing) on one side is squeezed there and becomes a free dimension of the
  other side, so nothing is materialised by broadcasting. A final transpose restores
  NumPy's order when free batch axes were moved.
* `einsum` parses the subscripts itself (explicit `->` or NumPy's implicit output,
  ellipses broadcasting from the right), takes diagonals for repeated labels, sums
  labels used by one operand only, and contracts operands left to right.
"""
from __future__ import annotations

import builtins

import numpy as np

from .. import lax
from ..frontend.eager_jit import jitted_eagerly
from ._promotion import (as_operand, shape_of, dtype_of, promote_dtypes, convert, is_weak)
from ._dtypes import canonicalize_dtype
from ._creation import eye
from ._promotion import canonicalize_axis
from ._shape import ravel
from ._ufuncs import multiply


def _contract(lhs, rhs, contracting, batch, preferred=None, precision=None):
    dtype = dtype_of(lhs) if preferred is None else canonicalize_dtype(preferred)
    return lax.dot_general(lhs, rhs, (contracting, batch), precision=precision,
                           preferred_element_type=dtype)


def _promoted(fname, a, b, preferred):
    a, b = promote_dtypes(fname, a, b)
    return a, b, (dtype_of(a) if preferred is None else canonicalize_dtype(preferred, fname))


def _typed_result(fname, out, out_dtype, promoted_operand, preferred):
    """`out` as JAX types a product: `out_dtype`, weak exactly when the promoted
    operands are (a Python scalar factor included) and no preferred_element_type was
    asked for."""
    weak = preferred is None and is_weak(promoted_operand)
    return convert(fname, out, out_dtype, weak)


@jitted_eagerly("precision", "preferred_element_type")
def matmul(a, b, *, precision=None, preferred_element_type=None):
    """`a @ b` with NumPy's rules: 1-d operands are vectors, leading axes broadcast."""
    a, b, out_dtype = _promoted("matmul", a, b, preferred_element_type)
    a_shape, b_shape = shape_of(a), shape_of(b)
    if not a_shape or not b_shape:
        raise ValueError(f"matmul: operands must not be scalars, got shapes {a_shape} and "
                         f"{b_shape}; use multiply (*) for scalars")
    a_vec, b_vec = len(a_shape) == 1, len(b_shape) == 1
    a_k = a_shape[-1]
    b_k = b_shape[0] if b_vec else b_shape[-2]
    if a_k != b_k:
        raise TypeError(f"matmul: contracting dimensions differ: {a_shape} @ {b_shape} "
                         f"(sizes {a_k} and {b_k})")
    a_batch = a_shape[:-2] if not a_vec else ()
    b_batch = b_shape[:-2] if not b_vec else ()
    n_batch = builtins.max(len(a_batch), len(b_batch))
    a_offset, b_offset = n_batch - len(a_batch), n_batch - len(b_batch)

    batch_pairs, a_free_batch, b_free_batch = [], [], []  # output batch position, per kind
    a_squeeze, b_squeeze = [], []
    for i in range(n_batch):
        ai, bi = i - a_offset, i - b_offset
        da = a_batch[ai] if ai >= 0 else None
        db = b_batch[bi] if bi >= 0 else None
        if da is not None and db is not None and da == db:
            batch_pairs.append((i, ai, bi))
        elif da is not None and (db is None or db == 1):
            a_free_batch.append((i, ai))
            if db is not None:
                b_squeeze.append(bi)
        elif db is not None and (da is None or da == 1):
            b_free_batch.append((i, bi))
            if da is not None:
                a_squeeze.append(ai)
        else:
            raise ValueError(f"matmul: batch dimensions of {a_shape} and {b_shape} cannot "
                             f"be broadcast together")
    if a_squeeze:
        a = lax.squeeze(a, a_squeeze)
    if b_squeeze:
        b = lax.squeeze(b, b_squeeze)

    def renumber(axis, squeezed):
        return axis - builtins.sum(1 for s in squeezed if s < axis)

    a_nd, b_nd = len(shape_of(a)), len(shape_of(b))
    contracting = ((a_nd - 1,), (0,) if b_vec else (b_nd - 2,))
    batch = (tuple(renumber(ai, a_squeeze) for _, ai, _ in batch_pairs),
             tuple(renumber(bi, b_squeeze) for _, _, bi in batch_pairs))
    out = _contract(a, b, contracting, batch, out_dtype, precision)
    # dot_general's order: batch, a's free (batch axes, then m), b's free (batch, n).
    order = ([i for i, _, _ in batch_pairs] + [i for i, _ in a_free_batch]
             + ([] if a_vec else ["m"]) + [i for i, _ in b_free_batch]
             + ([] if b_vec else ["n"]))
    wanted = list(range(n_batch)) + ([] if a_vec else ["m"]) + ([] if b_vec else ["n"])
    if order != wanted:
        out = lax.transpose(out, [order.index(w) for w in wanted])
    return _typed_result("matmul", out, out_dtype, a, preferred_element_type)


@jitted_eagerly("precision", "preferred_element_type")
def dot(a, b, *, precision=None, preferred_element_type=None):
    """NumPy's `dot`: scalars multiply; otherwise contract a's last axis with b's last
    (1-d b) or second-to-last axis, without batching."""
    a, b, out_dtype = _promoted("dot", a, b, preferred_element_type)
    a_shape, b_shape = shape_of(a), shape_of(b)
    if not a_shape or not b_shape:
        return _typed_result("dot", multiply(a, b), out_dtype, a, preferred_element_type)
    b_axis = 0 if len(b_shape) == 1 else len(b_shape) - 2
    if a_shape[-1] != b_shape[b_axis]:
        raise TypeError(f"dot: shapes {a_shape} and {b_shape} are not aligned: "
                         f"{a_shape[-1]} (axis {len(a_shape) - 1}) != {b_shape[b_axis]} "
                         f"(axis {b_axis})")
    out = _contract(a, b, ((len(a_shape) - 1,), (b_axis,)), ((), ()), out_dtype, precision)
    return _typed_result("dot", out, out_dtype, a, preferred_element_type)


@jitted_eagerly("precision", "preferred_element_type")
def vdot(a, b, *, precision=None, preferred_element_type=None):
    """The dot product of the flattened arrays, the first one conjugated."""
    a, b, out_dtype = _promoted("vdot", a, b, preferred_element_type)
    if dtype_of(a).kind == "c":
        a = lax.conj(a)
    a, b = ravel(a), ravel(b)
    if shape_of(a) != shape_of(b):
        raise TypeError(f"vdot: operands have different sizes {shape_of(a)[0]} and "
                         f"{shape_of(b)[0]}")
    out = _contract(a, b, ((0,), (0,)), ((), ()), out_dtype, precision)
    return _typed_result("vdot", out, out_dtype, a, preferred_element_type)


@jitted_eagerly("precision", "preferred_element_type")
def inner(a, b, *, precision=None, preferred_element_type=None):
    """Contract the last axes of `a` and `b`."""
    a, b, out_dtype = _promoted("inner", a, b, preferred_element_type)
    a_shape, b_shape = shape_of(a), shape_of(b)
    if not a_shape or not b_shape:
        return _typed_result("inner", multiply(a, b), out_dtype, a, preferred_element_type)
    if a_shape[-1] != b_shape[-1]:
        raise TypeError(f"inner: last dimensions differ: {a_shape} and {b_shape}")
    out = _contract(a, b, ((len(a_shape) - 1,), (len(b_shape) - 1,)), ((), ()),
                    out_dtype, precision)
    return _typed_result("inner", out, out_dtype, a, preferred_element_type)


@jitted_eagerly()
def outer(a, b, out=None):
    """Every product `a[i] * b[j]` of the flattened arrays."""
    if out is not None:
        raise NotImplementedError("outer: the out argument is not supported")
    a, b = ravel(as_operand("outer", a)), ravel(as_operand("outer", b))
    return multiply(lax.expand_dims(a, (1,)), lax.expand_dims(b, (0,)))


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """Contract the last `axes` axes of `a` with the first of `b`, or the axes listed
    in a pair of sequences."""
    a, b, out_dtype = _promoted("tensordot", a, b, preferred_element_type)
    a_shape, b_shape = shape_of(a), shape_of(b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > builtins.min(len(a_shape), len(b_shape)):
            raise ValueError(f"tensordot: axes={n} is invalid for shapes {a_shape} and "
                             f"{b_shape}")
        a_axes = tuple(range(len(a_shape) - n, len(a_shape)))
        b_axes = tuple(range(n))
    else:
        try:
            a_axes, b_axes = axes
        except (TypeError, ValueError):
            raise TypeError(f"tensordot: axes must be an int or a pair of sequences, got "
                            f"{axes!r}") from None
        a_axes = (a_axes,) if isinstance(a_axes, int) else tuple(a_axes)
        b_axes = (b_axes,) if isinstance(b_axes, int) else tuple(b_axes)
        if len(a_axes) != len(b_axes):
            raise ValueError(f"tensordot: {len(a_axes)} axes of a but {len(b_axes)} of b")
        a_axes = tuple(canonicalize_axis("tensordot", x, len(a_shape)) for x in a_axes)
        b_axes = tuple(canonicalize_axis("tensordot", x, len(b_shape)) for x in b_axes)
    for i, j in zip(a_axes, b_axes):
        if a_shape[i] != b_shape[j]:
            raise TypeError(f"tensordot: axis {i} of {a_shape} and axis {j} of {b_shape} "
                             f"have different sizes")
    out = _contract(a, b, (a_axes, b_axes), ((), ()), out_dtype, precision)
    return _typed_result("tensordot", out, out_dtype, a, preferred_element_type)


# -- einsum ---------------------------------------------------------------------------------

def _parse_einsum(subscripts, shapes):
    """Labels per operand and for the output. Letters label themselves; the axes an
    ellipsis covers are labelled ('...', k), numbered so they align from the right."""
    spec = subscripts.replace(" ", "")
    if "->" in spec:
        inputs, output = spec.split("->")
    else:
        inputs, output = spec, None
    input_specs = inputs.split(",")
    if len(input_specs) != len(shapes):
        raise ValueError(f"einsum: {subscripts!r} names {len(input_specs)} operands but "
                         f"{len(shapes)} were given")
    n_ellipsis = 0
    for s, shape in zip(input_specs, shapes):
        if "..." in s:
            n_ellipsis = builtins.max(n_ellipsis, len(shape) - (len(s) - 3))

    def labels_of(s, ndim=None):
        if not builtins.all(c.isalpha() for c in s.replace("...", "")) or s.count("...") > 1:
            raise ValueError(f"einsum: invalid subscripts {s!r} in {subscripts!r}")
        if "..." not in s:
            return list(s)
        before, after = s.split("...")
        count = n_ellipsis if ndim is None else ndim - len(before) - len(after)
        return list(before) + [("...", n_ellipsis - count + i) for i in range(count)] + list(after)

    in_labels = []
    for s, shape in zip(input_specs, shapes):
        labels = labels_of(s, len(shape))
        if len(labels) != len(shape):
            raise ValueError(f"einsum: subscripts {s!r} have {len(labels)} labels for an "
                             f"operand of shape {shape}")
        in_labels.append(labels)
    if output is None:
        letters = [c for labels in in_labels for c in labels if isinstance(c, str)]
        singles = sorted(c for c in set(letters) if letters.count(c) == 1)
        out_labels = [("...", i) for i in range(n_ellipsis)] + singles
    else:
        out_labels = labels_of(output)
        if len(set(out_labels)) != len(out_labels):
            raise ValueError(f"einsum: output subscripts {output!r} repeat a label")
        known = {c for labels in in_labels for c in labels}
        missing = [c for c in out_labels if c not in known]
        if missing:
            raise ValueError(f"einsum: output label {missing[0]!r} does not appear in the "
                             f"inputs of {subscripts!r}")
    return in_labels, out_labels


def _take_diagonals(x, labels):
    """Merge repeated labels of one operand by taking the diagonal."""
    while len(set(labels)) != len(labels):
        label = next(c for c in labels if labels.count(c) > 1)
        p = labels.index(label)
        q = labels.index(label, p + 1)
        dims = shape_of(x)
        mask = lax.broadcast_in_dim(eye(dims[p], dtype=bool), dims, (p, q))
        x = lax.reduce_sum(lax.select(mask, x, lax.broadcast_in_dim(
            convert("einsum", 0, dtype_of(x)), dims, ())), (q,))
        labels = labels[:q] + labels[q + 1:]
    return x, labels


def _sum_labels(x, labels, needed):
    axes = tuple(i for i, c in enumerate(labels) if c not in needed)
    if axes:
        x = lax.reduce_sum(x, axes)
        labels = [c for c in labels if c in needed]
    return x, labels


def einsum(subscripts, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None, _dot_general=None):
    """`jnp.einsum` with string subscripts (explicit `->` or implicit output, `...`),
    or in the interleaved form `einsum(x, [0, 1], y, [1, 2], [0, 2])`."""
    if out is not None:
        raise NotImplementedError("einsum: the out argument is not supported")
    if not isinstance(subscripts, str):
        subscripts, operands = _interleaved_subscripts((subscripts,) + operands)
    if not operands:
        raise ValueError("einsum: at least one operand is required")
    return _einsum(subscripts, *operands, precision=precision,
                   preferred_element_type=preferred_element_type)


# JAX jits einsum's contraction with the subscripts (its parsed form) static, so an
# eager call is one program per (subscripts, shapes); the interleaved form is turned
# into subscripts first, so that its lists of labels never reach the compiled call.
@jitted_eagerly("subscripts", "precision", "preferred_element_type")
def _einsum(subscripts, *operands, precision=None, preferred_element_type=None):
    operands = promote_dtypes("einsum", *operands)
    out_dtype = (dtype_of(operands[0]) if preferred_element_type is None
                 else canonicalize_dtype(preferred_element_type, "einsum"))
    in_labels, out_labels = _parse_einsum(subscripts, [shape_of(x) for x in operands])
    sizes = {}
    for x, labels in zip(operands, in_labels):
        for c, n in zip(labels, shape_of(x)):
            if n != 1 and sizes.get(c, n) != n and sizes.get(c, 1) != 1:
                raise ValueError(f"einsum: label {c!r} has sizes {sizes[c]} and {n} in "
                                 f"{subscripts!r}")
            if n != 1 or c not in sizes:
                sizes[c] = n

    items = []
    for x, labels in zip(operands, in_labels):
        x = convert("einsum", x, dtype_of(x))
        x, labels = _take_diagonals(x, list(labels))
        items.append((x, labels))

    def needed_after(index):
        rest = {c for _, labels in items[index:] for c in labels}
        return rest | set(out_labels)

    x, labels = items[0]
    x, labels = _sum_labels(x, labels, needed_after(1))
    for i in range(1, len(items)):
        y, y_labels = items[i]
        keep = needed_after(i + 1)
        x, labels, y, y_labels = _broadcast_size_one(x, labels, y, y_labels)
        x, labels = _sum_labels(x, labels, keep | set(y_labels))
        y, y_labels = _sum_labels(y, y_labels, keep | set(labels))
        shared = [c for c in labels if c in y_labels]
        batch = [c for c in shared if c in keep]
        contract = [c for c in shared if c not in keep]
        x = _contract(
            x, y, (tuple(labels.index(c) for c in contract),
                   tuple(y_labels.index(c) for c in contract)),
            (tuple(labels.index(c) for c in batch), tuple(y_labels.index(c) for c in batch)),
            out_dtype, precision)
        labels = (batch + [c for c in labels if c not in shared]
                  + [c for c in y_labels if c not in shared])
    x, labels = _sum_labels(x, labels, set(out_labels))
    missing = [c for c in out_labels if c not in labels]
    if missing:  # an ellipsis axis that only ever had size 1 and was squeezed away
        x = lax.expand_dims(x, tuple(range(len(missing))))
        labels = missing + labels
    perm = [labels.index(c) for c in out_labels]
    if perm != list(range(len(perm))):
        x = lax.transpose(x, perm)
    if len(operands) == 1:
        x = convert("einsum", x, out_dtype)
    return x


def _einsum_letter(index):
    """The `index`-th label letter, as opt_einsum (and so JAX) numbers them: the 52
    ASCII letters, then letters from chr(192) on."""
    if index < 52:
        return "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[index]
    return chr(index + 140)


def _interleaved_subscripts(args):
    """`(x, [0, 1], y, [1, 2], [0, 2])` as `('ab,bc->ac', (x, y))`: operands alternate
    with lists of axis labels (any sortable hashables, or Ellipsis), an optional
    output list last. The labels are renamed to letters in their sorted order."""
    operands = args[0:len(args) // 2 * 2:2]
    sublists = [list(s) for s in args[1:len(args) // 2 * 2:2]]
    output = list(args[-1]) if len(args) % 2 else None
    try:
        labels = sorted({label for s in sublists for label in s} - {Ellipsis})
    except TypeError:  # unhashable, or not comparable with the others
        raise TypeError("For this input type lists must contain either Ellipsis or "
                        "hashable and comparable object (e.g. int, str).") from None
    letters = {label: _einsum_letter(i) for i, label in enumerate(labels)}

    def subscript(sublist):
        unknown = [label for label in sublist if label is not Ellipsis
                   and label not in letters]
        if unknown:
            raise ValueError(f"einsum: output label {unknown[0]!r} is not an input label")
        return "".join("..." if label is Ellipsis else letters[label] for label in sublist)

    inputs = ",".join(subscript(s) for s in sublists)
    if output is None:
        return inputs, operands
    return f"{inputs}->{subscript(output)}", operands


def _broadcast_size_one(x, labels, y, y_labels):
    """A label of size 1 on one side and n on the other (ellipsis broadcasting) is
    squeezed from the size-1 side, leaving it a free axis of the other."""
    x_shape, y_shape = shape_of(x), shape_of(y)
    x_drop = [i for i, c in enumerate(labels) if c in y_labels and x_shape[i] == 1
              and y_shape[y_labels.index(c)] != 1]
    y_drop = [i for i, c in enumerate(y_labels) if c in labels and y_shape[i] == 1
              and x_shape[labels.index(c)] != 1]
    if x_drop:
        x = lax.squeeze(x, x_drop)
        labels = [c for i, c in enumerate(labels) if i not in x_drop]
    if y_drop:
        y = lax.squeeze(y, y_drop)
        y_labels = [c for i, c in enumerate(y_labels) if i not in y_drop]
    return x, labels, y, y_labels


@jitted_eagerly()
def kron(a, b):
    """The Kronecker product: blocks `a[i, j] * b`."""
    a, b = as_operand("kron", a), as_operand("kron", b, 1)
    n = builtins.max(len(shape_of(a)), len(shape_of(b)))
    a_shape = (1,) * (n - len(shape_of(a))) + shape_of(a)
    b_shape = (1,) * (n - len(shape_of(b))) + shape_of(b)
    a_wide = lax.reshape(a, tuple(d for s in a_shape for d in (s, 1)))
    b_wide = lax.reshape(b, tuple(d for s in b_shape for d in (1, s)))
    out = multiply(a_wide, b_wide)
    return lax.reshape(out, tuple(p * q for p, q in zip(a_shape, b_shape)))


__all__ = ["matmul", "dot", "vdot", "inner", "outer", "tensordot", "einsum", "kron"]
