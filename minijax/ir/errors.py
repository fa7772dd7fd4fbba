"""The exceptions minijax raises about a user's program, with JAX's public ones among
them.

Every error minijax raises about a program is a `MinijaxError`, and also the builtin
exception JAX raises for the same mistake (`TypeError`, `IndexError`, `ValueError`), so
`except TypeError` catches the same things under both libraries. Where JAX names the
mistake with a class of `jax.errors`, minijax has a class of that name and that place
in the hierarchy (`minijax.errors` lists them), so `except jax.errors.X` works after
`import minijax as jax`:

    JAXTypeError                      JAXIndexError
      ConcretizationTypeError           NonConcreteBooleanIndexError
        TracerBoolConversionError
      TracerIntegerConversionError
      TracerArrayConversionError
      UnexpectedTracerError
      KeyReuseError

They live in `ir` because the tracer raises most of them: a traced value asked for a
concrete one (`bool(x)`, `int(x)`, `x[mask]`, `np.asarray(x)`) or used after its trace
ended.
"""


class MinijaxError(Exception):
    """Base class of every error minijax raises about a user's program."""


class JAXTypeError(MinijaxError, TypeError):
    """A type error JAX gives a name of its own."""


class TracedShapeError(MinijaxError, TypeError):
    """A shape argument holds a traced size (`jnp.ones((n,))` under `jit`): JAX's plain
    TypeError, which names no class of its own."""


class JAXIndexError(MinijaxError, IndexError):
    """An index error JAX gives a name of its own."""


class ConcretizationTypeError(JAXTypeError):
    """A traced value was asked for its concrete value (`int(x)`, `x.item()`, a shape
    from a traced value) where only its type is known."""


class TracerBoolConversionError(ConcretizationTypeError):
    """`bool()` of a traced value: Python control flow on a value known only later."""


class TracerIntegerConversionError(JAXTypeError):
    """A traced value used as a Python index (`__index__`: `range(x)`, `seq[x]`)."""


class TracerArrayConversionError(JAXTypeError):
    """A traced value converted to a NumPy array (`np.asarray(x)`, a NumPy function)."""


class NonConcreteBooleanIndexError(JAXIndexError):
    """A boolean mask index whose values are traced: the result's shape would depend on
    them."""


class UnexpectedTracerError(JAXTypeError):
    """A traced value used after its transformation finished (it escaped: stored in a
    global, a list, an attribute)."""


class KeyReuseError(JAXTypeError):
    """A PRNG key used twice under the key-reuse checker."""
