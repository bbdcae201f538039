"""Compute backends: NumPy always, CuPy (the project's own CUDA kernels) when a device answers."""
