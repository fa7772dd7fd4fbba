"""Refs (issue 6): the surface on straight-line code -- indexing, writes, dtypes, views,
freeze, and the basic transforms (jvp, grad, vjp, linearize, jacfwd, jacrev).

Pinned in `tests/test_divergences_refs.py`."""
from minijax.divergences.registry import register

# -- indexing -------------------------------------------------------------------------

register(
    "ref_list_index_crashes", "0.10.2",
    "r[[0, 1, 1]] and r[[0, 1], [2, 0]] on a jax.new_ref fail with an internal "
    "ValueError('too many values to unpack (expected 1)'), eagerly and under jit",
    "as for arrays: a list inside a tuple index is an integer array (r[[0, 1], [2, 0]] "
    "reads two elements); a bare list is refused with a TypeError saying to write "
    "r[np.array(seq)]",
    "refs index like arrays (issue 6); misuse is never an internal error",
    transforms=("new_ref",))
register(
    "ref_float_index_accepted", "0.10.2",
    "r[1.0] on a jax.new_ref silently reads r[1], eagerly and under jit (a jax.Array "
    "raises TypeError('Indexer must have integer or boolean type'))",
    "TypeError: cannot index a ref with 1.0 of type float",
    "NumPy and jax.Array both refuse float indices; a ref indexes like an array",
    transforms=("new_ref",))
register(
    "ref_negative_static_index_out_of_range_clamps", "0.10.2",
    "r[-3] on a Ref{f32[2,3]} silently reads r[0], eagerly and under jit, although "
    "r[2] raises ValueError('Out of bound indexer') eagerly",
    "IndexError: index -3 is out of bounds for axis 0 with size 2, eagerly and under "
    "jit, like r[2]",
    "issue 6: a static index out of range is an IndexError eagerly and under jit "
    "alike; negative and positive indices should agree",
    transforms=("new_ref",))
register(
    "ref_boolean_mask_index_crashes", "0.10.2",
    "r[np.array([True, False])] on a Ref{f32[2,3]} raises IndexError('Too many "
    "indices: array is 2-dimensional, but 3 were indexed'), eagerly and under jit",
    "a concrete boolean mask selects its true positions, as for arrays (r[mask] reads, "
    "r[mask] = v writes); a mask only known at run time is a TypeError saying it must "
    "be concrete",
    "jax.Array takes concrete boolean masks; the error names three indices the user "
    "never wrote",
    transforms=("new_ref",))
register(
    "ref_concrete_array_index_out_of_range_outside_jit", "0.10.2, 0.11.2",
    "r[jnp.int32(7)] on a Ref{f32[2,3]} raises ValueError('Out of bound indexer: "
    "idx=7, dim=2.') eagerly and under jax.grad / jax.jvp, but under jit reads the "
    "clamped row r[1]"
    ". Fixed in 0.12.0.1: eagerly and under grad the index is clamped too",
    "the index is clamped (r[1]) eagerly, under every transform and under jit",
    "issue 6: dynamic integer indices are clamped as JAX clamps them; eager and jit "
    "should agree",
    transforms=("new_ref", "grad", "jvp"), intended_on="0.12.0.1")
register(
    "ref_closed_over_scalar_array_index_under_jit_crashes", "0.10.2, 0.11.2",
    "a jitted function indexing a ref with a scalar jax.Array it closes over (`i = "
    "jnp.int32(1); jax.jit(lambda r: r[i])(r)`, also for writes) fails with "
    "TracerBoolConversionError('Attempted boolean conversion of traced array'), though "
    "the index is in range and the same index passed as an argument works"
    ". Fixed in 0.12.0.1: the read and the write run",
    "the closed-over index is a dynamic index like any other: r[1]",
    "closing over a value and passing it in mean the same (jax.Array indexing accepts "
    "both); issue 6: dynamic integer indices on refs work under jit",
    transforms=("jit", "new_ref"), intended_on="0.12.0.1")
register(
    "ref_out_of_range_integer_array_writes_dropped", "0.10.2",
    "with an integer-array index holding an out-of-range position, r[idx] reads the "
    "clamped position but r[idx] = v and jax.ref.addupdate(r, idx, v) drop that "
    "entry: r[np.array([5, 0])] += 1 on a Ref{f32[2,3]} leaves row 1 alone although "
    "r[np.array([5, 0])] read row 1",
    "an out-of-range position means the clamped position for reads and writes alike: "
    "the write goes to row 1",
    "one index, one meaning (issue 6: dynamic indices are clamped); addupdate is the "
    "transpose of get, so they must pick the same elements",
    transforms=("new_ref", "jit"))

