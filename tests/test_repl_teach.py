"""The REPL commands a learner meets in the lessons: `:check` on programs with refs
(the session's refs are left as they were), weak types explained, only matching
registry entries, and `:discharge`."""
import jax

from minijax.repl.oracle import known_divergences
from tests.test_repl import run

COUNTER = """\
counter = new_ref(1.0)
def bump(x):
    counter[...] += 1.0
    return x * counter[...]
"""


def test_check_leaves_the_sessions_refs_unchanged():
    out, err, session = run(COUNTER + ":check bump(2.0)\ncounter\nbump(2.0)\n")
    assert err == ""
    assert out.splitlines() == [
        "minijax: 4.0",
        f"jax {jax.__version__}: 4.0",
        "ref counter: minijax 2.0, jax 2.0",
        "ref counter put back to 1.0 (the check's minijax run left 2.0; your session "
        "is unchanged)",
        "agree",
        "Ref(1., dtype=float32)",
        # The session's own next call starts from 1.0, as if no check had run.
        "Array(4., dtype=float32)"]


def test_check_explains_a_weak_type_difference():
    out, err, _ = run(':check jnp.ones(()) if jax.__name__ == "minijax" '
                      'else jnp.add(1.0, 0.0)\n')
    assert err == ""
    assert "DISAGREE" not in out
    assert "agree in values and dtypes; weak types differ" in out
    assert "JAX's is weak-typed and minijax's is not" in out
    assert "Python scalar" in out


def test_check_shows_only_the_divergences_matching_the_program():
    out, _, _ = run(':check 1.0 if jax.__name__ == "minijax" else 2.0\n')
    assert "DISAGREE" in out and "known divergence " not in out.replace("no known divergence matches", "")
    assert "no known divergence matches this program" in out
    # A remat-ed function that bumps a ref under grad: the remat entry matches; no
    # entry about vmap, jvp or while loops does.
    namespace = {}
    exec("import minijax\nr = minijax.new_ref(1.0)\n"
         "@minijax.checkpoint\ndef f(x):\n    r[...] += 1.0\n    return x * r[...]\n",
         namespace)
    names = [e.name for e in known_divergences("grad(f)(1.0)", namespace)]
    assert "remat_grad_external_ref_effect_runs_twice" in names
    assert all("vmap" not in n and "while" not in n for n in names)
    assert known_divergences("grad(g)(1.0)", {}) == []


def test_discharge_shows_refs_become_values():
    out, err, _ = run(COUNTER + ":discharge bump(2.0)\n"
                      "def h(x):\n    t = new_ref(x)\n    t[...] += 1.0\n    return t[...]\n"
                      ":discharge h(1.0)\n:discharge jnp.sin(1.0)\n:discharge\n")
    assert out.startswith("{ lambda a:f32[]; b:f32[]. let\n")
    assert "closed-over ref 0 (Ref{f32[]}) became a value; its final contents are " \
           "output 1" in out
    assert "refs made inside became values; no ref input" in out
    assert "no refs: discharge changes nothing" in out
    assert "discharge" in err


def test_residual_of_an_outside_ref_read_names_the_read_at_the_repl():
    out, err, _ = run("r = new_ref(2.0)\ndef f(x):\n    y = x * r[...]\n"
                      "    return jnp.sin(y)\n:residuals checkpoint(f)(1.0)\n")
    assert err == ""
    assert "output of get from <input 2>:2:12 (f)" in out     # not <frozen runpy>
