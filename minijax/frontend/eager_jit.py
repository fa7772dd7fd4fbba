"""`jitted_eagerly`: an eager jnp call runs as one cached compiled program, as JAX's does.

A `minijax.numpy` function is Python that promotes, broadcasts and binds `lax`
operations. Called on concrete arrays, that Python would run on every call, and each
`lax` operation would be dispatched on its own. JAX's own jnp functions are
`jax.jit` functions (inlined when traced), so an eager `jnp.add(x, y)` goes straight
from C++ dispatch to a cached executable. This decorator gives minijax's the same
shape (and the `lax` functions that minijax composes where JAX has one primitive,
`frontend/lax_extras.py`):

* at the root (eager) trace, when every operand is a plain array-like value -- a JAX
  array, a NumPy array or scalar, a Python scalar -- the call goes through one
  `minijax.jit(..., inline=True)` of the function, with the same static arguments as
  JAX's `jax.jit` of that function (`axis`, `dtype`, `keepdims`, ...). Its first
  call per (avals, static arguments) traces the body, so the body's argument checks
  raise there, before anything compiles, with the body's own messages;
* under an *eager transformation* -- `grad`, `vjp`, `jvp`, `vmap`, `jacfwd`,
  `jacrev`, `hessian`, ... on concrete values: no trace of the chain stages a
  program (`Trace.stages_program`, `ir/trace.py`) -- the call is that same
  `minijax.jit`, bound as one `jit` equation marked `inline`, with the
  transformation's tracers as operands. JAX's jnp functions stay one `pjit` there,
  and so does this: the call rules (`transforms/calls.py`) transform the body once
  per (body, which inputs carry tangents / are unknown / are batched) and cache it,
  and the root compiles each transformed body once. So an eager `grad` of an SVD
  loss makes 15 programs (JAX: 17), not one per primitive of each rule's result (50),
  and a repeat call compiles nothing (`benchmarks/eager_transforms.py`). A pullback
  or linearized function keeps the inline calls; traced later (`make_jaxpr`, `jit`)
  they become their bodies' equations at the caller's lines (`ir/staging.py`);
* under a chain that stages a program (`jit`, `make_jaxpr`, remat, loop and
  `shard_map` bodies, an `ensure_compile_time_eval` block) the body runs inline
  directly -- what the staging trace would record for the inline call, without
  tracing the call first -- so traced programs hold the body's equations and no
  nested call;
* operands only the body handles keep the direct path: refs and ref views (tracers
  of a ref too), tracers at the root (escaped ones), lists and other sequences (but
  the nested lists of a function declared `nested_lists`, `block`, which its
  program takes whole when their leaves are plain, as JAX's jit does),
  NumPy values of a non-numeric dtype, Python ints outside 0..127 (the body turns
  those into literals of the promoted dtype, or refuses one no weak int32 holds;
  0..127 fits every integer dtype, so only those are passed as traced weak ints),
  unhashable static arguments. So do calls under
  `disable_jit` and while `jax_debug_nans` / `jax_debug_infs` is on (at the root or
  under a transformation), so that the error names the operation that made the
  value, as the op-by-op path does.

At the root, a repeated call is one Python frame in front of JAX's C++ dispatch of
the executable (`jit`'s `call_cache().fast`): one per-thread flag, the positional
operands' types, keywords all static (those go to JAX's cache as they are), and
for `fun(x, /)` a frame with `fun`'s own signature (no tuple and dict of
arguments). That frame is all minijax adds: 0.1-0.2 us, 3-5% of a one-op call
(`benchmarks/eager_dispatch.py`). A call with one static argument (`nanmean(m,
0)`) skips JAX's handling of it: the frame looks the value up in a dict of
executables with that value bound (`_bound_table`), which cost less than JAX's C++
reading, hashing and comparing it. A miss of JAX's cache (new avals or static
values) raises `UncheckedCall` and goes through `call_after_miss`, which also keeps
that signature's later calls off JAX's Python dispatch.

The compiled programs live in `minijax.jit`'s cache of each function, so
`minijax.clear_caches()` empties them with every other cache.
"""
from __future__ import annotations

import functools
import inspect
import itertools
import numbers
import os

import jax
import numpy as np

from .jit import UncheckedCall, jit
from ..ir.dtype_args import dtype_argument
from ..ir.float_checks import checks_on as float_checks_on
from ..ir.root_modes import everywhere as _everywhere, modes as _root_modes
from ..ir.trace import EvalTrace, Tracer, current_trace, stages_a_program
from ..ir.types import RefType, jax_array_type

