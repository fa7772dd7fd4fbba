"""`frontend/processes.py` against JAX on one CPU process: the process and host
queries (with JAX's rename warnings), the environment report, the live arrays, the
`make_array_from_*` constructors and `copy_to_host_async`, eagerly and under jit."""
import warnings

import jax
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp


def _with_warnings(thunk):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = thunk()
    return out, [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("name", ["host_id", "host_count", "host_ids", "process_indices"])
def test_process_queries_match_jax(name):
    expected = _with_warnings(lambda: getattr(jax, name)())
    assert _with_warnings(lambda: getattr(minijax, name)()) == expected
    assert _with_warnings(lambda: getattr(minijax, name)("cpu")) == expected


def _without_nvidia_smi(text):
    # On a GPU machine the report ends with nvidia-smi's table, whose clock and memory
    # figures change from one call to the next.
    return text.split("$ nvidia-smi")[0]


def test_print_environment_info_reports_jax_environment(capsys):
    text = minijax.print_environment_info(return_string=True)
    assert text.startswith(f"minijax: {minijax.__version__}\n")
    assert _without_nvidia_smi(text).endswith(
        _without_nvidia_smi(jax.print_environment_info(return_string=True)))
    assert minijax.print_environment_info() is None
    assert _without_nvidia_smi(capsys.readouterr().out) == _without_nvidia_smi(text + "\n")


def test_live_arrays_holds_minijax_values():
    value = mnp.arange(5.0) * 3
    assert any(a is value for a in minijax.live_arrays())
    assert len(minijax.live_arrays("cpu")) == len(jax.live_arrays("cpu"))


def _sharding():
    return jax.sharding.SingleDeviceSharding(jax.local_devices()[0])


def test_make_array_constructors_match_jax():
    data = np.arange(6.0).reshape(2, 3)
    sharding = _sharding()
    for lib in (jax, minijax):
        built = lib.make_array_from_callback((2, 3), sharding, lambda index: data[index],
                                             dtype=np.float32)
        again = lib.make_array_from_single_device_arrays((2, 3), sharding, [built])
        local = lib.make_array_from_process_local_data(sharding, data.astype(np.float32))
        for out in (built, again, local):
            assert out.dtype == np.float32 and out.sharding == sharding
            np.testing.assert_array_equal(out, data)
    assert float(minijax.jit(lambda x: (x * 2).sum())(built)) == 30.0


def test_make_array_errors_match_jax():
    sharding, wrong = _sharding(), np.ones((3, 3), np.float32)
    for lib in (jax, minijax):
        with pytest.raises(ValueError, match="doesn't match the single device array shape"):
            lib.make_array_from_callback((2, 3), sharding, lambda index: wrong)
        with pytest.raises(ValueError, match="doesn't match the single device array shape"):
            lib.make_array_from_single_device_arrays((2, 4), sharding, [jax.numpy.ones(3)])

    @minijax.jit
    def traced(x):
        return minijax.make_array_from_process_local_data(sharding, x)
    with pytest.raises(TypeError, match="traced value"):
        traced(np.ones(2, np.float32))


def test_copy_to_host_async_eager_and_under_jit():
    tree = {"a": mnp.ones(2), "b": [np.zeros(1), 3]}
    for lib in (jax, minijax):
        assert lib.copy_to_host_async(tree) is tree
        out = lib.jit(lambda t: lib.copy_to_host_async(t)["a"] * 2)(tree)
        np.testing.assert_array_equal(out, [2.0, 2.0])
