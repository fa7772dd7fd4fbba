import minijax as mj, numpy as np, jax, jax.numpy as jnp
import minijax.numpy as mjnp
from minijax import lax
def f(x):
    def body(c, xi):
        mj.debug.print("scan c={c}", c=c)
        return c * xi, c
    c, ys = lax.scan(body, x, np.arange(1., 4., dtype=np.float32))
    c = lax.cond(c > 0, lambda c: (mj.debug.print("pos {}", c), c * 2)[1], lambda c: (mj.debug.print("neg {}", c), c)[1], c)
    c = lax.while_loop(lambda c: c < 100, lambda c: (mj.debug.print("while {}", c), c * 3)[1], c)
    return c
print("--eager"); f(np.float32(1.))
print("--jit"); mj.jit(f)(np.float32(1.))
print("--jvp"); mj.jvp(f, (np.float32(1.),), (np.float32(1.),))
print("--vmap"); mj.vmap(f)(np.array([1., -1.], np.float32))
def g(x):
    def body(c, xi):
        mj.debug.print("scan c={c}", c=c)
        return c * xi, c
    c, ys = lax.scan(body, x, np.arange(1., 4., dtype=np.float32))
    c = lax.cond(c > 0, lambda c: (mj.debug.print("pos {}", c), c * 2)[1], lambda c: (mj.debug.print("neg {}", c), c)[1], c)
    return c
print("--grad"); print(mj.grad(g)(np.float32(1.)))
print("--jit grad"); print(mj.jit(mj.grad(g))(np.float32(1.)))
print("--vmap grad"); print(mj.vmap(mj.grad(g))(np.array([1., -1.], np.float32)))
