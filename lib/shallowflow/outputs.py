"""Where a run may write, and how it publishes: inside its root, all files or none.

Every path a run writes (task directories, the published notebook, claim records, a sweep's table,
a failed notebook) lies under a **root**: the repository, or the folder the user chose (``--out``,
``SHALLOWFLOW_TASKS_DIR``, ``SHALLOWFLOW_CLAIMS_DIR``).  :func:`safe_path` refuses, in one line naming
the link, a path whose existing parts lead through a symbolic link out of that root, so a link planted
in ``artifacts/`` cannot make a run write (or clean up) anywhere else.  A root inside the repository is
itself resolved: ``artifacts/``, ``artifacts/tasks`` or ``artifacts/runs/<profile>`` being a link out of the
repository is refused too (the link is not the jail).  :func:`remove` is ``rm -rf`` under the same rule, for
the Makefile's clean steps (``python lib/shallowflow/outputs.py remove --inside DIR PATH...``).

:func:`publish_files` writes several files as one: each is staged under a temporary name beside its
destination, then all are renamed into place; a failure at any point (a full disk, a read-only folder)
puts back the files already renamed and removes every temporary file, so the destinations hold either
all the new files or all the old ones.
"""
from __future__ import annotations

import sys

if __name__ == "__main__" and __spec__ is None:  # run by its path (the Makefile's clean steps: no package, no torch):
    del sys.path[0]  # its own folder is not a folder of modules (the package's data.py, init.py, ... are not stdlib's)

import contextlib
import errno
import os
import shutil
import tempfile
import uuid
from pathlib import Path


def repo_root() -> Path:
    """The book's root: SHALLOWFLOW_ROOT, else the checkout this package is installed from."""
    env = os.environ.get("SHALLOWFLOW_ROOT")
    return Path(env) if env else Path(__file__).resolve().parents[2]


class OutputError(RuntimeError):
    """An output path that cannot be used: a symlink out of its root, a read-only folder, a full disk
    (one line for the user)."""


def _abs(path) -> str:
    return os.path.abspath(os.fspath(path))


def _within(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:  # different drives
        return False


def jail(path, root=None) -> Path:
    """The folder ``path`` must stay inside: the repository when ``path`` lies in it, else ``root`` (the
    folder the user chose), else the path's own folder."""
    p = _abs(path)
    for candidate in (root, repo_root()):
        if candidate is not None and _within(p, _abs(candidate)):
            return Path(_abs(candidate))
    return Path(_abs(root)) if root is not None else Path(p).parent


def _repository() -> tuple[str, str]:
    """The repository as written and as it really is (every link on the way followed)."""
    repo = _abs(repo_root())
    return repo, os.path.realpath(repo)


def _first_link(path: Path, inside: str) -> Path | None:
    """The first symbolic link on the way to ``path`` (``path`` included) at or below ``inside``."""
    return next((q for q in [*reversed(path.parents), path] if _within(str(q), inside) and q.is_symlink()), None)


def _outside(p: Path, link: Path | None, where: str, verb: str = "write") -> OutputError:
    if link is None:  # no link of ours on the way (e.g. the folder was replaced while running)
        return OutputError(f"refusing to {verb} {p}: it resolves to {os.path.realpath(p)}, outside {where}")
    try:
        target = os.readlink(link)
    except OSError:
        target = os.path.realpath(link)
    return OutputError(f"refusing to {verb} {p}: {link} is a symlink to {target}, outside {where}")


def safe_path(path, root=None) -> Path:
    """``path`` (absolute) when following its existing parts never leaves :func:`jail`; otherwise
    :class:`OutputError` naming the symlink that leads out.  A root inside the repository (``artifacts/tasks``,
    ``artifacts/runs/<profile>``, ``artifacts/claims``, ``artifacts/`` itself) must itself resolve inside the
    repository: a root that is (or lies below) a link out of it is refused, not trusted as the jail."""
    p = Path(_abs(path))
    base = jail(p, root)
    repo, real_repo = _repository()
    real_base = os.path.realpath(base)
    if (_within(str(base), repo) or _within(str(base), real_repo)) and not _within(real_base, real_repo):
        inside = repo if _within(str(base), repo) else real_repo
        raise _outside(p, _first_link(base, inside), f"the repository {real_repo}")
    if _within(os.path.realpath(p), real_base):
        return p
    raise _outside(p, _first_link(p, str(base)), str(base))


def removable(path, inside) -> Path:
    """``path`` (absolute) when ``rm -rf path`` touches nothing outside ``inside``: it lies below ``inside`` and
    the folder holding it resolves inside ``inside`` (``rm -rf artifacts/runs/book`` follows a linked
    ``artifacts/`` or ``artifacts/runs/`` on the way, and deletes what lies outside); :class:`OutputError`
    naming the link otherwise.  A link at ``path`` itself is fine: it is removed, not what it points to."""
    p, top = Path(_abs(path)), _abs(inside)
    if not _within(str(p), top) or p == Path(top):
        raise OutputError(f"refusing to remove {p}: not below {top}")
    if not _within(os.path.realpath(p.parent), os.path.realpath(top)):
        raise _outside(p, _first_link(p.parent, top), top, verb="remove")
    return p


def remove(path, inside) -> None:
    """``rm -rf path``, never outside ``inside`` (:func:`removable`; the Makefile's clean steps)."""
    p = removable(path, inside)
    try:
        if p.is_symlink() or (p.exists() and not p.is_dir()):
            p.unlink()
        elif p.is_dir():
            shutil.rmtree(p)
    except OSError as e:
        raise OutputError(f"cannot remove {e.filename or p}: {e.strerror or type(e).__name__}") from None


def describe(e: OSError, what=None) -> str:
    """An OSError in one line: what could not be written, and why."""
    where = e.filename if getattr(e, "filename", None) else what
    why = e.strerror or (os.strerror(e.errno) if e.errno else str(e).splitlines()[0] if str(e) else type(e).__name__)
    if e.errno == errno.ENOSPC:
        why = "no space left on the device"
    return f"cannot write {where}: {why}" if where else f"cannot write: {why}"


def ensure_writable(folder, root=None) -> Path:
    """Create ``folder`` (inside its root) and check that a file can be written there, before any work
    whose results would go there is started; :class:`OutputError` in one line otherwise."""
    folder = safe_path(folder, root)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder, prefix=".shallowflow-probe-"):
            pass
    except OSError as e:
        raise OutputError(describe(e, folder)) from None
    return folder


