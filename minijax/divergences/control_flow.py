"""Control flow and effects: cond, loops and debug printing."""
from minijax.divergences.registry import register

register(
    "vmap_batched_cond_prints_both_branches", "0.10.2",
    "under jax.vmap with a batched lax.cond predicate, debug.print in either branch "
    "runs for every example: both branches' prints appear for each lane",
    "each example prints only in the branch it takes (the branches run example by "
    "example when they have effects)",
    "jax.debug.print is documented to print in the branch taken; a batched predicate "
    "is an implementation detail of vmap, which should not change which effects run",
    transforms=("vmap", "cond", "debug"))
