"""The site modules moved into ``shallowflow.site``: every importer uses the new names (the old modules are gone,
so nothing can drift back to them), and the book's pages still resolve references by the old names
(``shallowflow.site.ext.MOVED``)."""
import importlib

import pytest

from shallowflow.site.ext import MOVED, moved_target


def test_moved_target_renames_only_the_moved_modules():
    assert moved_target("shallowflow.build.longest_first") == "shallowflow.site.build.longest_first"
    assert moved_target("shallowflow.sphinx_ext") == "shallowflow.site.ext"
    assert moved_target("shallowflow.buildx.f") is None  # a prefix of a name is not the module
    assert moved_target("shallowflow.site.build.run_book") is None
    assert moved_target("shallowflow.engine.metrics.share_interval") is None


@pytest.mark.parametrize("old,new", sorted(MOVED.items()))
def test_every_new_name_imports_and_no_old_module_is_left(old, new):
    importlib.import_module(new)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)
