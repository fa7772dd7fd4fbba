"""The flags `config.py` models beyond its first five.

Modelled here (each readable and settable as `config.jax_<name>` and usable as
`with minijax.<name>(value):`):

* `jax_numpy_dtype_promotion`: 'standard' or 'strict'; `numpy/_promotion.py` reads
  it, and under 'strict' refuses implicit promotion between different dtypes with
  JAX's `TypePromotionError`.
* `jax_enable_checks`: minijax's self-checks (`ir/checks.py`: every traced jaxpr is
  verified and round-tripped). One process-wide switch, as `MINIJAX_ENABLE_CHECKS`.
* `jax_log_compiles`: a `jit` trace of a new signature is logged (logger `minijax`,
  level WARNING) with the message JAX logs when it compiles that function; so is an
  eager primitive's first program per signature (`backends/eager_dispatch.py`).
* `jax_no_tracing`: either of those is JAX's RuntimeError instead.
* `jax_explain_cache_misses`: a `jit` trace of a new signature logs why
  (`frontend/cache_misses.py`).
* `jax_softmax_custom_jvp`: which derivative `nn.softmax` has (`nn/functions.py`).
* the transfer guards and `jax_no_execution` (`JaxApplied`): JAX's runtime is
  minijax's, so these are JAX's own, entered around minijax's dispatch while set.
* `jax_check_tracer_leaks`: a finished trace with tracers still referenced is an
  error (`ir/leak_checks.py`); `checking_leaks()` turns it on for a block.
* `jax_debug_key_reuse`: a PRNG key used twice is a `KeyReuseError`
  (`transforms/key_reuse.py`); one of this thread's root modes (`ir/root_modes.py`).
* `jax_legacy_prng_key`: 'allow', 'warn' or 'error': what a raw `uint32` key given
  to a `minijax.random` function does (nothing, JAX's UserWarning, JAX's ValueError);
  `frontend/random_core.py` reads it.
* `jax_enable_custom_prng`: `PRNGKey`, and `split`/`fold_in` of a raw key, return
  typed keys, and a raw key given to a random function is JAX's FutureWarning.
* `jax_default_prng_impl`: 'threefry2x32', 'rbg' or 'unsafe_rbg': the implementation
  of the keys `minijax.random` makes, and of raw key data it is given.
* `jax_default_device`: None or this process's device (or its platform's name).
  minijax runs on JAX's default device, and on a machine with one device every
  accepted value names that device.
* `jax_threefry_partitionable`: True (JAX's default) or False: how a threefry key's
  `split` and `random_bits` lay out their counters (`frontend/threefry_layout.py`).
"""
from __future__ import annotations

import contextlib
import logging
import os
import threading

import jax

from ..ir import checks, leak_checks, root_modes

DTYPE_PROMOTIONS = ("standard", "strict")
RANK_PROMOTIONS = ("allow", "warn", "raise")
LEGACY_PRNG_KEYS = ("allow", "warn", "error")
logger = logging.getLogger("minijax")


class ThreadFlag:
    """A flag's value in each thread, starting from a shared default."""

    def __init__(self, name, default, validate, clears_caches):
        self.name, self.default, self.validate = name, default, validate
        self._clears_caches = clears_caches
        self._local = threading.local()

    @property
    def value(self):
        return getattr(self._local, "value", self.default)

    def set_here(self, value):
        if value != self.value:
            self._local.value = value
            self._forget_traces()

    def set_default(self, value):
        # Compared before the default moves: a thread that never set its own value
        # reads the default, so set_here alone would see no change and keep the
        # traces made under the old value (config.update in a fresh process).
        if value != self.default or value != self.value:
            self._forget_traces()
        self.default = value
        self.set_here(value)

    def _forget_traces(self):
        if self._clears_caches:
            from .jit import clear_caches       # (jit.py imports this module)
            clear_caches()     # traces made under the old value would be reused

    def entry(self):
        """The (read, set here, set default, validate) row of `config._MODELLED`."""
        return (lambda: self.value, self.set_here, self.set_default, self.validate)

    @contextlib.contextmanager
    def __call__(self, new_val=True):
        """The flag set in this thread for a block, as JAX's flag objects are used
        (`with minijax.softmax_custom_jvp(True):`)."""
        new_val = self.validate(new_val)
        previous = self.value
        self.set_here(new_val)
        try:
            yield
        finally:
            self.set_here(previous)

    def __repr__(self):
        return f"{type(self).__name__}({self.name}={self.value!r})"


def bool_flag(name):
    """The validator of a bool flag: 0/1 and the bools, as JAX's flags take them."""
    def validate(value):
        if value not in (True, False, 0, 1):
            raise ValueError(f"{name} takes a bool, got {value!r}")
        return bool(value)
    return validate


def one_of(name, choices):
    """The validator of a flag that takes one of `choices`."""
    def validate(value):
        if value not in choices:
            raise ValueError(f"{name} takes one of {choices}, got {value!r}")
        return value
    return validate


TRANSFER_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")


