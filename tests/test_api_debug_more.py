"""`minijax.debug.log` and the sharding views against JAX's: the records logged
(text, level, the user's file and line) eagerly, under jit, vmap and grad; format
errors; and `inspect_array_sharding` / `visualize_*` on concrete arrays."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp

_LOGGERS = {jax: "jax._src.debugging", minijax: "minijax.debug"}


def _logged(lib, caplog, run):
    caplog.clear()
    with caplog.at_level(logging.INFO):
        run()
        lib.effects_barrier()
    return [(r.getMessage(), r.levelname, r.pathname, r.lineno) for r in caplog.records
            if r.name == _LOGGERS[lib]]


def _program(lib, np_lib):
    def f(x):
        lib.debug.log("x = {x} and {}", 3, x=x)
        lib.debug.log(ordered=True)("sum {}", x.sum())
        return np_lib.sin(x).sum()
    return f


@pytest.mark.parametrize("transform", ["eager", "jit", "vmap", "grad"])
def test_log_records_match_jax(caplog, transform):
    x = np.arange(3, dtype=np.float32) if transform != "grad" else np.float32(0.5)
    records = []
    for lib, np_lib in ((jax, jnp), (minijax, mnp)):
        f = _program(lib, np_lib)
        wrapped = {"eager": f, "jit": lib.jit(f), "vmap": lib.vmap(f),
                   "grad": lib.grad(f)}[transform]
        records.append(_logged(lib, caplog, lambda: wrapped(x)))
    assert records[0] and records[1] == records[0]


def test_log_format_errors_match_jax():
    for lib in (jax, minijax):
        with pytest.raises(KeyError):
            lib.debug.log("x = {y}", x=np.float32(1))
        with pytest.raises(IndexError):
            lib.jit(lambda x: lib.debug.log("{} {}", x))(np.float32(1))
        with pytest.raises(TypeError, match="two-call form"):
            lib.debug.log(None, 1)


def test_inspect_array_sharding_of_concrete_arrays_matches_jax():
    x = mnp.ones((4, 2))
    seen = {jax: [], minijax: []}
    for lib in (jax, minijax):
        lib.debug.inspect_array_sharding(x, callback=seen[lib].append)
        with pytest.raises(TypeError, match="'int' object is not callable"):
            lib.debug.inspect_array_sharding(x, callback=3)
    assert seen[minijax] == seen[jax] == [x.sharding]

    @minijax.jit
    def traced(x):
        minijax.debug.inspect_array_sharding(x, callback=print)
        return x
    with pytest.raises(TypeError, match="minijax does not report the sharding"):
        traced(x)


def _outcome(thunk, capsys):
    try:
        thunk()
    except Exception as error:            # noqa: BLE001  (type and text are compared)
        return type(error), str(error)
    return capsys.readouterr().out


def test_visualize_sharding_matches_jax(capsys):
    x = mnp.ones((4, 2))
    outcomes = [(_outcome(lambda: lib.debug.visualize_array_sharding(x), capsys),
                 _outcome(lambda: lib.debug.visualize_sharding(x.shape, x.sharding), capsys))
                for lib in (jax, minijax)]
    assert outcomes[0] == outcomes[1]


# -- breakpoint ----------------------------------------------------------------------------

def _stopped(lib, np_lib, x, commands, transform, **options):
    """What the text debugger printed when `transform(f)(x)` ran, with `commands`
    typed in (JAX's `stdin=`/`stdout=` options of the cli debugger)."""
    out = io.StringIO()

    def f(x):
        y = np_lib.sin(x)
        label = "here"
        lib.debug.breakpoint(stdin=io.StringIO(commands), stdout=out, backend="cli",
                             num_frames=2, **options)
        return y.sum()

    def outer(x):
        return f(x) * 2
    wrapped = {"eager": outer, "jit": lib.jit(outer), "vmap": lib.vmap(outer),
               "grad": lib.grad(outer)}[transform]
    wrapped(x)
    lib.effects_barrier()
    return out.getvalue()


@pytest.mark.parametrize("transform", ["eager", "jit", "vmap", "grad"])
def test_breakpoint_session_matches_jax(transform):
    x = np.arange(1, 3, dtype=np.float32) if transform != "grad" else np.float32(0.5)
    commands = "p y\npp label\nzz\nw\nl\nu\nd\nu\nc\n"
    if transform == "vmap":      # one session per example, reading the same stdin
        commands *= 2
    expected = _stopped(jax, jnp, x, commands, transform)
    assert expected.count("Entering jdb:") == (2 if transform == "vmap" else 1)
    assert "(jdb) *** NameError: name 'zz' is not defined" in expected
    assert _stopped(minijax, mnp, x, commands, transform) == expected


def test_breakpoint_token_and_errors_match_jax():
    x = np.arange(3, dtype=np.float32)
    seen = {}
    for lib in (jax, minijax):
        def f(x, lib=lib):
            out = io.StringIO()
            token = lib.debug.breakpoint(stdin=io.StringIO("p x\nc\n"), stdout=out,
                                         token=x * 2)
            seen[lib] = out
            return token + 1
        np.testing.assert_array_equal(lib.jit(f)(x), x * 2 + 1)
        with pytest.raises(ValueError, match="`ordered` and `token` are mutually exclusive"):
            lib.debug.breakpoint(ordered=True, token=x)
    assert seen[minijax].getvalue() == seen[jax].getvalue() != ""