register(
    "ref_ds_view_loses_its_clamp_under_a_traced_index", "0.10.2, 0.11.2",
    "a view r.at[jax.ds(i, 4)] of a Ref{f32[5,6]} with i = 3 (clamped to start 1) reads "
    "rows 2-3 through [1:3, 0] but rows 3-4 through [1:3, j] with a traced j = 0 "
    "(under jit): the clamp of the view's start is lost when the index applied to it "
    "has a traced item on another axis"
    ". Fixed in 0.12.0.1: both read rows 2-3",
    "both read rows 2-3: the view starts at the clamped row 1 whatever indexes it",
    "a view is fixed when it is made; a traced index on another axis must not move it",
    transforms=("jit", "new_ref"), intended_on="0.12.0.1")
register(
    "ref_eager_ds_array_start_fails", "0.10.2, 0.11.2, 0.12.0.1",
    "eagerly, a ref access through jax.ds with a jax.Array start (r[jax.ds(jnp.int32(3), "
    "2)], a write, or jax.ref.addupdate) raises TracerBoolConversionError from inside "
    "the get/swap primitive -- unless the same access ran before with a Python int "
    "start -- and, on 0.10.2 and 0.11.2, ValueError('Out of bound slice') when the "
    "start is out of range; a Python int start works, and under jit the same array "
    "start is dynamic and clamped",
    "an array start is a dynamic start eagerly as under jit: clamped so that the slice "
    "fits, for reads and writes alike",
    "jax.ds exists for starts that are arrays; eager and jit should agree (as they do "
    "for a dynamic integer index, ref_concrete_array_index_out_of_range_outside_jit); "
    "found with the fuzzer's ds accesses",
    transforms=("eager", "new_ref"))
register(
    "ref_strided_ds_out_of_range_reads_and_writes_differ", "0.10.2, 0.11.2, 0.12.0.1",
    "under jit, r[jax.ds(i, 3, 2)] of a Ref{f32[8]} with i = 7 reads elements 7, 7, 7 "
    "(each position clamped on its own) while r[jax.ds(i, 3, 2)] = v writes only "
    "v[0], to element 7 (out-of-range positions dropped); a unit-stride jax.ds clamps "
    "its start so that the slice fits, for reads and writes alike",
    "the start is clamped so that the strided slice fits, as for unit stride: with "
    "i = 7 the slice is elements 3, 5, 7, read and written alike",
    "one index, one meaning: a write through an index must land where the read from "
    "it came from (as for ref_out_of_range_integer_array_writes_dropped), and a "
    "stride should not change how the start is taken",
    transforms=("jit", "new_ref"))

# -- writes and dtypes ---------------------------------------------------------------------

register(
    "ref_python_scalar_write_kinds", "0.10.2",
    "a Python scalar of another kind than the ref's dtype is refused with "
    "ValueError('Invalid dtype for `swap`'): r[0, 0] = 7 and r[0, 0] = True on a "
    "float32 ref, r[0] = 2.5 on a complex64 ref (a Python float into a bfloat16 ref is "
    "accepted)",
    "a Python scalar is converted to the ref's dtype whenever its kind fits (bool into "
    "any, int into int, float or complex, float into float or complex), as in NumPy "
    "assignment and jax.Array.at[...].set; a float into an int ref is refused",
    "issue 6: writes are dtype strict, weak Python scalars allowed",
    transforms=("new_ref",))
register(
    "ref_weak_type_sticks_to_the_ref", "0.10.2",
    "jax.new_ref(1.0) is a weakly typed ref: everything read from it is weak, even after "
    "writing a strong float32 into it, so r[...] + np.float16(1) is float16"
    ". Fixed in 0.11.2: the ref of a Python float is strong float32, as minijax's",
    "a ref's dtype is fixed when it is made; reads are strongly typed, so r[...] + "
    "np.float16(1) is float32 (as for the float32 value that was stored)",
    "weak typing describes a Python scalar in an expression; a ref holds arrays of its "
    "one dtype (writes are dtype strict), and what a read promotes to should not depend "
    "on how the ref was first filled",
    transforms=("new_ref",), intended_on="0.11.2, 0.12.0.1")

