"""`minijax.scipy.integrate`: `trapezoid`, as `jax.scipy.integrate` has it.

JAX defines it apart from `jnp.trapezoid` but computes the same rule (half the sum of
neighbouring samples times the spacing `dx`, or `diff(x)`, along `axis`), so this is
`minijax.numpy.trapezoid`, which is compiled whole when called eagerly, as JAX's is."""
from ..numpy import trapezoid  # noqa: F401

__all__ = ["trapezoid"]
