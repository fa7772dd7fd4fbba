"""The REPL's commands, each driven by a scripted transcript in-process.

A `Session` is fed the lines of a script exactly as `python -m minijax repl <
script` feeds them (tests/test_repl_cli.py runs that for real, and on a pty); here
stdout and stderr are captured so each command's output -- its error paths
included -- can be checked quickly.
"""
import io
import textwrap
from contextlib import redirect_stdout

import pytest

import minijax
from minijax.repl import Session, COMMANDS
from minijax.repl import render
from minijax.repl.targets import split_expr


D = textwrap.dedent


def run(script: str):
    """(stdout, stderr, session) after feeding `script` line by line."""
    out, err = io.StringIO(), io.StringIO()
    session = Session(stdout=out, stderr=err, colour=False)
    with redirect_stdout(out):  # expression values go through sys.displayhook
        session.run_lines(script.splitlines())
    return out.getvalue(), err.getvalue(), session


DEF_F = """\
def f(x, y):
    z = jnp.sin(x) * y
    return z.sum()
"""



def test_multiline_definition_then_ir_without_a_blank_line():
    out, err, session = run(DEF_F + ":ir f(1.0, jnp.ones(3))\n")
    assert err == ""
    # Exactly what make_jaxpr prints (which tracing details decide, not the REPL).
    f = session.namespace["f"]
    assert out == str(minijax.make_jaxpr(f)(1.0, minijax.numpy.ones(3))) + "\n"
    assert out.startswith("{ lambda ; a:f32[] b:f32[3]. let\n    c:f32[] = sin a\n")


def test_python_values_are_shown_and_names_preloaded():
    out, err, session = run("6 * 7\nprint(jax.__name__, jnp.__name__, grad is jax.grad)\n")
    assert out.splitlines() == ["42", "minijax minijax.numpy True"], err
    for name in ("jit", "grad", "vmap", "make_jaxpr", "new_ref", "lax", "np"):
        assert name in session.namespace


def test_grad_jvp_vmap_shortcuts():
    out, err, _ = run(DEF_F + D("""\
        :grad f(1.0, jnp.ones(3))
        :grad f(1.0, jnp.ones(3)) argnums=1
        :jvp f(1.0, jnp.ones(3))
        :vmap f(jnp.ones(2), jnp.ones((2, 3)))
        :vmap f(jnp.ones(2), jnp.ones(3)) in_axes=(0, None)
        """))
    assert err == ""
    jaxprs = out.split("{ lambda")[1:]
    assert len(jaxprs) == 5
    grad_x, grad_y, jvp, vmapped, vmapped_none = jaxprs
    assert "cos a" in grad_x and grad_x.rstrip().endswith(":f32[],) }") is False
    assert "cos" not in grad_y        # d/dy of sin(x) * y needs no cos
    assert jvp.startswith(" ; a:f32[] b:f32[3] c:f32[] d:f32[3]. let")
    assert vmapped.startswith(" ; a:f32[2] b:f32[2,3]. let")
    assert vmapped_none.startswith(" ; a:f32[2] b:f32[3]. let")


def test_help_lists_every_command_and_explains_one():
    out, err, _ = run(":help\n:help step\n:help :ir\n")
    assert err == ""
    for name in COMMANDS:
        assert f":{name}" in out
    assert ":step EXPR\n  run equation by equation" in out
    assert ":ir EXPR\n  the IR of a call" in out
    _, err, _ = run(":help nope\n")
    assert err.strip() == ":help: no command :nope; :help lists them"


def test_unknown_command_and_errors_never_end_the_session():
    out, err, session = run(D("""\
        x = 41
        :nope
        :ste f(1)
        1/0
        undefined_name
        :ir undefined_name(1.0)
        :ir (
        :ir 3
        :ir f
        def broken(:
        x + 1
        """))
    assert out.strip() == "42"
    assert err.splitlines() == [
        "unknown command :nope; :help lists the commands",
        ":step: NameError: name 'f' is not defined",          # `:ste` is `:step`
        "ZeroDivisionError: division by zero",
        "NameError: name 'undefined_name' is not defined",
        ":ir: NameError: name 'undefined_name' is not defined",
        ":ir: '(' is not a Python expression ('(' was never closed)",
        ":ir: '3' is neither a call like `f(1.0)` nor a jaxpr; write the call whose IR you want",
        ":ir: NameError: name 'f' is not defined",
        '  File "<input 4>", line 1',
        "    def broken(:",
        "               ^",
        "SyntaxError: invalid syntax"]
    _, err, _ = run(":hepl\n:re\n")
    assert err.splitlines() == [
        "unknown command :hepl (did you mean :help?); :help lists the commands",
        "unknown command :re (did you mean :remat, :residuals?); :help lists the commands"]
    assert session.running


