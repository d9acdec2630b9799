"""The committed verdict registry (``verdicts/<source>.yml``) and the claim records a build writes.

Its law (every expected failure has a cause, every excusing cause its evidence, ...) is
:func:`shallowflow.verdicts.law.validate_registry`, which reads the causes (:mod:`~shallowflow.verdicts.causes`).
"""
from __future__ import annotations

import copy
import functools
import json
import os
import re
from pathlib import Path

import yaml

from ..outputs import repo_root

PASS, FAIL, UNDECIDED = "pass", "fail", "undecided"
NOT_RUN = "not-run"  # registry only: the check is not computed at this scale (e.g. book-only timings)
COMPARED_PROFILES = ("book", "smoke")


class VerdictMismatch(AssertionError):
    """A run's verdicts differ from the committed registry, or a registered cause's evidence does not hold."""


def registry_dir() -> Path:
    return repo_root() / "verdicts"


def claims_dir(profile: str) -> Path:
    env = os.environ.get("SHALLOWFLOW_CLAIMS_DIR")
    return (Path(env) if env else repo_root() / "artifacts" / "claims") / profile


def load_registry(directory: Path | None = None) -> dict:
    """The registry as {"sources": {key: meta}, "targets": {"<source>:<target>": entry}}.

    One file per source, ``verdicts/<source>.yml`` with keys ``source`` and ``targets``.  Parsed files
    are cached by path, modification time and size (a chapter consults the registry once per check),
    and every call returns a fresh copy, so an edit to a file is seen at the next call.
    """
    return copy.deepcopy(registry_view(directory))


def registry_view(directory: Path | None = None) -> dict:
    """The parsed registry itself, shared and cached (a chapter consults it once per check): read it, never
    change it (:func:`load_registry` gives a copy to change)."""
    paths = sorted((directory or registry_dir()).glob("*.yml"))
    stamp = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in paths)
    return _parse_registry(stamp)


# libyaml's safe loader where PyYAML was built with it (the same documents, about ten times faster: every
# chapter kernel parses the six registries once); the pure-Python safe loader otherwise
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.lru_cache(maxsize=8)
def _parse_registry(stamp: tuple) -> dict:
    sources, targets = {}, {}
    for path, _, _ in stamp:
        path = Path(path)
        doc = yaml.load(path.read_text(), Loader=_SAFE_LOADER) or {}
        key = path.stem
        sources[key] = doc.get("source") or {}
        for target, entry in (doc.get("targets") or {}).items():
            targets[f"{key}:{target}"] = entry or {}
    return {"sources": sources, "targets": targets}


def load_records(profile: str = "book") -> list[dict]:
    d = claims_dir(profile)
    return [json.loads(p.read_text()) for p in sorted(d.glob("*.json"))] if d.exists() else []


def registered(registry: dict, source: str, check_id: str) -> dict | None:
    """The registry entry of check ``<target>/<name>`` of ``source`` (None when it is not registered)."""
    if "/" not in check_id:
        return None
    target, name = check_id.split("/", 1)
    entry = registry.get("targets", {}).get(f"{source}:{target}")
    if entry is None or name not in (entry.get("checks") or {}):
        return None
    return (entry.get("checks") or {}).get(name) or {}


def chapter_of(registry: dict, source: str, check_id: str) -> str | None:
    """The chapter (docname) that computes a registered check (a check may override its target's)."""
    target = check_id.split("/", 1)[0]
    entry = registry.get("targets", {}).get(f"{source}:{target}") or {}
    reg = registered(registry, source, check_id)
    return (reg or {}).get("chapter", entry.get("chapter"))


# ----------------------------------------------------------------------------------------------
# the registry's law
# ----------------------------------------------------------------------------------------------
PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
QUOTED = re.compile(r"`[^`]*`")
ATTRIBUTES = ("measured", "criterion", "verdict", "source_value")


def placeholder_ids(template: str) -> list[str]:
    """The other checks a why template reads (``{T/name}`` or ``{T/name.measured}``)."""
    out = []
    for key in PLACEHOLDER.findall(template):
        if "/" in key:
            ref, _, attr = key.rpartition(".")
            out.append(ref if attr in ATTRIBUTES else key)
    return out


def typed_numbers(template: str) -> list[str]:
    """Digits a why states outside placeholders and backtick quotes (the source's constants)."""
    bare = QUOTED.sub("", PLACEHOLDER.sub("", template))
    return re.findall(r"[^\s]*\d[^\s]*", bare)
