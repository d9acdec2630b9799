"""Resumable long runs: a computation split into independent chunks whose results are kept on disk, so that an
interrupted run (a session's time limit, SIGTERM, a full disk) computes only the chunks it has not finished when
it is started again with the same parameters and the same package code.

    from shallowflow.engine.checkpoint import resumable

    parts = resumable("weakly-interacting/threshold", dict(ns=ns, width=p, ...), seeds,
                      lambda seed: train_one_seed(seed))        # one chunk per seed, each seeded by itself

Each chunk's result (tensors, arrays, numbers, lists and dicts of them) is stored with ``torch.save`` under
``<root>/<name>/<key>/<chunk key>.pt``; the key is a hash of the parameters, the chunk and the package's code
(every ``.py`` file of ``shallowflow``), so a changed parameter or a changed function never reads an old result.
A chunk is written to a temporary name and moved into place whole: a half-written chunk never survives, and an
unreadable one counts as absent (computed again).  Results are bit-identical whether a chunk was computed now
or read back (``torch.save`` keeps dtypes and values), so a resumed run prints the same numbers as an
uninterrupted one.  The root is ``SHALLOWFLOW_CHECKPOINTS`` (``0`` switches checkpoints off everywhere) or
``artifacts/checkpoints``.  A chapter passes ``enabled=P.resume``: its ``resume`` parameter is off in the book and
smoke profiles (a validation run must compute, not read back) and on in the paper profiles of the chapters
whose paper run takes hours.

Only chunks whose computation depends on nothing but their own arguments may be checkpointed (each seeded by
itself, not by a generator shared across chunks): the caller's chunking is the contract.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable, Sequence

import torch

from ..outputs import OutputError, describe, repo_root, safe_path

_PACKAGE = Path(__file__).resolve().parents[1]  # the package (this module is in its engine/)
last_resumed = 0  # chunks the last call of resumable() read back


@functools.lru_cache(maxsize=4)
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
    the same name, parameters, chunk and package code is there, else computed and stored.  ``enabled=False``
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
    folder = base / _slug(name) / _key(dict(params=fingerprint(params), code=package_version()))
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
