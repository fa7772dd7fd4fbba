"""`minijax.config` and the flag context managers, each against JAX: reading and
updating flags, the flags minijax honours (`jax_disable_jit`, `jax_debug_nans`,
`jax_debug_infs`, `jax_default_matmul_precision`), the platform flags, and the
refusals (`jax_enable_x64=True`, other JAX flags changed, unknown names)."""
import json
import os
import pathlib
import subprocess
import sys
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.testing import assert_trees_match


@pytest.fixture(autouse=True)
def fresh_config():
    """Each test starts from the modelled flags' defaults in minijax and in JAX, whatever
    JAX's environment variables started them at (the GPU runs set
    JAX_DEFAULT_MATMUL_PRECISION); the variables themselves are tested in subprocesses."""
    for name, value in _DEFAULTS.items():
        minijax.config.update(name, value)
    with jax.disable_jit(False), jax.debug_nans(False), jax.debug_infs(False), \
            jax.default_matmul_precision(None), jax.numpy_rank_promotion("allow"):
        yield
    minijax.config.reset()


_DEFAULTS = {"jax_disable_jit": False, "jax_debug_nans": False, "jax_debug_infs": False,
             "jax_default_matmul_precision": None, "jax_numpy_rank_promotion": "allow"}


def test_config_reads_as_jax_config_does():
    for name in ["jax_enable_x64", "jax_disable_jit", "jax_debug_nans", "jax_debug_infs",
                 "jax_default_matmul_precision", "jax_platforms", "jax_log_compiles",
                 "jax_numpy_rank_promotion"]:
        assert getattr(minijax.config, name) == getattr(jax.config, name), name
        assert minijax.config.read(name) == getattr(jax.config, name), name
    assert minijax.config.x64_enabled is False
    assert minijax.config.values["jax_enable_x64"] is False
    assert minijax.enable_x64.value is False and minijax.debug_nans.value is False


_ROOT = pathlib.Path(__file__).resolve().parent.parent
_MODELLED_VARIABLES = ("JAX_ENABLE_X64", "JAX_DISABLE_JIT", "JAX_DEBUG_NANS", "JAX_DEBUG_INFS",
                       "JAX_DEFAULT_MATMUL_PRECISION", "JAX_NUMPY_RANK_PROMOTION",
                       "JAX_THREEFRY_PARTITIONABLE")


