"""`jit`, `disable_jit` and `ensure_compile_time_eval`.

`jit` traces the user's function once per (pytree structure, input avals, static
arguments), as `make_jaxpr` does (`frontend/tracing.py`), and keeps its traces in a
cache that belongs to the *function* (held weakly) and the jit options, as JAX's
does, so `jit(f)(x)` in a loop traces once. A `jit` call then goes one of two ways:

* at the root (eager) trace, with arrays: the fast path. One `jax.jit` function per
  cache runs the call; its Python body, which JAX runs only on a cache miss, looks up
  (or makes) minijax's trace for the avals JAX saw and lowers it. Flattening, the
  cache key, static arguments, donation and dispatch are all JAX's C++ path. In
  front of it `__call__` tests one per-thread flag (`ir/root_modes.py`: at the root,
  jit on, no NaN/inf checks) and nothing else; a miss of JAX's cache raises
  `UncheckedCall` from that body, and `__call__` then looks at the arguments (a ref
  would pass for an array) and calls again (dropping the entry JAX's C++ cache
  keeps for a miss that raised, which would send every later call through JAX's
  Python: `_JitCache.forget_refused_entry`).
* under another transformation (grad, vmap, an outer jit), or with refs among the
  arguments or closed over: `jit` binds its jaxpr as one `jit` equation in the
  current trace. Under a transformation its rule applies, so the staged call stays
  one call; at the root the equation runs through `backends/eager_ref_runtime.py`, which
  discharges the refs, runs one XLA program and writes the boxes back.

`jit` and `make_jaxpr` check refs the same way, through the same two functions of
`frontend/tracing.py`, so `make_jaxpr` never shows a program that `jit` would refuse;
`stage_cached` there is the one staging cache, shared by `jit` and `checkpoint`.
"""
from __future__ import annotations

import functools
import inspect
import threading
import types
import weakref
from typing import Callable

import jax
from jax import tree_util

from .pytrees import (split_static_args, static_argnums_from_names,
                       static_argnames_from_nums, fun_name)
from ..ir import primitives as P
from ..ir.checks import forget_round_trips
from ..ir.float_checks import checks_on as float_checks_on, invalid_value_in
from ..ir import root_modes
from ..ir.root_modes import modes as _root_modes
from ..ir.trace import EvalTrace, Tracer, bind, current_trace
from ..ir.types import ShapedArray, dtype_of_jax, forget_shared_avals
from ..ir.source_info import forget_source_sites
from .. import backends
from ..backends import xla
from ..backends.eager_ref_runtime import call_donating
from .refs import RefView, check_call_writes, is_ref
from .sharding import constrain_jit_shardings, jit_placement
from .tracing import Staged, stage_cached, staging_key
from .cache_misses import explain_cache_miss
from .config_flags import before_trace, explain_cache_misses
from .events import forwarding_jax_events
from ..transforms.discharge import mentions_refs
from ..transforms.key_reuse import check_jaxpr as check_key_reuse, eager_call as eager_key_reuse_call
from .aot import Lowered, Traced
from .stages import Wrapped
from ..backends import eager_dispatch

eager_dispatch.before_trace[0] = before_trace     # eager primitives log and refuse too


class _UsesRefs(Exception):
    """Raised inside JAX's trace of the fast path: this program closes over a ref,
    which only minijax's own call path (discharge, run, write back) can run."""


class UncheckedCall(BaseException):
    """Raised inside JAX's trace of the fast path when a call went straight to the
    executable and missed JAX's cache: a minijax ref, view or tracer has a shape and
    a dtype, so a JAX version may take it for an array; before tracing, minijax must
    look at the arguments really passed. `JitFunction.__call__` catches it, looks,
    and calls again. A BaseException (control flow, not an error), so that JAX passes
    it on without filtering its traceback, 3/4 of what a refused call cost."""


