"""Refs in control-flow bodies: cond/switch branches and scan/fori/while/map bodies
(pinned in tests/test_refs_control_flow.py)."""
from minijax.divergences.registry import register

register(
    "jax_grad_of_ref_cond_inside_loop_fails", "0.10.2",
    "jax.grad / jax.vjp / jax.linearize of a function with a lax.cond inside a scan, "
    "fori_loop or while_loop body, where the cond's branches read or write a ref the "
    "function made, raise NotImplementedError('State effect not supported in cond "
    "partial-eval.'); jax.jvp of the same function works, and so does grad of the "
    "cond outside a loop",
    "the gradient (equal to the jvp, column by column), and the final ref contents",
    "issue 6: cond/switch branches and loop bodies read and write closed-over refs with "
    "every pass, nested control flow included",
    transforms=("grad", "vjp", "linearize", "cond", "scan", "fori_loop", "while_loop",
                "new_ref"))

register(
    "jax_ref_views_in_bodies_under_autodiff_fail", "0.10.2",
    "jax.jvp / jax.grad of a function that writes through a view of a ref it made "
    "(`r.at[i][...] = v`, inside a cond branch or a scan body as anywhere else) raise "
    "TypeError('Cannot transform type: JVPTracer(primal=Ref(...)...)') (GradTracer "
    "under grad)",
    "reads and writes through views are differentiated like the same accesses spelled "
    "without views (`r.at[1][1:]` as `r[1, 1:]`)",
    "issue 6: views work with every transform, inside loop and branch bodies too",
    transforms=("jvp", "grad", "vjp", "linearize", "cond", "scan", "new_ref"))

register(
    "jax_while_condition_write_is_lost", "0.10.2",
    "a while_loop whose cond_fun writes a ref (`r[0] += 1.0` in the condition of a loop "
    "running twice) runs, eagerly and under jit, but one of the condition's writes is "
    "lost: r[0] ends at 2.0 although the condition ran three times",
    "the sequential meaning: the condition runs before every body and once more at the "
    "end, so r[0] ends at 3.0, eagerly and under jit alike",
    "issue 6 / issue 17: refs follow ordinary sequential semantics",
    transforms=("while_loop", "new_ref"))