def _python_with(variables, script):
    """`script` run by a fresh interpreter that imports this checkout, with JAX's
    variables for the modelled flags set to `variables` (the others unset)."""
    env = {k: v for k, v in os.environ.items() if k not in _MODELLED_VARIABLES}
    env.update(variables,
               PYTHONPATH=os.pathsep.join([str(_ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=_ROOT, env=env, timeout=300)


_READ_FLAGS = """
import json, jax, jax.numpy as jnp, numpy as np
import minijax, minijax.numpy as mnp
from minijax.interop import import_jaxpr
names = ["jax_disable_jit", "jax_debug_nans", "jax_debug_infs", "jax_default_matmul_precision",
         "jax_numpy_rank_promotion", "jax_threefry_partitionable"]
a = np.ones((2, 2), np.float32)
out = {"minijax": [minijax.config.read(n) for n in names],
       "jax": [getattr(jax.config, n) for n in names],
       "traced": str(minijax.make_jaxpr(lambda a: a @ a)(a)),
       "imported": str(import_jaxpr(jax.make_jaxpr(lambda a: a @ a)(a)))}
jax.config.update("jax_default_matmul_precision", "bfloat16")   # JAX's flag, not minijax's
minijax.config.reset()
out["after_jax_update"] = minijax.config.jax_default_matmul_precision
print(json.dumps(out))
"""


def test_modelled_flags_start_from_jaxs_environment_variables():
    result = _python_with({"JAX_DEFAULT_MATMUL_PRECISION": "highest", "JAX_DEBUG_NANS": "1",
                           "JAX_DEBUG_INFS": "off", "JAX_DISABLE_JIT": "True",
                           "JAX_NUMPY_RANK_PROMOTION": "warn",
                           "JAX_THREEFRY_PARTITIONABLE": "0"}, _READ_FLAGS)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.splitlines()[-1])
    assert out["minijax"] == out["jax"] == [True, True, False, "highest", "warn", False]
    # A contraction records the precision the variable set, as JAX's trace does.
    assert "precision=('HIGHEST', 'HIGHEST')" in out["traced"]
    assert "precision=('HIGHEST', 'HIGHEST')" in out["imported"]
    assert out["after_jax_update"] == "highest"


@pytest.mark.parametrize("variable, value, message", [
    ("JAX_ENABLE_X64", "1", "does not model 64-bit types"),
    ("JAX_DEFAULT_MATMUL_PRECISION", "F32_F32_F32", "dot algorithm presets")])
def test_an_environment_minijax_cannot_model_fails_its_import(variable, value, message):
    result = _python_with({variable: value}, "import minijax")
    assert result.returncode != 0
    assert f"{variable}={value!r} is set in the environment" in result.stderr
    assert message in result.stderr


def test_unknown_names_are_attribute_errors_as_in_jax():
    for config in (jax.config, minijax.config):
        with pytest.raises(AttributeError, match="Unrecognized config option: jax_nope"):
            config.update("jax_nope", 1)
        with pytest.raises(AttributeError):
            config.jax_nope
        with pytest.raises(AttributeError):
            config.not_a_flag


def test_x64_is_refused_with_the_limitation_named():
    minijax.config.update("jax_enable_x64", False)
    with pytest.raises(ValueError, match="does not model 64-bit types"):
        minijax.config.update("jax_enable_x64", True)
    with pytest.raises(ValueError, match="64-bit"):
        with minijax.enable_x64(True):
            pass
    with minijax.enable_x64(False):
        assert mnp.zeros(2).dtype == np.float32
    assert minijax.config.jax_enable_x64 is False


def test_the_platform_jax_runs_on_is_accepted_and_another_refused():
    backend = jax.default_backend()
    minijax.config.update("jax_platform_name", backend)
    minijax.config.update("jax_platforms", backend)
    other = "tpu" if backend != "tpu" else "cpu"
    with pytest.raises(ValueError, match="backend JAX chose"):
        minijax.config.update("jax_platform_name", other)


def test_other_jax_flags_are_never_changed_in_jax():
    before = jax.config.jax_pprint_use_color
    minijax.config.update("jax_pprint_use_color", before)       # its value: a no-op
    with pytest.raises(ValueError, match="does not change JAX's configuration"):
        minijax.config.update("jax_pprint_use_color", not before)
    assert jax.config.jax_pprint_use_color == before


@pytest.mark.parametrize("name,value", [
    ("jax_compilation_cache_dir", "/tmp/minijax-cache"),
    ("jax_persistent_cache_min_compile_time_secs", 0.0),
    ("jax_persistent_cache_min_entry_size_bytes", -1),
    ("jax_traceback_filtering", "off")])
def test_the_runtime_s_own_settings_are_set_in_jax(name, value):
    # A program written for JAX sets its persistent cache with config.update (JAX's
    # docs teach it): no result depends on these, and minijax's programs are JAX's
    # executables, so the update sets JAX's flag; minijax reads it back.
    before = getattr(jax.config, name)
    try:
        minijax.config.update(name, value)
        assert getattr(jax.config, name) == value
        assert getattr(minijax.config, name) == value
    finally:
        jax.config.update(name, before)


def test_cpu_devices_set_before_the_backend_starts_as_in_jax():
    # The sharding tutorials start with jax.config.update("jax_num_cpu_devices", n).
    result = _python_with({}, """
import minijax as jax, minijax.numpy as jnp
jax.config.update("jax_platforms", "cpu")      # JAX's flag: it starts no backend
jax.config.update("jax_num_cpu_devices", 4)
x = jax.device_put(jnp.arange(8.0), jax.sharding.NamedSharding(
    jax.make_mesh((4,), ("x",)), jax.sharding.PartitionSpec("x")))
print(len(jax.devices()), len(jax.jit(lambda a: a * 2)(x).sharding.device_set))
""")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["4", "4"]


@pytest.mark.parametrize("bad", ["yes", 2, None])
def test_bool_flags_refuse_other_values(bad):
    with pytest.raises(ValueError, match="jax_debug_nans takes a bool"):
        minijax.config.update("jax_debug_nans", bad)


# -- jax_disable_jit ---------------------------------------------------------------------------

def test_disable_jit_flag_runs_jitted_functions_op_by_op():
    seen = []

    def f(x):
        seen.append(type(x))
        return x * 2.0
    jitted = minijax.jit(f)
    minijax.config.update("jax_disable_jit", True)
    assert minijax.config.jax_disable_jit is True
    assert_trees_match(jitted(np.float32(3.0)), jax.jit(lambda x: x * 2.0)(np.float32(3.0)))
    assert seen[-1] is np.float32           # the Python body saw the value itself
    minijax.config.update("jax_disable_jit", False)
    with minijax.disable_jit():
        assert minijax.config.jax_disable_jit is True
    assert minijax.config.jax_disable_jit is False


def test_update_sets_the_default_new_threads_start_from():
    minijax.config.update("jax_debug_infs", True)
    seen = []
    thread = threading.Thread(target=lambda: seen.append(minijax.config.jax_debug_infs))
    thread.start()
    thread.join()
    assert seen == [True]
    minijax.config.reset()       # back to where the environment started it
    assert minijax.config.jax_debug_infs is (
        os.environ.get("JAX_DEBUG_INFS", "0").lower() in ("y", "yes", "t", "true", "on", "1"))


# -- jax_debug_nans / jax_debug_infs -----------------------------------------------------------

def _raised(fun, *args):
    with pytest.raises(FloatingPointError) as info:
        fun(*args)
    return str(info.value)


# (program, argument, the primitive minijax names). JAX names the same one, except
# for jnp.multiply, which JAX runs as a jitted helper of its own (it says "stage").
CASES = {
    "eager log": (lambda np_lib, lib: np_lib.log, -1.0, "log"),
    "eager mul": (lambda np_lib, lib: lambda x: np_lib.multiply(x, np.nan), 1.0, "mul"),
    "jit log": (lambda np_lib, lib: lib.jit(lambda x: np_lib.log(x) * 2.0), -1.0, "log"),
    "jit sqrt in a nest": (lambda np_lib, lib: lib.jit(lambda x: lib.jit(np_lib.sqrt)(x) + 1.0),
                           -4.0, "sqrt"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_debug_nans_raises_where_jax_does(case, capsys):
    make, x, where = CASES[case]
    with jax.debug_nans(True):
        expected = _raised(make(jnp, jax), x)
    printed_by_jax = capsys.readouterr().out
    with minijax.debug_nans(True):
        got = _raised(make(mnp, minijax), x)
    assert got == f"invalid value (nan) encountered in {where}"
    assert expected == got or case == "eager mul"
    # Each jitted call that finds the NaN (a jnp function is one) says on stdout that
    # it runs again op by op, in JAX's words: once per level of nesting.
    assert capsys.readouterr().out == printed_by_jax
    assert "de-optimized" in printed_by_jax
    # Off again after the block: the NaN comes back as a value.
    assert np.isnan(make(mnp, minijax)(x))


def test_debug_nans_passes_clean_programs_and_ignores_infinities():
    minijax.config.update("jax_debug_nans", True)
    assert_trees_match(minijax.jit(lambda x: mnp.exp(x) / x)(0.5),
                       jax.jit(lambda x: jnp.exp(x) / x)(0.5))
    assert_trees_match(minijax.grad(lambda x: mnp.sin(x) ** 2)(0.3),
                       jax.grad(lambda x: jnp.sin(x) ** 2)(0.3))
    assert np.isinf(mnp.log(0.0))
    assert_trees_match(minijax.vmap(mnp.log)(np.ones(3, np.float32)),
                       jax.vmap(jnp.log)(np.ones(3, np.float32)))


def test_debug_infs_raises_where_jax_does():
    for fun_of in (lambda np_lib, lib: np_lib.log, lambda np_lib, lib: lib.jit(np_lib.log)):
        with jax.debug_infs(True):
            expected = _raised(fun_of(jnp, jax), 0.0)
        with minijax.debug_infs(True):
            got = _raised(fun_of(mnp, minijax), 0.0)
        assert got == expected == "invalid value (inf) encountered in log"


def test_debug_nans_in_a_jitted_call_with_refs_names_the_call():
    def f(box, x):
        box[...] = box[...] + 1.0
        return mnp.log(x)
    box = minijax.new_ref(mnp.zeros(()))
    with minijax.debug_nans(True):
        message = _raised(minijax.jit(f), box, -1.0)
    assert message == "invalid value (nan) encountered in jit(f)"
    assert float(box[...]) == 1.0          # written once: the call was not run again


# -- jax_default_matmul_precision --------------------------------------------------------------

def test_default_matmul_precision_fills_in_precision_none():
    a = np.arange(4, dtype=np.float32).reshape(2, 2) / 3
    jitted = minijax.jit(lambda a: mnp.sum(a @ a))
    before = jitted(a)
    with minijax.default_matmul_precision("float32"):
        assert "precision=('HIGHEST', 'HIGHEST')" in str(minijax.make_jaxpr(lambda a: a @ a)(a))
        assert "HIGHEST" in str(jitted.trace(a).jaxpr)       # traced again, not reused
        with jax.default_matmul_precision("float32"):
            assert_trees_match(jitted(a), jax.jit(lambda a: jnp.sum(a @ a))(a))
        # An explicit precision wins over the default.
        assert "'HIGH'" in str(minijax.make_jaxpr(lambda a: mnp.dot(a, a, precision="high"))(a))
    assert "precision=None" in str(minijax.make_jaxpr(lambda a: a @ a)(a))
    assert_trees_match(jitted(a), before)
    minijax.config.update("jax_default_matmul_precision", "tensorfloat32")
    assert "'HIGH'" in str(minijax.make_jaxpr(lambda a: a @ a)(a))
    with pytest.raises(ValueError, match="jax_default_matmul_precision takes one of"):
        minijax.config.update("jax_default_matmul_precision", "float128")


def test_numpy_rank_promotion_warns_or_raises_where_jax_does():
    vector, matrix = np.ones(3, np.float32), np.ones((2, 3), np.float32)
    for lib in (minijax, jax):
        with lib.numpy_rank_promotion("raise"):
            with pytest.raises(ValueError, match="jax_numpy_rank_promotion='raise'"):
                lib.numpy.add(vector, matrix)
            # rank-0 operands and equal ranks broadcast as always
            assert lib.numpy.multiply(matrix, 2.0).shape == (2, 3)
            assert lib.numpy.subtract(matrix[:1], matrix).shape == (2, 3)
            assert lib.numpy.where(vector > 0, matrix, 0.0).shape == (2, 3)   # not checked
        with lib.numpy_rank_promotion("warn"), pytest.warns(UserWarning, match="rank"):
            assert lib.numpy.maximum(vector, matrix).shape == (2, 3)
    with pytest.raises(ValueError, match="takes one of"):
        minijax.config.update("jax_numpy_rank_promotion", "forbid")


def test_numpy_rank_promotion_reaches_programs_traced_before():
    add = minijax.jit(lambda a, b: a + b)
    vector, matrix = np.ones(3, np.float32), np.ones((2, 3), np.float32)
    assert add(vector, matrix).shape == (2, 3)          # traced and cached under 'allow'
    minijax.config.update("jax_numpy_rank_promotion", "raise")
    assert minijax.config.jax_numpy_rank_promotion == "raise"
    with pytest.raises(ValueError, match="different ranks"):
        add(vector, matrix)


def test_a_new_default_forgets_traces_in_a_thread_that_never_set_the_flag(monkeypatch):
    # config.update sets the default; a thread that never set the flag itself reads the
    # default, so its traces made under the old value must go too. (In one process the
    # suite's earlier context managers gave the thread a value of its own, which hid
    # this: the rank-promotion and threefry checks above failed when run alone.)
    from minijax.frontend import config_flags, jit as jit_module
    cleared = []
    monkeypatch.setattr(jit_module, "clear_caches", lambda: cleared.append(1))
    flag = config_flags.ThreadFlag("jax_example_flag", "a", lambda v: v, clears_caches=True)
    flag.set_default("b")
    assert flag.value == "b" and cleared
    cleared.clear()
    flag.set_default("b")                      # no change: the traces stay
    assert not cleared
    with flag("c"):                            # this thread's own value
        assert flag.value == "c" and cleared
    assert flag.value == "b"
    quiet = config_flags.ThreadFlag("jax_example_quiet", 1, lambda v: v, clears_caches=False)
    cleared.clear()
    quiet.set_default(2)
    assert quiet.value == 2 and not cleared
