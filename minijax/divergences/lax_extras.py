"""More of jax.lax (`frontend/lax_extras.py`): where jax.lax does otherwise than intended."""
from .registry import register

register(
    "clz_of_a_negative_constant_under_jit", "0.10.2",
    "under jax.jit, lax.clz of a negative int32 *constant* (an array the jitted function "
    "closes over) gives a negative count: clz(-1) is -32, where the same value passed "
    "as an argument, or clz run eagerly, gives 0 (XLA's constant folding of clz)"
    ". Fixed in 0.11.2: jit gives 0 for -1, as eagerly",
    "clz(-1) is 0 everywhere: a negative integer has its top bit set, so no leading "
    "zeros",
    "clz counts leading zero bits, a number between 0 and the bit width; JAX's eager "
    "and traced-argument results agree with that, only the folded constant does not",
    # "clz" keeps the record to programs that count leading zeros (the fuzzer files
    # any other jit row elsewhere)
    transforms=("jit", "clz"), intended_on="0.11.2, 0.12.0.1")

register(
    "associative_scan_reverse_with_negative_axis_raises", "0.10.2",
    "lax.associative_scan(fn, x, reverse=True, axis=-1) raises TypeError ('rev "
    "dimensions must have every element be nonnegative'): the reversal is applied "
    "before the axis is canonicalised",
    "a negative axis counts from the end, with or without reverse",
    "associative_scan canonicalises its axis (so axis=-1 works without reverse), and "
    "jax.lax's axis arguments accept negative numbers throughout",
    transforms=("associative_scan",))

register(
    "convert_of_a_numpy_float_to_int_eagerly_wraps", "0.11.2, 0.12.0.1",
    "eagerly, lax.convert_element_type of a NumPy float array to an integer dtype "
    "computes with NumPy's astype, which wraps out-of-range values (500.0 -> int4 is 4, "
    "-> int8 is -12, 1e10 -> int32 is -2**31); the same call on a jax.Array, under "
    "jax.jit, or `.astype` of a jax.Array saturates (7, 127, 2**31-1), as 0.10.2 did "
    "eagerly too",
    "float -> int conversions saturate at the integer's range (and send NaN to 0) on "
    "every path, NumPy input or not",
    "a conversion's value must not depend on whether the operand was NumPy data or a "
    "jax.Array, nor on jit; every other path of JAX's, and XLA's ConvertElementType, "
    "saturate",
    transforms=("convert_element_type",), intended_on="0.10.2")

register(
    "float4_six_converts_to_the_int_maximum", "0.10.2, 0.11.2, 0.12.0.1",
    "on CPU, lax.convert_element_type of float4_e2m1fn's largest value, 6.0 (and "
    "-6.0), to an integer dtype gives the integer's maximum (minimum): 2**31-1 for "
    "int32, 127 for int8, eagerly and under jit; every smaller float4 value converts "
    "exactly",
    "6.0 converts to 6 (through float32, which holds every float4 value exactly)",
    "a float -> int conversion truncates the value toward zero and saturates only "
    "out of the integer's range; 6.0 is a finite float4 (the format has no infinity) "
    "and converts to 6 through float32, or from any other float type",
    transforms=("convert_element_type",))

register(
    "lax_full_like_takes_an_array_as_dtype", "0.10.2, 0.11.2, 0.12.0.1",
    "lax.full_like(x, 1, dtype=a) with an array a (a jax.Array, a tracer or a NumPy "
    "array) fills with a's dtype, silently: it reads the dtype with jax.dtypes.dtype, "
    "which takes values",
    "ValueError('Passing an array as a dtype argument is no longer supported; ...') "
    "for a jax.Array or a tracer, NumPy's TypeError('Cannot construct a dtype from an "
    "array'), as every other dtype argument",
    "JAX refuses arrays as dtype arguments everywhere else (lax.full, "
    "convert_element_type, jnp.full_like) and deprecates turning an array into a dtype",
    transforms=("full_like", "dtype argument"))

register(
    "float_slice_strides_and_sort_num_keys_trace_but_do_not_run",
    "0.10.2, 0.11.2, 0.12.0.1",
    "lax.slice(x, (1,), (3,), (1.0,)) and lax.sort((a, b), num_keys=1.0) trace without "
    "a word under make_jaxpr (the jaxpr holds strides=(1.0,), num_keys=1.0); run, "
    "eagerly or under jit, slice fails inside JAX with AttributeError (\"'float' "
    "object has no attribute '_evaluate'\") and sort with TypeError; in a process where "
    "the same call with ints ran first on the same shapes, the eager float call runs "
    "(JAX's caches compare the params by value), so the suite's order decides it",
    "TypeError naming the parameter ('slice: strides must be integers', 'sort: "
    "num_keys must be an integer') when the call is made, traced or not",
    "both parameters are integers in JAX's signatures, and JAX refuses float values "
    "for the other integer parameters of lax (start and limit indices, dimensions) "
    "when it traces them",
    transforms=("slice", "sort"))
