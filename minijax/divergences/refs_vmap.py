"""Refs under vmap (issue 6): aliasing, branches, increments and indices per example."""
from minijax.divergences.registry import register

register(
    "jax_vmap_accepts_aliased_refs", "0.10.2",
    "jax.vmap of a function that closes over a ref and is also passed it as a mapped "
    "argument runs silently (each example sees one row through the argument and the "
    "whole ref through the closure); so does passing one ref twice with in_axes=None",
    "a RefError at trace time naming the ref and both uses, as jax.jit gives for the "
    "same program; every ref keeps its contents",
    "JAX's own jit rejects a ref that is both closed over and passed in, and rejects "
    "one ref passed twice ('only one reference to a mutable array may be passed'); "
    "issue 6: aliasing under vmap is rejected",
    transforms=("vmap", "new_ref"))

register(
    "jax_vmap_of_cond_with_ref_effects_fails", "0.10.2",
    "jax.vmap of lax.cond / lax.switch with a batched predicate whose branches write a "
    "ref (made inside, a mapped argument, or closed over) raises NotImplementedError("
    "'State effect not supported in vmap-of-cond'), eagerly and under jit",
    "every branch runs on the whole batch, each on its own copy of the refs the "
    "branches write, and each example keeps the contents its own branch left; a ref "
    "that is the same for every example and written in a branch is a clear error",
    "issue 6: a batched cond predicate with ref effects selects each lane's final ref "
    "contents",
    transforms=("vmap", "cond", "switch", "new_ref"))

register(
    "jax_vmap_unbatched_write_to_closed_over_ref_fails", "0.10.2",
    "under jax.vmap, `r[...] = 1.0` on a closed-over ref (a value that is the same "
    "for every example) raises 'performing a set/swap operation with vmapped value on "
    "an unbatched array reference'",
    "the write happens once, as every example writes the same value",
    "issue 6: an unbatched value written to an unbatched closed-over ref happens once",
    transforms=("vmap", "new_ref"))

register(
    "jax_vmap_per_example_integer_array_ref_index_fails", "0.10.2",
    "under jax.vmap, `r[:, j] = v` with an integer-array index j that differs per "
    "example raises ValueError('Invalid shape for `swap`...')",
    "each example reads and writes at its own integer-array positions, as a loop "
    "over the examples does",
    "issue 6: dynamic and integer-array indices work under every transform",
    transforms=("vmap", "new_ref"))

register(
    "jax_vmap_whole_ref_write_on_other_axis_fails", "0.10.2",
    "jax.vmap with a ref argument mapped on an axis other than 0 (in_axes=1 or -1) "
    "raises ValueError('Invalid shape for `swap`...') when the function writes the "
    "whole ref (`r[...] += v`, `r[...] = v`), eagerly, under jit and under grad"
    ". Fixed in 0.11.2: the write on axis 1 or -1 gives the axis-0 result",
    "the write goes to each example's part of the ref, on any in_axes",
    "issue 6: batched ref arguments on any in_axes",
    transforms=("vmap", "new_ref"), intended_on="0.11.2, 0.12.0.1")