# Operand types that are plain by their type alone; an identity test on them is the
# cheapest check of the common case. The concrete type of a JAX array joins them the
# first time `_plain` meets a JAX array (`jax_array_type` says why not at import; a
# constant once learned, so no reset is needed). A set, added to in place, so that each
# decorated function's call holds it in a local. (Subclasses, e.g. JAX tracers, do not
# match.)
_PLAIN_TYPES = {float, complex, bool, type(None)}
_SAFE_INTS = range(0, 128)     # a Python int every integer dtype holds as it is
_NUMERIC_KINDS = frozenset("biufc")   # NumPy dtypes JAX takes as arguments as they are
_DTYPE_ARGS = frozenset({"dtype", "preferred_element_type"})


def _plain(value) -> bool:
    """Whether `value` may be passed to the compiled program as an operand."""
    kind = type(value)
    if kind in _PLAIN_TYPES:
        return True
    if isinstance(value, jax.Array) and jax_array_type() not in _PLAIN_TYPES:
        _PLAIN_TYPES.add(jax_array_type())      # the first JAX array seen
        return kind is jax_array_type()
    if kind is int:
        return value in _SAFE_INTS
    if isinstance(value, (np.ndarray, np.generic)):
        # Strings, objects and dates: the body's own error, not JAX's argument check.
        return value.dtype.kind in _NUMERIC_KINDS
    return value is None


def _static_value_plain(value) -> bool:
    """Whether a static argument may go to JAX's cache as it is: anything but a tuple
    holding a number other than a Python int (`_ints_only`). The generated frames
    spell the same test inline (`static_test`)."""
    return type(value) is not tuple or _ints_only(value)


def _ints_only(value: tuple) -> bool:
    """Whether a static tuple holds no number but Python ints (strings, enums and
    nested such tuples pass). JAX's cache compares a tuple by value (`(0.0,) ==
    (0,)`), so one holding another number (a float axis, a NumPy integer, a bool)
    runs the body, which checks it as JAX's jnp functions do before their jit; only
    the tuple itself is typed in that cache."""
    for item in value:
        kind = type(item)
        if kind is int or kind is str:
            continue
        if kind is tuple:
            if not _ints_only(item):
                return False
        elif isinstance(item, (numbers.Number, np.generic)):
            return False
    return True


def _plain_or_traced(value) -> bool:
    """`_plain`, or a tracer of a value (not of a ref): an operand of a call under an
    eager transformation, which the transformation's call rule takes in."""
    if isinstance(value, Tracer):
        return not isinstance(value.aval, RefType)
    return _plain(value)


def _nested(leaf_plain):
    """`leaf_plain`, extended to (nested, non-empty) lists of such values: the operands
    of a function whose lists JAX's jit takes as pytrees (`block`)."""
    plain_types = _PLAIN_TYPES

    def plain(value) -> bool:
        if type(value) is not list:
            return type(value) in plain_types or leaf_plain(value)
        # A list of arrays, and a list of such lists, are tested by C loops (a walk in
        # Python, with a frame per inner list, cost `block([[a, b], [c, d]])` 10-15%
        # of its call); anything else item by item.
        if plain_types.issuperset(map(type, value)):
            return bool(value)     # an empty list: the body's error
        for item in value:
            if type(item) is list:
                if not (item and plain_types.issuperset(map(type, item))) \
                        and not plain(item):
                    return False
            elif type(item) not in plain_types and not leaf_plain(item):
                return False
        return bool(value)
    return plain


