"""The parameters a notebook declares, and the values they accept, checked before a kernel starts.

A notebook's first code cell (tagged `parameters`) declares each parameter as a plain assignment,
`name: type = default` (the annotation where the default alone does not say the type, e.g.
`subset_k: Optional[int] = None`). The names, annotations and defaults are read by papermill's own
parameter inspection (the one `papermill --help-notebook` and `papermill.inspect_notebook` use),
so ocg reads the cell as papermill does. papermill only warns about an undeclared name and writes
any name into the code it runs, so every name and value is checked here first.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

from ..core.errors import OcgInputError
from ..core.files import read_json

_KINDS = {
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "list": list,
    "dict": dict,
    "None": type(None),
}


def _type_of(default: str) -> str:
    """The type a default says: that of a literal; anything plain for an expression."""
    try:
        value = ast.literal_eval(default)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return "any"
    return next((k for k, t in _KINDS.items() if type(value) is t), "any")


def _annotation(text: str) -> str:
    """An annotation as ocg checks it: `Optional[X]` (which papermill can read, unlike `X | None`)
    is `X | None`."""
    node = ast.parse(text, mode="eval").body
    if isinstance(node, ast.Subscript) and ast.unparse(node.value) in (
        "Optional",
        "typing.Optional",
    ):
        return f"{ast.unparse(node.slice)} | None"
    return ast.unparse(node)


def _assigned(body: list[ast.stmt]) -> list[str]:
    """The names the cell assigns at its top level, as Python reads it."""
    names = []
    for node in body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
        elif isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            names.extend(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def declared(notebook: str | Path) -> dict[str, str]:
    """name -> declared type ("int", "list[str] | None", ...) from the notebook's parameters cell,
    read by papermill's parameter inspection; a parameter papermill cannot read (`x: int | None`,
    `a = b = 1`) is an error naming it, not a name left out."""
    from papermill.translators import PythonTranslator

    nb = read_json(notebook)  # not JSON, or nested past the parser: an error naming the file
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise OcgInputError(
            str(notebook), "not a notebook: expected a JSON object with a list of cells"
        )
    cell = next(
        (
            c
            for c in nb["cells"]
            if isinstance(c, dict) and "parameters" in c.get("metadata", {}).get("tags", [])
        ),
        None,
    )
    if cell is None:
        return {}
    source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    try:
        body = ast.parse(source).body
    except SyntaxError as exc:
        raise OcgInputError(
            f"{notebook}: parameters cell", f"not Python ({exc.msg}, line {exc.lineno})"
        ) from None
    found = PythonTranslator.inspect({"source": source})
    params = {
        p.name: _annotation(p.inferred_type_name)
        if p.inferred_type_name != "None"
        else _type_of(p.default)
        for p in found
    }
    unread = [name for name in _assigned(body) if name not in params]
    if unread:
        raise OcgInputError(
            f"{notebook}: parameters cell: {unread[0]}",
            "papermill cannot read this line as a parameter: write one `name: type = value` a "
            "line, `Optional[X]` for `X | None`",
        )
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
        kind = _KINDS.get(base)
        if base == "any":
            return True
        if kind is None:
            raise KeyError(alternative)
        if kind is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        elif kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, kind)
        if ok and inner and isinstance(value, list):
            ok = all(_matches(v, inner[:-1]) for v in value)
        if ok:
            return True
    return False


def check_parameters(notebook: str | Path, values: dict, where: str = "parameter ") -> dict:
    """`values` if every name is declared by the notebook and every value is of its type."""
    notebook = Path(notebook)
    params = declared(notebook)
    for name, value in values.items():
        if name not in params:
            raise OcgInputError(
                f"{where}{name}",
                f"not a parameter of {notebook.stem}; it declares "
                f"{', '.join(params) or 'none (no cell tagged parameters)'}",
            )
        try:
            fits = _plain(value) and _matches(value, params[name])
        except KeyError:
            raise OcgInputError(
                f"{notebook}: parameters cell: {name}",
                f"type {params[name]!r} is not "
                "one ocg checks: int, float, str, bool, list, dict, None, list[X], X | Y",
            ) from None
        if not fits:
            raise OcgInputError(f"{where}{name}", f"got {value!r}; expected {params[name]}")
    return values
