"""`minijax.profiler`: JAX's profiler, which sees minijax's programs as it sees JAX's.

minijax runs every program as a `jax.jit` executable and keeps its arrays as
`jax.Array`s, so the runtime JAX profiles is minijax's runtime. These are JAX's own
functions and classes, all of the installed JAX's: a trace (`trace`, `start_trace`/`stop_trace`, the profiler
server), annotations of its timeline (`TraceAnnotation`, `StepTraceAnnotation`,
`annotate_function`), and the device memory profile (`device_memory_profile`,
`save_device_memory_profile`). Nothing of minijax's transformations is involved.
"""
import jax.profiler as _jax_profiler

# Every public name of the installed JAX's profiler (the set grows between releases:
# 0.12 adds `ProfileSession`, `export_profile_data`, ...).
__all__ = sorted(name for name in dir(_jax_profiler) if not name.startswith("_"))
globals().update({name: getattr(_jax_profiler, name) for name in __all__})
