"""Gallery pages, generated at every docs build (mkdocs-gen-files): each script of
``examples/`` is run as a script (``python examples/NAME.py FIGURE.png``, two at a time), and
its page shows the module docstring, the printed numbers, the figure and the source.

A script that fails fails the build; an example that ``mkdocs.yml``'s nav does not list is a
warning (an error under ``--strict``).
"""

from __future__ import annotations

import ast
import logging
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import mkdocs_gen_files

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
log = logging.getLogger("mkdocs.gallery")


def run(script: Path, figure: Path) -> str:
    """Run one example as a script; its stdout (the numbers it prints)."""
    proc = subprocess.run(
        [sys.executable, str(script), str(figure)],
        cwd=figure.parent,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"examples/{script.name} failed:\n{proc.stderr}")
    return proc.stdout


def docstring_markdown(doc: str) -> tuple[str, str]:
    """(title, body) of a module docstring: the title is the first sentence up to its colon
    (all of it when it has none), the rest of that sentence opens the body; the reST double
    backticks read as Markdown code spans as they are."""
    first, _, rest = doc.partition("\n\n")
    first = " ".join(first.split()).rstrip(".")
    title, colon, lead = first.partition(": ")
    if not colon:
        return first, rest.strip()
    return title, f"{lead[0].upper()}{lead[1:]}.\n\n{rest.strip()}"


def without_docstring(source: str) -> str:
    """The script's source after its module docstring (shown as text above it)."""
    node = ast.parse(source).body[0]
    return "\n".join(source.splitlines()[node.end_lineno :]).lstrip("\n") + "\n"


def page(name: str, source: str, output: str, has_figure: bool) -> str:
    title, body = docstring_markdown(ast.get_docstring(ast.parse(source)) or name)
    parts = [f"# {title}\n", body + "\n"]
    parts.append(
        f"Run it: `python examples/{name}.py` (saves `{name}.png`), or import it and "
        "call `main()`, which returns the numbers below as a dict.\n"
    )
    if has_figure:
        parts.append(f"![{title}]({name}.png)\n")
    parts.append(f"## Output\n\n```text\n{output}```\n")
    code = without_docstring(source)
    parts.append(
        f"## Source\n\n`examples/{name}.py`, after its docstring:\n\n```python\n{code}```\n"
    )
    return "\n".join(parts)


def build() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()

    def nav_position(script: Path) -> tuple[int, str]:  # the index follows the nav's order
        i = nav.find(f"gallery/{script.stem}.md")
        return (i if i >= 0 else len(nav), script.stem)

    scripts = sorted(EXAMPLES.glob("*.py"), key=nav_position)
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(max_workers=2) as pool:
        figures = {s.stem: Path(tmp) / f"{s.stem}.png" for s in scripts}
        outputs = dict(zip(figures, pool.map(run, scripts, figures.values()), strict=True))
        index = [
            "# Gallery\n",
            "Short scripts of `examples/`, each through the front door "
            "(`import ancf_beam as ab`). Every page is built by running its script; the "
            "tests (`tests/test_examples.py`) import each one and check its numbers "
            "against independent references.\n",
        ]
        for script in scripts:
            name, fig = script.stem, figures[script.stem]
            source = script.read_text()
            text = page(name, source, outputs[name], fig.exists())
            with mkdocs_gen_files.open(f"gallery/{name}.md", "w") as f:
                f.write(text)
            if fig.exists():
                with mkdocs_gen_files.open(f"gallery/{name}.png", "wb") as f:
                    f.write(fig.read_bytes())
            title = text.splitlines()[0].removeprefix("# ")
            thumb = f"[![{title}]({name}.png){{ width=300 }}]({name}.md)" if fig.exists() else ""
            index.append(f"## [{title}]({name}.md)\n\n{thumb}\n")
    with mkdocs_gen_files.open("gallery/index.md", "w") as f:
        f.write("\n".join(index))
    for script in scripts:
        if f"gallery/{script.stem}.md" not in nav:
            log.warning("examples/%s.py has no entry in mkdocs.yml's nav", script.stem)


build()
