# The README's "Running JAX programs" example: a loss, its jaxpr as JAX prints it, and its
# inputs as an .npz (a0, a1, … in argument order), with a batch of two for vmap.
# Run with JAX 0.10.2 (tools/requirements-jax.txt) in this directory.
import jax
import jax.numpy as jnp
import numpy as np


def loss(w, b, x, y):
    return jnp.mean((jnp.tanh(x @ w + b) - y) ** 2)


x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
y = np.array([[0.5], [-0.25], [0.0], [1.0]], np.float32)
w = np.array([[0.5], [-1.0], [0.25]], np.float32)
b = np.zeros(1, np.float32)

with open("loss.txt", "w") as f:
    print(jax.make_jaxpr(loss)(w, b, x, y), file=f)
np.savez("loss.npz", a0=w, a1=b, a2=x, a3=y)
np.savez("batch.npz", a0=w, a1=b, a2=np.stack([x, 2 * x]), a3=np.stack([y, -y]))

print(jax.jit(loss)(w, b, x, y))
print(jax.jit(jax.grad(loss, argnums=1))(w, b, x, y))
print(jax.jit(jax.vmap(loss, in_axes=(None, None, 0, 0)))(w, b, np.stack([x, 2 * x]),
                                                        np.stack([y, -y])))
