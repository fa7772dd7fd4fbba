"""jax.numpy functions: where JAX does otherwise than it intends."""
from .registry import register

register(
    "vectorize_drops_keyword_arguments", "0.10.2",
    "a function made by jnp.vectorize silently drops the keyword arguments it is "
    "called with unless they are named in `excluded` (f(x, scale=3.0) runs "
    "pyfunc(x); a required keyword gives pyfunc's missing-argument TypeError)",
    "keyword arguments reach pyfunc unmapped, as if excluded",
    "jnp.vectorize follows numpy.vectorize, which passes keyword arguments on; "
    "dropping a value the caller gave cannot be meant",
    transforms=("vectorize",))

register(
    "array_equiv_raises_for_unbroadcastable_shapes", "0.10.2",
    "jnp.array_equiv of arrays whose shapes do not broadcast raises TypeError "
    "('eq got incompatible shapes for broadcasting')",
    "returns False, as numpy.array_equiv does",
    "JAX's array_equiv catches the error of unbroadcastable shapes to return False "
    "(its code says so) but catches ValueError, while the comparison raises TypeError",
    transforms=("array_equiv",))

register(
    "scipy_i0_gradient_at_zero_is_one", "0.10.2",
    "jax.scipy.special.i0 is exp(|x|) * bessel_i0e(x) differentiated through abs, "
    "whose derivative JAX takes as +1 at 0: grad(i0)(float32(0)) is 1.0"
    ". Fixed in 0.11.2: the gradient at 0 is 0",
    "jax.scipy.special.i0 is jnp.i0, whose derivative is i1 (0 at 0), as jnp.i0's "
    "custom jvp in JAX gives",
    "i0 is even and smooth, so its derivative at 0 is i1(0) = 0; JAX's jnp.i0 defines "
    "exactly that and its scipy i0 names the same function",
    # "scipy.special.i0" keeps the record to programs that call it (no fuzz program
    # does: a record of transform words alone would explain every grad row)
    transforms=("grad", "jvp", "scipy.special.i0"), intended_on="0.11.2, 0.12.0.1")

register(
    "pinv_grad_under_jit_with_traced_rtol", "0.10.2, 0.11.2",
    "differentiating a jitted function that passes one of its traced arguments as "
    "jnp.linalg.pinv's rtol raises TypeError ('No constant handler for type: "
    "DynamicJaxprTracer'): the traced rtol is a nondiff argument of pinv's custom_jvp "
    "(JAX 0.12 makes it a differentiated one and gives the gradient)",
    "the gradient, the same as with a concrete rtol (rtol gets no derivative)",
    "pinv documents rtol as an array_like of shape a.shape[:-2], and jit may trace any "
    "array argument; the same call with a concrete rtol is differentiated fine",
    transforms=("linalg.pinv", "jit"), intended_on="0.12.0.1")

register(
    "jax_trace_of_vmap_of_pinv_over_a_numpy_rtol_fails", "0.12.0.1",
    "under jax.jit or make_jaxpr, vmap of jnp.linalg.pinv whose mapped rtol is a NumPy "
    "array the function closes over raises an internal AssertionError('non-canonical "
    "constant of type ndarray'). Since 0.12 rtol is a differentiated argument of "
    "pinv's custom_jvp, and a custom_jvp function vmapped over a NumPy constant inside "
    "a trace fails so in 0.10.2 to 0.12.0.1 alike (record "
    "jax_vmap_of_a_custom_function_over_a_numpy_constant_under_jit_fails); with rtol "
    "a jax array or a jit argument, or without the trace, it runs, and 0.10/0.11 (rtol a "
    "nondiff argument) run it",
    "the pseudo-inverses, under minijax.jit as eagerly",
    "pinv documents rtol as an array_like of shape a.shape[:-2], and vmap may map any "
    "array the function sees; an internal assertion is never the intended answer",
    transforms=("linalg.pinv", "vmap", "jit"), intended_on="0.10.2, 0.11.2")

