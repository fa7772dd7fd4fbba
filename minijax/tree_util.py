"""`minijax.tree_util`: pytrees, which are JAX's own.

minijax flattens every argument and result with `jax.tree_util`, so a class
registered here (or with JAX directly) is a pytree to both libraries alike. This module
re-exports every public name of `jax.tree_util` of the installed jax (`tree_map`,
`tree_flatten`, `register_pytree_node`, `Partial`, `keystr`, ...), so
`from minijax.tree_util import tree_map` is `from jax.tree_util import tree_map`.
"""
import jax.tree_util as _jax_tree_util

__all__ = sorted(name for name in dir(_jax_tree_util) if not name.startswith("_"))
globals().update({name: getattr(_jax_tree_util, name) for name in __all__})
