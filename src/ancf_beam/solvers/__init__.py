"""Solvers: static Newton, modal analysis, critical time step, explicit and implicit dynamics."""
