"""The JAX flags minijax gives their meaning (`frontend/config_flags.py`), against
JAX on the same programs: the transfer guards and `jax_no_execution` (applied by
entering JAX's own context manager around minijax's dispatch), `jax_softmax_custom_jvp`
(which derivative rule `nn.softmax` has), `jax_explain_cache_misses` (why a jit call
traced again), `log_compiles`/`no_tracing` on eager primitives, and the leak checker
on `vmap`'s trace."""
import contextlib
import io
import logging
import re

import jax
import jax.ad_checkpoint
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.ad_checkpoint
import minijax.numpy as mnp

LIBS = [(jax, jnp), (minijax, mnp)]


@pytest.fixture(autouse=True)
def fresh_config():
    yield
    minijax.config.reset()


def _outcome(call):
    """'ok', or the refusal's type and what JAX says was refused."""
    try:
        call()
    except Exception as error:       # noqa: BLE001  (the type and words are compared)
        found = re.search(r"Disallowed [a-z-]+ transfer|no_execution config option", str(error))
        return type(error).__name__, found and found.group(0)
    return "ok"


# -- transfer guards ---------------------------------------------------------------------

def _transfers(lib, np_lib):
    """What a program may do that moves data, each once per call: minijax's calls
    (jit with host arguments, eager jnp and lax ops, device_put, asarray), and JAX's
    own methods on the arrays minijax returns (indexing with a Python int)."""
    x = np_lib.ones(3)
    add_one = lib.jit(lambda a: a + 1)
    add_one(x)
    host = np.ones(3, np.float32)
    return {"jit of a NumPy array": lambda: add_one(host),
            "jit of an array": lambda: add_one(x),
            "jit of a Python scalar": lambda: add_one(1.0),
            "eager jnp op": lambda: np_lib.sin(host),
            "eager lax op": lambda: lib.lax.cos(host),
            "device_put": lambda: lib.device_put(host),
            "asarray": lambda: np_lib.asarray(host),
            "x[0]": lambda: float(x[0]),
            "np.asarray(x)": lambda: np.asarray(x)}


@pytest.mark.parametrize("level", ["disallow", "disallow_explicit"])
def test_transfer_guard_refuses_what_jax_refuses(level):
    outcomes = {}
    for lib, np_lib in LIBS:
        calls = _transfers(lib, np_lib)
        with lib.transfer_guard(level):
            assert lib.config.jax_transfer_guard_host_to_device == level
            outcomes[lib] = {name: _outcome(call) for name, call in calls.items()}
    assert outcomes[minijax] == outcomes[jax]
    refused = ("JaxRuntimeError", "Disallowed host-to-device transfer")
    # 'disallow' lets explicit transfers through, 'disallow_explicit' does not
    assert outcomes[jax]["eager jnp op"] == refused
    assert outcomes[jax]["device_put"] == (refused if level == "disallow_explicit" else "ok")
    assert outcomes[jax]["jit of an array"] == "ok"


def test_transfer_guard_set_by_config_guards_minijax_calls_only():
    # Set with config.update, minijax's guard applies to minijax's calls, as JAX's
    # applies to JAX's; JAX's own configuration is left as it was.
    jax_calls = _transfers(jax, jnp)
    with jax.transfer_guard("disallow"):
        expected = {name: _outcome(call) for name, call in jax_calls.items()}
    calls = _transfers(minijax, mnp)
    minijax.config.update("jax_transfer_guard", "disallow")
    assert minijax.config.jax_transfer_guard_device_to_host == "disallow"
    assert jax.config.jax_transfer_guard_host_to_device is None
    got = {name: _outcome(call) for name, call in calls.items()}
    assert jax.jit(lambda a: a * 2)(np.ones(2, np.float32)).shape == (2,)   # JAX's: allowed
    # `x[0]` is JAX's own indexing method, outside minijax's calls: not guarded here
    assert expected.pop("x[0]") != "ok" and got.pop("x[0]") == "ok"
    if jax.default_backend() != "cpu":
        # and `np.asarray(x)` is JAX's own `Array.__array__`, which only off the CPU
        # moves data (device to host)
        assert expected.pop("np.asarray(x)") != "ok" and got.pop("np.asarray(x)") == "ok"
    assert got == expected
    minijax.config.reset()
    assert minijax.config.jax_transfer_guard_host_to_device is None
    assert _outcome(calls["eager jnp op"]) == "ok"


