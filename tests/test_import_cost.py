"""`import minijax` loads only what the rule tables need (benchmarks/import_time.py).

What registers no rules loads on first use (docs/design.md, "What registers nothing
loads on first use"); these tests pin that, in fresh interpreters, and check that
every lazily loaded name still answers as an eagerly imported one did.
"""
import json
import subprocess
import sys

import numpy as np
import pytest

# Loaded by `import minijax` before the lazy names; none of them may be now.
_NOT_AT_IMPORT = ["jax.extend", "minijax.ir.parser", "minijax.random", "minijax.scipy",
                  "minijax.nn", "minijax.image", "minijax.test_util", "minijax.ops",
                  "minijax.flatten_util", "minijax.ad_checkpoint", "minijax.stages",
                  "minijax.monitoring", "minijax.version", "minijax.distributed",
                  "minijax.interpreters", "minijax.extend",
                  # computing an array at import lowered a program with JAX's MHLO
                  "jaxlib.mlir.dialects.mhlo"]


def _run(code: str):
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_import_minijax_leaves_what_registers_nothing_unloaded():
    loaded = _run("import json, sys; import minijax; "
                  f"print(json.dumps([m for m in {_NOT_AT_IMPORT!r} if m in sys.modules]))")
    assert loaded == []


def test_bind_takes_jax_params_whatever_was_imported_first():
    # The adapters sit beside the registry (ir/jax_params.py): a primitive taken from
    # minijax's own jaxpr binds JAX's params before JAX's names (lax.primitives) load.
    answers = _run(
        "import json, sys, numpy as np, minijax\n"
        "eqn = minijax.make_jaxpr(minijax.numpy.sin)(np.float32(0.5)).eqns[0]\n"
        "before = 'minijax.lax.primitives' in sys.modules\n"
        "out = eqn.primitive.bind(np.float32(0.5), accuracy=None)\n"
        "print(json.dumps({'loaded_before': before, 'value': round(float(out), 6)}))")
    assert answers == {"loaded_before": False, "value": round(float(np.sin(0.5)), 6)}


def test_lazy_names_answer_as_before():
    answers = _run(
        "import json, sys, minijax\n"
        "from minijax import nn\n"
        "import minijax.scipy.special\n"
        "from minijax.ir import loads, ParseError, parse_jaxpr\n"
        "import minijax.ir\n"
        "print(json.dumps({\n"
        "  'nn': nn is sys.modules['minijax.nn'],\n"
        "  'scipy': minijax.scipy is sys.modules['minijax.scipy'],\n"
        "  'random': minijax.random is sys.modules['minijax.random'],\n"
        "  'image': callable(minijax.image.resize),\n"
        "  'ops': callable(minijax.ops.segment_sum),\n"
        "  'parser': minijax.ir.parser is sys.modules['minijax.ir.parser'],\n"
        "  'loads': loads is minijax.ir.parser.loads,\n"
        "  'ParseError': issubclass(ParseError, ValueError),\n"
        "  'dir': sorted({'random', 'scipy', 'nn', 'image', 'ops', 'stages'}\n"
        "                - set(dir(minijax))),\n"
        "}))")
    assert answers == {"nn": True, "scipy": True, "random": True, "image": True,
                       "ops": True, "parser": True, "loads": True,
                       "ParseError": True, "dir": []}


@pytest.mark.parametrize("module,name", [("minijax", "no_such_name"),
                                         ("minijax.ir", "no_such_name")])
def test_unknown_names_still_raise_attribute_error(module, name):
    import importlib
    with pytest.raises(AttributeError, match=name):
        getattr(importlib.import_module(module), name)


def test_first_eager_call_on_a_jax_array_takes_the_compiled_path():
    # The concrete array type is learned from the first JAX array an eager jnp call
    # meets (it was read off an array computed at import): that call already goes
    # through the compiled program (which leaves its executable in the cache), as
    # every later one does, rather than running the body op by op.
    answers = _run(
        "import json, jax, numpy as np\n"
        "import minijax.numpy as jnp\n"
        "x = jax.device_put(np.arange(3.0, dtype=np.float32))\n"
        "before = jnp.add.eager_jit.call_cache().fast is not None\n"
        "y = jnp.add(x, x)\n"
        "print(json.dumps([before, jnp.add.eager_jit.call_cache().fast is not None,\n"
        "                  type(y) is type(x), y.tolist()]))")
    assert answers == [False, True, True, [0.0, 2.0, 4.0]]
