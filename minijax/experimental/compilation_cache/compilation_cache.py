"""`minijax.experimental.compilation_cache.compilation_cache`: JAX's persistent
compilation cache, which is minijax's too. minijax compiles every program through
`jax.jit`, so the executables JAX keeps on disk are minijax's executables, and these
are JAX's own functions: `set_cache_dir(path)` names the cache's folder (the
`jax_compilation_cache_dir` flag) and `reset_cache()` makes the next compile open the
cache again, as after a change of folder."""
from jax.experimental.compilation_cache.compilation_cache import reset_cache, set_cache_dir

__all__ = ["set_cache_dir", "reset_cache"]