def test_one_direction_and_bad_levels():
    host = np.ones(2, np.float32)
    for lib, np_lib in LIBS:
        with lib.transfer_guard_host_to_device("disallow"):
            assert lib.config.jax_transfer_guard_device_to_host is None
            assert _outcome(lambda: np_lib.exp(host))[1] == "Disallowed host-to-device transfer"
        with lib.transfer_guard_device_to_host("disallow"):
            assert _outcome(lambda: np_lib.exp(host)) == "ok"
        with pytest.raises(ValueError, match="allow"):
            with lib.transfer_guard("forbid"):
                pass
        with pytest.raises(ValueError):
            lib.config.update("jax_transfer_guard_device_to_device", 3)


# -- no_execution -------------------------------------------------------------------------

def test_no_execution_refuses_every_execution_as_jax():
    outcomes = []
    for lib, np_lib in LIBS:
        x = np_lib.ones(3)

        def triple(a):
            return a * 3
        f = lib.jit(triple)
        f(x)
        with lib.no_execution(True):
            outcomes.append([_outcome(call) for call in (
                lambda: f(x), lambda: np_lib.tanh(x), lambda: lib.lax.cos(x))])
        assert float(f(x)[0]) == 3         # and runs again once the block ends
    assert outcomes[0] == [("RuntimeError", "no_execution config option")] * 3
    assert outcomes[1] == outcomes[0]
    with pytest.raises(RuntimeError, match=r"execute function jit\(triple\)"):
        with minijax.no_execution():
            minijax.jit(triple)(np.float32(1))
    minijax.config.update("jax_no_execution", True)
    assert float(jax.jit(triple)(np.float32(1))) == 3       # JAX's own calls still run
    with pytest.raises(RuntimeError, match="no_execution"):
        mnp.sin(np.float32(1))


# -- softmax_custom_jvp ---------------------------------------------------------------------

def _softmax_derivative(lib, np_lib):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        lib.ad_checkpoint.print_saved_residuals(lib.nn.softmax, np_lib.ones(3))
    saved = re.findall(r"output of (\S+)", printed.getvalue())
    grad = lib.jit(lib.grad(lambda x: (lib.nn.softmax(x) * np_lib.arange(3.0)).sum()))
    return saved, np.asarray(grad(np_lib.array([1.0, 2.0, 3.0]))).tolist()


@pytest.mark.parametrize("custom_jvp", [False, True])
def test_softmax_custom_jvp_picks_jax_rule(custom_jvp):
    results = []
    for lib, np_lib in LIBS:
        assert lib.config.jax_softmax_custom_jvp is False         # JAX's default
        with lib.softmax_custom_jvp(custom_jvp):
            results.append(_softmax_derivative(lib, np_lib))
    assert results[1] == results[0]
    # the custom rule saves the output alone; plain differentiation exp and the sum's
    expected = ["custom_jvp_call"] if custom_jvp else ["exp", "broadcast_in_dim",
                                                        "integer_pow"]
    assert results[0][0] == expected


# -- log_compiles and no_tracing on eager primitives -------------------------------------------

def test_eager_primitive_logs_and_refuses_as_jax(caplog):
    messages, errors = [], []
    for lib, np_lib in LIBS:
        x = np_lib.ones((2, 1, 5))          # a shape no other test compiles cos for
        caplog.clear()
        with caplog.at_level(logging.WARNING), lib.log_compiles(True):
            lib.lax.cos(x)
            lib.lax.cos(x)             # compiled already: nothing logged
        messages.append([r.getMessage() for r in caplog.records
                         if r.getMessage().startswith("Compiling jit(cos)")])
        with lib.no_tracing(True), pytest.raises(RuntimeError) as error:
            lib.lax.tanh(x)
        errors.append(re.sub(r" at \S+", "", str(error.value)))
    assert len(messages[0]) == 1 and messages[1] == messages[0]
    assert errors[0] == "re-tracing function tanh for `jit`, but 'no_tracing' is set"
    assert errors[1] == errors[0]


# -- checking_leaks on vmap ---------------------------------------------------------------------

def test_checking_leaks_covers_vmap():
    # (each finished trace costs a full garbage collection: few traces here)
    for lib, np_lib in LIBS:
        leaked = []

        def keep(a):
            leaked.append(a)
            return a
        with lib.checking_leaks(), pytest.raises(Exception, match="^Leaked trace BatchTrace"):
            lib.vmap(keep)(np_lib.ones(3))
    with minijax.checking_leaks():       # vmap's own references to its tracers are no leak
        assert minijax.vmap(lambda a: {"s": (a, a)})(mnp.ones(2))["s"][0].shape == (2,)


