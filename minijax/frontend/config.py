"""`minijax.config` and the flag context managers (`enable_x64`, `debug_nans`, ...).

JAX programs set flags with `jax.config.update("jax_<name>", value)`, read them as
`jax.config.jax_<name>`, and change one for a block with `with jax.<name>(value):`.
minijax answers the same calls with its own configuration object; it never changes
JAX's. A flag is one of three kinds:

* modelled by minijax (`_MODELLED` below): `jax_disable_jit`, `jax_debug_nans`,
  `jax_debug_infs`, `jax_default_matmul_precision` and those of `config_flags.py`
  (`jax_numpy_rank_promotion` among them) act as in JAX;
  `jax_enable_x64` reads False, and setting it True is refused with a ValueError,
  because minijax's types are JAX's default 32-bit ones (`ir/types.py`,
  `canonical_dtype`), so a program asking for 64-bit values would silently get
  32-bit ones.
* the platform (`jax_platform_name`, `jax_platforms`): before JAX starts its
  backend, JAX's flag is set (JAX picks the platform from it, as in a JAX program);
  after, minijax runs on the backend JAX chose, so naming that backend is accepted
  and any other is refused.
* the runtime's own settings (`_JAX_RUNTIME_FLAGS`: the persistent compilation
  cache's, traceback filtering, the number of CPU devices): they change how JAX
  caches compiled programs, shows tracebacks and starts its backend, not what a
  program computes, and minijax's programs are JAX executables, so `config.update`
  sets JAX's flag -- the one exception to the next rule, since programs written for
  JAX set them this way (`jax.config.update("jax_compilation_cache_dir", ...)`).
* any other flag JAX has: it reads as JAX's value (the runtime minijax lowers to
  is JAX's); setting it to that value is accepted, to another value refused --
  minijax does not change JAX's configuration, a program sets it with
  `jax.config.update` itself. A name JAX does not have is an AttributeError, as
  in JAX.

A modelled flag starts where JAX's own starts: its default, or the value of JAX's
environment variable for it (`JAX_DEBUG_NANS=1`, `JAX_DEFAULT_MATMUL_PRECISION=highest`,
...), read when minijax is imported and spelt as JAX takes it. minijax reads the
environment rather than `jax.config`, so a `jax.config.update` call -- before or
after minijax's import -- changes JAX's flag and not minijax's, as the rest of this
module has it. A value minijax cannot model (`JAX_ENABLE_X64=1`, a dot algorithm
preset's name for the precision) fails the import, naming the variable.

`config.update` sets a flag's default (what every thread starts from) and the
calling thread's value; a context manager changes the calling thread's value for its
block. `config.reset()` puts every flag back to where it started.
"""
from __future__ import annotations

import contextlib
import os

import jax

from ..ir import float_checks
from .jit import clear_caches
from .jit_modes import jit_disabled, set_jit_disabled_by_config
from ..ir.matmul_precision import (MATMUL_PRECISIONS, matmul_precision,
                                   set_matmul_precision_default)
from . import config_flags

_X64_REFUSED = (
    "minijax does not model 64-bit types: its values are JAX's default 32-bit ones "
    "(jax_enable_x64=False), so a float64 or int64 request would silently become 32-bit. "
    "Run the program with jax_enable_x64 off, or with JAX itself.")

# -- the modelled flags: name -> (read, set in this thread, set the default, validate) ----

def _x64(value):
    if config_flags.bool_flag("jax_enable_x64")(value):
        raise ValueError(_X64_REFUSED)
    return False


def _precision(value):
    key = value.lower() if isinstance(value, str) else value
    if key not in MATMUL_PRECISIONS:
        raise ValueError(f"jax_default_matmul_precision takes one of "
                         f"{sorted(k for k in MATMUL_PRECISIONS if k)} or None, got {value!r} "
                         f"(minijax does not model JAX's dot algorithm presets)")
    return key


def _set_precision_here(value):
    if value != matmul_precision.name:
        matmul_precision.name = value
        clear_caches()       # traces made under the old default hold its precision


def _set_precision_default(value):
    set_matmul_precision_default(value)
    _set_precision_here(value)