class _JitCache:
    """Everything cached for one (function, jit options): minijax's traces (for
    `trace`, `lower`, calls under transformations and calls with refs) and the
    `jax.jit` function of the fast path. `refs_seen`: a call has met a ref, so this
    function's calls take minijax's own path from now on. `bound`: per static parameter,
    `jax.jit` functions with its value bound (`eager_jit._bound_table`)."""
    __slots__ = ("traces", "fast", "refs_seen", "bound")

    def __init__(self):
        self.traces: dict = {}
        self.fast = None
        self.refs_seen = False
        self.bound: dict = {}

    def clear(self):
        self.traces.clear()
        if self.fast is not None:
            self.fast.clear_cache()
        self.fast, self.refs_seen = None, False
        for table in self.bound.values():
            table.clear()

    def forget_refused_entry(self):
        """After `UncheckedCall`: JAX's C++ cache marks the entry of a miss that raised
        as served by JAX's Python from then on (35 us a call, 10x the dispatch). So
        its C++ entries go (the others come back on their next call from JAX's Python
        caches, untraced). `_clear_cache` is the C++ half of `clear_cache`, which also
        empties JAX's trace caches of every function; without it, calls stay slow."""
        clear_entries = getattr(self.fast, "_clear_cache", None)
        if clear_entries is not None:
            clear_entries()


# function -> {jit options: _JitCache}. Keyed weakly on the function, as JAX's own
# cache is: `jit(f)(x)` written inside a loop reuses the trace of the first call, and
# the cache goes when `f` does. `clear_caches()` empties it.
_caches: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _cache_for(fun, options) -> _JitCache:
    try:
        per_fun = _caches.setdefault(fun, {})
    except TypeError:        # not weakly referenceable: the JitFunction owns its cache
        return _JitCache()
    cache = per_fun.get(options)
    if cache is None:
        cache = per_fun[options] = _JitCache()
    return cache


def clear_caches():
    """Forget every trace and compiled program minijax holds, as `jax.clear_caches`."""
    # Emptied in place: a JitFunction made before this call keeps sharing its cache
    # with those made after.
    for per_fun in list(_caches.values()):
        for cache in per_fun.values():
            cache.clear()
    backends.clear_caches()
    forget_source_sites()
    forget_shared_avals()
    forget_round_trips()


class _CheckedCall(threading.local):
    def __init__(self):
        # While a fast-path call whose arguments were looked at (no ref, view or
        # tracer among them) is in JAX, its cache's traces dict: `run` traces on a
        # miss only if it finds its own (a direct call, or another function's call
        # nested in this one, raises `UncheckedCall`). None otherwise.
        self.checked = None


_checked_call = _CheckedCall()


def _normalize_names(names) -> tuple:
    return (names,) if isinstance(names, str) else tuple(names)


def _normalize_nums(nums) -> tuple:
    return (nums,) if isinstance(nums, int) else tuple(nums)


def _on_trace_miss(fun, traces, key, where: str, in_avals):
    """What a `jit` call does before it traces a key its cache lacks, on either path
    (JAX's fast one or minijax's own): explain the miss under
    `jax_explain_cache_misses`, then refuse or log as `before_trace` says."""
    if explain_cache_misses.value:
        explain_cache_miss(fun, traces, key)
    before_trace(where, in_avals, fun)


def _has_minijax_leaves(args_and_kwargs) -> bool:
    """Whether a call's arguments hold a ref, a ref view or a tracer: values only
    minijax's own call path can take."""
    return args_and_kwargs is not None and any(
        is_ref(leaf) or isinstance(leaf, (RefView, Tracer))
        for leaf in tree_util.tree_leaves(args_and_kwargs))


