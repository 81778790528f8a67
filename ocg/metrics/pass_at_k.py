"""pass@k (Chen et al. 2021): the chance that at least one of k samples, drawn without replacement
from n generated for a prompt of which c pass, passes; unbiased for k i.i.d. samples when n >= k.

Here a sample "passes" when it composes the concept list in the order asked (the `in_order`
verdict of ocg/metrics/coverage.py); docs/METHODS.md, "Repeated samples and pass@k".
"""

from __future__ import annotations

import math

from ..core.errors import OcgInputError


def pass_at_k(n: int, c: int, k: int) -> float:
    """1 - C(n-c, k) / C(n, k), as the stable product 1 - prod_{i=n-c+1}^{n} (1 - k / i)."""
    for name, value in (("n", n), ("c", c), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise OcgInputError(f"pass_at_k {name}", f"got {value!r}; expected an integer")
    if n < 1 or k < 1:
        raise OcgInputError("pass_at_k", f"n={n}, k={k}: expected n >= 1 samples and k >= 1")
    if k > n:
        raise OcgInputError("pass_at_k k", f"k={k} > n={n}: pass@k needs at least k samples")
    if not 0 <= c <= n:
        raise OcgInputError("pass_at_k c", f"c={c}: expected 0 <= c <= n={n} passing samples")
    if n - c < k:
        return 1.0  # every k-subset holds a passing sample
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))
