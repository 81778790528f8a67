"""What the hostile-input tests share (tests/test_hostile*.py, tests/jobs/test_shipped_runs.py):
the CLI through main() with exactly one `ocg: error:` line, a models file of one entry, a replay
run of one set, a folder a link points at, and a scored table edited and re-signed."""

import json

from ocg.cli import main


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("ocg: error: ") == 1, err
    return code, err


def models_file(tmp_path, entry: str):
    path = tmp_path / "models.yaml"
    path.write_text(f"models:\n  m: {entry}\n")
    return path


REPLAY = "{{id: x/z, backend: replay, replay: {{file: {file}}}}}"


def replay_run(tmp_path, answers=None):
    """A replay entry answering the 24 instances of one set, template 0, condition ordered:
    answers(position, concepts) where given, else 'A dog runs.'."""
    from ocg.generation import select_instances

    rows = select_instances(None, ["ordered"], 1, [0])
    with (tmp_path / "answers.jsonl").open("w") as fh:
        for i, (iid, concepts) in enumerate(zip(rows.instance_id, rows.concepts)):
            answer = answers(i, list(concepts)) if answers else None
            fh.write(json.dumps({"instance_id": iid, "answer": answer or "A dog runs."}) + "\n")
    path = models_file(tmp_path, REPLAY.format(file=tmp_path / "answers.jsonl"))
    return ["--models-file", path, "--subset-k", 1, "--templates", 0, "--conditions", "ordered"]


def tree(root):
    """Every file's bytes and every folder under `root`, to compare before and after."""
    return {
        str(p.relative_to(root)): p.read_bytes() if p.is_file() else None
        for p in sorted(root.rglob("*"))
    }


def victim(tmp_path):
    """A folder outside the outputs, with files and a subfolder, that a link points at."""
    root = tmp_path / "victim"
    (root / "sub").mkdir(parents=True)
    (root / "thesis.tex").write_text("years of work\n")
    (root / "sub" / "data.csv").write_bytes(b"a,b\n1,2\n")
    return root, tree(root)


def reseal(folder, table, change):
    """Edit one table, then write a signature that matches it, as a careful tamperer would."""
    import hashlib

    import pandas as pd

    path = folder / f"{table}.parquet"
    change(pd.read_parquet(path)).to_parquet(path, index=False)
    signature = json.loads((folder / "signature.json").read_text())
    data = path.read_bytes()
    signature["files"][path.name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (folder / "signature.json").write_text(json.dumps(signature))
    return path