def test_an_unfinished_statement_is_a_syntax_error_not_a_trap():
    out, err, session = run("f(\n:help quit\nprint(1,\n")
    assert out.splitlines() == [":quit", "  leave the REPL (so does Ctrl-D)"]
    assert err.count("SyntaxError") == 2 and session.buffer == []


def test_traceback_shows_the_last_error_in_full():
    out, err, _ = run(D("""\
        def g(x):
            return 1 / x
        :traceback
        g(0)
        :traceback
        """))
    first, rest = out.split("\n", 1)
    assert first == "no error yet"
    assert rest.startswith("Traceback (most recent call last):")
    assert "return 1 / x" in rest and rest.rstrip().endswith("ZeroDivisionError: division by zero")
    assert "code.py" not in rest   # the REPL's own frames are not the user's business
    assert err.strip() == "ZeroDivisionError: division by zero"


REFS = """\
r = new_ref(jnp.zeros(3))
def accumulate(x, r):
    r[...] = r[...] + x
    return jnp.sin(x) * r[...]
"""


def test_ir_of_a_function_writing_a_ref():
    out, err, _ = run(REFS + ":ir accumulate(jnp.ones(3), r)\nr\n")
    assert err == ""
    assert out.splitlines()[:5] == [
        "{ lambda ; a:f32[3] b:Ref{f32[3]}. let",
        "    c:f32[3] <- b[...]",
        "    d:f32[3] = add c a",
        "    b[...] <- d",
        "    e:f32[3] = sin a"]
    assert out.splitlines()[-1] == "Ref([0., 0., 0.], dtype=float32)"  # traced, not run


def test_step_shows_values_and_ref_contents_and_leaves_refs_alone():
    out, err, _ = run(REFS + ":step accumulate(jnp.ones(3), r)\n:eval accumulate(2.0 * jnp.ones(3), r)\nr\n")
    assert err == ""
    lines = out.splitlines()
    assert lines[:9] == [
        "{ lambda ; a:f32[3] b:Ref{f32[3]}. let",
        "  a = [1., 1., 1.]",
        "  b = Ref([0., 0., 0.])",
        "[0] c:f32[3] <- b[...]",
        "      c = [0., 0., 0.]",
        "[1] d:f32[3] = add c a",
        "      d = [1., 1., 1.]",
        "[2] b[...] <- d",
        "      ref b: [0., 0., 0.] -> [1., 1., 1.]"]
    assert lines[15:] == [
        "out[0] = [0.841471, 0.841471, 0.841471]",
        "ref b = [1., 1., 1.]",
        "out[0] = [1.818595, 1.818595, 1.818595]",
        "ref b = [2., 2., 2.]",
        "Ref([0., 0., 0.], dtype=float32)"]


PARSED = """\
:parse j
{ lambda ; a:f32[] b:Ref{f32[]}. let
    c:f32[] <- b[...]
    d:f32[] = mul a c
    b[...] <- d
  in (d,) }
"""


def test_parse_a_multiline_jaxpr_then_use_it_everywhere():
    out, err, session = run(PARSED + D("""\
        :ir j
        :eval j(2.0, new_ref(3.0))
        :step j
        :lower j(2.0, new_ref(3.0))
        """))
    assert err == ""
    lines = out.splitlines()
    assert lines[0] == "j = jaxpr from :parse: 2 inputs, 3 equations, 1 outputs"
    assert "\n".join(lines[1:6]) == PARSED.split("\n", 1)[1].rstrip()
    assert lines[6:8] == ["out[0] = 6.0", "ref b = 6.0"]
    assert lines[8:11] == ["{ lambda ; a:f32[] b:Ref{f32[]}. let", "  a = 0.0", "  b = Ref(0.0)"]
    assert "stablehlo.multiply" in out
    assert isinstance(session.namespace["j"], minijax.ir.ClosedJaxpr)