def _set_check_here(which):
    def set_here(value):
        float_checks.set_here(which, value)
    return set_here


_MODELLED = {
    "jax_enable_x64": (lambda: False, lambda value: None, lambda value: None, _x64),
    "jax_disable_jit": (jit_disabled, None, set_jit_disabled_by_config,
                        config_flags.bool_flag("jax_disable_jit")),
    "jax_debug_nans": (lambda: float_checks.float_checks.nans, _set_check_here("nans"),
                       lambda value: float_checks.set_default("nans", value),
                       config_flags.bool_flag("jax_debug_nans")),
    "jax_debug_infs": (lambda: float_checks.float_checks.infs, _set_check_here("infs"),
                       lambda value: float_checks.set_default("infs", value),
                       config_flags.bool_flag("jax_debug_infs")),
    "jax_default_matmul_precision": (lambda: matmul_precision.name,
                                     _set_precision_here, _set_precision_default, _precision),
    **config_flags.MODELLED,
}
_PLATFORM_FLAGS = ("jax_platform_name", "jax_platforms")
# Settings of JAX's runtime that no result depends on (so the oracle's results stay
# its own): set in JAX by `config.update`. Only those this JAX has are set.
_JAX_RUNTIME_FLAGS = frozenset({
    "jax_compilation_cache_dir", "jax_enable_compilation_cache",
    "jax_persistent_cache_min_compile_time_secs", "jax_persistent_cache_min_entry_size_bytes",
    "jax_persistent_cache_enable_xla_caches", "jax_raise_persistent_cache_errors",
    "jax_compilation_cache_max_size", "jax_traceback_filtering",
    # how many CPU devices JAX's backend starts with (JAX refuses it once started),
    # and whether its CPU client dispatches asynchronously
    "jax_num_cpu_devices", "jax_cpu_enable_async_dispatch"})

# -- where the modelled flags start: JAX's environment variables --------------------------

_DEFAULTS = {"jax_enable_x64": False, "jax_disable_jit": False, "jax_debug_nans": False,
             "jax_debug_infs": False, "jax_default_matmul_precision": None,
             **config_flags.DEFAULTS}
# How JAX spells a bool in its environment variables (its `bool_env`).
_TRUE_WORDS = ("y", "yes", "t", "true", "on", "1")
_FALSE_WORDS = ("n", "no", "f", "false", "off", "0")


def _start_from_environment(name):
    """Flag `name`'s start: JAX's variable for it (`name.upper()`) when set, else its
    default. JAX reads the same variable when it is imported, so both start alike."""
    default = _DEFAULTS[name]
    text = os.environ.get(name.upper())
    if text is None:
        return default
    value = text
    if isinstance(default, bool):
        word = text.lower()
        if word not in _TRUE_WORDS + _FALSE_WORDS:
            raise ValueError(f"invalid truth value {text!r} for environment {name.upper()!r}")
        value = word in _TRUE_WORDS
    try:
        return _MODELLED[name][3](value)
    except ValueError as error:
        raise ValueError(f"{name.upper()}={text!r} is set in the environment, and "
                         f"minijax cannot start from it: {error}") from None


_STARTS = {name: _start_from_environment(name) for name in _MODELLED}


def _jax_flag_names() -> frozenset:
    return frozenset(jax.config.values)


