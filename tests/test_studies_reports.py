"""What the report pages and the summary table say: the summary's energy peaks, displacements
and data dictionary, the beat detector's positive control, the case-aware defect laws."""

import numpy as np
import pytest
import xarray as xr

from ancf_beam.studies.bounds import EPS
from ancf_beam.studies.checks import beat_control_rows
from ancf_beam.studies.collect import collect, data_dictionary
from ancf_beam.studies.presentation import (
    beat_control_signal,
    defect_laws,
    defect_profiles,
    headline,
    parameter_table,
)

PARAMS = {
    "beam.length": 1.0,
    "beam.width": 0.02,
    "beam.height": 0.02,
    "material.E0": 2.07e11,
    "material.rho": 7850.0,
    "defect.lam": 0.0,
    "defect.n": 1.0,
    "defect.table": "none",
    "defect.rho.lam": 0.0,
    "defect.rho.n": 1.0,
    "defect.rho.table": "none",
    "defect.width.lam": 0.0,
    "defect.width.n": 1.0,
    "defect.width.table": "none",
    "defect.height.lam": 0.0,
    "defect.height.n": 1.0,
    "defect.height.table": "none",
    "imperfection.kappa0": 0.0,
    "imperfection.profile": "uniform",
    "imperfection.tip_offset": "none",
    "damage.enabled": 0,
    "damage.threshold": 1e-3,
    "damage.softening": 1e-3,
    "damage.d_max": 0.9,
    "mesh.n_elements": 20,
}


def _case_datasets(tip0=(1.0, 0.0)):
    """Minimal result files of one case: the run starts at the reference tip ``tip0`` and its
    kinetic energy is ``T = 2 sin^2(5 t)`` J (one peak of 2 J, at t = pi/10 s)."""
    t = np.linspace(0.0, 0.5, 1001)
    kin = 2.0 * np.sin(5 * t) ** 2
    attrs = {f"param.{k}": v for k, v in PARAMS.items()}
    prov = {"config_hash": "h", "package_version": "0", "git_commit": "c", "wall_s": 1.0}
    st = xr.Dataset(
        {"tip_x": tip0[0] - 1e-6, "tip_y": tip0[1] - 2e-3, "tip_angle_deg": -0.1},
        attrs={**attrs, **prov},
    )
    mo = xr.Dataset({"omega": ("mode", [10.0, 60.0])}, attrs={"wall_s": 1.0})
    si = xr.Dataset(
        {
            "tip_x": ("time", np.full(t.size, tip0[0])),
            "tip_y": ("time", tip0[1] - 2e-3 * (1 - np.cos(5 * t))),
            "kinetic": ("time", kin),
            "strain": ("time", 3.0 * kin),
            "gravity": ("time", -4.0 * kin),
            "x_node": ("node", np.linspace(0, 1, 21)),
        },
        coords={"time": t},
        attrs={
            "t_end": 1.0,
            "dt": 1e-4,
            "dt_safety": 0.8,
            "steps": 10000,
            "tip_y_min": tip0[1] - 4e-3,
            "tip_y_mean": tip0[1] - 2e-3,
            "energy_drift_rel": 1e-8,
            "wall_s": 1.0,
        },
    )
    cr = xr.Dataset(
        {"dt_critical": 1.25e-4, "dt_element_bound": 1e-4},
        attrs={"governing_mode": "axial", "wall_s": 1.0},
    )
    va = xr.Dataset(attrs={"n_pass": 3, "n_checks": 3, "wall_s": 1.0})
    return {"static": st, "modal": mo, "simulate": si, "critical_dt": cr, "validation": va}


def test_summary_energy_peaks_displacements_and_units():
    ds, df = collect({"straight": _case_datasets(), "curved": _case_datasets((0.9, 0.1))})
    row = df.set_index("case")
    # the largest of the samples (h = 5e-4 s) of T = 1 - cos(10 t): the nearest sample lies
    # within h / 2 of the peak, so the peak errs by at most max|T''| (h / 2)^2 / 2 relative to
    # its height (1.6e-6; strain and gravity are multiples of T), its time by h / 2
    h = 5e-4
    peak = 100.0 * (h / 2) ** 2 / 2 / 2.0
    assert row.loc["straight", "kinetic_energy_max"] == pytest.approx(2.0, rel=peak)
    assert row.loc["straight", "strain_energy_max"] == pytest.approx(6.0, rel=peak)
    assert row.loc["straight", "gravity_energy_min"] == pytest.approx(-8.0, rel=peak)
    assert row.loc["straight", "t_kinetic_energy_max"] == pytest.approx(np.pi / 10, abs=h / 2)
    # the curved tip starts 0.1 m up: its deflection is the same as the straight one's, to the
    # rounding of the positions (an ulp of 0.1 m and of the difference: 2 eps x 0.1 + eps x 4e-3)
    for c in ("straight", "curved"):
        rounding = 2 * EPS * 0.1 + EPS * 4e-3
        assert row.loc[c, "static_tip_dy"] == pytest.approx(-2e-3, rel=0, abs=rounding)
        assert row.loc[c, "dynamic_tip_dy_min"] == pytest.approx(-4e-3, rel=0, abs=rounding)
    assert row.loc["curved", "static_tip_y"] == pytest.approx(0.098, rel=4 * EPS)
    assert ds["kinetic_energy_max"].attrs["units"] == "J"
    assert ds["static_tip_dy"].attrs["units"] == "m"
    dd = data_dictionary(df.columns).set_index("column")
    assert list(dd.index) == list(df.columns)
    assert dd.loc["kinetic_energy_max", "unit"] == "J"
    assert dd.loc["param.material.E0", "unit"] == "Pa"
    assert dd.loc["omega_2", "unit"] == "rad/s"
    assert dd.loc["f_1_hz", "unit"] == "Hz"
    # every numeric column has a unit ("1" when dimensionless) and every column a meaning
    for col in df.columns:
        if df[col].dtype.kind in "fiub":
            assert dd.loc[col, "unit"] != "", col
        assert dd.loc[col, "description"], col
    assert dd.loc["governing_mode", "unit"] == ""


