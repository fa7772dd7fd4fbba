"""This thread's `jax_default_matmul_precision`: what a contraction given no
`precision=` records in its equation.

`minijax.config` sets it (`set_matmul_precision_default` for every thread's start,
`matmul_precision.name` for this thread's context manager). Both the public
contractions (`frontend/lax_dot.py`) and the products derivative rules build for
themselves (`transforms/linalg_rules.py`) read it, as JAX's rules reach its config
through `lax.dot_general`, so a GPU's TensorFloat-32 default never sneaks into a
derivative that the user asked to run at full precision.
"""
from __future__ import annotations

import threading

# jax_default_matmul_precision's values (JAX's names) and the Precision each means.
MATMUL_PRECISIONS = {
    None: None, "default": "default", "fastest": "default", "bfloat16": "default",
    "high": "high", "tensorfloat32": "high", "bfloat16_3x": "high",
    "highest": "highest", "float32": "highest"}


class _MatmulPrecision(threading.local):
    """This thread's `jax_default_matmul_precision` (set by `minijax.config`)."""
    def __init__(self):
        self.name = _matmul_precision_default[0]


_matmul_precision_default = [None]     # what `config.update` set: each thread's start
matmul_precision = _MatmulPrecision()


def set_matmul_precision_default(name):
    """`config.update("jax_default_matmul_precision", name)`: every thread's start."""
    _matmul_precision_default[0] = name


def default_precision():
    """The `precision` param of a contraction given none: None, or the pair of
    `Precision` names (one per operand) the thread's setting means."""
    meant = MATMUL_PRECISIONS[matmul_precision.name]
    return None if meant is None else (meant.upper(), meant.upper())
