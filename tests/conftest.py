"""Test-wide setup: one BLAS thread, as app.py and the scripts use.

Set at import, before any test module loads NumPy: the arrays in this project are small,
and a multithreaded BLAS on a shared machine made the training tests several times slower.
"""

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
