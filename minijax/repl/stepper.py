"""`:eval` and `:step`: a jaxpr run by the NumPy reference evaluator.

Read `minijax/backends/reference.py` first: its `eval_jaxpr` calls an `on_equation`
hook after every equation, and a ref is a `RefBox` whose contents change in place.
This module feeds it the target's inputs (refs copied into fresh boxes, so the
user's own refs are left alone) and, for `:step`, prints each equation as the
printer wrote it, the values it produced, and every ref whose contents changed.

Names come from the printed text, so what `:step` shows matches what `:ir` shows:
the header gives the inputs' names, each equation's left-hand side its outputs'.
"""
from __future__ import annotations

import re

import numpy as np

import minijax
from minijax.backends.reference import eval_jaxpr, RefBox
from minijax.ir import RefType

from .targets import Target, trace

_BINDER = re.compile(r"\b([a-z]+):")


def _box(value, aval):
    """A fresh box holding a copy of a ref's contents (refs are never shared with
    the user's session), or the array itself."""
    if isinstance(value, RefBox):
        return RefBox(value.value)
    if isinstance(value, minijax.Ref):
        return RefBox(np.asarray(minijax.ref.get(value)))
    if isinstance(aval, RefType):
        return RefBox(np.asarray(value, aval.inner.dtype))
    return value


def split_listing(text: str) -> tuple[str, list[str], str]:
    """Printed jaxpr -> (header line, one text chunk per top-level equation, tail).

    Top-level equations start at column 4; longer indentation, and a `]` at column 4
    closing a multi-line param list, continue the equation above."""
    lines = text.splitlines()
    header, body, tail = lines[0], [], []
    for i, line in enumerate(lines[1:], 1):
        if line.startswith("  in "):
            tail = lines[i:]
            break
        starts_eqn = line.startswith("    ") and line[4:5] not in (" ", "]")
        if starts_eqn or not body:
            body.append(line)
        else:
            body[-1] += "\n" + line
    return header, body, "\n".join(tail)


def _lhs_names(chunk: str) -> list[str]:
    first = chunk.splitlines()[0]
    for arrow in (" = ", " <- ", " += "):
        if arrow in first:
            return _BINDER.findall(first.split(arrow, 1)[0])
    return []


def run(session, target: Target, step: bool):
    closed = trace(target)
    jaxpr = closed.jaxpr
    leaves = minijax.tree_util.tree_leaves((tuple(target.args), target.kwargs),
                         is_leaf=lambda x: isinstance(x, minijax.Ref))
    if len(leaves) != len(jaxpr.invars):
        raise ValueError(f"the jaxpr takes {len(jaxpr.invars)} inputs; the call passes "
                         f"{len(leaves)}")
    consts = [_box(c, v.aval) for c, v in zip(closed.consts, jaxpr.constvars)]
    args = [_box(a, v.aval) for a, v in zip(leaves, jaxpr.invars)]
    header, chunks, _ = split_listing(str(closed))
    names = _BINDER.findall(header)
    box_names = {id(box): name for box, name in zip(consts + args, names)
                 if isinstance(box, RefBox)}
    seen = {id(box): np.array(box.value) for box in consts + args if isinstance(box, RefBox)}
    boxes = {id(box): box for box in consts + args if isinstance(box, RefBox)}
    if step:
        session.show_ir(header)
        for name, value in zip(names, consts + args):
            session.say(f"  {name} = {session.format(value)}")
    counter = iter(range(len(chunks)))

    def on_equation(eqn, in_values, out_values):
        index = next(counter)
        outs = _lhs_names(chunks[index]) if index < len(chunks) else []
        for value, name in zip([v for v, var in zip(out_values, eqn.outputs)], outs):
            if isinstance(value, RefBox):
                box_names[id(value)] = name
                boxes[id(value)] = value
        if not step:
            return
        session.show_ir(f"[{index}] " + chunks[index].strip() if index < len(chunks)
                        else f"[{index}] {eqn.primitive.name}")
        shown = [(name, value) for name, value in zip(outs, out_values)
                 if not isinstance(value, RefBox)]
        if shown:
            session.say("      " + ", ".join(f"{n} = {session.format(v)}" for n, v in shown))
        for box in [v for v in list(in_values) + list(out_values) if isinstance(v, RefBox)]:
            before = seen.get(id(box))
            now = np.array(box.value)
            label = box_names.get(id(box), "ref")
            if before is None:
                session.say(f"      ref {label} := {session.format(now)}")
            elif before.shape != now.shape or not np.array_equal(before, now, equal_nan=True):
                session.say(f"      ref {label}: {session.format(before)} -> "
                            f"{session.format(now)}")
            seen[id(box)] = now
            if box.state != "live":
                session.say(f"      ref {label} is now {box.state}")

    outs = eval_jaxpr(jaxpr, consts, *args, on_equation=on_equation)
    for i, value in enumerate(outs):
        session.say(f"out[{i}] = {session.format(value)}")
    for key, box in boxes.items():
        if any(box is a for a in consts + args):
            session.say(f"ref {box_names.get(key, '?')} = {session.format(box.value)}"
                        + ("" if box.state == "live" else f" [{box.state}]"))