class Config:
    """minijax's `config`: `update(name, value)`, `read(name)`, `config.jax_<name>`,
    `values`, `x64_enabled`, and `reset()`."""

    def update(self, name: str, value):
        """Set flag `name` to `value`: its default and this thread's value."""
        if name in _MODELLED:
            _, _, set_default, validate = _MODELLED[name]
            set_default(validate(value))
            return
        self._check_jax_flag(name)
        if name in _PLATFORM_FLAGS and not _backend_started():
            # Before JAX picks its backend, the platform is the runtime's own setting,
            # as `jax_num_cpu_devices` is (and asking JAX which one it runs on would
            # start it, too early for that flag): JAX's flag chooses it.
            jax.config.update(name, value)
        elif name in _PLATFORM_FLAGS:
            self._check_platform(name, value)
        elif name in _JAX_RUNTIME_FLAGS:
            jax.config.update(name, value)
        elif value != getattr(jax.config, name):
            raise ValueError(
                f"minijax does not change JAX's configuration: {name} is "
                f"{getattr(jax.config, name)!r} in the JAX it runs on, and {value!r} was "
                f"asked. Set it with jax.config.update({name!r}, {value!r}) before "
                f"running the program.")

    def read(self, name: str):
        """Flag `name`'s value in this thread."""
        if name in _MODELLED:
            return _MODELLED[name][0]()
        self._check_jax_flag(name)
        return getattr(jax.config, name)

    def __getattr__(self, name: str):
        if name.startswith("jax_"):
            try:
                return self.read(name)
            except AttributeError:
                pass
        raise AttributeError(f"'Config' object has no attribute {name!r}")

    @property
    def values(self) -> dict:
        """Every flag's value in this thread (JAX's names)."""
        out = {name: getattr(jax.config, name) for name in _jax_flag_names()
               if hasattr(jax.config, name)}
        out.update({name: read() for name, (read, *_) in _MODELLED.items()})
        return out

    @property
    def x64_enabled(self) -> bool:
        return False

    def reset(self):
        """Every flag minijax models back to where it started: its default, or what
        JAX's environment variable for it says (for tests and the REPL)."""
        for name, (_, _, set_default, _) in _MODELLED.items():
            set_default(_STARTS[name])

    @staticmethod
    def _check_jax_flag(name):
        if name not in _jax_flag_names() and name not in _PLATFORM_FLAGS:
            raise AttributeError(f"Unrecognized config option: {name}")

    @staticmethod
    def _check_platform(name, value):
        backend = jax.default_backend()
        asked = [] if value is None else str(value).lower().split(",")
        if asked and backend not in asked:
            raise ValueError(
                f"minijax runs on the backend JAX chose ({backend!r}); {name}={value!r} "
                f"names another. Set it with jax.config.update({name!r}, {value!r}) "
                f"before JAX starts its backend.")


def _backend_started() -> bool:
    """Whether JAX has started a backend (without starting one): JAX keeps its
    backends in an `lru_cache`, empty until the first is made. A JAX without that
    cache answers True, which keeps the check that starts it."""
    import jax.extend.backend    # (here: a platform flag is set once, if ever)
    info = getattr(jax.extend.backend.get_backend, "cache_info", None)
    return True if info is None else info().currsize > 0


config = Config()
config.reset()


class FlagContext:
    """A flag as a context manager, as `jax.enable_x64`, `jax.debug_nans`, ...:
    `with minijax.debug_nans(True): ...` sets it in this thread for the block;
    `.value` reads it."""

    def __init__(self, name: str):
        self._name = name

    @property
    def value(self):
        return config.read(self._name)

    @contextlib.contextmanager
    def __call__(self, new_val=True):
        read, set_here, _, validate = _MODELLED[self._name]
        new_val = validate(new_val)
        previous = read()
        set_here(new_val)
        try:
            yield
        finally:
            set_here(previous)

    def __repr__(self):
        return f"FlagContext({self._name}={self.value!r})"


enable_x64 = FlagContext("jax_enable_x64")
debug_nans = FlagContext("jax_debug_nans")
debug_infs = FlagContext("jax_debug_infs")
default_matmul_precision = FlagContext("jax_default_matmul_precision")
numpy_rank_promotion = FlagContext("jax_numpy_rank_promotion")
numpy_dtype_promotion = FlagContext("jax_numpy_dtype_promotion")
enable_checks = FlagContext("jax_enable_checks")
log_compiles = FlagContext("jax_log_compiles")
no_tracing = FlagContext("jax_no_tracing")
default_device = FlagContext("jax_default_device")
check_tracer_leaks = FlagContext("jax_check_tracer_leaks")
debug_key_reuse = FlagContext("jax_debug_key_reuse")
legacy_prng_key = FlagContext("jax_legacy_prng_key")
enable_custom_prng = FlagContext("jax_enable_custom_prng")
default_prng_impl = FlagContext("jax_default_prng_impl")


@contextlib.contextmanager
def checking_leaks():
    """`check_tracer_leaks(True)` for the block, as `jax.checking_leaks`."""
    with check_tracer_leaks(True):
        yield