class JitFunction(Wrapped):
    """What `minijax.jit(f)` returns: call it, or `.lower(...)` / `.trace(...)` it.

    A call outside every transformation takes the fast path: one `jax.jit` function
    per (function, options), whose Python body -- run by JAX only on a cache miss --
    traces the function with minijax and lowers minijax's program. Flattening the
    arguments, the cache key (avals with weak types, static arguments, tree
    structure), donation and the executable's call are then JAX's own C++ dispatch.
    A call under a minijax transformation (a tracer argument), with refs, or of a
    function that closes over a ref binds the `jit` primitive instead (`_stage`)."""

    def __init__(self, fun: Callable, static_argnums=None, static_argnames=None,
                 donate_argnums=None, donate_argnames=None, keep_unused: bool = False,
                 inline: bool = False, placement=None):
        if not callable(fun):
            raise TypeError(f"jit expects a callable, got {fun!r}")
        self._fun = fun
        # The name JAX's messages, events and reprs give the function.
        self._name = fun_name(fun)
        # As given, for jax.jit (None: "infer from the other one and the signature").
        self._jax_options = dict(
            static_argnums=None if static_argnums is None else _normalize_nums(static_argnums),
            static_argnames=None if static_argnames is None else _normalize_names(static_argnames),
            donate_argnums=None if donate_argnums is None else _normalize_nums(donate_argnums),
            donate_argnames=None if donate_argnames is None else _normalize_names(donate_argnames),
            keep_unused=bool(keep_unused))
        static_argnums = self._jax_options["static_argnums"] or ()
        static_argnames = self._jax_options["static_argnames"] or ()
        self._static_argnums = tuple(sorted(set(static_argnums)
                                            | set(static_argnums_from_names(fun, static_argnames))))
        if self._jax_options["static_argnames"] is None:
            static_argnames = static_argnames_from_nums(fun, self._static_argnums)
        self._static_argnames = static_argnames
        # Donated parameters, by position and by name however they were named (as
        # JAX infers one from the other), for calls that take minijax's own path.
        donate_argnums = self._jax_options["donate_argnums"] or ()
        donate_argnames = self._jax_options["donate_argnames"] or ()
        self._donate_argnums = frozenset(donate_argnums) | frozenset(
            static_argnums_from_names(fun, donate_argnames))
        self._donate_argnames = frozenset(donate_argnames) | frozenset(
            static_argnames_from_nums(fun, tuple(self._donate_argnums)))
        # `inline`: the `jit` equations this function binds carry `inline=True`, which
        # a staging trace honours by recording the body in place of the call
        # (`ir/staging.py`). The body is the same either way, so the cache is shared.
        self._call_params = {"inline": True} if inline else {}
        # `device`/`backend`/`compiler_options`, those given: JAX's jit applies them
        # where it compiles the function (the calls at the root, `_fast_function`)
        self._placement = dict(placement or {})
        self._placement_key = xla.placement_key(self._placement)
        options = tuple(self._jax_options.items()) + tuple(
            (k, tuple(sorted(v.items())) if isinstance(v, dict) else v)
            for k, v in self._placement.items())
        self._jit_cache = _cache_for(fun, options)
        # updated=(): copying fun.__dict__ would let jit(jit(f)) take over the inner
        # function's attributes.
        functools.update_wrapper(self, fun, updated=())

    def __get__(self, obj, objtype=None):
        # A descriptor, as JAX's jitted functions are: a jitted method binds `self`.
        return self if obj is None else types.MethodType(self, obj)

    # -- the fast path ------------------------------------------------------------------

    def _fast_function(self, bound=None):
        name, where = self._name, f"jit({self._name})"
        static_argnums, static_argnames = self._static_argnums, self._static_argnames
        traces = self._jit_cache.traces
        # The cache is keyed weakly on the function, so what it holds must not hold
        # the function strongly (or the function would never be collected).
        try:
            fun_ref = weakref.ref(self._fun)
        except TypeError:        # then the cache belongs to this JitFunction alone
            fun_ref = functools.partial(lambda fun: fun, self._fun)

        def run(*args, **kwargs):
            if _checked_call.checked is not traces:
                raise UncheckedCall()
            dyn_args, dyn_kwargs, static_key, rebuild = split_static_args(
                fun_ref(), args, kwargs, static_argnums, static_argnames)
            leaves, in_tree = tree_util.tree_flatten((tuple(dyn_args), dyn_kwargs))
            in_avals = tuple(ShapedArray(x.shape, dtype_of_jax(x.dtype), x.aval.weak_type)
                             for x in leaves)
            # One trace per key, shared with `_stage`: `trace`, `lower` and calls
            # under transformations reuse what a call traced, and the other way round.
            key = staging_key(in_tree, in_avals, static_key)
            staged = traces.get(key)
            if staged is None:
                _on_trace_miss(fun_ref(), traces, key, where, in_avals)
                # JAX is tracing `run`, but minijax's trace is over minijax's own
                # tracers: what it evaluates eagerly (a constant folded on concrete
                # values) must run now, not be staged into JAX's program.
                with jax.ensure_compile_time_eval():
                    staged = traces[key] = Staged.trace(rebuild, dyn_args, dyn_kwargs, leaves,
                                                         list(in_avals), in_tree, where, name)
            else:
                staged.ensure_verified()        # (one `make_jaxpr` stored)
            if mentions_refs(staged.closed.jaxpr):
                raise _UsesRefs()
            outs = xla.lower_jaxpr(staged.closed.jaxpr, staged.closed.consts, leaves)
            return tree_util.tree_unflatten(staged.out_tree, outs)
        run.__name__ = run.__qualname__ = name
        if bound:      # static arguments given here, none by the caller
            return xla.jit_with_placement(functools.partial(run, **bound), self._placement_key,
                                          keep_unused=self._jax_options["keep_unused"])
        try:     # JAX reads the signature to place static and donated names
            run.__signature__ = inspect.signature(self._fun)
        except (TypeError, ValueError):
            pass
        return xla.jit_with_placement(run, self._placement_key, **self._jax_options)

    def __call__(self, *args, **kwargs):
        # The cached call: one test (`ir/root_modes.py`: at the root trace, jit on,
        # no NaN/inf checks) before JAX's C++ dispatch. The rest -- a ref among the
        # arguments, a miss of JAX's cache -- surfaces as an exception from JAX.
        fast = self._jit_cache.fast
        if fast is not None and _root_modes.direct:
            try:
                return fast(*args, **kwargs)
            except (UncheckedCall, _UsesRefs, TypeError) as error:
                refused = error
            # (Handled here, not in the except clause, so that an error of the call
            # that follows is not shown as raised while handling this one.)
            if isinstance(refused, UncheckedCall):
                return self.call_after_miss(args, kwargs)
            return self._after_fast_path_refused(refused, args, kwargs)
        return self.call_checked(args, kwargs)

    def call_cache(self) -> _JitCache:
        """This function's cache (shared by every `jit` of it with the same options).
        Its `fast` is the `jax.jit` function that serves calls at the root -- None
        until a first call makes it, after `clear_cache` and once a ref was met --
        for a caller that has itself made sure of what `__call__` checks: this
        thread at the root with no `disable_jit` or NaN checks (`root_modes.modes.
        direct`), and no ref, ref view or tracer among the arguments. Calling it
        skips `__call__`'s Python; on a miss of JAX's cache it raises
        `UncheckedCall`, and the caller then uses `call_after_miss`."""
        return self._jit_cache

    def call_after_miss(self, args, kwargs):
        """`call_checked`, after the fast path raised `UncheckedCall` (new avals or
        static arguments): `_JitCache.forget_refused_entry` first."""
        self._jit_cache.forget_refused_entry()
        return self.call_checked(args, kwargs)

    def _check_float_outputs(self, out, args, kwargs):
        """`jax_debug_nans`/`jax_debug_infs` on a call that ran compiled: an invalid
        output makes the function run again op by op (as if not jitted), where the
        root trace names the primitive that made it, as JAX does."""
        found = invalid_value_in(tree_util.tree_leaves(out))
        if found is not None:
            self._locate_invalid_value(found, args, kwargs)

    def _locate_invalid_value(self, found, args, kwargs):
        name = f"jit({self._name})"
        if self._jit_cache.refs_seen or _has_minijax_leaves((args, kwargs)):
            # Running it again would write its refs twice.
            raise FloatingPointError(f"invalid value ({found}) encountered in {name}")
        # As JAX: say so on stdout (a program then prints the same under both
        # libraries), and call the function as if it were not jitted. Its own jitted
        # calls stay compiled and do the same in turn, down to the operation.
        print("Invalid nan value encountered in the output of a jax.jit function. "
              "Calling the de-optimized version.")
        self._fun(*args, **kwargs)          # raises FloatingPointError at the op
        raise FloatingPointError(
            f"invalid value ({found}) encountered in {name}. Because jax_debug_nans or "
            f"jax_debug_infs is set, the function ran again op by op (as without jit) "
            f"to find the operation, but that run made no invalid value: the compiled "
            f"program computes differently (an XLA optimization, say).")

    def call_checked(self, args, kwargs):
        """The call `__call__` makes when it cannot go straight to the fast path (the
        first call, or one under a transformation, `disable_jit`, the NaN/inf checks
        or a flag applied through JAX's context: a transfer guard), with every check
        made."""
        # (What JAX records while it compiles this program reaches minijax.monitoring's
        # listeners: frontend/events.py.)
        with forwarding_jax_events(self._name):
            if _root_modes.jax_applied:
                with root_modes.applied_to_jax():
                    return self._call_checked(args, kwargs)
            return self._call_checked(args, kwargs)

    def _call_checked(self, args, kwargs):
        if _root_modes.jit_disabled:
            return self._fun(*args, **kwargs)
        cache = self._jit_cache
        # (Under jax_debug_key_reuse a call at the root binds `jit`, so that the root
        # trace checks and marks the keys it uses: transforms/key_reuse.py.)
        if type(current_trace()) is not EvalTrace or cache.refs_seen or _root_modes.key_reuse:
            return self._call_staged(args, kwargs)
        fast = cache.fast
        if fast is None:
            cache.fast = fast = self._fast_function()      # the first call at the root
        return self._call_fast_checked(fast, args, kwargs)

    def _call_fast_checked(self, fast, args, kwargs):
        """The fast path, with the arguments looked at first (so that a miss of JAX's
        cache may trace) and the outputs checked if `jax_debug_nans`/`infs` is on."""
        if _has_minijax_leaves((args, kwargs)):
            return self._after_fast_path_refused(_UsesRefs(), args, kwargs)
        out, refused = self._run_checked(fast, args, kwargs)
        if refused is not None:
            return self._after_fast_path_refused(refused, args, kwargs)
        if float_checks_on():
            self._check_float_outputs(out, args, kwargs)
        return out

    def _run_checked(self, fast, args, kwargs):
        """`fast(*args, **kwargs)` allowed to trace on a miss of JAX's cache: (its
        outputs, None), or (None, the refusal) where it met a ref or JAX refused an
        argument."""
        # (The previous mark is restored, not cleared: a checked call may run inside
        # another one, from a host callback during the outer call's trace.)
        outer, _checked_call.checked = _checked_call.checked, self._jit_cache.traces
        try:
            return fast(*args, **kwargs), None
        except (_UsesRefs, TypeError) as error:
            return None, error
        finally:
            _checked_call.checked = outer

    def bound_executable(self, name: str, value):
        """This function's executable with static argument `name` bound to `value`,
        called with the operands alone (`eager_jit`'s frames keep one per value)."""
        executable = self._fast_function({name: value})
        cache = self._jit_cache
        if cache.fast is None:
            # Made, not compiled (JAX compiles on its first call), so that `fast` still
            # says whether a call reached the root's executables since the cache was
            # last emptied, whichever of them serves it.
            cache.fast = self._fast_function()
        return executable

    def call_bound(self, executable, operands, args, kwargs):
        """A `bound_executable` on `operands`, allowed to trace; the whole call
        (`args`, `kwargs`) takes minijax's own path if it meets a ref."""
        with forwarding_jax_events(self._name):
            out, refused = self._run_checked(executable, operands, {})
        if refused is not None:
            return self._after_fast_path_refused(refused, args, kwargs)
        return out

    def _after_fast_path_refused(self, error, args, kwargs):
        """The fast path met a ref: this call, and from now on every call of this
        function, takes minijax's own path. Any other error is the user's."""
        if not isinstance(error, _UsesRefs) and not _has_minijax_leaves((args, kwargs)):
            # (A ref passed where a cached trace expects an array makes JAX fail to
            # read it as a buffer -- RefError is a TypeError -- before running.)
            raise error
        cache = self._jit_cache
        cache.refs_seen, cache.fast = True, None
        for table in cache.bound.values():
            table.clear()
        return self._call_staged(args, kwargs)

    # -- minijax's own path: the `jit` primitive -------------------------------------------

    def _stage(self, args, kwargs):
        dyn_args, dyn_kwargs, static_key, rebuild = split_static_args(
            self._fun, args, kwargs, self._static_argnums, self._static_argnames)
        where = f"jit({self._name})"
        traces = self._jit_cache.traces

        def on_miss(in_avals, key):
            _on_trace_miss(self._fun, traces, key, where, in_avals)
        staged, leaves = stage_cached(traces, rebuild, dyn_args, dyn_kwargs, static_key,
                                      where, on_miss, event_name=self._name)
        if _root_modes.key_reuse:           # as JAX checks each jit trace
            check_key_reuse(staged.call_jaxpr)
        return staged, leaves

    def staged_as(self, where: str, args, kwargs) -> Staged:
        """The trace of a call from this function's cache, made and stored on a miss
        without the checks of a call (the cache-miss log, `jax_no_tracing`): how
        `make_jaxpr` and `eval_shape` trace, as JAX's share `jit`'s trace cache (a
        print in the function runs once for the three, per signature)."""
        dyn_args, dyn_kwargs, static_key, rebuild = split_static_args(
            self._fun, args, kwargs, self._static_argnums, self._static_argnames)
        return stage_cached(self._jit_cache.traces, rebuild, dyn_args, dyn_kwargs,
                            static_key, where, event_name=self._name, verify=False)[0]

    def _call_staged(self, args, kwargs):
        staged, leaves = self._stage(args, kwargs)
        inputs = [*staged.closed.consts, *leaves]
        name = self._name
        check_call_writes(staged.call_jaxpr, inputs, name)
        at_root = type(current_trace()) is EvalTrace
        donated = self.donated_leaves(args, kwargs) if at_root else ()
        if donated or (at_root and self._placement):
            # At the root a call with donation, or with the device/backend/XLA options
            # of its `jit`, runs here rather than as a `jit` equation: they are facts
            # of this call, not of the program. (Under a transformation or inside
            # another program the call is compiled with the program around it, which
            # is also where JAX's options stop applying.)
            n_consts = len(staged.closed.consts)
            run = lambda *inputs, **_: call_donating(      # noqa: E731
                staged.call_jaxpr, inputs, tuple(n_consts + k for k in donated),
                f"jit({name})", self._placement_key)
            if _root_modes.key_reuse:       # checked as the root trace checks a `jit`
                outs = eager_key_reuse_call(P.jit_p, inputs, {"jaxpr": staged.call_jaxpr}, run)
            else:
                outs = run(*inputs)
            if float_checks_on():
                self._check_float_outputs(outs, args, kwargs)
        elif type(current_trace()) is EvalTrace and float_checks_on():
            try:
                outs = bind(P.jit_p, *inputs, jaxpr=staged.call_jaxpr, name=name,
                            **self._call_params)
            except FloatingPointError as error:     # the root trace checked the call
                found = "nan" if "(nan)" in str(error) else "inf"
                self._locate_invalid_value(found, args, kwargs)
        else:
            outs = bind(P.jit_p, *inputs, jaxpr=staged.call_jaxpr, name=name,
                        **self._call_params)
        return tree_util.tree_unflatten(staged.out_tree, outs)

    def dynamic_arguments(self, args, kwargs) -> tuple:
        """`(args, kwargs)` of a call less the static arguments."""
        dyn_args, dyn_kwargs, _, _ = split_static_args(
            self._fun, args, kwargs, self._static_argnums, self._static_argnames)
        return tuple(dyn_args), dyn_kwargs

    def donated_arguments(self, args, kwargs) -> tuple:
        """`(positions, names)`: which of a call's dynamic arguments are donated, by
        position among the dynamic positional ones and by keyword name."""
        if not (self._donate_argnums or self._donate_argnames):
            return (), ()
        n_args = len(args)
        static = {n % n_args for n in self._static_argnums if -n_args <= n < n_args}
        donate = {n % n_args for n in self._donate_argnums if -n_args <= n < n_args}
        dynamic = [i for i in range(n_args) if i not in static]
        return (tuple(k for k, i in enumerate(dynamic) if i in donate),
                tuple(sorted(name for name in kwargs if name in self._donate_argnames
                             and name not in self._static_argnames)))

    def donated_leaves(self, args, kwargs) -> tuple:
        """Positions, among the call's dynamic input leaves, of the donated
        arguments' leaves (positional arguments first, then keywords by sorted name,
        as `tree_flatten((args, kwargs))` orders them)."""
        positions, names = self.donated_arguments(args, kwargs)
        if not (positions or names):
            return ()
        dyn_args, dyn_kwargs = self.dynamic_arguments(args, kwargs)
        pieces = [(k in positions, arg) for k, arg in enumerate(dyn_args)]
        pieces += [(name in names, dyn_kwargs[name]) for name in sorted(dyn_kwargs)]
        leaf_positions, offset = [], 0
        for is_donated, arg in pieces:
            count = len(tree_util.tree_leaves(arg))
            if is_donated:
                leaf_positions.extend(range(offset, offset + count))
            offset += count
        return tuple(leaf_positions)

    @property
    def placement(self) -> dict:
        """The `device`/`backend`/`compiler_options` given to this `jit`."""
        return dict(self._placement)

    def trace(self, *args, **kwargs) -> Traced:
        """This function's trace for these arguments, as JAX's `Traced`: its
        `.jaxpr` is the closed jaxpr a call binds, `.lower()` lowers it."""
        return Traced(self, args, kwargs)

    def lower(self, *args, **kwargs):
        """The XLA program minijax emits for these arguments (arrays, or
        `ShapeDtypeStruct`s standing for them), as a `Lowered`: `.as_text()` is its
        StableHLO, `.compile()` its executable, called as JAX's is: with the dynamic
        arguments only (the static ones are part of the program)."""
        return Lowered(self, args, kwargs)

    def eval_shape(self, *args, **kwargs):
        """The `ShapeDtypeStruct` pytree of this function's output for these arguments,
        the static ones (`static_argnums`/`static_argnames`) taken as values, as in
        JAX: the output types of this call's trace."""
        return self.trace(*args, **kwargs).out_info

    def clear_cache(self):
        self._jit_cache.clear()

    def __repr__(self):
        return f"<minijax.jit of {self._name}>"


