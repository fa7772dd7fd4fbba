"""The flags of `frontend/config_flags.py` against JAX's: `jax_numpy_dtype_promotion`
(the strict lattice over a table of dtype pairs, eagerly and under jit), the ones
minijax models (`log_compiles`, `no_tracing`, `enable_checks`, `default_device`),
and the context managers of JAX flags minijax does not model (JAX's value only)."""
import itertools
import logging

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.ir import staging
from minijax.testing import JAX_VERSION


@pytest.fixture(autouse=True)
def fresh_config():
    yield
    minijax.config.reset()


# -- jax_numpy_dtype_promotion ---------------------------------------------------------------

_DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.float16, jnp.bfloat16, np.float32,
           np.complex64]
_WEAK = [True, 1, 1.0, 1j]


def _promotion(lib, mode, a, b):
    """(dtype, weak) of `a` and `b` promoted, or the exception type's name."""
    context = jax.numpy_dtype_promotion if lib is jax else minijax.numpy_dtype_promotion
    with context(mode):
        try:
            dtype, weak = lib.dtypes.result_type(a, b, return_weak_type_flag=True)
        except Exception as error:           # noqa: BLE001  (the type is compared)
            return type(error)
    return np.dtype(dtype), weak


@pytest.mark.parametrize("mode", ["standard", "strict"])
def test_result_type_table_matches_jax(mode):
    kinds = _DTYPES + _WEAK
    for a, b in itertools.product(kinds, kinds):
        expected = _promotion(jax, mode, a, b)
        assert _promotion(minijax, mode, a, b) == expected, (mode, a, b)
    if mode == "strict":      # the table is not vacuous: both answers occur
        assert _promotion(jax, mode, np.int32, np.float32) is jax.dtypes.TypePromotionError
        assert _promotion(jax, mode, np.float16, 1.0) == (np.dtype(np.float16), False)


_CASES = [(np.int32, np.float32), (np.float16, 2.0), (np.int32, 2.5), (np.uint8, 3),
          (np.bool_, 1), (np.complex64, np.float32)]


def _operand(kind):
    return np.ones(3, kind) if isinstance(kind, type) else kind


@pytest.mark.parametrize("jit", [False, True])
def test_strict_add_matches_jax(jit):
    for a, b in _CASES:
        outs = []
        for lib, np_lib in ((jax, jnp), (minijax, mnp)):
            add = lib.jit(np_lib.add) if jit else np_lib.add
            with lib.numpy_dtype_promotion("strict"):
                try:
                    out = add(_operand(a), _operand(b))
                except jax.dtypes.TypePromotionError as error:
                    assert "jax_numpy_dtype_promotion=strict" in str(error)
                    outs.append("refused")
                else:
                    outs.append((out.dtype, out.weak_type, np.asarray(out).tolist()))
        assert outs[0] == outs[1], (a, b)


_STRICT_FUNCTIONS = [
    ("nanmean", lambda L: (L.ones(4, "float32"),)),
    ("percentile", lambda L: (L.arange(1, 5, dtype="int32"), L.arange(1, 5, dtype="int32"))),
    ("histogram", lambda L: (L.arange(1, 5, dtype="int32"), L.arange(1, 5, dtype="int32"))),
    ("histogram_bin_edges", lambda L: (L.arange(4, dtype="int32"), L.arange(3, dtype="int32")))]


def test_functions_that_promote_inside_match_jax():
    # Each promotes its operands in steps of its own (JAX's), which 'strict' allows;
    # the edges given as an int array are in a's inexact dtype in either mode.
    for mode, (name, args) in [("strict", case) for case in _STRICT_FUNCTIONS] + [
            ("standard", _STRICT_FUNCTIONS[-1])]:
        outs = []
        for lib, np_lib in ((jax, jnp), (minijax, mnp)):
            with lib.numpy_dtype_promotion(mode):
                out = getattr(np_lib, name)(*args(np_lib))
            outs.append([(x.dtype, np.asarray(x).tolist()) for x in jax.tree.leaves(out)])
        assert outs[1] == outs[0], name


