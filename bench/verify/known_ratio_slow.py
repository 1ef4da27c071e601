"""The reference's work done twice: a candidate of known speedup 0.5."""
import numpy as np

STEPS = 40


def work(x, w):
    y = x
    for _ in range(STEPS):
        y = np.tanh(y @ w + x)
    return y


def workload(x, w):
    work(x, w)
    return work(x, w)