def jitted_eagerly(*static_argnames: str, nested_lists: bool = False):
    """Decorate a jnp function that JAX itself jits, naming JAX's static arguments.
    `nested_lists`: the function's operands may be nested lists (of plain values),
    which the compiled program takes whole, as JAX's jit of it does; otherwise a list
    operand makes the call run the body directly (the body raises or reads it)."""
    static = frozenset(static_argnames)
    plain, plain_or_traced = ((_nested(_plain), _nested(_plain_or_traced)) if nested_lists
                              else (_plain, _plain_or_traced))

    def decorate(fun):
        parameters = list(inspect.signature(fun).parameters.values())
        positions = {p.name: i for i, p in enumerate(parameters)
                     if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)}
        static_positions = frozenset(positions[name] for name in static if name in positions)
        compiled = jit(fun, static_argnames=tuple(static) or None, inline=True)
        static_keys = static_positions | static     # positions and names
        # An array given as a dtype is refused before the body runs op by op, as
        # JAX's jit refuses it (unhashable) before its function runs.
        dtype_keys = frozenset(k for k in static_keys if k in _DTYPE_ARGS or
                               k in static_positions and parameters[k].name in _DTYPE_ARGS)
        cache = compiled.call_cache()
        modes, everywhere, plain_types = _root_modes, _everywhere, _PLAIN_TYPES

        def operands_plain(args, kwargs, plain=plain) -> bool:
            for key, value in itertools.chain(enumerate(args), kwargs.items()):
                if key in static_keys:
                    try:
                        hash(value)
                    except TypeError:
                        if key in dtype_keys:
                            dtype_argument(value)    # raises, as the body would
                        return False
                    if not _static_value_plain(value):
                        return False
                elif type(value) not in plain_types and not plain(value):
                    return False
            return True

        def off_the_fast_path(args, kwargs):
            """A call `call` did not send straight to the executable: not at the root
            with jit on and no NaN checks, or with an operand or static argument its
            quick test did not pass."""
            if modes.direct:
                if not operands_plain(args, kwargs):
                    return fun(*args, **kwargs)
                executable = cache.fast
                if executable is None:
                    return compiled.call_checked(args, kwargs)
                try:
                    return executable(*args, **kwargs)
                except UncheckedCall:     # new avals: `compiled` looks, then traces
                    pass
                return compiled.call_after_miss(args, kwargs)
            trace = current_trace()
            at_root = type(trace) is EvalTrace
            if stages_a_program(trace) or (float_checks_on() and not at_root):
                return fun(*args, **kwargs)
            if at_root:
                # (`disable_jit`: `compiled` runs `fun` op by op. Under NaN checks
                # `compiled` checks its outputs and runs `fun` again op by op to find
                # the operation, as JAX does with its jitted jnp function.)
                return (compiled(*args, **kwargs) if operands_plain(args, kwargs)
                        else fun(*args, **kwargs))
            # An eager transformation: one inline `jit` call, which its rules
            # transform whole (`transforms/calls.py`) and the root compiles once.
            if modes.jit_disabled or not operands_plain(args, kwargs, plain_or_traced):
                return fun(*args, **kwargs)
            return compiled.call_checked(args, kwargs)

        frame_of = functools.partial(_fast_caller, fun, parameters, static, compiled,
                                     off_the_fast_path, plain, nested_lists)
        fast_call = frame_of()
        if fast_call is not None:
            fast_call.frame_refusing = frame_of
            return fast_call

        @functools.wraps(fun)
        def call(*args, **kwargs):
            # Every step here is paid on each eager call, so the common case -- the
            # root trace with no NaN checks (one test: `ir/root_modes.py`), plain
            # operands by position, static arguments (if any) by keyword -- is
            # spelled out with locals only. A static argument by position is tested
            # as an operand; one by keyword goes to JAX's cache as it is. An
            # unhashable one (a list, or an array by position) is JAX's ValueError,
            # raised before anything runs, and the call then takes the slow path.
            if (everywhere.direct or modes.direct) and (not kwargs or static.issuperset(kwargs)):
                for value in args:
                    if type(value) not in plain_types and not plain(value):
                        return off_the_fast_path(args, kwargs)
                for value in kwargs.values():
                    if not _static_value_plain(value):
                        return off_the_fast_path(args, kwargs)
                # After the first call, straight to JAX's dispatch of the executable.
                executable = cache.fast
                if executable is not None:
                    try:     # (an empty dict passed on costs JAX's call a little)
                        return executable(*args, **kwargs) if kwargs else executable(*args)
                    except UncheckedCall:     # new avals: `compiled` looks, then traces
                        new_avals = True
                    except ValueError:        # an unhashable static argument
                        new_avals = False
                    # (Handled outside the except clause, so that an error of the call
                    # that follows is not shown as raised while handling JAX's.)
                    if new_avals:
                        return compiled.call_after_miss(args, kwargs)
            return off_the_fast_path(args, kwargs)
        call.eager_jit = compiled      # the cached program, for tests and `clear_cache`
        return call
    return decorate


# The default of every optional parameter of a `_fast_caller` frame: whether the caller
# passed the argument at all. (`inspect.signature` shows the function's own defaults.)
_OMITTED = type("omitted", (), {"__repr__": lambda self: "<omitted>"})()


# The names a generated frame reads besides its parameters.
_FRAME_NAMES = frozenset([
    "modes", "everywhere", "cache", "plain_types", "plain", "compiled", "_OMITTED",
    "UncheckedCall", "off_the_fast_path", "arguments_given", "refuse", "rows_plain",
    "type", "executable", "missed", "args", "kwargs", "entry", "bound_miss", "tuple",
    "ints_only"])


