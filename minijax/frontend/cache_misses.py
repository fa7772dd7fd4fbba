"""`jax_explain_cache_misses`: why a `jit` call traced again.

With the flag on, a `minijax.jit` call that finds no trace for its arguments logs
(logger `minijax`, level WARNING) why, before it traces: either the function was never
seen, or -- against the closest key traced before, the one with the fewest
differences -- every difference there is, by kind, each naming the argument it is
in:

* the tracing context (the JAX flags and context mesh a trace depends on),
* the structure of the arguments (a pytree node's type, length, keys or metadata),
* the value of a static argument,
* an argument's type: shape, dtype or weak type.

The words are JAX's (`TRACING CACHE MISS at ...`, `different input types:`,
`* at x, now f32[4] and before f32[3]`) where the facts are the same. JAX reports
only the first kind that differs and names places in a pytree by input path
(`[0][1]`); minijax names the argument (`y['w']`), reports a static argument's
old and new value (JAX 0.11 and 0.12 report none, and may name an unrelated
argument's type instead), and reports every kind that differs. As in JAX, functions
defined inside the library (minijax's own jnp functions) are not explained.
"""
from __future__ import annotations

import inspect
import logging

from jax import tree_util

from ..ir.source_info import internal_files, user_source_info

logger = logging.getLogger("minijax")
WEAK_TYPES_URL = "https://docs.jax.dev/en/latest/type_promotion.html#weak-types"
# call sites that saw a never-seen function: a second one there is a function
# defined again on each call (a lambda in a loop), which no cache can serve
_sites_with_new_functions: set = set()


def explain_cache_miss(fun, traces: dict, key: tuple):
    """Log why `fun`'s call missed `traces` (its `jit` cache), whose key for this call
    is `key` (`tracing.staging_key`: tree, avals, static arguments, context)."""
    code = getattr(fun, "__code__", None)
    if code is not None and internal_files[code.co_filename]:
        return
    site = user_source_info(1)
    lines = [f"TRACING CACHE MISS at {site if site is not None else '<unknown>'}:"]
    name = getattr(fun, "__name__", repr(fun))
    defined = "" if code is None else f" defined at {code.co_filename}:{code.co_firstlineno}"
    if not traces:
        lines.append(f"  never seen function:\n    {name} id={id(fun)}{defined}")
        if str(site) in _sites_with_new_functions:
            lines.append("  but seen another function defined on the same line; maybe the "
                         "function is\n  being re-defined repeatedly, preventing caching?")
        _sites_with_new_functions.add(str(site))
        logger.warning("\n".join(lines))
        return
    names = _ArgumentNames(fun, key)
    # (among equally close keys, the first by text, as JAX picks)
    closest = min((_differences(key, old, names) for old in traces),
                  key=lambda diffs: (_count(diffs), repr(diffs)))
    lines.append(f"  for {name}{defined}")
    lines.append("  all previously seen cache keys differ. For the closest previous key:")
    for title, items in closest:
        lines.append(f"  {title}:")
        lines.extend(f"  * {item}" for item in items)
        if title == "different input types" and any("{weak_type=" in i for i in items):
            lines.append(f"  (on weak types: {WEAK_TYPES_URL})")
    logger.warning("\n".join(lines))


def _count(differences) -> int:
    return sum(len(items) for _, items in differences)


def _differences(new: tuple, old: tuple, names) -> list:
    """[(kind, [difference, ...])] between two cache keys, the kinds that differ."""
    new_tree, new_avals, new_static, *new_context = new
    old_tree, old_avals, old_static, *old_context = old
    out = []
    if new_context != old_context:
        out.append(("different tracing context (JAX flags, context mesh, named axes)",
                    [f"now {_context_text(new_context)} and before "
                     f"{_context_text(old_context)}"]))
    tree_errors = list(_tree_errors((), new_tree, old_tree, names))
    if tree_errors:
        out.append(("different input pytree", tree_errors))
    statics = _static_differences(new_static, old_static, names)
    if statics:
        out.append(("different static arguments", statics))
    if not tree_errors:       # the same leaves in the same places: compare their types
        types = [f"at {leaf_name}, now {_type_text(a, b)} and before {_type_text(b, a)}"
                 for leaf_name, a, b in zip(names.leaves(new_tree), new_avals, old_avals)
                 if a != b]
        if types:
            out.append(("different input types", types))
    return out


def _context_text(context) -> str:
    static_indices, *rest = context
    parts = [f"jax_check_static_indices={static_indices}"]
    for item in rest:
        if isinstance(item, tuple) and len(item) == 2 and item[0] == "context mesh":
            parts.append(f"context mesh {item[1]}")
        else:
            parts.append(f"named axes {item}")
    return ", ".join(parts)