# -- explain_cache_misses -----------------------------------------------------------------------

def _explained(lib, caplog, calls):
    """The message logged for each call (None: none), for a function jitted anew."""
    def scale(x, y, n):
        return jax.tree.leaves(x)[0] * y * n
    f = lib.jit(scale, static_argnums=2)
    out = []
    with caplog.at_level(logging.WARNING), lib.explain_cache_misses(True):
        for args in calls:
            caplog.clear()
            f(*args)
            found = [r.getMessage() for r in caplog.records
                     if r.getMessage().startswith("TRACING CACHE MISS")]
            out.append(found[0] if found else None)
    return out


_REDEFINED = ("\n  but seen another function defined on the same line; maybe the function is"
              "\n  being re-defined repeatedly, preventing caching?")


def test_explain_cache_misses_in_jax_words(caplog):
    x3, x4 = np.ones(3, np.float32), np.ones(4, np.float32)
    calls = [(x3, 2.0, 1), (x3, 3.0, 1), (x4, 2.0, 1), (x4.astype(np.int32), 2.0, 1),
             (x4.astype(np.int32), np.float32(2), 1)]
    expected = _explained(jax, caplog, calls)
    got = _explained(minijax, caplog, calls)
    assert got[1] is None and expected[1] is None          # a hit explains nothing
    for mine, theirs in zip(got, expected):
        if theirs is not None:
            # Whether a library adds this depends on whether it jitted a function
            # defined on this line before -- in an earlier test, say; checked below.
            mine, theirs = (m.replace(_REDEFINED, "") for m in (mine, theirs))
            # JAX writes its weak-type link straight after the type; minijax on a line
            mine, theirs = mine.split("\n  (on weak types")[0], theirs.split("https://")[0]
            mine, theirs = (re.sub(r" id=\d+", "", m) for m in (mine, theirs))
            # the same function at the same call line (columns may differ)
            site = r"(MISS at [^:]+:\d+):\d+"
            assert re.sub(site, r"\1", mine) == re.sub(site, r"\1", theirs)
    assert got[2].endswith("different input types:\n  * at x, now f32[4] and before f32[3]")
    # `scale` defined anew on the same line: both libraries say so on the first call
    for lib in (jax, minijax):
        assert _explained(lib, caplog, calls[:1])[0].endswith(_REDEFINED)
    assert got[4].endswith("* at y, now f32[]{weak_type=False} and before "
                           "f32[]{weak_type=True}\n  (on weak types: "
                           "https://docs.jax.dev/en/latest/type_promotion.html#weak-types)")


def test_explain_cache_misses_static_values_and_trees(caplog):
    x = np.ones(2, np.float32)
    got = _explained(minijax, caplog, [(x, 2.0, 1), (x, 2.0, 3), ((x,), 2.0, 3),
                                       ({"a": x}, 2.0, 3)])
    head = "  all previously seen cache keys differ. For the closest previous key:\n  "
    # JAX 0.11 and 0.12 may name another argument's type here (0.10 a pytree node)
    assert got[1].endswith(head + "different static arguments:\n"
                           "  * at n (by position), now 3 and before 1")
    assert got[2].endswith(head + "different input pytree:\n  * at x, now <class "
                           "'tuple'> and before pytree leaf, so their Python types differ")
    assert got[3].endswith("* at x, now <class 'dict'> and before <class 'tuple'>, so "
                           "their Python types differ")
    with caplog.at_level(logging.WARNING), minijax.explain_cache_misses(True):
        caplog.clear()
        mnp.cos(np.ones((3, 1, 2), np.float32))      # a library function: not explained
        assert not [r for r in caplog.records if "CACHE MISS" in r.getMessage()]


def test_transfer_guard_log_levels_log_what_jax_logs(capfd):
    # JAX's guard logs from C++ to the process's stderr: one line per transfer
    logged = {}
    for lib, np_lib in LIBS:
        calls = _transfers(lib, np_lib)
        for level in ("log", "log_explicit"):
            capfd.readouterr()
            with lib.transfer_guard(level):
                for name in ("jit of a NumPy array", "device_put", "asarray"):
                    calls[name]()
            logged[lib, level] = capfd.readouterr().err.count("host-to-device transfer")
    assert logged[jax, "log"] == 2 and logged[jax, "log_explicit"] == 3
    assert logged[minijax, "log"] == 2 and logged[minijax, "log_explicit"] == 3
