"""The parameters a notebook declares, and the values they accept, checked before a kernel starts.

A notebook's first code cell (tagged `parameters`) declares each parameter as a plain assignment,
`name: type = default` (the annotation where the default alone does not say the type, e.g.
`subset_k: int | None = None`). papermill only warns about an undeclared name and writes any
name into the code it runs, so every name and value is checked here first.
"""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

from .errors import OcgInputError

_KINDS = {"int": int, "float": float, "str": str, "bool": bool, "list": list, "dict": dict,
          "None": type(None)}


def _type_of(default: object) -> str:
    kind = next((k for k, t in _KINDS.items() if type(default) is t), None)
    if kind is None:
        raise ValueError(f"a parameter's default must be a literal, got {default!r}")
    return kind


def declared(notebook: str | Path) -> dict[str, str]:
    """name -> declared type ("int", "list[str] | None", ...) from the notebook's parameters cell."""
    nb = json.loads(Path(notebook).read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    params = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            params[node.target.id] = ast.unparse(node.annotation)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            params[node.targets[0].id] = _type_of(ast.literal_eval(node.value))
    return params


def _plain(value: object) -> bool:
    """A value papermill writes back as the same Python literal (what YAML can give, less dates, NaN)."""
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def _matches(value: object, spec: str) -> bool:
    for alternative in (a.strip() for a in spec.split("|")):
        base, _, inner = alternative.partition("[")
        kind = _KINDS[base]
        if kind is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        elif kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, kind)
        if ok and inner and kind is list:
            ok = all(_matches(v, inner[:-1]) for v in value)
        if ok:
            return True
    return False


def check_parameters(notebook: str | Path, values: dict, where: str = "parameter ") -> dict:
    """`values` if every name is declared by the notebook and every value is of its type."""
    params = declared(notebook)
    for name, value in values.items():
        if name not in params:
            raise OcgInputError(f"{where}{name}", f"not a parameter of {Path(notebook).stem}; "
                                                  f"it declares {', '.join(params)}")
        if not _plain(value) or not _matches(value, params[name]):
            raise OcgInputError(f"{where}{name}", f"got {value!r}; expected {params[name]}")
    return values