def jit(fun: Callable | None = None, *, in_shardings=None, out_shardings=None,
        static_argnums=None, static_argnames=None, donate_argnums=None,
        donate_argnames=None, keep_unused: bool = False, device=None, backend=None,
        inline: bool = False, compiler_options=None):
    """Compile `fun` with XLA, as `jax.jit`. Usable as `@jit` or `@jit(static_argnums=...)`.

    `in_shardings`/`out_shardings` (`NamedSharding`s, as tree prefixes of the
    positional arguments / the result) lay arguments and results out across devices:
    they become sharding constraints in the program (`frontend/sharding.py`).

    `donate_argnums`/`donate_argnames` hand those arguments' buffers to XLA for reuse
    (a donated array is deleted by the call, as in JAX; a donated ref's new contents
    are written into its old buffer, and the ref goes on working). `inline=True`, as in
    JAX: traced by a staging trace (`make_jaxpr`, an outer `jit`, ...), a call records
    the function's equations in the caller's program rather than one nested `jit`
    equation; called eagerly, or under an eager transformation, it is one compiled
    call like any other.

    `device`/`backend` (deprecated in JAX, with JAX's warning) place the compiled
    program, and `compiler_options` (XLA's flags, a dict) go to its compilation. They
    apply wherever a call of this function is compiled on its own: the calls at the
    root (JAX's jit receives them), those that take minijax's own path there (refs,
    donation, NaN checks), and `.lower()`. A call staged into another program, or
    transformed, is compiled with the program around it, as in JAX."""
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames,
                                 donate_argnums=donate_argnums,
                                 donate_argnames=donate_argnames, keep_unused=keep_unused,
                                 inline=inline, in_shardings=in_shardings,
                                 out_shardings=out_shardings, device=device,
                                 backend=backend, compiler_options=compiler_options)
    placement = jit_placement(device, backend, compiler_options, in_shardings)
    if in_shardings is not None or out_shardings is not None:
        static = (static_argnums,) if isinstance(static_argnums, int) else static_argnums
        fun = constrain_jit_shardings(fun, in_shardings, out_shardings, static)
    return JitFunction(fun, static_argnums, static_argnames, donate_argnums,
                       donate_argnames, keep_unused, inline, placement)