def _write_file(path: Path, data: bytes) -> None:
    """Write a new file (never an existing one, never through a link)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


_replace = os.replace  # tests put a failing rename here


def _keep_copy(dest: Path) -> Path | None:
    """A second name for the current content of ``dest`` (a hard link, else a copy), to put back."""
    if not dest.exists():
        return None
    backup = dest.with_name(f".{dest.name}.bak-{uuid.uuid4().hex[:8]}")
    try:
        os.link(dest, backup, follow_symlinks=False)
    except OSError:
        shutil.copy2(dest, backup, follow_symlinks=False)
    return backup


def publish_files(files: list[tuple[Path, bytes]]) -> None:
    """Write every ``(destination, bytes)`` or none: stage all under temporary names, then rename all;
    on any failure the renamed ones are put back and every temporary file is removed (OSError raised)."""
    staged: list[tuple[Path, Path]] = []
    done: list[tuple[Path, Path | None]] = []
    try:
        for dest, data in files:
            dest = Path(dest)
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(f".{dest.name}.tmp-{uuid.uuid4().hex[:8]}")
            staged.append((tmp, dest))
            _write_file(tmp, data)
        for tmp, dest in staged:
            done.append((dest, _keep_copy(dest)))
            _replace(tmp, dest)
    except BaseException:
        for dest, backup in reversed(done):
            with contextlib.suppress(OSError):
                if backup is not None and dest.exists() and os.path.samefile(backup, dest):
                    backup.unlink()  # not replaced yet (rename does nothing between two links of one file)
                elif backup is not None:
                    os.replace(backup, dest)
                elif dest.exists():
                    dest.unlink()
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                tmp.unlink()
        raise
    for _, backup in done:
        if backup is not None:
            with contextlib.suppress(OSError):
                backup.unlink()


def main(argv: list[str] | None = None) -> int:
    """``python lib/shallowflow/outputs.py remove --inside DIR PATH...`` (or ``-m shallowflow.outputs``): the
    Makefile's clean steps (exit 2 and one line when a path leads through a symlink out of DIR; nothing is
    removed then)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 3 or args[0] != "remove" or args[1] != "--inside":
        print("usage: python lib/shallowflow/outputs.py remove --inside DIR PATH...", file=sys.stderr)
        return 2
    inside, paths = args[2], args[3:]
    try:
        for path in paths:  # every path checked before any is removed
            removable(path, inside)
    except OutputError as e:
        print(f"shallowflow: {e}; nothing was removed", file=sys.stderr)
        return 2
    try:
        for path in paths:
            remove(path, inside)
    except OutputError as e:
        print(f"shallowflow: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