register(
    "ref_arithmetic_on_a_ref_misreported", "0.10.2, 0.11.2, 0.12.0.1",
    "under jit, r + 1, r > 0 and r.sum() on a ref raise an internal AttributeError "
    "(\"'AbstractRef' object has no attribute '_add'\" / '_gt' / 'sum'); jnp.sin(r) "
    "says it got a DynamicJaxprTracer even for an eager ref"
    " (0.12.0.1 fixed jnp.sin's message: 'sin got a Ref ... Did you forget to read its "
    "value with `ref[...]`?'; the jit errors stay)",
    "an error naming the ref and saying a ref is not an array: read its value with "
    "r[...] first, eagerly and under jit",
    "issue 6: arithmetic or jnp functions on a ref are rejected with a message saying "
    "to read it with r[...]; never an internal AttributeError",
    transforms=("jit", "new_ref"))

# -- methods and views ----------------------------------------------------------------------

register(
    "ref_eager_methods_missing", "0.10.2",
    "an eager jax.Ref has no .get / .set / .swap methods (AttributeError), though a ref "
    "traced under jit has them; a view (r.at[1:] under jit) has .shape but no len()",
    "refs, traced refs and views share one surface: get/set/swap/addupdate methods, "
    "len, .shape, .dtype, .ndim, .size",
    "issue 6: the same methods on eager and traced refs; eager and jit should agree",
    transforms=("new_ref",))
register(
    "ref_addupdate_through_view_under_jit", "0.10.2, 0.11.2, 0.12.0.1",
    "jax.ref.addupdate(r.at[1], 0, v) under jit raises NotImplementedError('Only single "
    "indexer is supported'), while r.at[1][0] += v works"
    " (0.11.2 and 0.12.0.1: NotImplementedError('Multiple indexers are not supported "
    "for `addupdate`'))",
    "addupdate through a view adds into the underlying ref, eagerly and under jit",
    "issue 6: reads and writes through views go to the underlying ref",
    transforms=("new_ref", "jit"))
register(
    "ref_write_through_reshape_view_under_jit", "0.10.2",
    "under jit, reading through r.reshape(6) works but writing through it (r.reshape(6)"
    "[1:4] = v, jax.ref.swap, r.at[1].reshape(3, 1)[2] = v) fails with an internal "
    "ValueError('Length of slice indices must match number of operand dimensions'), "
    "and jax.ref.addupdate with NotImplementedError('Only single indexer is supported')"
    ". Fixed in 0.11.2: set, swap and addupdate through r.reshape(...) write the ref",
    "writes, swaps and addupdates through a reshape view land in the underlying ref, "
    "eagerly and under jit",
    "issue 6: reads and writes through views (r.reshape(...) included) go to the "
    "underlying ref",
    transforms=("jit", "new_ref"), intended_on="0.11.2, 0.12.0.1")
register(
    "jax_ref_views_under_autodiff_fail", "0.10.2",
    "under jax.grad / jvp / vjp / linearize / jacfwd / jacrev, writing through a view "
    "of a ref the function creates (r.at[1][...] = x * x, r.reshape(6)[2:5] = x) "
    "raises TypeError('Cannot transform type: GradTracer...' / 'Cannot reshape "
    "JVPTracer...')",
    "views of differentiated refs read and write through, and their derivatives are "
    "those of the same program written without views",
    "issue 6: views work with every transform",
    transforms=("grad", "jvp", "vjp", "linearize", "jacfwd", "jacrev", "new_ref"))

# -- freeze, free_ref, empty_ref -----------------------------------------------------------

register(
    "ref_use_after_freeze_under_jit", "0.10.2, 0.11.2, 0.12.0.1",
    "under jax.jit, using a ref after jax.freeze(r) is accepted when the frozen value is "
    "never used (the read or write goes ahead), and fails with an internal error when "
    "it is: a read raises ValueError('`get` must be called on `Ref` types: "
    "float32[3]'), a write AttributeError(\"'ShapedArray' object has no attribute "
    "'inner_aval'\")"
    " (0.12.0.1 lets the write of a used frozen value through too: the frozen value is "
    "the old contents)",
    "RefError at trace time naming the ref, where it was frozen and the use, whether "
    "or not the frozen value is used",
    "issue 6: using a ref after freeze is a clear trace-time error, with and without "
    "jit alike",
    transforms=("jit", "freeze", "new_ref"))
