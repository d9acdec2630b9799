"""Resumable long runs: a computation split into independent chunks whose results are kept on disk, so that an
interrupted run (a session's time limit, SIGTERM, a full disk) computes only the chunks it has not finished when
it is started again with the same parameters and the same code.

    from shallowflow.engine.checkpoint import resumable

    parts = resumable("weakly-interacting/threshold", dict(ns=ns, width=p, ...), seeds,
                      lambda seed: train_one_seed(seed))        # one chunk per seed, each seeded by itself

Each chunk's result (tensors, arrays, numbers, lists and dicts of them) is stored with ``torch.save`` under
``<root>/<name>/<key>/<chunk key>.pt``; the key is a hash of the parameters, the chunk and the code the chunk's
numbers depend on (:func:`code_version`), so a changed parameter or a changed function never reads an old result.
That code is the import closure of the module that defines ``compute`` (:func:`depends_on`): its file and those of
every module of the package it imports, directly or not, read from the source
(:mod:`shallowflow.engine.codegraph`), leaving out what no number depends on (:data:`NOT_COMPUTING_CHUNKS`: the
site, the executor, the command line, the verdict machinery, the progress bars).  Editing another source's
chapter, a verdict or the CLI keeps a paper run's checkpoints; editing the chapter's experiment module or anything
it imports computes again.  A ``compute`` that the package does not define (a function of a notebook or of a
test), or whose code cannot be told (see :func:`depends_on`), is keyed by the whole package
(:func:`package_version`), as every chunk was before.
A chunk is written to a temporary name and moved into place whole: a half-written chunk never survives, and an
unreadable one counts as absent (computed again).  Results are bit-identical whether a chunk was computed now
or read back (``torch.save`` keeps dtypes and values), so a resumed run prints the same numbers as an
uninterrupted one.  The root is ``SHALLOWFLOW_CHECKPOINTS`` (``0`` switches checkpoints off everywhere) or
``artifacts/checkpoints``.  A chapter passes ``enabled=P.resume``: its ``resume`` parameter is off in the book and
smoke profiles (a validation run must compute, not read back) and on in the paper profiles of the chapters
whose paper run takes hours.

Only chunks whose computation depends on nothing but their own arguments may be checkpointed (each seeded by
itself, not by a generator shared across chunks): the caller's chunking is the contract.  Neither key covers
third-party libraries (torch, numpy), data read from files not named in the parameters (:func:`fingerprint`
hashes those that are), nor modules imported by a computed name (``importlib.import_module``).
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import sysconfig
import types
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import torch

from ..outputs import OutputError, describe, repo_root, safe_path
from . import codegraph

_PACKAGE = Path(__file__).resolve().parents[1]  # the package (this module is in its engine/)
last_resumed = 0  # chunks the last call of resumable() read back


@functools.lru_cache(maxsize=16)
def _hash_files(stamp: tuple, base: str) -> str:
    """A hash of the files of ``stamp`` ((path, mtime, size) each; the mtime and size only key the cache): each file's
    path relative to ``base`` and its bytes, so that the same code in another folder (a moved checkout, a worktree)
    has the same hash and finds its checkpoints."""
    h = hashlib.sha256()
    for path, *_ in stamp:
        h.update(os.path.relpath(path, base).encode())
        h.update(Path(path).read_bytes())
    return h.hexdigest()[:16]


NOT_COMPUTING = ("site",)  # sub-packages no chunk's numbers can depend on (the web pages): editing them keeps checkpoints


def package_version() -> str:
    """A hash of every ``.py`` file of the package a chunk's result may depend on (all but :data:`NOT_COMPUTING`)."""
    files = sorted(p for p in _PACKAGE.rglob("*.py") if "__pycache__" not in p.parts
                   and p.relative_to(_PACKAGE).parts[0] not in NOT_COMPUTING)
    stamp = tuple((str(p.relative_to(_PACKAGE)), p.stat().st_mtime_ns, p.stat().st_size) for p in files)
    return _hash_files(tuple((str(_PACKAGE / s[0]), *s[1:]) for s in stamp), str(_PACKAGE))


#: the floors and modules no chunk's numbers depend on, left out of the code that keys a chunk (:func:`code_version`):
#: the web pages, the executor, the command line (they present or schedule results), the verdict machinery (it
#: judges numbers, it computes none) and the progress bars (they only read counters)
NOT_COMPUTING_CHUNKS = ("shallowflow.site", "shallowflow.executor", "shallowflow.run", "shallowflow.verdicts",
                        "shallowflow.engine.progress")
