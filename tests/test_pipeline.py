"""The re-run pipeline without executing chapters: chapter discovery, parameters cells, profiles."""
import jupytext
import pytest

from shallowflow.run import cli
from shallowflow.verdicts import load_registry


def test_every_chapter_has_one_parsable_parameters_cell():
    """papermill must see every name the parameters cell assigns (it cannot parse '=' in comments)."""
    for chapter in cli.chapters():
        nb = jupytext.read(cli.book_dir() / f"{chapter}.py", fmt="py:percent")
        cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
        assert len(cells) == 1, f"{chapter}: {len(cells)} parameters cells"
        assigned = [line.split("=")[0].strip() for line in cells[0].source.splitlines()
                    if line and not line.startswith((" ", "#")) and "=" in line]
        declared = cli.declared_parameters(cli.to_notebook(chapter))
        assert list(declared) == assigned, chapter
        assert "profile" in declared, f"{chapter}: no 'profile' parameter"


def test_every_chapter_is_in_the_toc_and_has_smoke_parameters():
    toc = (cli.repo_root() / "_toc.yml").read_text()
    for chapter in cli.chapters():
        assert f"file: book/{chapter}\n" in toc, f"{chapter} is not in _toc.yml"
        assert (cli.repo_root() / "params" / "smoke" / f"{chapter}.yml").exists(), chapter


def test_profile_files_name_declared_parameters_only():
    for profile in ("smoke", "paper"):
        for path in (cli.repo_root() / "params" / profile).rglob("*.yml"):
            chapter = str(path.relative_to(cli.repo_root() / "params" / profile).with_suffix(""))
            declared = cli.declared_parameters(cli.to_notebook(chapter))
            values = cli.profile_parameters(chapter, profile)
            assert set(values) <= set(declared), (path, set(values) - set(declared))


def test_unknown_parameter_is_refused_before_execution(tmp_path):
    with pytest.raises(cli.ChapterError, match="unknown parameter.*'activation'.*its parameters are"):
        cli.execute("orthogonal-inputs/toy", overrides={"activation": "tanh"}, out_dir=tmp_path)
    assert not list(tmp_path.iterdir())


def test_bad_value_fails_fast_naming_the_parameter(tmp_path):
    with pytest.raises(cli.ChapterError, match="parameter 'width' = -3 is invalid"):
        cli.execute("orthogonal-inputs/toy", overrides={"width": -3}, out_dir=tmp_path)


def test_unknown_chapter_and_profile():
    with pytest.raises(cli.ChapterError, match="unknown chapter"):
        cli.resolve("no-such-chapter")
    with pytest.raises(cli.ChapterError, match="unknown profile"):
        cli.profile_parameters("orthogonal-inputs/toy", "huge")


def test_parse_value():
    assert cli.parse_value("60") == 60 and cli.parse_value("1e-3") == 1e-3
    assert cli.parse_value("[0, 1]") == [0, 1] and cli.parse_value("relu") == "relu"


def test_registry_chapters_exist():
    reg = load_registry()
    assert {"000", "001", "002", "003", "004"} <= set(reg["sources"])
    for key, entry in reg["targets"].items():
        chapters = {entry.get("chapter")} | {v.get("chapter") for v in (entry.get("checks") or {}).values()}
        for ch in chapters - {None}:
            assert (cli.repo_root() / f"{ch}.py").exists() or (cli.repo_root() / f"{ch}.md").exists(), (key, ch)
        for name, verdicts in (entry.get("checks") or {}).items():
            # the book scale decides, except a check its units cannot decide there (the decidability law: 0 or 1
            # gated cells of a share), which is registered undecided with the scale that would decide it
            assert verdicts.get("book") in ("pass", "fail") or (
                verdicts.get("book") == "undecided" and verdicts.get("cause") == "scale" and verdicts.get("decide")), \
                (key, name)
            assert verdicts.get("smoke") in ("pass", "fail", "undecided", "not-run"), (key, name)
