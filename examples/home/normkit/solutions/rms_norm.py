"""A tuned rms-norm kept by the family's maintainers. The family binding lists this directory as
no-peek: an author must reach its own kernel without reading it."""
import numpy as np


def workload(x, scale, eps=1e-6):
    inv = 1.0 / np.sqrt(np.einsum("ij,ij->i", x, x) / x.shape[-1] + eps)
    return x * inv[:, None] * scale