_SCAN_LIMIT = 20_000  # objects looked at to tell what a compute calls; more: keyed by the whole package
_PLAIN = (str, bytes, int, float, complex, bool, type(None), torch.Tensor, np.ndarray, np.generic, range, slice,
          torch.dtype, torch.device)


@functools.lru_cache(maxsize=1)
def _library_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple(sorted({os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib")
                         if paths.get(k)}))


def _origin(module: Any) -> str:
    """``package`` (a module of ``shallowflow``), ``library`` (the standard library or an installed distribution:
    its code keys no checkpoint) or ``foreign`` (a notebook's ``__main__``, a test, a file elsewhere)."""
    if not isinstance(module, str) or module == "__main__":  # a notebook's cells, a script
        return "foreign"
    if module == codegraph.PACKAGE or module.startswith(codegraph.PACKAGE + "."):
        return "package"
    if module in sys.builtin_module_names:
        return "library"
    file = getattr(sys.modules.get(module), "__file__", None)
    if not file:
        return "foreign"
    path = os.path.realpath(file)
    return "library" if any(path.startswith(d + os.sep) for d in _library_dirs()) else "foreign"


def depends_on(compute: Callable) -> tuple[str, ...] | None:
    """The package's modules whose code ``compute``'s results depend on: the modules that define it and what it
    holds (through ``functools.partial``, bound methods, a closure's variables and defaults, containers, the
    attributes and classes of objects), with every module of the package they import, but
    :data:`NOT_COMPUTING_CHUNKS` (wherever they are met: a progress bar a compute updates adds nothing).  None
    where that cannot be told and the whole package keys its chunks: a function or class defined outside the
    package (a notebook's, a test's), no module of the package but the left-out ones (a compute defined in the
    site), a module of the package without a file, or more than a bounded number of objects to look at."""
    found, seen, todo, looked = set(), set(), [compute], 0
    while todo:
        obj = todo.pop()
        if isinstance(obj, _PLAIN) or id(obj) in seen:
            continue
        seen.add(id(obj))
        looked += 1
        if looked > _SCAN_LIMIT:
            return None
        if isinstance(obj, functools.partial):
            todo += [obj.func, *obj.args, *obj.keywords.values()]
        elif isinstance(obj, types.MethodType):
            todo += [obj.__func__, obj.__self__]
        elif isinstance(obj, types.FunctionType):
            if not _note(obj.__module__, found):
                return None
            todo += [c.cell_contents for c in obj.__closure__ or () if _filled(c)]
            todo += [*(obj.__defaults__ or ()), *(obj.__kwdefaults__ or {}).values()]
            if hasattr(obj, "__wrapped__"):
                todo.append(obj.__wrapped__)
        elif isinstance(obj, (types.BuiltinFunctionType, types.BuiltinMethodType, types.MethodWrapperType)):
            owner = getattr(obj, "__self__", None)
            if owner is not None and not isinstance(owner, types.ModuleType):
                todo.append(owner)  # parts.get: the dict it reads
        elif isinstance(obj, types.ModuleType):
            if not _note(obj.__name__, found):
                return None
        elif isinstance(obj, dict):
            todo += [*obj.keys(), *obj.values()]
        elif isinstance(obj, (list, tuple, set, frozenset)):
            todo += list(obj)
        else:
            cls = obj if isinstance(obj, type) else type(obj)
            if not _note(getattr(cls, "__module__", None), found):
                return None
            try:
                attrs = {} if isinstance(obj, type) else vars(obj)
            except TypeError:  # no __dict__ (slots, a C type's instance)
                attrs = {}
            todo += list(attrs.values()) if isinstance(attrs, dict) else []
    found = {m for m in found if not codegraph.left_out(m, NOT_COMPUTING_CHUNKS)}  # as the closure leaves them out
    if not found or any(codegraph.module_file(m) is None for m in found):
        return None
    return codegraph.closure(sorted(found), leave_out=NOT_COMPUTING_CHUNKS, parents=True)


def _note(module: Any, found: set) -> bool:
    """Adds ``module`` to ``found`` where it is the package's; False where it is foreign (the whole package then
    keys the chunk), True otherwise (a library's code keys nothing)."""
    origin = _origin(module)
    if origin == "package":
        found.add(module)
    return origin != "foreign"


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:  # a closure's variable not yet assigned
        return False
    return True


