"""Every primitive is handled by every pass: a rule of its own or the pass's generic
path (`python -m minijax rules` prints the same table).

A new primitive without, say, a vmap rule fails here rather than in a user's program.
`KNOWN_HOLES` lists what is deliberately not supported yet, with the reason; keeping it
explicit makes the holes part of the record rather than a surprise.
"""
from __future__ import annotations

import pytest

import minijax  # noqa: F401  -- importing the package registers every rule table
import minijax.interop  # noqa: F401  -- the import and export tables of the JAX bridge
from minijax.ir.primitives import primitives_by_name, rule_tables, generic_paths

KNOWN_HOLES = {
    # Forward mode through a custom_vjp function is an error (as in JAX); custom_lin
    # only exists between linearize and transpose, where no batching happens.
    # JAX has no derivative of igamma_grad_a (d/da of igamma) either.
    # Nor of the LAPACK kernels but tridiagonal_solve (JAX raises NotImplementedError).
    "jvp": {"custom_lin", "igamma_grad_a", "tridiagonal", "householder_product", "hessenberg",
            "schur", "ormqr"}, "vmap": {"custom_lin"},
    # No JAX primitive lands on custom_lin: JAX keeps its own inside its AD.
    # (expand_dims, which JAX spells as broadcast_in_dim, is reached by importing
    # JAX's `stack`.) JAX's custom_vmap_call holds its vmap rule as Python code written
    # with JAX's functions, which cannot run on minijax's tracers.
    # random_consume is the mark minijax's key-reuse checker reads; JAX's checker
    # reads its own primitives' signatures, and binds no such mark in user programs.
    "import": {"custom_lin", "custom_vmap_call", "random_consume"},
}


def _handled(prim, column) -> bool:
    path = generic_paths.get(column)
    return prim in rule_tables[column] or (path is not None and path.serves(prim))


@pytest.mark.parametrize("column", sorted(rule_tables))
def test_every_primitive_is_handled(column):
    allowed = KNOWN_HOLES.get(column, set())
    holes = sorted(name for name, prim in primitives_by_name.items()
                   if not _handled(prim, column) and name not in allowed)
    assert not holes, f"{column} has no rule for {holes}"


def test_the_core_tables_are_registered():
    assert {"type", "xla", "reference", "jvp", "partial_eval", "transpose", "dce", "vmap",
            "discharge", "import", "export"} <= set(rule_tables)
