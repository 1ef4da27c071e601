"""rms-norm at its ship path: the naive version the author starts from and edits in place."""
import numpy as np

from normkit.reference import CONFIG


def rms_norm(x, scale, eps=CONFIG["eps"]):
    mean_square = np.mean(np.square(x), axis=-1, keepdims=True)
    return x / np.sqrt(mean_square + eps) * scale


def workload(x, scale):
    return rms_norm(x, scale)