def optional_level(name):
    """The validator of a transfer guard: None (unset) or one of JAX's levels."""
    def validate(value):
        if value is not None and value not in TRANSFER_LEVELS:
            raise ValueError(f"{name} takes None or one of {list(TRANSFER_LEVELS)}, "
                             f"got {value!r}")
        return value
    return validate


class JaxApplied(ThreadFlag):
    """A flag whose meaning is JAX's runtime itself (a transfer guard, no execution):
    minijax's programs are `jax.jit` executables and its arrays JAX's, so while the
    flag is set in a thread, minijax's dispatch there runs inside JAX's own context
    manager for it with minijax's value (`ir/root_modes.py`: `jax_applied` sends
    calls off their fast paths to where that context is entered). The flag's own
    context manager also enters JAX's for its block, so what a program does with
    its arrays there (`float(x)`, `np.asarray(x)`) is guarded as in JAX. Unset, JAX
    is not touched: importing minijax changes nothing in JAX's configuration."""

    def __init__(self, name, unset, validate, jax_context):
        super().__init__(name, unset, validate, clears_caches=False)
        self.unset, self._jax_context = unset, jax_context

    def set_here(self, value):
        super().set_here(value)
        root_modes.set_here("jax_applied", any(f.value != f.unset for f in _APPLIED))

    def set_default(self, value):
        self.default = value
        root_modes.set_default("jax_applied", any(f.default != f.unset for f in _APPLIED))
        self.set_here(value)

    @contextlib.contextmanager
    def __call__(self, new_val=True):
        new_val = self.validate(new_val)
        with super().__call__(new_val), self._jax_context(new_val):
            yield

    def enter_jax(self, stack):
        if self.value != self.unset:
            stack.enter_context(self._jax_context(self.value))


def _device(value):
    if value is None:
        return None
    if isinstance(value, str):
        if value.lower() != jax.default_backend():
            raise ValueError(f"jax_default_device={value!r} names a platform this process "
                             f"does not run on: minijax runs on {jax.default_backend()!r}")
        return value
    if value not in jax.local_devices():
        raise ValueError(f"jax_default_device takes None, a platform name or one of this "
                         f"process's devices {jax.local_devices()}, got {value!r}")
    return value


dtype_promotion = ThreadFlag("jax_numpy_dtype_promotion", "standard",
                             one_of("jax_numpy_dtype_promotion", DTYPE_PROMOTIONS),
                             clears_caches=True)
# read by `minijax.numpy`'s elementwise functions when they broadcast operands of
# different ranks; a cached trace would skip the check (or keep a refusal)
rank_promotion = ThreadFlag("jax_numpy_rank_promotion", "allow",
                            one_of("jax_numpy_rank_promotion", RANK_PROMOTIONS),
                            clears_caches=True)
log_compiles = ThreadFlag("jax_log_compiles", False, bool_flag("jax_log_compiles"), False)
no_tracing = ThreadFlag("jax_no_tracing", False, bool_flag("jax_no_tracing"), False)
default_device = ThreadFlag("jax_default_device", None, _device, False)
# Both are read when a random function is called, which a cached trace skips.
raw_key_policy = ThreadFlag("jax_legacy_prng_key", "allow",
                            one_of("jax_legacy_prng_key", LEGACY_PRNG_KEYS), clears_caches=True)
custom_prng = ThreadFlag("jax_enable_custom_prng", False, bool_flag("jax_enable_custom_prng"),
                         clears_caches=True)
# read by `jit` when it is about to trace (`frontend/cache_misses.py`)
explain_cache_misses = ThreadFlag("jax_explain_cache_misses", False,
                                  bool_flag("jax_explain_cache_misses"), False)
# read by `nn.softmax` as it traces: a cached trace would keep the other rule
softmax_custom_jvp = ThreadFlag("jax_softmax_custom_jvp", False,
                                bool_flag("jax_softmax_custom_jvp"), clears_caches=True)


transfer_guard_host_to_device = JaxApplied(
    "jax_transfer_guard_host_to_device", None,
    optional_level("jax_transfer_guard_host_to_device"), jax.transfer_guard_host_to_device)
transfer_guard_device_to_device = JaxApplied(
    "jax_transfer_guard_device_to_device", None,
    optional_level("jax_transfer_guard_device_to_device"),
    jax.transfer_guard_device_to_device)
transfer_guard_device_to_host = JaxApplied(
    "jax_transfer_guard_device_to_host", None,
    optional_level("jax_transfer_guard_device_to_host"), jax.transfer_guard_device_to_host)
no_execution = JaxApplied("jax_no_execution", False, bool_flag("jax_no_execution"),
                          jax.no_execution)
_APPLIED = (transfer_guard_host_to_device, transfer_guard_device_to_device,
            transfer_guard_device_to_host, no_execution)
_DIRECTIONS = _APPLIED[:3]


@contextlib.contextmanager
def _applied_to_jax():
    with contextlib.ExitStack() as stack:
        for flag in _APPLIED:
            flag.enter_jax(stack)
        yield


root_modes._jax_context[0] = _applied_to_jax