def _fast_caller(fun, parameters, static, compiled, off_the_fast_path, plain,
                 nested_lists, refused=(), refuse=None):
    """`fun`'s eager frame with `fun`'s own parameters, or None where it has `*args` or
    `**kwargs`, or parameters no call can pass by keyword after a default. `refused`:
    keyword-only parameters added after `fun`'s, default None, any other value of which
    makes the frame return `refuse(*args, **kwargs)` (a `jnp.ufunc`'s `out` and
    `where`: the instance's call is this frame, `numpy/_ufunc_objects.py`).

    A `def call(*args, **kwargs)` frame costs a tuple and a dict per call, and JAX's
    dispatch then unpacks the dict again: 8-17% of a one-op call with a static keyword
    (`nanmean(m, axis=0)`), against 1-2% for a frame with the function's parameters.
    Such a frame knows which arguments were passed (`_OMITTED` defaults), so it hands
    JAX the call spelled one way: required parameters by position, the optional ones
    given by keyword. The forms with none or one optional argument -- nearly every
    eager call -- are written out, so the call to the executable is made with literal
    keywords (no dict). Calls with more, and every call off the root, build the
    arguments and take `off_the_fast_path` with that same spelling, so a form's cache
    entry is one whichever way the caller spelled it. Names and the order of
    parameters are `fun`'s, so a wrong call raises Python's TypeError as `fun` would.
    """
    P = inspect.Parameter
    required = [p.name for p in parameters if p.default is P.empty]
    optional = [p.name for p in parameters if p.default is not P.empty]
    kinds = [p.kind for p in parameters]
    if P.VAR_POSITIONAL in kinds or P.VAR_KEYWORD in kinds or any(
            p.kind is (P.KEYWORD_ONLY if p.default is P.empty else P.POSITIONAL_ONLY)
            for p in parameters) or not (_FRAME_NAMES | {f"bound_{i}" for i in range(
                len(optional))}).isdisjoint(required + optional):
        return None
    spelled = []
    for i, p in enumerate(parameters):
        if p.kind is P.KEYWORD_ONLY and P.KEYWORD_ONLY not in kinds[:i]:
            spelled.append("*")
        spelled.append(p.name if p.default is P.empty else f"{p.name}=_OMITTED")
        if p.kind is P.POSITIONAL_ONLY and P.POSITIONAL_ONLY not in kinds[i + 1:]:
            spelled.append("/")
    if refused:
        spelled += ([] if P.KEYWORD_ONLY in kinds else ["*"]) + [f"{n}=None" for n in refused]

    def plain_test(name):
        if nested_lists and name in required:
            # A list of lists of arrays (`block([[a, b], [c, d]])`) by `_rows_plain`
            # first: `plain`'s recursion cost that call 10% of JAX's time.
            return f"(type({name}) in plain_types or rows_plain({name}) or plain({name}))"
        return f"(type({name}) in plain_types or plain({name}))"
    namespace = {"modes": _root_modes, "everywhere": _everywhere, "cache": compiled.call_cache(),
                 "plain_types": _PLAIN_TYPES, "plain": plain, "compiled": compiled,
                 "_OMITTED": _OMITTED, "UncheckedCall": UncheckedCall,
                 "off_the_fast_path": off_the_fast_path, "arguments_given": _arguments_given,
                 "refuse": refuse, "rows_plain": _rows_plain, "bound_miss": _bound_miss,
                 "ints_only": _ints_only}
    positional = "".join(f"{n}, " for n in required)
    # The arguments given, as `off_the_fast_path` and `compiled` take them.
    rebuilt = (f"({positional}), arguments_given(("
               + "".join(f"({n!r}, {n}), " for n in optional) + "))")
    lines = [f"def frame({', '.join(spelled)}):"]
    if refused:
        lines += [f"    if {' or '.join(f'{n} is not None' for n in refused)}:",
                  f"        args, kwargs = {rebuilt}",
                  f"        return refuse(*args, **kwargs, "
                  f"{', '.join(f'{n}={n}' for n in refused)})"]
    # Operands are tested as `call`'s are; static arguments go to JAX's cache as they are.
    def static_test(name):
        return f"(type({name}) is not tuple or ints_only({name}))"
    tests = ["(everywhere.direct or modes.direct)",
             *(plain_test(n) if n not in static else static_test(n) for n in required)]
    lines += [f"    if {' and '.join(tests)}:"]
    # One static argument given by the caller, none required: the executable of that
    # value (`_bound_table`), called with the operands alone.
    bound = [] if static.intersection(required) else [n for n in optional if n in static]
    for given in bound:
        table = f"bound_{optional.index(given)}"
        namespace[table] = _bound_table(compiled, given)
        tests = [f"{n} is {'not ' if n == given else ''}_OMITTED" for n in optional]
        lines += [f"        if {' and '.join(tests)} and {static_test(given)}:",
                  "            try:",
                  f"                entry = {table}.get({given})",
                  "            except TypeError:      # unhashable: `bound_miss` sends it on",
                  "                entry = None",
                  f"            if entry is not None and entry[0] is type({given}):",
                  "                try:",
                  f"                    return entry[1]({positional})",
                  "                except UncheckedCall:     # new avals",
                  "                    pass",
                  f"            return bound_miss(compiled, {table}, {given!r}, {given}, entry, "
                  f"({positional}), {rebuilt}, off_the_fast_path)"]
    lines += ["        executable = cache.fast",
              "        if executable is not None:",
              "            try:"]
    for given in (None, *optional):
        if given in bound:
            continue
        tests = [f"{n} is {'not ' if n == given else ''}_OMITTED" for n in optional]
        if given is not None:
            tests.append(plain_test(given) if given not in static else static_test(given))
        keyword = "" if given is None else f"{given}={given}"
        lines += [f"                if {' and '.join(tests) or 'True'}:",
                  f"                    return executable({positional}{keyword})"]
    lines += ["                missed = None",
              "            except UncheckedCall:     # new avals: `compiled` looks, then traces",
              "                missed = True",
              "            except ValueError:        # an unhashable static argument",
              "                missed = False",
              "            if missed:",
              f"                return compiled.call_after_miss({rebuilt})",
              f"    return off_the_fast_path({rebuilt})"]
    # Named as a file of minijax's folder, so that the source lines of what the frame
    # stages skip it as minijax's own (`ir/source_info.py`), not the user's.
    filename = os.path.join(os.path.dirname(__file__), f"<eager frame of {fun.__qualname__}>")
    exec(compile("\n".join(lines), filename, "exec"), namespace)
    call = functools.wraps(fun)(namespace["frame"])
    call.eager_jit = compiled
    return call