def test_beat_positive_and_negative_control():
    rows = {r["check"]: r for r in beat_control_rows()}
    assert all(r["status"] == "PASS" for r in rows.values())
    t, y, exp = beat_control_signal()
    period = rows["beat control: two tones, beat period vs 2 pi / |w1 - w2|"]
    assert period["reference"] == pytest.approx(2 * np.pi / 20.0, rel=4 * EPS)  # roundings
    assert exp["depth"] == pytest.approx(2 * 0.3 / 1.09, rel=4 * EPS)
    # the check can fail: with a wrong tolerance, or when the detector misses the beat (a
    # record shorter than 1.5 beat periods)
    tight = beat_control_rows({"beat_period_rel": 1e-7, "beat_depth_rel": 1e-6})
    assert [r["status"] for r in tight[1:3]] == ["FAIL", "FAIL"]
    from ancf_beam.response import detect_beat

    ts, ys, _ = beat_control_signal(t_end=0.4)
    assert not detect_beat(ts, ys).has_beat


def test_defect_laws_name_only_the_case_laws():
    assert defect_laws(PARAMS)[0].startswith("uniform beam")
    rho = defect_laws({**PARAMS, "defect.rho.lam": 0.5})
    assert len(rho) == 1 and rho[0].startswith("`rho(x) = rho0 (1 - 0.5 (x/L)^1)`")
    table = defect_laws({**PARAMS, "defect.table": "[[0.0, 1.0], [1.0, 0.75]]"})
    assert table[0].startswith("`E(x) = E0 t(x/L)`") and "(1, 0.75)" in table[0]
    dmg = defect_laws({**PARAMS, "damage.enabled": 1})
    assert len(dmg) == 1 and "damage" in dmg[0] and "E(x)" not in dmg[0]
    curved = defect_laws({**PARAMS, "imperfection.kappa0": 0.2})
    assert "kappa0 = 0.2 1/m" in curved[0]
    prof = defect_profiles(
        {**PARAMS, "defect.height.lam": 0.4, "defect.height.n": 2.0}, np.array([0.0, 0.5, 1.0])
    )
    np.testing.assert_allclose(prof["h/h0"], [1.0, 0.9, 0.6])
    np.testing.assert_allclose(prof["E/E0"], 1.0)


def test_parameter_table_and_headline():
    tab = parameter_table(PARAMS)
    assert list(tab.columns) == ["group", "parameters"]
    assert sum(len(p.split("; ")) for p in tab["parameters"]) == len(PARAMS)
    assert "E0 = 2.07e+11 Pa" in tab.set_index("group").loc["material", "parameters"]
    box = headline("Q?", [("tip", "1.4 mm")], [{"status": "PASS"}, {"status": "FAIL"}])
    assert "1 of 2 distinct checks PASS" in box and "#b00" in box


def _template(path, cells):
    """A notebook whose first cell is tagged ``parameters`` (papermill's convention)."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nb.cells[0].metadata["tags"] = ["parameters"]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.write(nb, path)
    return path


def test_render_report_is_papermill_then_nbconvert_in_one_process(tmp_path):
    """The one-process renderer runs the template with the parameters (the injected value
    reaches the output) and writes the same HTML as ``nbconvert --no-input`` (no source
    shown); a failing cell ends it with papermill's error and no HTML."""
    import subprocess
    import sys

    from papermill.exceptions import PapermillExecutionError

    from ancf_beam.studies.render import main

    nb = _template(tmp_path / "t.ipynb", ["x = 1", "print('value', x * 2)"])
    out_nb, out_html = tmp_path / "o.ipynb", tmp_path / "o.html"
    assert main([str(nb), str(out_nb), str(out_html), "{x: 21}"]) == 0
    html = out_html.read_text(encoding="utf-8")
    assert "value 42" in html and "x * 2" not in html
    cli = subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "html", "--no-input", "--stdout", out_nb],
        capture_output=True,
        check=True,
        text=True,
    )
    assert cli.stdout == html
    bad = _template(tmp_path / "bad.ipynb", ["x = 1", "raise RuntimeError('cell failed')"])
    with pytest.raises(PapermillExecutionError, match="cell failed"):
        main([str(bad), str(tmp_path / "b.ipynb"), str(tmp_path / "b.html"), "{}"])
    assert (tmp_path / "b.ipynb").exists() and not (tmp_path / "b.html").exists()
    assert main([str(nb)]) == 2  # usage
