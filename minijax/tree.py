"""`minijax.tree`: the short-named pytree functions of `jax.tree`.

`minijax.tree.map(f, tree)` is `minijax.tree_util.tree_map(f, tree)`, and so on for
`leaves`, `structure`, `flatten`, `unflatten`, `transpose`, `reduce`, `all` and the
`*_with_path` variants. Pytrees are JAX's own (see `minijax.tree_util`), so these are
`jax.tree`'s functions, re-exported by name from the installed jax.
"""
import jax.tree as _jax_tree

__all__ = sorted(name for name in dir(_jax_tree) if not name.startswith("_")
                 and callable(getattr(_jax_tree, name)))
globals().update({name: getattr(_jax_tree, name) for name in __all__})
