"""Publishing a finished task where the book and the CLI show it: all files or none, never through a symlink
out of their root; earlier runs of the chapter and profile are superseded."""
from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

from ..outputs import OutputError, describe, ensure_writable, publish_files, safe_path
from ..verdicts import repo_root
from .common import MAX_RESULT_BYTES, PROFILES, SCORECARD
from .tasks import Task


def materialise(result: dict) -> dict:
    """Write a gathered result's files here when its worker did not share this file system."""
    files = result.pop("files", None)
    final = Path(result["dir"])
    if files and not (final / "result.json").exists():
        final = safe_path(final, _task_root(result))
        tmp = final.with_name(f".{final.name}.partial-{uuid.uuid4().hex[:8]}")
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            tmp.mkdir()
            for name, data in files.items():
                if name != "result.json" and name == Path(name).name:
                    (tmp / name).write_bytes(data)
            (tmp / "result.json").write_bytes(files["result.json"])
            tmp.rename(final)
        except OSError as e:
            shutil.rmtree(tmp, ignore_errors=True)
            raise OutputError(describe(e)) from None
    return result


def _task_root(result: dict) -> Path:
    """The tasks' root of a result: its directory is ``<root>/<chapter>/<profile>-<key>``."""
    here = Path(result["dir"])
    return here.parents[len(Path(result["chapter"]).parts)]


def _atomic_write(path: Path, data: bytes) -> None:
    """One file under a temporary name, then renamed (nothing left behind on failure)."""
    publish_files([(safe_path(path), data)])


def _claims_root(claims_root: Path | None = None) -> Path:
    from ..verdicts import claims_dir

    return Path(claims_root) if claims_root else claims_dir("x").parent


def outputs(task: Task, runs_dir: Path | None = None, out_root: Path | None = None,
            claims_root: Path | None = None) -> dict[str, Path]:
    """Where a run of ``task`` publishes (``notebook``, ``claims`` folder), each checked by
    :func:`~shallowflow.outputs.safe_path` against its root (the repository, or ``out_root``)."""
    runs_dir = Path(runs_dir) if runs_dir else repo_root() / "artifacts" / "runs" / task.profile
    root = _claims_root(claims_root)
    return dict(notebook=safe_path(runs_dir / f"{task.chapter}.ipynb", out_root or runs_dir),
                claims=safe_path(root / task.profile, root))


def check_outputs(task: Task, runs_dir: Path | None = None, out_root: Path | None = None) -> None:
    """Before a kernel starts: the task directory, the notebook's and the records' folders stay inside
    their roots (no symlink out) and can be written; :class:`OutputError` in one line otherwise."""
    safe_path(task.dir, task.root)
    where = outputs(task, runs_dir, out_root)  # every path checked before any folder is created
    ensure_writable(Path(task.root), task.root)
    ensure_writable(where["notebook"].parent, out_root or where["notebook"].parent)
    if task.chapter != SCORECARD:
        ensure_writable(where["claims"], _claims_root())


def publish(result: dict, runs_dir: Path | None = None, claims_root: Path | None = None,
            out_root: Path | None = None) -> Path:
    """Copy a finished task to where the book and the CLI show it: the notebook to
    ``artifacts/runs/<profile>/<chapter>.ipynb`` (or under ``out_root``), its records to
    ``artifacts/claims/<profile>/``; all files or none (:func:`~shallowflow.outputs.publish_files`),
    never through a symlink out of their root.  Then earlier runs of the chapter and profile (other code
    versions) are removed: only directories a run created (a ``result.json`` of that chapter and key)."""
    profile = result["profile"]
    runs_dir = Path(runs_dir) if runs_dir else repo_root() / "artifacts" / "runs" / profile
    out = safe_path(runs_dir / f"{result['chapter']}.ipynb", out_root or runs_dir)
    croot = _claims_root(claims_root)
    files = []
    try:
        if result.get("notebook"):
            files.append((out, Path(result["notebook"]).read_bytes()))
        for rec in result["records"]:
            name = f"{rec['source']}__{rec['chapter'].replace('/', '__')}.json"
            files.append((safe_path(croot / rec["profile"] / name, croot), json.dumps(rec, indent=1).encode()))
        publish_files(files)
    except OSError as e:
        raise OutputError(f"{describe(e)}; nothing was published (the previous notebook and claim records are "
                          f"untouched)") from None
    if profile in PROFILES:
        _supersede(result)
    return out


def _supersede(result: dict) -> None:
    """Remove earlier task directories of this chapter and profile: real directories (not links) beside
    this one, inside the tasks' root, holding a result of this chapter whose key is their name's."""
    import re

    here = Path(result["dir"])
    try:
        safe_path(here, _task_root(result))
    except (OutputError, IndexError):
        return
    pattern = re.compile(re.escape(result["profile"]) + r"-([0-9a-f]{16})")
    for old in here.parent.glob(f"{result['profile']}-*"):
        m = pattern.fullmatch(old.name)
        if old == here or not m or old.is_symlink() or not old.is_dir():
            continue
        rj = old / "result.json"
        try:
            if rj.is_symlink() or not rj.is_file() or rj.stat().st_size > MAX_RESULT_BYTES:
                continue
            doc = json.loads(rj.read_text())
        except (OSError, ValueError, RecursionError):  # not one of ours (RecursionError: nested too deep)
            continue
        if isinstance(doc, dict) and doc.get("chapter") == result["chapter"] and doc.get("key") == m.group(1):
            shutil.rmtree(old, ignore_errors=True)