register(
    "matrix_rank_rtol_taken_as_absolute", "0.10.2",
    "jnp.linalg.matrix_rank(M, rtol=r) counts the singular values above r itself: "
    "diag(10, 1, 0.05) with rtol=0.2 has rank 2",
    "counts those above r * (largest singular value), as numpy.linalg.matrix_rank's "
    "rtol: rank 1 there; tol= stays the absolute threshold of JAX and NumPy",
    "JAX's docstring says singular values smaller than rtol * largest_singular_value "
    "are taken as zero, as NumPy's and the array API's rtol; only the default "
    "tolerance is scaled by the largest singular value in JAX's code",
    transforms=("linalg.matrix_rank",))

register(
    "gather_gradient_drops_clamped_index", "0.10.2",
    "an out-of-range integer-array index is clamped when read (x[[5, 0]] of a "
    "length-3 x reads x[2] and x[0]) but the gradient leaves x[2] out: grad of "
    "sum(x[[5, 0]] * [10, 1]) is [1, 0, 0], eagerly and under jit; the same for a "
    "strided jax.ds read or one beside integer arrays (both gathers, clamped per "
    "position)",
    "the gradient of what was read: [1, 0, 10], as JAX gives for the static index "
    "x[5] and for x.at[[5, 0]].get(mode='clip')",
    "indexing's default mode promises in-bounds indices, and JAX documents what an "
    "out-of-range read then does in practice: it is clipped. grad is meant to be the "
    "derivative of the function computed, and the computed value depends on x[2] "
    "(the transpose scatter drops the position the gather clamped)",
    transforms=("grad", "gather"))

register(
    "strided_ds_in_clip_mode_claims_unique_indices", "0.10.2, 0.11.2, 0.12.0.1",
    "x.at[jax.ds(i, 3, 2)].get(mode='clip') and .add(..., mode='clip') stage a gather "
    "or scatter marked unique_indices=True, though clipping an out-of-range start "
    "makes the positions collide (ds(7, 3, 2) of a length-8 x reads x[7] three "
    "times); the transpose's scatter-add then keeps one of the colliding updates: "
    "the gradient of sum(x.at[ds(7, 3, 2)].get(mode='clip') ** 2) at x[7] = 7 is 14, "
    "eagerly on the CPU with jax 0.11 and 0.12 (0.10.2 gives 42 there), and eagerly "
    "and under jit on an H200 with jax 0.11.2. There the forward scatter loses "
    "updates too: jit of x.at[ds(7, 3, 2)].add(1.0, mode='clip') adds 1.0 to x[7], "
    "not 3.0, and 4096 clipped positions add 1.0. Whether a program loses them is "
    "up to XLA's backend: the CPU's adds all three",
    "stages the gather and scatter without the promise: the gradient is 42, the sum "
    "of the three reads' derivatives, on every backend",
    "unique_indices is a promise to XLA that no two positions coincide, and "
    "mode='clip' is documented to clamp positions into range, which can make them "
    "coincide; the same read through an index array, i + 2 * arange(3), makes no "
    "promise and gives 42",
    transforms=("grad", "ds"))

register(
    "empty_of_a_negative_shape_is_an_mlir_error", "0.11.2, 0.12.0.1",
    "jnp.empty(-2) raises jaxlib's MLIRError ('invalid tensor dimension size'), "
    "neither a TypeError nor a ValueError, while jnp.zeros(-2) raises TypeError",
    "TypeError naming the negative dimension, as jnp.zeros and jnp.full do",
    "jnp.empty takes the shape jnp.zeros takes and JAX 0.10.2 checked it the same "
    "way (TypeError); an error from the MLIR builder is no shape check",
    transforms=("numpy.empty",), intended_on="0.10.2")

register(
    "cauchy_quantile_derivative_at_the_median_is_zero", "0.12.0.1",
    "jax.scipy.stats.cauchy.ppf and isf set their value at q = 0.5 with a where to "
    "the constant 0, so their derivative there is 0: grad of cauchy.ppf(q, 0.5, 2.0) "
    "at q = 0.5 is 0.0 (jax 0.10 and 0.11, tan(pi (q - 1/2)), give 2 pi)",
    "the same accurate tail forms, and at q = 0.5 pi (q - 1/2), also 0 there, whose "
    "derivative is pi * scale: 6.2831855 for ppf and -6.2831855 for isf",
    "ppf is the inverse of cdf, whose derivative at the median is 1 / (pi * scale); "
    "JAX 0.12 rewrote ppf for precision in the tails, and the derivative of 0 at the "
    "one point the where guards is a side effect of that guard, not a decision",
    transforms=("grad", "jvp", "scipy.stats.cauchy"), intended_on="0.10.2, 0.11.2")

