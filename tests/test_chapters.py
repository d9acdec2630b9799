"""The library mirrors the book: every chapter has its experiment module, whose schema declares
exactly the names of the chapter's parameters cell; the re-run box is generated from them."""
import pytest

from shallowflow.params import chapters
from shallowflow.site.rerun import rerun_box

CHAPTERS = chapters.all_chapters()


def test_chapters_are_found():
    assert "orthogonal-inputs/toy" in CHAPTERS and "scorecard" not in CHAPTERS


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_schema_declares_exactly_the_parameters_cell(chapter):
    schema, rules = chapters.schema(chapter)
    cell = [d.name for d in chapters.parameters_cell(chapter)]
    assert cell and cell[0] == "profile", f"{chapter}: the parameters cell must start with profile"
    assert set(cell) == set(schema), (f"{chapter}: parameters cell and {chapters.module_name(chapter)}.SCHEMA differ: "
                                      f"{sorted(set(cell) ^ set(schema))}")
    assert all(set(r.names) <= set(schema) for r in rules), f"{chapter}: a rule names an unknown parameter"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_rerun_box_lists_every_parameter_with_its_range(chapter):
    box = rerun_box(chapter)
    for d in chapters.parameters_cell(chapter):
        assert f"<code>{d.name}</code>" in box
    assert f"shallowflow run {chapter} --profile smoke" in box and "papermill chapter.ipynb" in box


def test_module_naming_rule_and_missing_module():
    assert chapters.module_name("book/orthogonal-inputs/high-dim.py") == "shallowflow.experiments.orthogonal_inputs.high_dim"
    with pytest.raises(ImportError, match="no-such-part/x"):
        chapters.module("no-such-part/x")


def test_parameters_cell_values_are_never_executed_code(tmp_path, monkeypatch):
    (tmp_path / "book" / "p").mkdir(parents=True)
    (tmp_path / "book" / "p" / "c.py").write_text(
        '# %% tags=["parameters"]\nprofile = "book"  # which\nseeds = list(range(3))  # runs\n'
        'evil = __import__("os").getcwd()  # not a literal\n')
    monkeypatch.setenv("SHALLOWFLOW_ROOT", str(tmp_path))
    with pytest.raises((ValueError, NameError)):
        chapters.defaults("p/c")
    (tmp_path / "book" / "p" / "c.py").write_text(
        '# %% tags=["parameters"]\nprofile = "book"  # which\nseeds = list(range(3))  # runs\n')
    assert chapters.defaults("p/c") == {"profile": "book", "seeds": [0, 1, 2]}
    assert chapters.parameters_cell("p/c")[1].comment == "runs"


def test_every_registered_function_has_a_docstring():
    """The scorecard links each target to its function's API entry; autodoc documents only what has a docstring."""
    import importlib

    from shallowflow.verdicts import load_registry

    missing = []
    for entry in load_registry()["targets"].values():
        name = entry.get("function")
        if name:
            module, attr = name.rsplit(".", 1)
            obj = getattr(importlib.import_module(module), attr)
            if not (obj.__doc__ or "").strip():
                missing.append(name)
    assert not missing, f"registry functions without a docstring (no API entry): {sorted(set(missing))}"
