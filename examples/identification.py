"""Identification: recover the defect ``(lam, n)`` of ``E(x) = E0 (1 - lam (x/L)^n)`` from
natural frequencies.

The "measurement" is the first four natural frequencies of the seed beam with ``lam = 0.4``,
``n = 2``, computed on a fine mesh (320 elements); the estimate fits the ANCF modal model of
the same beam on 40 elements (least squares from several starts, analytic sensitivities
``d omega^2 / dp = phi^T dK/dp phi``). The two meshes differ in their frequencies by the
40-element discretisation error (about 1e-6 relative, the fit's residual), so the estimate lands
within about 1e-4 of the truth (lam 0.40003, n 2.00014); with one frequency only, the two
parameters cannot be told apart and the answer is ``identifiable: false`` (a result, not an
error).
"""

import sys

import numpy as np

import ancf_beam as ab

TRUTH = {"defect.lam": 0.4, "defect.n": 2.0}


def main(figure: str | None = None) -> dict:
    """Identify (lam, n) from four fine-mesh frequencies; return estimate and truth."""
    fine = ab.resolve_case(overrides={**TRUTH, "mesh.n_elements": 320})
    omega = ab.modal_analysis(ab.BeamModel(fine), n_modes=4).omega  # rad/s, the "measurement"
    model_case = ab.resolve_case(overrides={"mesh.n_elements": 40})  # defect unknown
    est = ab.identify_from_frequencies(model_case, omega)
    single = ab.identify_from_frequencies(model_case, omega[:1])
    numbers = {
        "lam_true": TRUTH["defect.lam"],
        "n_true": TRUTH["defect.n"],
        "lam": est.lam,
        "n": est.n,
        "residual": est.residual,  # 2-norm of the relative frequency residuals
        "cond": est.cond,
        "identifiable": est.identifiable,
        "identifiable_one_frequency": single.identifiable,
    }
    if figure:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        x = np.linspace(0, 1, 101)
        fig, ax = plt.subplots(figsize=(6, 3.6), layout="constrained")
        ax.plot(x, 1 - TRUTH["defect.lam"] * x ** TRUTH["defect.n"], "k", lw=3, label="truth")
        label = f"estimate lam={est.lam:.5f}, n={est.n:.5f}"
        ax.plot(x, 1 - est.lam * x**est.n, "C1--", label=label)
        ax.set(xlabel="x / L", ylabel="E(x) / E0", title="Modulus profile from four frequencies")
        ax.legend()
        fig.savefig(figure, dpi=110)
    return numbers


if __name__ == "__main__":
    for key, value in main(sys.argv[1] if len(sys.argv) > 1 else "identification.png").items():
        print(f"{key}: {value:.9g}" if not isinstance(value, bool) else f"{key}: {value}")
