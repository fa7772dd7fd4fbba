"""The differential-testing harness: run the same program through minijax and JAX.

minijax is an independent implementation of JAX's semantics, so every disagreement
between the two is a finding in one of them. This module is what minijax's own test
suite uses, and it is public so users can point it at their programs:

    import jax, minijax
    from minijax.testing import assert_same_results
    assert_same_results(lambda x: minijax.numpy.tanh(x) * 2,
                        lambda x: jax.numpy.tanh(x) * 2, np.ones(3, np.float32))

`cross_check(f, *args)` goes further: `f` is any JAX function; JAX traces it, minijax
imports the program, and every transform (jit, grad, vjp, jvp, vmap, hessian,
compositions, checkpoint policies) is applied by each side with its own machinery and
compared, giving a `Report` with one row per transform (docs/cross_check.md).

`assert_trees_match` compares two pytrees of results leaf by leaf: structure, shape,
dtype, weak type (where both sides say) and values within a tolerance that depends
on the dtype. `check_jaxpr` is the check every traced program goes through in tests:
the verifier, and the text form's print -> parse -> print round trip.
"""
from .comparison import assert_trees_match, assert_same_results, check_jaxpr  # noqa: F401
# `cross_check` compares minijax's transforms of a JAX program with JAX's (cross_check.py,
# report.py, shrink.py); it builds on the comparison helpers.
from .cross_check import cross_check, assert_cross_check
from .report import Report, Row
# The running JAX's version as a tuple, for expectations that differ between releases;
# read where minijax's own code reads what the installed JAX offers.
from ..backends.jax_features import JAX_VERSION, parse_version  # noqa: F401
