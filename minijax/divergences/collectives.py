"""Collectives under vmap: where JAX does otherwise than it intends."""
from .registry import register

register(
    "vmap_ppermute_partial_permutation_asserts", "0.10.2",
    "jax.vmap(..., axis_name='i') of lax.ppermute with a perm that does not name every "
    "member (e.g. [(0, 1), (1, 2)] on an axis of size 4) fails with 'AssertionError: "
    "Permutation doesn't match the axis size!'; the same perm works under shard_map",
    "the members nobody sends to get zeros, under vmap as under shard_map",
    "lax.ppermute documents that a perm need not be a full permutation: 'any "
    "destination not in perm gets zeros', with no exception for vmap",
    transforms=("vmap", "ppermute"))

register(
    "vmap_grad_of_untiled_all_to_all_wrong_cotangent", "0.10.2",
    "jax.grad of untiled lax.all_to_all under jax.vmap(..., axis_name=...) raises "
    "'ValueError: Expected cotangent type float32[3,2,1] but got float32[3,1,2]': the "
    "transpose swaps split and concat axes for the tiled layout only",
    "the transpose is the all_to_all with split and concat axes swapped, which for the "
    "untiled form inverts the forward shape change",
    "all_to_all is linear and its forward pass works untiled under vmap, so its "
    "derivative is meant to as well",
    transforms=("grad", "vmap", "all_to_all"))

register(
    "vmap_all_to_all_of_an_unmapped_value_has_the_wrong_shape", "0.10.2, 0.11.2, 0.12.0.1",
    "under jax.vmap(..., axis_name='i') (axis size 4), lax.all_to_all of a value that "
    "does not depend on the mapped axis -- a constant, or the result of lax.all_gather, "
    "which every member shares -- returns the wrong shape: all_to_all(c, 'i', 0, 0) of "
    "a float32[4,3] constant gives float32[4,4,3,4,3] for the batch instead of "
    "float32[4,4,3], and with concat_axis=1 float32[4,3,4,4,3,1]; the batching rule "
    "broadcasts the value with lax.broadcast(x, (axis_size, *x.shape)), which prepends "
    "the value's shape a second time",
    "the value is the same for every member, so each gets what a mapped copy of it "
    "would give: float32[4,3] per member for all_to_all(c, 'i', 0, 0)",
    "all_to_all is documented for any array whose split axis has the axis' size, and a "
    "mapped copy of the same value gives the right shape under vmap and under "
    "shard_map; lax.pswapaxes(lax.all_gather(x, 'i'), 'i', 0) is one way to meet it",
    transforms=("vmap", "all_to_all"))

register(
    "vmap_collective_over_a_tuple_of_names_asserts", "0.10.2",
    "lax.all_gather, lax.psum_scatter and lax.ppermute over a tuple of axis names bound "
    "by nested jax.vmap(..., axis_name=...) calls (e.g. all_gather(x, ('i', 'j'))) fail "
    "with an AssertionError ('axis size doesn't match', 'Permutation doesn't match the "
    "axis size!'); axis_index and all_to_all of the same tuple work, and all five work "
    "under shard_map",
    "the tuple is one axis whose members are numbered row-major (the first name major), "
    "under vmap as under shard_map",
    "the collectives document axis_name as 'a hashable Python object or a tuple of "
    "them' with no exception for vmap, and the same tuple works for axis_index",
    transforms=("vmap", "all_gather", "psum_scatter", "ppermute"))

register(
    "eager_partial_shard_map_without_vma_refuses_out_specs", "0.10.2",
    "jax.shard_map(f, mesh=..., in_specs=P('x'), out_specs=P(), axis_names={'x'}, "
    "check_vma=False) called eagerly (not under jax.jit) on a mesh with a second axis "
    "'y' raises 'ValueError: shard_map out_specs argument must refer to an axis marked as "
    "manual ... out_specs refers to 'y'' although no spec names 'y'; under jax.jit, or "
    "with check_vma=True, the same call works",
    "the call works eagerly as under jit",
    "the out_specs name only manual axes, which is what the error asks for, and "
    "check_vma documents a check of varying values, not of specs",
    transforms=("shard_map",))