register(
    "frexp_of_a_subnormal", "0.10.2, 0.11.2, 0.12.0.1",
    "jnp.frexp of a subnormal float32 is not a decomposition of it: jax 0.10 and 0.11 "
    "give (0.5, -149) for 1e-40 and (-0.5, -149) for -2e-39, 0.5 * 2**-149 being "
    "another number; jax 0.12 gives (0.0, 0) and (-0.0, 0), its docstring noting that "
    "subnormal inputs are flushed to signed zero (XLA's CPU backend; on a GPU, an "
    "H200 with jax 0.11.2, JAX gave NumPy's decomposition)",
    "NumPy's exact decomposition, read from the bits with integer operations: "
    "(0.54444885, -132) and (-0.6805649, -128), eagerly and under jit",
    "jnp.frexp is documented as JAX's implementation of numpy.frexp, returning an "
    "exponent such that x == mantissa * 2 ** exponent; a subnormal has such a "
    "decomposition, with a normal mantissa, and the bits give it without any float "
    "operation the CPU backend could flush",
    transforms=("frexp",))

register(
    "jnp_reshape_of_a_numpy_array_returns_a_numpy_array", "0.10.2, 0.11.2, 0.12.0.1",
    "jnp.reshape of a NumPy array returns a NumPy array (it hands the call to the "
    "argument's own .reshape method), so jnp.reshape(np.ones(6), (2, 3)).at[0] "
    "raises AttributeError; every other jax.numpy function returns a jax.Array for a "
    "NumPy argument",
    "a jax.Array, as jnp.reshape of a jax.Array gives and every other jnp function "
    "gives for a NumPy argument",
    "jax.numpy's functions return jax.Arrays whatever array-like they are given; the "
    "type of a reshape's result should not depend on where its input came from",
    transforms=("numpy.reshape",))

register(
    "ufunc_at_refuses_slice_indices", "0.10.2, 0.11.2, 0.12.0.1",
    "jnp.ufunc.at with a slice among its indices (jnp.add.at(x, (slice(None), 1), v, "
    "inplace=False)) raises TypeError: at is a jax.jit function whose indices are a "
    "traced argument, and a slice is not an array",
    "applies the function at the slice's elements, as x.at[:, 1] does",
    "JAX's docstring of ufunc.at documents indices as an 'index, slice, or tuple of "
    "indices and slices', and the generic implementation behind it handles slices",
    transforms=("ufunc.at",))

register(
    "extremum_ufunc_reduce_refuses_dtype", "0.10.2, 0.11.2, 0.12.0.1",
    "jnp.maximum.reduce(x, dtype=...) and jnp.minimum.reduce raise TypeError: the "
    "max/min reduction they use is a jax.jit function that does not mark dtype "
    "static, so the dtype is taken as an array argument",
    "the reduction in the given dtype, as every other ufunc's reduce",
    "ufunc.reduce documents dtype as the output's type for every ufunc, and the "
    "reduction JAX calls takes a dtype parameter",
    transforms=("ufunc.reduce",))

register(
    "logaddexp_reduce_with_an_int_initial_fails", "0.10.2, 0.11.2, 0.12.0.1",
    "jnp.logaddexp.reduce(x, initial=2) of a float32 x raises an internal "
    "AssertionError: the initial value meets the result in lax's logaddexp, which "
    "asserts that both have one dtype instead of promoting (a float initial works)",
    "promotes the initial value as jnp.logaddexp does: the same result as initial=2.0",
    "an internal assertion is never the intended answer; ufunc.reduce documents "
    "initial as an int or array",
    transforms=("ufunc.reduce",))

register(
    "ufunc_reduce_out_array_is_an_unhashable_static", "0.10.2, 0.11.2, 0.12.0.1",
    "jnp.add.reduce(x, out=y) with an array y raises ValueError ('Non-hashable static "
    "arguments are not supported'): reduce is a jax.jit function with out static",
    "NotImplementedError('out argument of add.reduce()'), which JAX raises for any "
    "hashable out and for an array out of accumulate and reduceat",
    "JAX's reduce checks out itself to raise NotImplementedError; the jit's complaint "
    "about hashing comes first only by accident",
    transforms=("ufunc.reduce",))

