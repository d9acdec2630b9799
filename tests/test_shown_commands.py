"""Every command the book shows a reader works: the commands in the README, the intro, the re-running
appendix and every chapter's re-run box are parsed by the CLI's own parser and validated against the
chapter's schema and profiles, without executing anything (issue 28, point 4).

A command whose comment says it is refused must be refused; a shown `--profile paper` must name a chapter
with a paper profile (without one, the "source's scale" would silently be the book's)."""
import itertools
import re
import shlex
from pathlib import Path

import pytest

from shallowflow.run import cli
from shallowflow import executor as X

ROOT = cli.repo_root()
DOCS = ["README.md", "book/intro.md", "book/appendix/rerun.md"]


def _code_commands(text: str) -> list[tuple[str, str]]:
    """(command, comment) of every `shallowflow`, `jupytext` or `papermill` line in fenced code blocks,
    continuation lines joined."""
    out, in_code, pending = [], False, ""
    for line in text.splitlines():
        if line.strip().startswith("```"):
            in_code, pending = not in_code, ""
            continue
        if not in_code:
            continue
        line = pending + line.strip()
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        if re.match(r"(shallowflow|jupytext|papermill) ", line):
            command, _, comment = line.partition("  #")
            out.append((command.strip(), comment.strip()))
    return out


def _box_commands(chapter: str) -> list[tuple[str, str]]:
    from shallowflow.site import rerun as sphinx_rerun

    html = sphinx_rerun.rerun_box(chapter)
    pre = re.search(r"<pre[^>]*>(.*?)</pre>", html, re.S)
    assert pre, f"{chapter}: the re-run box shows no commands"
    import html as h

    return _code_commands("```\n" + h.unescape(pre.group(1)) + "\n```")


def places():
    return DOCS + [f"re-run box {c}" for c in X.chapters() if c != "scorecard"]


def shown_commands(place: str) -> list[tuple[str, str, str | None]]:
    if place.startswith("re-run box "):
        chapter = place.removeprefix("re-run box ")
        return [(cmd, comment, chapter) for cmd, comment in _box_commands(chapter)]
    return [(cmd, comment, None) for cmd, comment in _code_commands((ROOT / place).read_text())]


def validate(cmd: str, tmp_path: Path, chapter: str | None = None) -> None:
    """Raise (X.ChapterError, SystemExit, ValueError, AssertionError) when the command would not run."""
    argv = shlex.split(cmd)
    tool, argv = argv[0], argv[1:]
    if tool == "jupytext":
        sources = [a for a in argv if a.endswith(".py")]
        assert sources and all((ROOT / a).exists() for a in sources), f"{sources} do not exist"
        return
    if tool == "papermill":  # in a re-run box: the names must be the chapter's parameters
        declared = X.parameters(chapter) if chapter else {}
        unknown = [argv[i + 1] for i, a in enumerate(argv) if a == "-p" and argv[i + 1] not in declared]
        assert chapter and not unknown, f"papermill -p names {unknown}, not parameters of {chapter}"
        return
    args = cli.parser().parse_args(cli._protect_values(argv))
    fn = getattr(args, "fn", None)
    name = getattr(fn, "__name__", "")
    if name == "_cmd_list":
        return
    if name == "_cmd_params":
        X.resolve(args.chapter)
        return
    if name == "_cmd_run":
        if args.all:
            assert not args.chapter and not args.p
            return
        chapter = X.resolve(args.chapter)
        if args.profile == "paper":
            assert (ROOT / "params" / "paper" / f"{chapter}.yml").exists(), \
                f"{chapter} has no paper profile: `--profile paper` would run the book's scale"
        X.prepare(chapter, args.profile, cli._overrides(args.p), root=tmp_path)
        return
    if name == "_cmd_sweep":
        if args.file:  # the reader's own file: its format is tested with the sweep module
            return
        chapter = X.resolve(args.chapter)
        grids = {n: cli.parse_value(v) for n, v in args.grid}
        fixed = cli._overrides(args.p)
        for point in itertools.product(*grids.values()):
            X.prepare(chapter, args.profile or "smoke", {**fixed, **dict(zip(grids, point))}, root=tmp_path)
        return
    raise AssertionError(f"unknown command {cmd!r}")


@pytest.mark.parametrize("place", places())
def test_every_shown_command_is_accepted_or_refused_as_it_says(place, tmp_path, monkeypatch):
    # the sources' scale is a cluster run: validated against a 128 GiB node's limits, as the limits tests do
    monkeypatch.setenv("SHALLOWFLOW_MEMORY_GB", "64")
    monkeypatch.setenv("SHALLOWFLOW_WORK_BUDGET", "1e16")
    commands = shown_commands(place)
    assert commands, f"{place} shows no command"
    wrong = []
    for cmd, comment, chapter in commands:
        try:
            validate(cmd, tmp_path, chapter)
            ok = "refused" not in comment
        except (X.ChapterError, SystemExit, AssertionError, ValueError) as e:
            ok = "refused" in comment and not isinstance(e, AssertionError)
            if not ok:
                wrong.append(f"{cmd}: {type(e).__name__}: {e}")
                continue
        if not ok:
            wrong.append(f"{cmd}: accepted, but the page says it is refused")
    assert not wrong, "\n".join(wrong)


def test_a_wrong_profile_or_parameter_in_a_shown_command_fails(tmp_path):
    with pytest.raises(AssertionError, match="no paper profile"):
        validate("shallowflow run orthogonal-inputs/toy --profile paper", tmp_path)
    with pytest.raises(X.ChapterError, match="widht"):
        validate("shallowflow run orthogonal-inputs/toy -p widht 20", tmp_path)
    with pytest.raises(SystemExit):
        validate("shallowflow run orthogonal-inputs/toy --profile papr", tmp_path)


def test_the_book_can_be_cited():
    import yaml

    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] and cff["title"] and cff["authors"] and len(cff["references"]) == 5
    assert "@misc{shallowflow2026" in (ROOT / "book" / "intro.md").read_text()
