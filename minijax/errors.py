"""JAX's `jax.errors`: the exceptions a program can catch by name.

minijax raises its own classes with JAX's names and JAX's hierarchy (defined in
`ir/errors.py`, which explains the tree), so `except jax.errors.TracerBoolConversionError`
reads the same after `import minijax as jax`. Three names are not minijax's own:

* `JaxRuntimeError` is JAX's class itself: minijax's programs run as `jax.jit`
  executables, so a failure at run time (a failed `checkify` check run through
  `jax.jit`, an out-of-memory) is raised by JAX's runtime.
* `JaxprTypeError` is what minijax's verifier raises for an ill-typed program
  (`ir/verify.py`'s `VerifierError`), as JAX's own jaxpr checker raises it.
* JAX's `InconclusiveDimensionOperation` belongs to symbolic (polymorphic) shapes,
  which minijax does not have; it is not here.
"""
from jax.errors import JaxRuntimeError

from .ir.errors import (JAXTypeError, JAXIndexError, ConcretizationTypeError,
                        TracerBoolConversionError, TracerIntegerConversionError,
                        TracerArrayConversionError, NonConcreteBooleanIndexError,
                        UnexpectedTracerError, KeyReuseError)
from .ir.verify import VerifierError as JaxprTypeError

__all__ = ["JAXTypeError", "JAXIndexError", "ConcretizationTypeError",
           "TracerBoolConversionError", "TracerIntegerConversionError",
           "TracerArrayConversionError", "NonConcreteBooleanIndexError",
           "UnexpectedTracerError", "KeyReuseError", "JaxRuntimeError", "JaxprTypeError"]
