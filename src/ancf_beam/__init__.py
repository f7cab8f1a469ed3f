"""ancf_beam: geometrically nonlinear 2D ANCF cantilever with material gradient defects."""

__version__ = "0.1.0"
