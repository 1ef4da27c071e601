"""Reference of the agreement benchmark: compute-heavy on small inputs, so the measurement is the
work and not the transfer."""
import numpy as np

STEPS = 40


def create_inputs(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((96, 96)).astype(np.float32) * 0.1
    w = rng.standard_normal((96, 96)).astype(np.float32) * 0.1
    return x, w


def work(x, w):
    y = x
    for _ in range(STEPS):
        y = np.tanh(y @ w + x)
    return y


def workload(x, w):
    return work(x, w)
