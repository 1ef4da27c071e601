"""rms-norm at its ship path: the naive version the author starts from and edits in place.

It keeps its own copy of the operating point's eps: the candidate is measured in a box that holds
the candidate's files and nothing of the reference.
"""
import numpy as np

EPS = 1e-6


def rms_norm(x, scale, eps=EPS):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        row = x[i]
        mean_square = np.mean(np.square(row))
        out[i] = row / np.sqrt(mean_square + eps) * scale
    return out


def workload(x, scale):
    return rms_norm(x, scale)