def _type_text(aval, other) -> str:
    """`f32[3]` as JAX writes an input type here; `{weak_type=...}` where that is what
    differs from `other`."""
    text = aval.str_short(short_dtypes=True)
    if getattr(aval, "weak_type", False) != getattr(other, "weak_type", False):
        text += f"{{weak_type={getattr(aval, 'weak_type', False)}}}"
    return text


def _static_differences(new, old, names) -> list:
    (new_pos, new_kw), (old_pos, old_kw) = new, old
    out = []
    for kind, new_items, old_items in (("position", new_pos, old_pos),
                                       ("keyword", new_kw, old_kw)):
        new_map, old_map = dict(new_items), dict(old_items)
        for where in sorted(set(new_map) | set(old_map), key=str):
            label = (f"{names.parameter(where)} (by position)" if kind == "position"
                     else f"{where} (by keyword)")
            if where not in old_map:
                out.append(f"at {label}, now {new_map[where]!r} and before not given")
            elif where not in new_map:
                out.append(f"at {label}, now not given and before {old_map[where]!r}")
            elif new_map[where] != old_map[where] or \
                    type(new_map[where]) is not type(old_map[where]):
                out.append(f"at {label}, now {new_map[where]!r} and before "
                           f"{old_map[where]!r}")
    return out


class _ArgumentNames:
    """Names for the places in a call's input tree `((dynamic args...), {kwargs})`:
    the parameter a dynamic argument binds (its position among all arguments, the
    static ones included), then the path inside it."""

    def __init__(self, fun, key):
        static_positions = {i for i, _ in key[2][0]}
        n_dynamic = len(key[0].children()[0].children())
        positions, i = [], 0
        while len(positions) < n_dynamic:
            if i not in static_positions:
                positions.append(i)
            i += 1
        self._positions = positions
        try:
            self._parameters = [p.name for p in inspect.signature(fun).parameters.values()
                                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            self._parameters = []

    def parameter(self, position: int) -> str:
        if position < len(self._parameters):
            return self._parameters[position]
        return f"args[{position}]"

    def of_path(self, path: tuple) -> str:
        if not path:
            return "the arguments"
        if len(path) == 1:
            return ("the positional arguments (less the static ones)" if path[0] == 0
                    else "the keyword arguments (less the static ones)")
        first, rest = path[1], "".join(f"[{k!r}]" for k in path[2:])
        if path[0] == 0:
            where = (self._positions[first] if first < len(self._positions)
                     else first + len(self._positions))
            return self.parameter(where) + rest
        return str(first) + rest

    def leaves(self, tree) -> list:
        paths = []
        _leaf_paths((), tree, paths)
        return [self.of_path(p) for p in paths]


def _children_and_keys(tree):
    kind, meta = tree.node_data()
    children = tree.children()
    if kind is dict:
        return children, list(meta)
    return children, list(range(len(children)))


def _leaf_paths(path, tree, out):
    if tree.node_data() is None:
        out.append(path)
        return
    for child, k in zip(*_children_and_keys(tree)):
        _leaf_paths((*path, k), child, out)


def _tree_errors(path, new, old, names):
    """JAX's pytree comparison (`equality_errors`), in its words, on tree structures."""
    if new == old:
        return
    new_data, old_data = new.node_data(), old.node_data()
    here = f"at {names.of_path(path)}, now"
    if new_data is None or old_data is None or new_data[0] is not old_data[0]:
        new_kind = "pytree leaf" if new_data is None else str(new_data[0])
        old_kind = "pytree leaf" if old_data is None else str(old_data[0])
        yield f"{here} {new_kind} and before {old_kind}, so their Python types differ"
        return
    kind = new_data[0]
    (new_children, new_keys), (old_children, old_keys) = (_children_and_keys(new),
                                                          _children_and_keys(old))
    if issubclass(kind, (list, tuple)) and len(new_children) != len(old_children):
        yield (f"{here} {kind.__name__} of length {len(new_children)} and before "
               f"{kind.__name__} of length {len(old_children)}, so the lengths do not match")
        return
    if len(new_children) != len(old_children):
        diff = " ".join(repr(k) for k in sorted(set(new_keys) ^ set(old_keys), key=repr))
        yield (f"{here} {kind} with {_children(len(new_children))} and before {kind} with "
               f"{_children(len(old_children))}, so the numbers of children do not match"
               + (f", with the symmetric difference of key sets: {{{diff}}}" if diff else ""))
        return
    if new_data[1] != old_data[1]:
        yield (f"{here} {kind} with pytree metadata {new_data[1]} and before {kind} with "
               f"pytree metadata {old_data[1]}, so the pytree node metadata does not match")
        return
    for k, new_child, old_child in zip(new_keys, new_children, old_children):
        yield from _tree_errors((*path, k), new_child, old_child, names)


def _children(n: int) -> str:
    return f"{n} child{'ren' if n > 1 else ''}"
