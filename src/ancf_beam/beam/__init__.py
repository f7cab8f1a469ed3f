"""The ANCF cable element: gradient laws and mappings, numba kernels, the discretised beam,
damage, imperfection."""