def test_parse_errors_name_line_and_column_and_verifier_errors_the_equation():
    out, err, session = run(D("""\
        :parse bad
        { lambda ; a:f32[]. let
            b:f32[] = sin c
          in (b,) }
        :parse ill
        { lambda ; a:f32[]. let
            b:f32[2] = sin a
          in (b,) }
        :parse
        
        :parse ok { lambda ; a:f32[]. let
            b:f32[] = sin a
          in (b,) }
        """))
    assert err.startswith(":parse: ParseError: line 2, column 19: undefined variable 'c'")
    assert ":parse: VerifierError: equation 0 (sin): output 0 is declared f32[2]" in err
    assert ":parse: no IR text given" in err
    assert "bad" not in session.namespace and "ill" not in session.namespace
    assert out.strip() == "ok = jaxpr from :parse: 1 inputs, 1 equations, 1 outputs"


def test_load_reads_ir_from_a_file(tmp_path):
    path = tmp_path / "sine-prog.jaxpr"
    path.write_text("{ lambda ; a:f32[]. let\n    b:f32[] = sin a\n  in (b,) }\n")
    out, err, session = run(f":load {path}\n:eval sine_prog(0.5)\n:load {path} mine\n"
                            f":load {tmp_path / 'missing.txt'}\n:load\n")
    assert out.splitlines() == [
        f"sine_prog = jaxpr from {path}: 1 inputs, 1 equations, 1 outputs",
        "out[0] = 0.47942555",
        f"mine = jaxpr from {path}: 1 inputs, 1 equations, 1 outputs"]
    assert err.splitlines()[0].startswith(":load: FileNotFoundError:")
    assert err.splitlines()[1] == ":load: usage: :load FILE [NAME]"


def test_lower_shows_stablehlo():
    out, err, _ = run(DEF_F + ":lower f(1.0, jnp.ones(3))\n")
    assert err == ""
    assert out.startswith("module @") and "stablehlo.sine" in out


def test_passes_shows_every_stage_and_folds_unchanged_ones():
    out, err, _ = run(DEF_F + ":passes f(1.0, jnp.ones(3))\n")
    assert err == ""
    titles = [line for line in out.splitlines() if line.startswith("== ")]
    assert [t.split("  [")[0] for t in titles] == [
        "== traced", "== jvp", "== known (forward)", "== staged (linear)",
        "== transposed (backward)", "== grad (what minijax.grad traces to)",
        "== discharged: unchanged (no refs)", "== lowered (StableHLO)"]
    assert "equations; +1 add" in titles[1] and "+1 cos" in titles[1]
    assert titles[1].endswith("signature now (f32[] f32[3] f32[] f32[3]) -> (f32[] f32[])]")


def test_passes_with_a_ref_discharges_and_reports_a_failing_stage():
    out, err, _ = run(D("""\
        counter = new_ref(0.0)
        def f(x):
            counter[...] = counter[...] + 1.0
            return jnp.sin(x)
        :passes f(1.0)
        :passes f(jnp.ones(3))
        """))
    assert "== discharged (refs -> values)  [" in out
    # grad of a non-scalar output: the stages up to it are shown, then the error
    assert "== transposed (backward)" in out
    assert err.strip().startswith(":passes: stage 'grad (what minijax.grad traces to)' "
                                  "failed: NonScalarOutputError:")


HAVE_REMAT = hasattr(minijax, "checkpoint")


@pytest.mark.skipif(not HAVE_REMAT, reason="remat has not landed in this build")
def test_remat_shows_saved_recomputed_and_effects_per_phase():
    out, err, _ = run(D("""\
        calls = new_ref(0.0)
        def f(x):
            calls[...] = calls[...] + 1.0
            return jnp.sin(jnp.sin(x)) * 2.0
        :remat f(1.0)
        :remat f(1.0) everything_saveable
        :residuals f(1.0) nothing_saveable
        :remat f(1.0) no_such_policy
        """))
    # :remat renders minijax.remat_report: both programs, then its summary sections.
    first, second = out.split("== forward pass (inputs -> outputs, residuals)")[1:3]
    assert "== backward pass (residuals, cotangents -> input cotangents)" in first
    assert "== saved: 1 value, 4 bytes\n  f32[] (4 B) from the argument x" in first
    assert "== recomputed in the backward pass: 3 equation runs\n  top level: 3 equations (2 cos, 1 sin)" in first
    assert ("forward:       calls (closed over): 1 read, 1 write\n"
            "  recomputation: none\n  backward:      none") in first
    assert "== saved: 2 values, 8 bytes" in second and "recomputed" in second
    assert "output of cos from <input 2>:3:" in second
    assert "== 1 residual, 4 B" in out
    assert err.strip() == ":remat: NameError: name 'no_such_policy' is not defined"


