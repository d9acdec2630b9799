"""The site modules moved into ``shallowflow.site``: the old import names that something still imports re-export
the new modules, and the book's pages resolve references by the old names (``shallowflow.site.ext.MOVED``)."""
import importlib

import pytest

from shallowflow.site.ext import MOVED, moved_target


def test_moved_target_renames_only_the_moved_modules():
    assert moved_target("shallowflow.build.longest_first") == "shallowflow.site.build.longest_first"
    assert moved_target("shallowflow.sphinx_ext") == "shallowflow.site.ext"
    assert moved_target("shallowflow.buildx.f") is None  # a prefix of a name is not the module
    assert moved_target("shallowflow.site.build.run_book") is None
    assert moved_target("shallowflow.metrics.share_interval") is None


@pytest.mark.parametrize("old,new", sorted(MOVED.items()))
def test_every_new_name_imports_and_every_kept_old_name_re_exports_it(old, new):
    module = importlib.import_module(new)
    try:
        alias = importlib.import_module(old)
    except ModuleNotFoundError:
        assert old == "shallowflow.sphinx_registry"  # the only one nothing imported any more
        return
    public = [n for n in vars(module) if not n.startswith("_")]
    assert public and all(getattr(alias, n) is getattr(module, n) for n in public), old
    assert new in alias.__doc__  # the one-line docstring says where the code lives
