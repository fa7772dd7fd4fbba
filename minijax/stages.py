"""`minijax.stages`: the objects of ahead-of-time compilation under `jax.stages`' names.

`jit(f)` is a `Wrapped`; `jit(f).trace(*args)` a `Traced` (minijax's trace of the
call), whose `.lower()` is a `Lowered` (the XLA program minijax emits) and that one's
`.compile()` a `Compiled` (its executable). `ArgInfo` describes one argument leaf;
`CompilerOptions` is the type of `Lowered.compile`'s options. The classes live in
`frontend/stages.py` and `frontend/aot.py`.
"""
from .frontend.aot import Compiled, Lowered, Traced
from .frontend.stages import ArgInfo, CompilerOptions, Wrapped

__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "Lowered", "Traced", "Wrapped"]
