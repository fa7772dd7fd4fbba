"""`minijax.experimental.key_reuse`: where JAX documents its key-reuse checker.

As JAX's module, it holds no public names; the checker is switched on with the flag
`jax_debug_key_reuse` (`minijax.config.update("jax_debug_key_reuse", True)`, or a
`with minijax.debug_key_reuse(True):` block), and a key used twice then raises
`KeyReuseError` (`minijax.errors`, as `jax.errors`). minijax's checker is `transforms/key_reuse.py`;
`docs/random.md` ("Key reuse") says what counts as a use.
"""
__all__: list = []