register(
    "ref_consumed_twice_under_jit_crashes", "0.10.2",
    "under jax.jit, freezing a ref twice (using both values), calling jax.free_ref twice, "
    "or freezing a ref the function closes over fails with an internal KeyError",
    "RefError at trace time: used after freeze / free_ref, or only the code that "
    "created a ref may freeze it",
    "issue 6: misuse is a clear error, never an internal KeyError",
    transforms=("jit", "freeze", "free_ref", "new_ref"))
register(
    "ref_shallow_copy_aliases", "0.10.2",
    "copy.copy(r) is a second jax.Ref on r's buffer (a write through either shows in "
    "both); passing r and the copy to one jitted function escapes the aliasing check "
    "and fails when it runs with JaxRuntimeError('Attempt to donate the same buffer "
    "twice')",
    "copy.copy(r) is a RefError saying a copy would alias; copy.deepcopy(r) is an "
    "independent ref with r's contents (as in JAX)",
    "issue 6: aliasing is a clear error at trace time, never a runtime failure",
    transforms=("new_ref", "jit"))
register(
    "ref_empty_ref_of_a_ref_type_crashes", "0.10.2",
    "jax.empty_ref(jax.typeof(r)) for a ref r, under jit, fails with a bare "
    "AssertionError",
    "a new ref of the same type as r (empty_ref takes anything with a shape and dtype)",
    "misuse, if it is one, should be a clear error, never an internal AssertionError "
    "(issue 6)",
    transforms=("empty_ref", "typeof", "jit"))

# -- autodiff on straight-line code ------------------------------------------------------------

register(
    "jax_jacfwd_with_closed_over_ref_write_fails", "0.10.2",
    "jax.jacfwd / jax.hessian of a function that writes a value not depending on its "
    "input into a closed-over ref (`counter[...] += 1.0`, `log[0] = 1.0`) raise "
    "Exception('performing a set/swap operation with vmapped value on an unbatched "
    "array reference'); jax.grad and jax.jacrev of the same function work",
    "the Jacobian, and the write happens once (the counter goes up by one)",
    "issue 6: an unbatched value written to an unbatched closed-over ref happens once; "
    "jacfwd and hessian of functions using refs work (jacfwd is vmap of jvp: the same "
    "cause as jax_vmap_unbatched_write_to_closed_over_ref_fails, met without any vmap "
    "in the user's code)",
    transforms=("jacfwd", "hessian", "new_ref"))
register(
    "jax_jvp_array_tangent_for_ref_primal_crashes", "0.10.2",
    "jax.jvp(f, (r, x), (np.ones(3), t)) with a ref primal r and an array tangent fails "
    "with an internal AttributeError(\"'numpy.ndarray' object has no attribute "
    "'aval'\") (or ValueError('`get` must be called on `Ref` types') if f reads first), "
    "after f has already written r",
    "a clear error before anything runs: the tangent of a ref is a ref; r keeps its "
    "contents",
    "issue 6: an array tangent for a ref primal is a clear error; a failed call leaves "
    "every ref's contents as they were",
    transforms=("jvp", "new_ref"))
register(
    "jax_grad_of_out_of_range_integer_array_read_drops_cotangent", "0.10.2",
    "for y = new_ref(x)[np.array([5, 0])] with x of size 3, jax.jvp says y[0] moves with "
    "x[2] (the read is clamped) but jax.grad / vjp / jacrev give that entry a zero "
    "derivative: the transpose drops the out-of-range position instead of clamping it",
    "reverse mode agrees with forward mode: the cotangent of y[0] goes to x[2]",
    "jacrev and jacfwd of one function must agree; get and addupdate transpose into "
    "each other with the same index meaning (issue 6)",
    transforms=("grad", "vjp", "jacrev", "new_ref"))
register(
    "ref_as_a_dtype_argument_is_taken", "0.10.2, 0.11.2, 0.12.0.1",
    "jnp.zeros(2, dtype=r) with a ref r = jax.new_ref(x) (or a traced ref; on 0.12.0.1 "
    "also a view r.at[...]) makes an array of r's dtype: a ref is no jax.Array, so the check "
    "that refuses arrays as dtypes lets it through to NumPy, which reads its .dtype",
    "ValueError('Passing an array as a dtype argument is no longer supported; instead "
    "of dtype=arr use dtype=arr.dtype.'), as for an array",
    "JAX refuses values as dtype arguments and deprecates turning an array into a "
    "dtype; a ref is a mutable array, and dtype=r.dtype says what is meant",
    transforms=("new_ref", "dtype argument"))
