"""Snakemake adapter: reports/index.html linking every report with the PASS counts of their
tables of checks (each notebook writes its table to reports/checks/*.csv).

The overall count is the number of *distinct* checks: a row that repeats another report's row
(same case, check, reference and computed value) would be counted once; the page says how many
repeats it found (none, by construction of the check builders). Rows of status INFO (measured
times: they move with the machine's load) are listed per report but decide nothing: they are
neither PASS nor FAIL and are not in the counts."""

# ruff: noqa: F821  (``snakemake`` is injected by the script directive)
import datetime as dt
import html
import math
import os

import pandas as pd

import ancf_beam
from ancf_beam.studies.presentation import headline, report_counts

out = snakemake.output[0]
base = os.path.dirname(out)


def rel(path):
    return os.path.relpath(path, base)


rows = []
titles = {
    "comparison": "Comparison of all cases",
    "convergence": "Mesh convergence",
    "critical_dt": "Critical time step",
    "validation": "Validation",
    "integrators": "Time integrators: accuracy, cost, recommendation",
    "defects": "Defect families: shapes, curvature concentration, spectra, damage",
    "identification": "Defect identification from noisy frequencies",
    "scaling": "Cost against the mesh: explicit vs implicit",
    "mechanisms": "Mechanisms: slider-cranks vs ideal references, clearance joints",
    "contact": "Contact laws: impacts, restitution recovery, force-penetration loops",
    "flagship": "Flagship: graded, damaging ANCF rod in a crank-slider with clearance",
    "nonsmooth": "Nonsmooth vs compliant contact: impulses, the compliant limit as K grows",
}
inp = snakemake.input
for case, page, checks in zip(snakemake.params.cases, inp.case_html, inp.case_checks, strict=True):
    rows.append((f"Case {case}", page, checks))
for name, page, checks in zip(snakemake.params.reports, inp.agg_html, inp.agg_checks, strict=True):
    rows.append((titles.get(name, name), page, checks))

seen = set()
worst_all = []
repeats = 0
total = passed = informational = 0
body = []
for title, page, checks in rows:
    c = report_counts(pd.read_csv(checks), seen)
    repeats += c["repeats"]
    total += c["n"]
    passed += c["passed"]
    informational += c["info"]
    if math.isfinite(c["worst"]):
        worst_all.append(c["worst"])
    info = f" (+{c['info']} INFO)" if c["info"] else ""
    if c["n"] == 0:
        state, count, worst_s = "none", f"no checks (display only){info}", ""
    else:
        state = "PASS" if c["passed"] == c["n"] else "FAIL"
        count, worst_s = f"{c['passed']} / {c['n']}{info}", f"{c['worst']:.3g}"
    body.append(
        f"<tr><td><a href='{html.escape(rel(page))}'>{html.escape(title)}</a></td>"
        f"<td>{count}</td><td class='{state}'>{state if c['n'] else ''}</td><td>{worst_s}</td>"
        f"<td>{html.escape('; '.join(c['failed']))}</td></tr>"
    )

overall = "PASS" if passed == total else "FAIL"
summary = pd.read_csv(inp.summary)
dy = summary["static_tip_dy"] if "static_tip_dy" in summary else summary["static_tip_y"]
soft = int(dy.idxmin())
first = summary.iloc[0]
numbers = [
    ("cases", f"{len(summary)}: " + ", ".join(summary["case"].astype(str))),
    (
        "static tip displacement",
        f"{1e3 * dy.iloc[0]:.4g} mm ({first['case']}) to "
        f"{1e3 * dy[soft]:.4g} mm ({summary.loc[soft, 'case']})",
    ),
    (
        "first natural frequency",
        f"{summary['omega_1'].min():.4g} to "
        f"{summary['omega_1'].max():.4g} rad/s ({first['omega_1']:.5g} rad/s for {first['case']})",
    ),
    (
        "critical explicit step at the run meshes",
        f"{1e6 * summary['dt_critical'].min():.4g} to {1e6 * summary['dt_critical'].max():.4g} us",
    ),
    ("largest share of a tolerance used", f"{max(worst_all):.3g}" if worst_all else "-"),
]
box = headline(
    "Does the gradient-defect ANCF cantilever model reproduce references computed another way "
    "for every case of the matrix, and what do the defects do to its statics and vibration?",
    numbers,
)
box = box.replace(
    "</div>",
    f"<p class='{overall}' style='margin:0.3em 0'>Overall: {passed} of {total} distinct "
    f"checks PASS ({overall}); {informational} informational rows (INFO: measured times) "
    "not counted.</p></div>",
)
mech_pages = ", ".join(
    f"<a href='{html.escape(rel(page))}'>{html.escape(name)}</a>"
    for name, page in zip(snakemake.params.mechanisms, inp.mech_html, strict=True)
)
mechanisms = (
    f"<p>Each mechanism's page (its animation, snapshots and the comparison with its "
    f"reference; its checks are counted in the mechanisms report above): {mech_pages}.</p>"
    if mech_pages
    else ""
)
audit = (
    f"<p>Seed audit: <a href='{html.escape(rel(inp.seed_audit))}'>every number the seed "
    "documents quote, against the value computed here</a> (verdicts on the seeds, not checks "
    "of this code: not counted above).</p>"
    if getattr(inp, "seed_audit", None)
    else ""
)
page = f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>ancf-beam reports</title>
<style>
body {{ font-family: sans-serif; margin: 2em; max-width: 75em; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #bbb; padding: 4px 8px; }}
.PASS {{ color: #060; font-weight: bold; }} .FAIL {{ color: #b00; font-weight: bold; }}
</style></head><body>
<h1>Gradient-defect ANCF cantilever: reports</h1>
{box}
<p>Each check compares a computed value with a reference computed another way; its tolerance
is a bound with its source, next to the defaults in
<code>ancf_beam.config.PIPELINE_DEFAULTS</code> (the validation report's are error bounds
computed for each check, their terms in each row's note).
<i>Largest err/tol</i> is the largest share of its tolerance a report's checks use
(PASS &le; 1). Each check is counted once ({repeats} repeated rows found across the
tables). Rows marked INFO compare measured times with a cost model: they are shown, but
their outcome depends on the machine's load, so they decide nothing.</p>
{mechanisms}
{audit}
<p>{len(summary)} cases; package ancf_beam {ancf_beam.__version__};
generated {dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}.
Parameter record table: <a href="{html.escape(rel(inp.summary))}">summary.csv</a>
(units and meanings of its columns:
<a href="{html.escape(rel(inp.summary_units))}">summary_units.csv</a>).</p>
<table><tr><th>report</th><th>checks PASS</th><th>status</th><th>largest err/tol</th>
<th>failed checks</th></tr>
{chr(10).join(body)}
</table></body></html>
"""
with open(out, "w") as fh:
    fh.write(page)