def host_transfers_guarded() -> bool:
    """Whether a host-to-device transfer guard other than 'allow' applies in this
    thread, minijax's or JAX's own: then a transfer JAX makes implicitly must be made
    implicitly (`numpy/_creation.py`), since its levels tell the two apart."""
    level = transfer_guard_host_to_device.value or jax.config.jax_transfer_guard_host_to_device
    return level not in (None, "allow")


class _AllTransferGuards(ThreadFlag):
    """`jax_transfer_guard`: set, it sets the three directions, as JAX's does (where
    it is only ever set: a direction's own flag says what applies to it)."""

    def set_default(self, value):
        super().set_default(value)
        for flag in _DIRECTIONS:
            flag.set_default(value)


_all_transfer_guards = _AllTransferGuards("jax_transfer_guard", None,
                                          optional_level("jax_transfer_guard"), False)


@contextlib.contextmanager
def transfer_guard(new_val: str):
    """All three transfer guards for a block, as `jax.transfer_guard`."""
    with contextlib.ExitStack() as stack:
        for flag in (*_DIRECTIONS, _all_transfer_guards):
            stack.enter_context(flag(new_val))
        yield
# read by `minijax.random` when it makes a key or reads raw key data; a cached trace
# would keep the old implementation
default_prng_impl = ThreadFlag("jax_default_prng_impl", "threefry2x32",
                               one_of("jax_default_prng_impl",
                                      ("threefry2x32", "rbg", "unsafe_rbg")),
                               clears_caches=True)
# read as `split` and the samplers trace; a cached trace would keep the other layout
threefry_partitionable = ThreadFlag("jax_threefry_partitionable", True,
                                    bool_flag("jax_threefry_partitionable"),
                                    clears_caches=True)


def _set_checks(value):
    checks.enable_checks(value)


MODELLED = {
    "jax_numpy_dtype_promotion": dtype_promotion.entry(),
    "jax_numpy_rank_promotion": rank_promotion.entry(),
    "jax_log_compiles": log_compiles.entry(),
    "jax_no_tracing": no_tracing.entry(),
    "jax_default_device": default_device.entry(),
    "jax_legacy_prng_key": raw_key_policy.entry(),
    "jax_enable_custom_prng": custom_prng.entry(),
    "jax_softmax_custom_jvp": softmax_custom_jvp.entry(),
    "jax_explain_cache_misses": explain_cache_misses.entry(),
    **{flag.name: flag.entry() for flag in (*_APPLIED, _all_transfer_guards)},
    "jax_default_prng_impl": default_prng_impl.entry(),
    "jax_threefry_partitionable": threefry_partitionable.entry(),
    "jax_enable_checks": (checks.checks_enabled, _set_checks, _set_checks,
                          bool_flag("jax_enable_checks")),
    # (A trace made while it is on is cached apart: frontend/tracing.py, staging_key.)
    "jax_debug_key_reuse": (lambda: root_modes.modes.key_reuse,
                            lambda value: root_modes.set_here("key_reuse", value),
                            lambda value: root_modes.set_default("key_reuse", value),
                            bool_flag("jax_debug_key_reuse")),
    "jax_check_tracer_leaks": (lambda: leak_checks.checking.on, leak_checks.set_here,
                               leak_checks.set_default, bool_flag("jax_check_tracer_leaks")),
}
# Where each starts (before JAX's environment variable, which config.py reads):
# minijax's checks start from MINIJAX_ENABLE_CHECKS.
DEFAULTS = {"jax_numpy_dtype_promotion": "standard", "jax_numpy_rank_promotion": "allow",
            "jax_log_compiles": False,
            "jax_no_tracing": False, "jax_default_device": None,
            "jax_check_tracer_leaks": False, "jax_debug_key_reuse": False,
            "jax_legacy_prng_key": "allow", "jax_enable_custom_prng": False,
            "jax_softmax_custom_jvp": False, "jax_explain_cache_misses": False,
            **{flag.name: flag.unset for flag in _APPLIED}, "jax_transfer_guard": None,
            "jax_default_prng_impl": "threefry2x32", "jax_threefry_partitionable": True,
            "jax_enable_checks": os.environ.get("MINIJAX_ENABLE_CHECKS", "")
            not in ("", "0")}


def _tuple_text(items) -> str:
    """`items` (texts) shown as Python shows a tuple of them, as JAX's message does."""
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def before_trace(where: str, in_avals, fun):
    """What `jit` does before it traces `fun` for a signature it has not seen: refuse
    under `jax_no_tracing`, log under `jax_log_compiles` (JAX's words for both)."""
    if no_tracing.value:
        code = getattr(fun, "__code__", None)
        site = f" at {code.co_filename}:{code.co_firstlineno}" if code is not None else ""
        name = getattr(fun, "__name__", where)
        raise RuntimeError(f"re-tracing function {name}{site} for `jit`, but "
                           f"'no_tracing' is set")
    if log_compiles.value:
        logger.warning("Compiling %s with global shapes and types %s. Argument mapping: "
                       "%s.", where, _tuple_text([repr(a) for a in in_avals]),
                       _tuple_text(["UnspecifiedValue"] * len(in_avals)))
