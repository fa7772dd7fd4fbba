"""Refs (issue 6): the surface -- indexing, views, freeze, misuse, loops."""
from minijax.divergences.registry import register

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
    "ref_eager_views", "0.10.2, 0.11.2, 0.12.0.1",
    "an eager Ref has no .T or .reshape (under jit, r.reshape(...) reads); Ref.at "
    "raises NotImplementedError eagerly on 0.10.2 and 0.11.2, and 0.12.0.1 makes "
    "r.at[i] an eager view that reads and writes as minijax's",
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