def test_remat_commands_say_clearly_when_remat_is_missing(monkeypatch):
    import importlib
    monkeypatch.delattr(minijax, "checkpoint", raising=False)
    real_import = importlib.import_module

    def without_ad_checkpoint(name, *args):
        if name == "minijax.ad_checkpoint":
            raise ModuleNotFoundError(name, name=name)
        return real_import(name, *args)
    monkeypatch.setattr(importlib, "import_module", without_ad_checkpoint)
    out, err, _ = run(DEF_F + ":remat f(1.0, jnp.ones(3))\n:residuals f(1.0, jnp.ones(3))\n")
    assert err.splitlines() == [
        ":remat: remat is not available yet in this build (no minijax.checkpoint)",
        ":residuals: remat is not available yet in this build "
        "(no minijax.ad_checkpoint.saved_residuals)"]


def test_check_agrees_with_jax_on_values_and_refs():
    out, err, session = run(REFS + ":check accumulate(jnp.ones(3), r)\nr\n")
    assert err == ""
    assert out.splitlines() == [
        "minijax: [0.841471, 0.841471, 0.841471]",
        "jax " + __import__("jax").__version__ + ": [0.841471, 0.841471, 0.841471]",
        "ref r: minijax [1., 1., 1.], jax [1., 1., 1.]",
        "ref r put back to [0., 0., 0.] (the check's minijax run left [1., 1., 1.]; "
        "your session is unchanged)",
        "agree",
        "Ref([0., 0., 0.], dtype=float32)"]   # the check left the session's ref alone


def test_check_reports_a_disagreement():
    out, err, _ = run(':check 1.0 if jax.__name__ == "minijax" else 2.0\n:check\n')
    assert "DISAGREE\n  result: values differ" in out
    assert err.strip() == ":check: :check needs an expression, e.g. `:check f(1.0)`" \
        or err.strip() == ":check needs an expression, e.g. `:check f(1.0)`"


def test_quit_stops_reading():
    out, err, session = run("print(1)\n:quit\nprint(2)\n")
    assert out == "1\n" and not session.running


def test_echo_mode_writes_a_transcript():
    out = io.StringIO()
    session = Session(stdout=out, colour=False, echo=True)
    with redirect_stdout(out):
        session.run_lines(["def h(x):", "    return x", ":ir h(1.0)", "1/0"])
    assert out.getvalue().splitlines() == [
        ">>> def h(x):", "...     return x", ">>> :ir h(1.0)",
        "{ lambda ; a:f32[]. let", "  in (a,) }", ">>> 1/0",
        "ZeroDivisionError: division by zero"]


def test_split_expr_finds_where_the_options_begin():
    assert split_expr("f(x, y) argnums=1") == ("f(x, y)", "argnums=1")
    assert split_expr("grad(f)(x)[0] dots_saveable") == ("grad(f)(x)[0]", "dots_saveable")
    assert split_expr("j nothing_saveable") == ("j", "nothing_saveable")
    assert split_expr("f(x if c else y)") == ("f(x if c else y)", "")
    assert split_expr("f('a b') save_only_these_names('h')") == (
        "f('a b')", "save_only_these_names('h')")
    assert split_expr("f(") == ("f(", "")


def test_colour_only_when_asked_and_never_under_no_colour(monkeypatch):
    text = "    c:f32[] = sin a\n    b[...] <- c"
    assert render.colour_ir(text, False) == text
    coloured = render.colour_ir(text, True)
    assert "\033[" in coloured and "sin" in coloured and "f32[]" in coloured

    class Tty(io.StringIO):
        def isatty(self):
            return True
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert render.colour_enabled(Tty())
    assert not render.colour_enabled(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not render.colour_enabled(Tty())
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "dumb")
    assert not render.colour_enabled(Tty())
