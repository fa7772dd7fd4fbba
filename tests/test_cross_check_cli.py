"""The command line end to end: `run`, `diff` and `check` on small scripts."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.test_cli import run_minijax


@pytest.fixture
def scripts(tmp_path):
    (tmp_path / "helper.py").write_text(textwrap.dedent("""
        import jax.numpy as jnp
        def cube_sum(v):
            return jnp.sum(v ** 3)
    """))
    (tmp_path / "agree.py").write_text(textwrap.dedent("""
        import sys
        import jax
        import jax.numpy as jnp
        from jax import lax
        from helper import cube_sum
        x = jnp.linspace(0.0, 1.0, 4)
        print("backend", jax.__name__, jnp.__name__.split(".")[0], lax.__name__.split(".")[0])
        print("grad", jax.grad(cube_sum)(x))
        print("scan", lax.scan(lambda c, v: (c + v, c), 0.0, x)[0], sys.argv[1:])
        y = jax.jit(jnp.cos)(x)
    """))
    (tmp_path / "differ.py").write_text(textwrap.dedent("""
        import jax
        import jax.numpy as jnp
        x = jnp.linspace(0.0, 1.0, 4)
        print("same", jnp.sin(x))
        scale = 2.0 if jax.__name__ == "minijax" else 1.0   # the deliberate difference
        print("scaled", x * scale)
    """))
    (tmp_path / "funcs.py").write_text(textwrap.dedent("""
        import numpy as np
        import jax.numpy as jnp
        def f(x):
            return jnp.sum(jnp.tanh(x) * x)
        def g(x, y):
            return x @ y
        EXAMPLES = {"f": (np.ones(3, np.float32),),
                    "g": (np.ones((2, 3), np.float32), np.ones(3, np.float32))}
    """))
    return tmp_path


def test_run_uses_minijax_for_the_script_and_its_modules(scripts):
    done = run_minijax("run", "agree.py", "--flag", cwd=scripts)
    assert done.returncode == 0, done.stderr
    assert "backend minijax minijax minijax" in done.stdout
    assert "['--flag']" in done.stdout
    plain = subprocess.run([sys.executable, "agree.py", "--flag"], capture_output=True, text=True,
                           cwd=scripts)
    assert "backend jax jax jax" in plain.stdout
    # The same numbers either way.
    assert done.stdout.splitlines()[1:] == plain.stdout.splitlines()[1:]


def test_run_names_a_jax_module_minijax_lacks(scripts):
    (scripts / "missing.py").write_text("import jax.ffi\n")
    done = run_minijax("run", "missing.py", cwd=scripts)
    assert done.returncode != 0
    assert "minijax does not provide" in done.stderr


def test_run_pickles_arrays_as_jax_does(scripts):
    # pickle imports the module that rebuilds a jax.Array (`jax._src.array`) through the
    # script's own builtins; under `run` that import was sent to minijax and failed.
    (scripts / "pickles.py").write_text(textwrap.dedent("""
        import io, pickle
        import jax, jax.numpy as jnp
        params = {"w": jnp.arange(6.0).reshape(2, 3), "n": jnp.int32(3),
                  "k": jax.random.key_data(jax.random.key(1))}
        blob = pickle.dumps(params)
        back = pickle.loads(blob)
        buffer = io.BytesIO()
        pickle.dump([params["w"] * 2], buffer)
        buffer.seek(0)
        print(type(back["w"]).__name__, back["w"].dtype, back["w"].tolist(), back["n"])
        print(back["k"], pickle.load(buffer)[0].sum(), jax.grad(jnp.sum)(back["w"]).shape)
    """))
    done = run_minijax("run", "pickles.py", cwd=scripts)
    assert done.returncode == 0, done.stderr
    plain = subprocess.run([sys.executable, "pickles.py"], capture_output=True, text=True,
                           cwd=scripts)
    assert plain.returncode == 0, plain.stderr
    assert done.stdout == plain.stdout and "ArrayImpl float32" in done.stdout


def test_diff_agrees_on_an_ordinary_script(scripts):
    (scripts / "plain.py").write_text(textwrap.dedent("""
        import jax, jax.numpy as jnp
        x = jnp.linspace(0.0, 1.0, 4)
        print(jax.grad(lambda v: jnp.sum(jnp.sin(v) * v))(x))
    """))
    done = run_minijax("diff", "plain.py", cwd=scripts)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "agree on 1 printed lines" in done.stdout


def test_diff_names_the_first_line_that_differs(scripts):
    done = run_minijax("diff", "differ.py", cwd=scripts)
    assert done.returncode == 1
    assert "first difference at differ.py:7: print(\"scaled\", x * scale)" in done.stdout
    assert "jax:" in done.stdout and "minijax:" in done.stdout


def test_diff_loads_the_scripts_own_modules_for_each_side(scripts):
    (scripts / "which.py").write_text(textwrap.dedent("""
        import jax
        def backend_scale():
            return 2.0 if jax.__name__ == "minijax" else 1.0
    """))
    (scripts / "uses_module.py").write_text(textwrap.dedent("""
        import jax.numpy as jnp
        from which import backend_scale
        print("scaled", jnp.ones(2) * backend_scale())
    """))
    done = run_minijax("diff", "uses_module.py", cwd=scripts)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "uses_module.py:4" in done.stdout and "[2. 2.]" in done.stdout


def test_diff_compares_the_imaginary_part_of_complex_globals(scripts):
    # the globals were compared as float64, which drops imaginary parts
    (scripts / "which.py").write_text(textwrap.dedent("""
        import jax
        def backend_sign():
            return -1.0 if jax.__name__ == "minijax" else 1.0
    """))
    (scripts / "complex_global.py").write_text(textwrap.dedent("""
        import jax.numpy as jnp
        from which import backend_sign
        z = jnp.array([1 + 1j * backend_sign()])      # the real parts agree
    """))
    done = run_minijax("diff", "complex_global.py", cwd=scripts)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the global z differs" in done.stdout


def test_diff_compares_how_the_runs_stop(scripts):
    """Both runs stop with the same exception type after the same prints: they agree
    (the messages are each library's). `jax.ad_checkpoint` without its import fails on
    JAX as on minijax: importing minijax no longer imports it for the JAX run."""
    (scripts / "no_import.py").write_text(textwrap.dedent("""
        import jax, jax.numpy as jnp
        print("before", jnp.ones(2))
        print(jax.ad_checkpoint.checkpoint_name(jnp.ones(2), "h"))
    """))
    done = run_minijax("diff", "no_import.py", cwd=scripts)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "agree on 1 printed lines" in done.stdout
    assert "both stop with AttributeError" in done.stdout
    assert "module 'jax' has no attribute 'ad_checkpoint'" in done.stdout
    (scripts / "other_error.py").write_text(textwrap.dedent("""
        import jax
        raise (ValueError if jax.__name__ == "minijax" else TypeError)("stop")
    """))
    done = run_minijax("diff", "other_error.py", cwd=scripts)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "jax printed 0 times (TypeError: stop), minijax 0 times (ValueError: stop)" in (
        done.stdout)


def test_check_with_args_and_with_examples(scripts):
    done = run_minijax("check", "funcs.py::f", "--args", "np.arange(3, dtype=np.float32)",
                    "--transforms", "eager,grad,vmap", "--policies", "", cwd=scripts)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "cross_check of f" in done.stdout and "all agree" in done.stdout
    done = run_minijax("check", "funcs.py", "--transforms", "eager,jit", "--policies",
                    "dots_saveable", cwd=scripts)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "cross_check of g" in done.stdout and "checkpoint[dots_saveable]" in done.stdout


def test_check_without_arguments_says_how_to_give_them(scripts):
    done = run_minijax("check", "funcs.py::nope", cwd=scripts)
    assert done.returncode != 0 and "no function 'nope'" in done.stderr


def test_diff_reads_whitespace_as_layout():
    # NumPy pads an array's numbers to one width, so two results within the tolerance
    # print as `-0.433146 ,` and `-0.43314594,` (seen on the autodiff tutorial's W_grad);
    # the text around the numbers still has to match, and numbers never merge.
    from minijax.testing.commands import _same_text
    jax_text = "W_grad=Array([-0.433146 , -0.7354605, -1.2598922], dtype=float32)"
    mini_text = "W_grad=Array([-0.43314594, -0.7354604 , -1.2598921 ], dtype=float32)"
    assert _same_text(mini_text, jax_text, 1e-5, 1e-6)
    assert not _same_text(mini_text.replace("float32", "float16"), jax_text, 1e-5, 1e-6)
    assert not _same_text("[1 2]", "[12]", 1e-5, 1e-6)
    assert not _same_text("[-0.5 , 1.]", "[-0.43 , 1.]", 1e-5, 1e-6)