register(
    "array_as_dtype_argument_fails_by_accident", "0.10.2, 0.11.2, 0.12.0.1",
    "where a function never reaches its dtype check, an array given as its dtype fails "
    "on something else: jnp.sum(x, dtype=a) with a jax.Array, tracer or NumPy array a "
    "raises ValueError('Non-hashable static arguments are not supported') (so do mean, "
    "var, cumsum, linspace, trace, ...: jax.jit functions with dtype static); "
    "lax.empty and lax.ragged_dot a TypeError (a primitive's parameter must be "
    "hashable); jnp.fft.fftfreq and rfftfreq ValueError('The truth value of an array "
    "... is ambiguous', from `dtype or default`)",
    "the dtype argument's own error, which JAX's jnp.zeros gives: ValueError('Passing "
    "an array as a dtype argument is no longer supported; ...') for a jax.Array or a "
    "tracer, NumPy's TypeError('Cannot construct a dtype from an array') for a NumPy "
    "array",
    "JAX checks dtype arguments (check_and_canonicalize_user_dtype) to give these "
    "errors; the complaints about hashing or truth come first only by accident",
    transforms=("dtype argument",))

register(
    "a_list_axis_of_a_jitted_jnp_function_is_an_unhashable_static", "0.10.2, 0.11.2, 0.12.0.1",
    "jnp.nanmean(x, axis=[0]) raises ValueError('Non-hashable static arguments are not "
    "supported'), as do nanvar, nanstd, nansum, nanprod, nanmax, nanmin, median, "
    "nanmedian, count_nonzero and gradient (and trapezoid, cumsum, sort, ...): "
    "jax.jit functions with axis static; jnp.sum, mean, max, var and std take the list",
    "the function's own answer: an axis documented as 'int or sequence of ints' takes "
    "the list as that sequence (as jnp.sum does); one axis that must be an int refuses "
    "it with TypeError, as NumPy does",
    "JAX documents these axes as an int or a sequence of ints and canonicalizes a list "
    "where the function is not a jit of its own; the complaint about hashing comes "
    "first only by accident",
    transforms=("axis argument",))

register(
    "jnp_indexing_with_a_static_ds_start_reads_a_python_slice", "0.11.2, 0.12.0.1",
    "indexing a jax.Array with a jax.ds of a static start takes it as the Python slice "
    "start:start+size*stride, eagerly and under jit: on 8 elements x[jax.ds(6, 3)] reads "
    "2 elements, x[jax.ds(-2, 3)] none and x[jax.ds(2, 3, 2)] two; an eager jax.Array "
    "start fails with AssertionError. A traced start under jit reads `size` elements "
    "from the clamped start, as 0.10.2 does for every start",
    "size elements from the start clamped so that they fit, for every start, as JAX "
    "0.10.2 and JAX's traced starts (eagerly, x[ds] on a jax.Array is JAX's own "
    "indexing, so it gives JAX's result)",
    "jax.ds(start, size) names `size` elements whatever the start is known as; a "
    "static start must not change the result's shape, and 0.10.2 read them",
    transforms=("jit", "eager"), intended_on="0.10.2")

register(
    "repeat_out_sharding_of_an_unsharded_type_fails", "0.10.2, 0.11.2, 0.12.0.1",
    "jnp.repeat (and the method x.repeat) given out_sharding=jax.typeof(x).sharding of "
    "an unsharded array -- a NamedSharding on the empty mesh -- raises AttributeError "
    "('NoneType' object has no attribute 'mesh'): it turns that sharding into None, "
    "as every out_sharding is read, then reads None's mesh",
    "no placement asked for, as in every other function taking out_sharding: the "
    "repeated array",
    "JAX's canonicalize_sharding documents an empty-mesh NamedSharding as no sharding "
    "(it returns None for it), and every other out_sharding function (zeros, reshape, "
    "dot, random.normal, ...) takes it so; only repeat's code then dereferences the None",
    transforms=("repeat", "out_sharding"))
