"""The flags `config.py` models beyond its first five, and the context managers JAX
has for flags minijax does not model.

Modelled here (each readable and settable as `config.jax_<name>` and usable as
`with minijax.<name>(value):`):

* `jax_numpy_dtype_promotion`: 'standard' or 'strict'; `numpy/_promotion.py` reads
  it, and under 'strict' refuses implicit promotion between different dtypes with
  JAX's `TypePromotionError`.
* `jax_enable_checks`: minijax's self-checks (`ir/checks.py`: every traced jaxpr is
  verified and round-tripped). One process-wide switch, as `MINIJAX_ENABLE_CHECKS`.
* `jax_log_compiles`: a `jit` trace of a new signature is logged (logger `minijax`,
  level WARNING) with the message JAX logs when it compiles that function.
* `jax_no_tracing`: a `jit` trace of a new signature is JAX's RuntimeError instead.
* `jax_check_tracer_leaks`: a finished trace with tracers still referenced is an
  error (`ir/leak_checks.py`); `checking_leaks()` turns it on for a block.
* `jax_default_prng_impl`: 'threefry2x32', 'rbg' or 'unsafe_rbg': the implementation
  of the keys `minijax.random` makes, and of raw key data it is given.
* `jax_default_device`: None or this process's device (or its platform's name).
  minijax runs on JAX's default device, and on a machine with one device every
  accepted value names that device.

Any other JAX flag (the transfer guards, `jax_threefry_partitionable`, ...) still reads as
JAX's value; its context manager accepts that value (a no-op) and refuses others,
as `config.update` does (`config.py`).
"""
from __future__ import annotations

import contextlib
import logging
import os
import threading

import jax

from ..ir import checks, leak_checks

DTYPE_PROMOTIONS = ("standard", "strict")
RANK_PROMOTIONS = ("allow", "warn", "raise")
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
            if self._clears_caches:
                from .jit import clear_caches       # (jit.py imports this module)
                clear_caches()     # traces made under the old value would be reused

    def set_default(self, value):
        self.default = value
        self.set_here(value)

    def entry(self):
        """The (read, set here, set default, validate) row of `config._MODELLED`."""
        return (lambda: self.value, self.set_here, self.set_default, self.validate)


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
# read by `minijax.random` when it makes a key or reads raw key data; a cached trace
# would keep the old implementation
default_prng_impl = ThreadFlag("jax_default_prng_impl", "threefry2x32",
                               one_of("jax_default_prng_impl",
                                      ("threefry2x32", "rbg", "unsafe_rbg")),
                               clears_caches=True)


def _set_checks(value):
    checks.enable_checks(value)


MODELLED = {
    "jax_numpy_dtype_promotion": dtype_promotion.entry(),
    "jax_numpy_rank_promotion": rank_promotion.entry(),
    "jax_log_compiles": log_compiles.entry(),
    "jax_no_tracing": no_tracing.entry(),
    "jax_default_device": default_device.entry(),
    "jax_default_prng_impl": default_prng_impl.entry(),
    "jax_enable_checks": (checks.checks_enabled, _set_checks, _set_checks,
                          bool_flag("jax_enable_checks")),
    "jax_check_tracer_leaks": (lambda: leak_checks.checking.on, leak_checks.set_here,
                               leak_checks.set_default, bool_flag("jax_check_tracer_leaks")),
}
# Where each starts (before JAX's environment variable, which config.py reads):
# minijax's checks start from MINIJAX_ENABLE_CHECKS.
DEFAULTS = {"jax_numpy_dtype_promotion": "standard", "jax_numpy_rank_promotion": "allow",
            "jax_log_compiles": False,
            "jax_no_tracing": False, "jax_default_device": None,
            "jax_default_prng_impl": "threefry2x32",
            "jax_check_tracer_leaks": False,
            "jax_enable_checks": os.environ.get("MINIJAX_ENABLE_CHECKS", "")
            not in ("", "0")}


def _tuple_text(items) -> str:
    """`items` (texts) shown as Python shows a tuple of them, as JAX's message does."""
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _aval_text(a) -> str:
    weak = ", weak_type=True" if a.weak_type else ""
    return f"ShapedArray({a.dtype.name}[{','.join(map(str, a.shape))}]{weak})"


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
                       "%s.", where, _tuple_text([_aval_text(a) for a in in_avals]),
                       _tuple_text(["UnspecifiedValue"] * len(in_avals)))


def same_as_jax(name: str, value) -> bool:
    """Whether `value` is JAX's value of the flag `name` spelt another way: an unset
    transfer guard (None) is 'allow' to JAX."""
    return (name.startswith("jax_transfer_guard") and value == "allow"
            and getattr(jax.config, name) is None)


class JaxValueOnly:
    """The context manager of a JAX flag minijax does not model: JAX's current value
    is accepted (and changes nothing), another one refused as `config.update` does."""

    def __init__(self, name: str):
        self._name = name

    @property
    def value(self):
        return getattr(jax.config, self._name)

    @contextlib.contextmanager
    def __call__(self, new_val=True):
        from .config import config
        config.update(self._name, new_val)
        yield

    def __repr__(self):
        return f"JaxValueOnly({self._name}={self.value!r})"


def transfer_guard(new_val: str):
    """All three transfer guards at once, as `jax.transfer_guard`."""
    stack = contextlib.ExitStack()
    for direction in ("host_to_device", "device_to_device", "device_to_host"):
        stack.enter_context(JaxValueOnly(f"jax_transfer_guard_{direction}")(new_val))
    return stack


transfer_guard_host_to_device = JaxValueOnly("jax_transfer_guard_host_to_device")
transfer_guard_device_to_device = JaxValueOnly("jax_transfer_guard_device_to_device")
transfer_guard_device_to_host = JaxValueOnly("jax_transfer_guard_device_to_host")
explain_cache_misses = JaxValueOnly("jax_explain_cache_misses")
debug_key_reuse = JaxValueOnly("jax_debug_key_reuse")
threefry_partitionable = JaxValueOnly("jax_threefry_partitionable")
legacy_prng_key = JaxValueOnly("jax_legacy_prng_key")
enable_custom_prng = JaxValueOnly("jax_enable_custom_prng")
softmax_custom_jvp = JaxValueOnly("jax_softmax_custom_jvp")
no_execution = JaxValueOnly("jax_no_execution")
