"""plur_desk: a desktop review console for PLUR memory stores."""

import os

__version__ = "0.1.0"
APP_ID = "dev.plurdesk.PlurDesk"
RUNTIME_NAME = "plur-desk"

# numpy's BLAS (OpenBLAS) runs one thread, unless the user set otherwise: with its default of one thread per core,
# after every call (a draft's similar engrams, each selection) its helper thread spins about 100 ms on a core
# before it sleeps (measured: 100 ms of CPU in the second after one 50,000 x 384 product, 0.1 ms with one thread).
# On two cores that core is the one the window's thread waits for: the window's 17-20 ms ticks through a run of
# approves. Set here, before anything imports numpy (BLAS reads it once, when it loads).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