def _rows_plain(value) -> bool:
    """Whether `value` is a non-empty list of non-empty lists of values plain by their
    type: the operand of `block([[a, b], [c, d]])`, tested ahead of `plain`'s walk. Two
    plain loops: for a 2x2 list they take half the time of the same test spelled with
    `map`, `chain` and `set.issuperset`, whose iterator objects cost more than the
    few items they look at."""
    if type(value) is not list or not value:
        return False
    for row in value:
        if type(row) is not list or not row:
            return False
        for item in row:
            if type(item) not in _PLAIN_TYPES:
                return False
    return True


def _arguments_given(pairs) -> dict:
    return {name: value for name, value in pairs if value is not _OMITTED}


def _bound_table(compiled, name) -> dict:
    """value -> (its type, a `jax.jit` function of `compiled`'s with static argument
    `name` bound to it), kept in `compiled`'s cache (emptied with it).

    JAX's C++ dispatch of a call with a static argument reads, hashes and compares
    it in its cache key: 0.3-0.6 us of a 7 us `nanmean(m, axis=0)`, more than the
    frame in front of it. Here a dict lookup picks the executable of that value,
    which then sees the operands alone. One trace per value, shared with `compiled`'s
    (its `run`, keyed the same); one compile, as the frame never sends that form to
    `compiled`'s own executable, except for a second type of an equal value
    (`axis=0` after `axis=False`)."""
    return compiled.call_cache().bound.setdefault(name, {})


def _bound_miss(compiled, table, name, value, entry, operands, args, kwargs, off_the_fast_path):
    """The frame's call of a bound form that found no executable, or whose executable
    missed JAX's cache (new avals): make or reuse it, and call it checked."""
    cache = compiled.call_cache()
    if cache.refs_seen or (entry is not None and entry[0] is not type(value)):
        return off_the_fast_path(args, kwargs)
    if entry is None:
        try:
            hash(value)
        except TypeError:
            return off_the_fast_path(args, kwargs)
        executable = compiled.bound_executable(name, value)
        table[value] = (type(value), executable)
    else:
        executable = entry[1]
        clear_entries = getattr(executable, "_clear_cache", None)
        if clear_entries is not None:     # the miss that raised (`forget_refused_entry`)
            clear_entries()
    return compiled.call_bound(executable, operands, args, kwargs)
