"""The known-divergence registry: where real JAX does otherwise than it intends.

minijax is differential-tested against JAX. Where the two disagree and JAX is the
one that is wrong -- by its own stated intent, its documentation, or NumPy's rules
it means to follow -- minijax follows the intent and the case is recorded here.
Each record names the JAX version it was seen on, what JAX does, what minijax does,
and why. `tests/test_divergences.py` pins *both* behaviours for every record, so a
JAX release that fixes one (or a minijax change that drifts) fails a test and the
record can be retired.

Look a record up with `DIVERGENCES_BY_NAME[name]`; `python -c "import
minijax.divergences as d; d.show()"` prints them all.
"""
from __future__ import annotations

from typing import NamedTuple


class Divergence(NamedTuple):
    name: str
    jax_version: str          # the version the JAX behaviour was observed on
    jax_behaviour: str
    minijax_behaviour: str
    reason: str
    # Public names a program must use to meet it (the REPL's :check uses these to
    # point at an entry when minijax and JAX disagree).
    transforms: tuple = ()


DIVERGENCES: list[Divergence] = []
known_divergences = DIVERGENCES       # the name the REPL looks up


def register(name, jax_version, jax_behaviour, minijax_behaviour, reason,
             transforms=()) -> Divergence:
    record = Divergence(name, jax_version, jax_behaviour, minijax_behaviour, reason,
                        tuple(transforms))
    if any(d.name == name for d in DIVERGENCES):
        raise ValueError(f"divergence {name!r} registered twice")
    DIVERGENCES.append(record)
    return record


# -- remat ---------------------------------------------------------------------------------

register(
    "remat_grad_external_ref_effect_runs_twice", "0.10.2",
    "under jax.grad of a jax.remat function that increments an external ref, the "
    "increment runs twice and the recompute differentiates against the incremented "
    "value",
    "the effect runs once, in the forward pass; the recompute reads a fresh internal "
    "ref initialised from the ref's value captured as a residual",
    "the intent stated in JAX PR #33050 (DESIGN.md section 1)",
    transforms=("remat", "checkpoint", "grad", "new_ref"))
register(
    "save_anything_except_these_names_saves_everything", "0.10.2",
    "jax.checkpoint_policies.save_anything_except_these_names(*names) is "
    "`lambda *_, **__: True`: the named values are saved too, as by everything_saveable",
    "every value is saved except the outputs of checkpoint_name with one of the given "
    "names, which are recomputed",
    "its docstring: 'Save any values (not just named ones) excluding the names given'",
    transforms=("checkpoint", "remat", "checkpoint_policies"))


# -- control flow ---------------------------------------------------------------------------

register(
    "vmap_batched_cond_prints_both_branches", "0.10.2",
    "under jax.vmap with a batched lax.cond predicate, debug.print in either branch "
    "runs for every example: both branches' prints appear for each lane",
    "each example prints only in the branch it takes (the branches run example by "
    "example when they have effects)",
    "jax.debug.print is documented to print in the branch taken; a batched predicate "
    "is an implementation detail of vmap, which should not change which effects run",
    transforms=("vmap", "cond", "debug"))


# -- refs (issue 6) ------------------------------------------------------------------------

register(
    "ref_none_index_adds_no_axis", "0.10.2",
    "r[None] on a Ref{f32[2,3]} returns shape (2, 3), eagerly and under jit; "
    "r[None, 0] raises ValueError('not enough values to unpack')",
    "r[None] has shape (1, 2, 3) and r[None, 0] shape (1, 3), as NumPy",
    "ref indexing is documented to follow NumPy; JAX reads a bare None as 'no index'",
    transforms=("new_ref",))
register(
    "ref_static_index_out_of_range_under_jit", "0.10.2",
    "r[5] on a Ref{f32[2,3]} raises ValueError eagerly but under jit silently reads "
    "the clamped row r[1]",
    "IndexError both eagerly and under jit (a static index is checked before tracing)",
    "a static index is known at trace time; eager and jit should agree (issue 6)")
register(
    "ref_eager_views", "0.10.2",
    "Ref.at raises NotImplementedError eagerly; Ref has no .T or .reshape",
    "r.at[idx], r.T and r.reshape(...) are views eagerly as under jit",
    "views are part of the ref API under jit; eager and jit should agree")
register(
    "ref_transpose_view_under_jit", "0.10.2",
    "jit(lambda r: r.T[0]) raises NotImplementedError('Unsupported transform: "
    "TransposeTransform')",
    "reads and writes through r.T go to the underlying ref",
    "the view exists in JAX's API (a TransposeTransform) but its discharge is missing")
register(
    "ref_write_broadcasts_scalar", "0.10.2",
    "r[...] = 2.0 or r[0] = 1.0 on a non-scalar place raises ValueError('Invalid "
    "shape for `swap`')",
    "the value is broadcast to the indexed shape, as NumPy assignment (and "
    "jax.Array.at[...].set) do",
    "NumPy assignment semantics, asked for by issue 6")
register(
    "ref_use_after_freeze", "0.10.2",
    "an eager ref can still be read after jax.freeze(r), and frozen again",
    "RefError naming the ref and where it was frozen",
    "freeze ends the ref's life (under jit JAX rejects the read, with an obscure "
    "message); eager and jit should agree")