def test_dtype_promotion_flag_reads_and_refuses_as_jax():
    assert minijax.config.jax_numpy_dtype_promotion == jax.config.jax_numpy_dtype_promotion
    minijax.config.update("jax_numpy_dtype_promotion", "strict")
    assert minijax.numpy_dtype_promotion.value == "strict"
    with pytest.raises(jax.dtypes.TypePromotionError):
        mnp.promote_types(np.int32, np.float32)
    with jax.numpy_dtype_promotion("strict"), pytest.raises(jax.dtypes.TypePromotionError):
        jnp.promote_types(np.int32, np.float32)
    for lib in (jax, minijax):
        with pytest.raises(ValueError):
            with lib.numpy_dtype_promotion("loose"):
                pass


# -- log_compiles, no_tracing --------------------------------------------------------------------

def _compile_messages(lib, caplog, calls):
    def scale(x, y):
        return x * y
    f = lib.jit(scale)
    caplog.clear()
    with caplog.at_level(logging.WARNING), lib.log_compiles(True):
        for args in calls:
            f(*args)
    return [r.getMessage() for r in caplog.records
            if r.getMessage().startswith("Compiling jit(scale) ")]


def test_log_compiles_logs_what_jax_logs(caplog):
    calls = [(1.0, np.ones(2, np.float32)), (2.0, np.ones(2, np.float32)),
             (np.ones(3, np.int32), 2)]
    expected = _compile_messages(jax, caplog, calls)
    assert len(expected) == 2       # one per signature: the second call reuses the first
    assert _compile_messages(minijax, caplog, calls) == expected


def test_no_tracing_refuses_a_new_signature_as_jax():
    for lib in (jax, minijax):
        def double(x):
            return x * 2
        f = lib.jit(double)
        f(np.float32(1))
        with lib.no_tracing(True):
            out = f(np.float32(2))         # traced already: runs
            with pytest.raises(RuntimeError, match="re-tracing function double at .* for "
                               "`jit`, but 'no_tracing' is set"):
                f(np.ones(2, np.float32))
        assert float(out) == 4


# -- enable_checks, default_device -------------------------------------------------------------

def test_enable_checks_runs_minijax_checks(monkeypatch):
    checked = []
    original = staging.check_traced
    monkeypatch.setattr(staging, "check_traced", lambda c: (checked.append(c), original(c)))
    for on in (False, True):
        with minijax.enable_checks(on):
            assert minijax.config.jax_enable_checks is on
            minijax.make_jaxpr(lambda x: x * 3 + 1)(np.float32(on))
        assert bool(checked) is on
    with pytest.raises(ValueError, match="jax_enable_checks takes a bool"):
        minijax.config.update("jax_enable_checks", "yes")


def test_default_device_is_jax_answer_on_one_process():
    device = jax.local_devices()[0]
    for value in (device, jax.default_backend(), None):
        with jax.default_device(value), minijax.default_device(value):
            assert minijax.config.jax_default_device == jax.config.jax_default_device
            assert minijax.device_put(np.ones(2)).devices() == \
                jax.device_put(np.ones(2)).devices()
    for lib in (jax, minijax):
        with pytest.raises(ValueError):
            with lib.default_device(3):
                pass


def _leak_error(lib, transform):
    leaked = []

    def keep(x):
        leaked.append(x)
        return x * 2
    with lib.checking_leaks():
        assert lib.config.jax_check_tracer_leaks is True
        lib.jit(lambda x: lib.numpy.sin(x) * x)(1.0)      # nothing kept: no error
        try:
            transform(lib)(keep)(1.0)
        except Exception as error:       # noqa: BLE001  (JAX raises a plain Exception)
            return type(error), str(error).split(".")[0]
    return None


@pytest.mark.parametrize("transform", ["jit", "grad"])
def test_checking_leaks_raises_as_jax(transform):
    pick = lambda lib: getattr(lib, transform)           # noqa: E731
    expected = _leak_error(jax, pick)
    if transform == "grad" and JAX_VERSION < (0, 11):
        assert expected is None     # JAX 0.10 does not check grad's trace; 0.11 on do
    else:
        assert expected is not None and expected[0] is Exception
        assert expected[1].startswith("Leaked trace")
    assert _leak_error(minijax, pick)[0] is Exception
    assert _leak_error(minijax, pick)[1].startswith("Leaked trace")
    assert minijax.config.jax_check_tracer_leaks is False