def code_version(compute: Callable) -> str:
    """A hash of the files of :func:`depends_on` (each file's path relative to the package and its bytes, so the same
    code in another folder has the same hash), else of the whole package (:func:`package_version`)."""
    modules = depends_on(compute)
    if modules is None:
        return package_version()
    files = [codegraph.module_file(m) for m in modules]
    try:
        stamp = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files)
    except (OSError, AttributeError):  # a file removed since: the whole package
        return package_version()
    return "modules:" + _hash_files(stamp, str(codegraph.PACKAGE_DIR))


def root() -> Path | None:
    """The checkpoint folder, or None where checkpoints are off (``SHALLOWFLOW_CHECKPOINTS=0``)."""
    env = os.environ.get("SHALLOWFLOW_CHECKPOINTS")
    if env is not None and env.strip() in ("", "0", "off", "false"):
        return None
    if env:
        return Path(env)
    return repo_root() / "artifacts" / "checkpoints"


def _key(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _file_digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fingerprint(params: Any) -> Any:
    """``params`` with every string that names an existing file replaced by the file's path and content hash: a
    data file (``dataset: my.npz``) edited in place never reads the checkpoints of its old contents."""
    if isinstance(params, dict):
        return {k: fingerprint(v) for k, v in params.items()}
    if isinstance(params, (list, tuple)):
        return [fingerprint(v) for v in params]
    if isinstance(params, str) and params and os.path.isfile(params):
        return {"file": params, "sha256": _file_digest(params)}
    return params


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:80]


def resumable(name: str, params: dict, chunks: Sequence, compute: Callable[[Any], Any],
              enabled: bool = True, say: bool = True) -> list:
    """``[compute(c) for c in chunks]``, each result read from the checkpoint folder when a finished chunk of
    the same name, parameters, chunk and code (:func:`code_version` of ``compute``) is there, else computed and
    stored.  ``enabled=False``
    (or ``SHALLOWFLOW_CHECKPOINTS=0``) computes everything and stores nothing.  A checkpoint folder that cannot
    be created (read-only), or that leads through a symlink out of the repository, is said once, in one line,
    and the run goes on without checkpoints; a chunk that cannot be stored (a full disk) stops the run with one
    line (:class:`shallowflow.outputs.OutputError`), its temporary file removed, the chunks stored before it kept.
    ``say=False`` leaves the line saying how many chunks were read back to the caller (one that calls this once
    per piece of a long run sums them itself: :attr:`last_resumed` holds the count of the last call)."""
    global last_resumed
    last_resumed = 0
    base = root() if enabled else None
    if base is None:
        return [compute(c) for c in chunks]
    folder = base / _slug(name) / _key(dict(params=fingerprint(params), code=code_version(compute)))
    try:
        folder = safe_path(folder, base)  # artifacts/checkpoints (or a folder below it) linked out of the repository
        folder.mkdir(parents=True, exist_ok=True)
    except OutputError as e:
        print(f"shallowflow: checkpoints off for {name}: {e}")
        return [compute(c) for c in chunks]
    except OSError as e:
        print(f"shallowflow: checkpoints off for {name}: {describe(e, folder)}")
        return [compute(c) for c in chunks]
    out, resumed = [], 0
    for c in chunks:
        path = folder / f"{_key(c)}.pt"
        if path.exists():
            try:
                out.append(torch.load(path, weights_only=False))
                resumed += 1
                continue
            except Exception:  # an unreadable chunk counts as absent
                pass
        value = compute(c)
        tmp = path.with_name(path.name + f".tmp{os.getpid()}")
        try:
            torch.save(value, tmp)
            os.replace(tmp, path)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise OutputError(f"checkpoint of {name} not written: {describe(e, path)}") from None
        out.append(value)
    last_resumed = resumed
    if resumed and say:
        print(f"{name}: {resumed} of {len(chunks)} chunks read back from {folder} (an earlier run computed them)")
    return out


def progress(name: str, since: float | None = None) -> int:
    """How many finished chunks of ``name`` (and of the names below it, ``name/part``) the checkpoint folder holds,
    of any parameters and code; with ``since`` (a ``time.time()``), only those written since then: what a stopped run
    leaves for the next sitting.  0 where checkpoints are off or the folder cannot be read."""
    base = root()
    if base is None:
        return 0
    slug = _slug(name)
    count = 0
    try:
        for folder in base.iterdir():
            if folder.name != slug and not folder.name.startswith(slug + "_"):
                continue
            for path in folder.glob("*/*.pt"):
                try:
                    if since is None or path.stat().st_mtime >= since:
                        count += 1
                except OSError:
                    continue
    except OSError:
        return 0
    return count