register(
    "ref_use_after_free", "0.10.2",
    "an eager ref can still be read after jax.free_ref(r)",
    "RefError naming the ref and where it was freed",
    "a freed ref has no contents")
register(
    "ref_freeze_argument_under_jit", "0.10.2",
    "jit(lambda r: jax.freeze(r))(jax.new_ref(1.)) fails with an internal "
    "IndexError('list index out of range')",
    "RefError: only the code that created a ref may freeze it",
    "misuse should be a clear error, never an internal IndexError (issue 6)")
register(
    "ref_of_a_ref", "0.10.2",
    "jax.new_ref(jax.new_ref(1.)) raises a bare AssertionError",
    "RefError: a ref holds an array",
    "misuse should be a clear error, never an internal AssertionError (issue 6)")
register(
    "ref_asarray", "0.10.2",
    "np.asarray(ref) raises ValueError('Out of bound indexer: idx=2, dim=2.')",
    "RefError saying to read the ref with r[...] first",
    "the message should name the mistake")
register(
    "ref_empty_ref_eager", "0.10.2",
    "jax.empty_ref(ShapeDtypeStruct) outside jit raises NotImplementedError",
    "an eager ref of that type (contents unspecified; minijax fills zeros)",
    "empty_ref is public API; eager and jit should agree")

register(
    "ref_while_condition_reads_stale_value_under_jit", "0.10.2",
    "under jax.jit, a while_loop condition reading a ref that the body writes sees "
    "the value from before the loop on every iteration (the loop runs on past the "
    "point where the condition turns false)",
    "the condition sees each write of the body, as ordinary sequential code does",
    "sequential semantics of refs; asked for by issue 6",
    transforms=("while_loop", "new_ref"))
register(
    "ref_while_condition_and_body_share_ref_eagerly", "0.10.2",
    "outside jit, a while_loop whose condition and body both use one ref raises "
    "ValueError('only one reference to a mutable array may be passed ...')",
    "runs, the condition seeing each of the body's writes",
    "the user passed the ref once; the aliasing is JAX's own plumbing",
    transforms=("while_loop", "new_ref"))


# -- refs under autodiff and vmap ----------------------------------------------------------

register(
    "jax_grad_of_ref_overwritten_with_constant_crashes", "0.10.2",
    "jax.grad of a function that overwrites an internal ref holding a differentiated "
    "value with a constant (`r = new_ref(3*x); r[...] = ones; (r[...]*x).sum()`) "
    "crashes with AttributeError: 'ArrayImpl' object has no attribute 'accum'",
    "the overwrite drops the cotangent: swap transposes to swap, which writes the "
    "(zero) cotangent of the old contents, so the gradient is ones",
    "issue 6: overwriting a ref that held a differentiated value with a constant "
    "simply drops the cotangent (no crash)",
    transforms=("grad", "vjp", "new_ref"))


register(
    "jax_jacobians_of_internal_ref_functions_fail", "0.10.2",
    "jax.jacfwd / jax.jacrev / jax.hessian of a function that creates and writes its "
    "own ref (`r = new_ref(x); r[...] += x*x; r[...].sum()`) raise ValueError('at vmap "
    "out_axes[0], got axis spec None but output was batched on axis 0')",
    "the Jacobian, the same as column-by-column jvp gives: the ref made inside is "
    "batched once a batched tangent is written into it",
    "issue 6: jacfwd, jacrev and hessian of functions using internal refs work",
    transforms=("jacfwd", "jacrev", "hessian", "vmap", "new_ref"))


register(
    "jax_vmap_of_ref_views_fails", "0.10.2",
    "jax.vmap of a function that takes a view (`r.at[i]`, `r.T`) of a batched ref "
    "argument raises TypeError('Cannot transform type: VmapTracer(aval=Ref...)')",
    "views of batched refs read and write through to the right part of each example's "
    "contents, under any in_axes, eagerly and under jit",
    "issue 6: views work with every transform; batched ref arguments on any in_axes",
    transforms=("vmap", "new_ref"))


register(
    "jax_grad_wrt_ref_argument_fails", "0.10.2",
    "jax.grad / jax.vjp with respect to a jax.new_ref argument raise ValueError("
    "'Expected cotangent type Ref{float32[3]} but got float32[3]'), whether the function "
    "only reads the ref or writes it; a function that writes it has already written "
    "the ref when the error is raised",
    "with respect to a ref that is only read: the cotangent of its contents, an array of "
    "their shape and dtype; with respect to a ref that is written: a RefError at trace "
    "time, at the write, saying to pass its value r[...] instead -- the ref keeps its "
    "contents",
    "issue 6: grad/vjp with respect to a ref argument that is only read gives the "
    "cotangent of its contents as an array; with respect to a ref that is written, a "
    "clear error; a failed call leaves every ref's contents as they were",
    transforms=("grad", "vjp", "value_and_grad", "new_ref"))

DIVERGENCES_BY_NAME = {d.name: d for d in DIVERGENCES}


def show():
    for d in DIVERGENCES:
        print(f"{d.name} (jax {d.jax_version})\n  jax:     {d.jax_behaviour}\n"
              f"  minijax: {d.minijax_behaviour}\n  why:     {d.reason}\n")

