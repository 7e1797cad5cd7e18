"""Print the package tree (one line per package, with its size) and the imports between
packages, as tests/arch/test_layers.py reads them: `python tests/arch/print_layers.py`."""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_layers import ORDER, ROOT, crossings, modules, unit  # noqa: E402


def main() -> None:
    lines: Counter[str] = Counter()
    count: Counter[str] = Counter()
    docs: dict[str, str] = {}
    for name, path in modules().items():
        u = unit(name)
        if u is None:
            continue
        lines[u] += len(path.read_text().splitlines())
        count[u] += 1
        if name == f"proftui.{u}" or u not in docs:  # the package's own, else a module's
            doc = ast.get_docstring(ast.parse(path.read_text())) or ""
            docs[u] = " ".join(doc.split("\n\n")[0].split())
    edges = crossings()
    for u in ORDER:
        if u not in count:
            continue
        below = sorted((b for (a, b) in edges if a == u), key=ORDER.index)
        print(f"{u:<18} {count[u]:>3} modules {lines[u]:>6} lines  {docs.get(u, '')[:90]}")
        if below:
            print(f"{'':<18} imports: {', '.join(below)}")
    longest = sorted(((len(p.read_text().splitlines()), p.relative_to(ROOT))
                      for p in modules().values()), reverse=True)[:12]
    print("\nlongest modules:")
    for n, p in longest:
        print(f"  {n:>5}  {p}")


if __name__ == "__main__":
    main()
