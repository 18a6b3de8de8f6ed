# Loads libgwtrain_sim.so with ctypes' default mode, RTLD_LOCAL, and nothing loaded before it: the
# CUDA runtime arrives as its dependency, outside the global scope, as with a Python extension that
# links libcudart. Under the shim every CUDA call must still reach the runtime.
#   usage: python3 local_runtime.py LIBGWTRAIN_SIM STEPS
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
lib.gwt_error.restype = ctypes.c_char_p
steps = int(sys.argv[2])
if lib.gwt_init(0, 8, 8 * 3 * 32 * 32 * 4, 0, 0, 0) != 0:
    sys.exit("gwt_init failed: " + lib.gwt_error().decode())
for _ in range(steps):
    if lib.gwt_backward() != 0:
        sys.exit("gwt_backward failed: " + lib.gwt_error().decode())
counts = (ctypes.c_longlong * 8)()
lib.gwt_counts(counts)
print("local_runtime kernels=%d" % counts[0])
