"""JAX's `jax.extend.core.primitives`: the catalogue's primitives, each as
`<name>_p` (`add_p`, `sin_p`, `dot_general_p`, ...), the names JAX gives its own.

These are minijax's primitives, so the set is minijax's catalogue (`ir/primitives.py`),
not JAX's: a JAX primitive minijax lacks is missing here, and minijax's own (`new_ref_p`,
`custom_lin_p`) are present.
"""
from ...ir.registry import primitives_by_name as _primitives_by_name


def __getattr__(name):
    if name.endswith("_p") and name[:-2] in _primitives_by_name:
        return _primitives_by_name[name[:-2]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(f"{name}_p" for name in _primitives_by_name)
