"""The site: how the chapters' results look, and how the executed chapters become the book's web pages.

Nothing here computes a number or a verdict; it draws what the chapters computed and builds the book from it
(the executed notebooks under ``artifacts/runs/<edition>/`` and the claim records).

- :mod:`~shallowflow.site.plots` -- the figure types the chapters share (the book's theme, animations);
- :mod:`~shallowflow.site.build` -- the book on the executor: every chapter of an edition, then the
  scorecard, then the build report (:func:`run_book`), then the site with Sphinx's own execution off
  (:func:`build_site`); ``shallowflow run --all`` calls both;
- :mod:`~shallowflow.site.ext` -- the book's main Sphinx extension: each chapter's executed notebook
  as its page, the edition's banner, the ``{build-report}`` directive, the cost cells, links to the
  specification, the book's style sheet and script, and ``scorecard.json`` beside the site;
- :mod:`~shallowflow.site.rerun` -- the re-run box under each chapter's title (commands and every
  parameter, generated from the chapter's schema and profiles), the ``{rerun-index}`` directive,
  and the executed notebooks copied into the site;
- :mod:`~shallowflow.site.registry_pages` -- pages generated from the verdict registry: ``{errata}``,
  ``{coverage}``, ``{reproduction-report}``.

The three Sphinx extensions are listed in ``_config.yml``.  The site is the floor above the executor: it imports
the engine (:mod:`shallowflow.engine`, for the plots), the verdict machinery (:mod:`shallowflow.verdicts`), the
chapters' layout (:mod:`shallowflow.params.chapters`) and the executor (:mod:`shallowflow.executor`), and nothing
below it imports the site.  Importing this package imports none of its modules (the CLI needs
:mod:`~shallowflow.site.build` without Sphinx).
"""