register(
    "grad_of_shard_map_taking_refs_crashes", "0.10.2",
    "jax.grad (or jax.jvp) of a function that passes a jax.new_ref into jax.shard_map, "
    "whose body reads and writes it, fails inside JAX: eagerly with a bare "
    "AssertionError, under jax.jit with \"AttributeError: 'ValAccum' object has no "
    "attribute 'ref'\". (jax 0.12 refuses the eager call with NotImplementedError "
    "('not yet') and differentiates it under jax.jit.)",
    "the derivative is that of the same program with the ref's contents passed in and "
    "its final value returned (the ref discharged), eagerly and under jit",
    "shard_map documents refs as arguments it supports, and the program is "
    "differentiable: its ref-free form differentiates in JAX",
    transforms=("grad", "shard_map", "refs"))

register(
    "nested_pmap_refused", "0.10.2",
    "jax.pmap(jax.pmap(f, axis_name='j'), axis_name='i') fails when called with "
    "'ValueError: The context mesh AbstractMesh('i': ...) should match the mesh passed "
    "to shard_map Mesh('j': ...)', even where the product of the two sizes is at most "
    "the device count (jax 0.10's pmap is a shard_map over a one-axis mesh, and the "
    "inner one asks for a second mesh inside the first)",
    "the inner pmap runs on each device of the outer one as a vmap naming its axis, so "
    "the result is that of nested named vmaps, collectives over either name or both "
    "included; a product of sizes above the device count is the ValueError JAX's docs "
    "describe",
    "jax.pmap's docstring says 'For nested pmap calls, the product of the mapped axis "
    "sizes must be less than or equal to the number of XLA devices', so nested pmaps "
    "are meant to work",
    transforms=("pmap",))

register(
    "vmap_cond_per_member_collective_derivatives", "0.10.2",
    "under jax.vmap(..., axis_name='i'), a lax.cond/lax.switch whose predicate differs "
    "per member and whose branch holds a collective (e.g. log(psum(x * x, 'i')) * x) "
    "gets derivatives that are not those of its values: jax.grad or jax.jvp of the "
    "vmapped function drops what the members that do not take the branch add to its "
    "collective (its batching rule passes their operands through stop_gradient), and "
    "jax.grad or jax.linearize inside the vmap gives other numbers, or -inf (its "
    "transposed branches read residuals that the members that did not take them never "
    "computed); jax.jvp inside the vmap is right",
    "every derivative, inside or outside the vmap, is that of the values (what central "
    "differences measure): along a path from a member's operands into a branch's "
    "collective its derivative flows whether the member takes the branch or not; no "
    "other path of a branch it does not take carries any",
    "the values are JAX's documented ones (every branch runs on every member and each "
    "keeps its own branch's result), and jax.grad documents the gradient of the "
    "function computed; the stop_gradient is there only to keep NaNs of untaken "
    "branches out (jax issue 1052), and JAX's own jvp inside the vmap disagrees with it",
    transforms=("grad", "jvp", "linearize", "vmap", "cond", "psum"))

register(
    "smap_negative_axis_names_the_first_dimension", "0.10.2, 0.11.2, 0.12.0.1",
    "jax.smap(f, in_axes=-1, out_axes=-1, axis_name='x') splits and gathers dimension "
    "0, not the last one: the spec is built as `axis` Nones before the name, and "
    "[None] * -1 is empty, so every negative axis gives P('x')",
    "a negative axis counts from the end, as in vmap: in_axes=-1 of a rank-2 argument "
    "is P(None, 'x'); an axis outside [-ndim, ndim) is a ValueError",
    "smap's docstring says axis integers must be in the range [-ndim, ndim) for each "
    "array, which gives -1 a meaning, the last axis; it never means the first",
    transforms=("smap",))

register(
    "pbroadcast_vmap_and_transpose_fail", "0.10.2, 0.11.2, 0.12.0.1",
    "lax.pbroadcast under jax.vmap(..., axis_name='i') raises TypeError ('take requires "
    "ndarray or scalar arguments, got <class 'list'>') unless the operand is a NumPy "
    "array passed straight in: the batching rule calls v.take([source] * size, d), "
    "which NumPy takes and jax.Array and tracers (any value under jit) refuse. Its "
    "transpose (grad, linear_transpose, under shard_map) raises TypeError ('full must "
    "be called with scalar fill_value'). On the CPU JAX has no lowering for it at all",
    "member `source`'s value on every member under vmap and shard_map, eagerly and "
    "under jit, differentiated (the cotangents of all members go to the source), on "
    "every backend: the source's row of an all_gather",
    "pbroadcast is a public collective documented as psum of the value masked to the "
    "source member, which vmaps and differentiates; the batching rule's list is meant "
    "as indices, and a transpose rule is registered, so both are meant to work",
    transforms=("vmap", "grad", "pbroadcast"))
