"""The source's own words beside every verdict: each target quotes the claim it tests and the scope the source states
it under, and every quote is found verbatim (white space collapsed) in ``shared/seeds/`` on the line it names."""
import os

import pytest

from shallowflow import verdicts as C
from shallowflow.verdicts import quotes as Q


def test_a_quote_is_found_on_the_line_it_begins_and_nowhere_else(tmp_path):
    seed = tmp_path / "s.txt"
    seed.write_text("Title\n\nLemma 5. If p is at least\nlog n, the event holds.\nAnother line.\n")
    assert Q.quote_lines(seed, "If p is at least log n, the event holds.") == [3]
    assert Q.quote_lines(seed, "If  p is\tat least") == [3]  # white space runs are one space
    assert Q.quote_lines(seed, "If p is at least log n, the event always holds.") == []  # a word added: not verbatim
    assert Q.quote_lines(seed, "Another line.") == [5]


def test_a_misquote_and_a_wrong_line_are_refused(tmp_path, monkeypatch):
    (tmp_path / "main").mkdir()
    (tmp_path / "shared" / "seeds").mkdir(parents=True)
    (tmp_path / "shared" / "seeds" / "x.txt").write_text("We assume the inputs are orthogonal.\nThen the loss converges.\n")
    reg = {"sources": {"999": {"seed": "x.txt"}},
           "targets": {"999:T": {"claim": [{"line": 2, "text": "Then the loss converges."}],
                                 "scope": [{"line": 1, "text": "We assume the inputs are orthogonal."}],
                                 "checks": {"a": {"book": "pass"}}, "parts": [{"part": "converges", "checks": ["a"]}]},
                       "999:U": {"claim": [{"line": 1, "text": "Then the loss converges."}],
                                 "scope": [{"line": 1, "text": "We assume the inputs are orthonormal."}],
                                 "checks": {"b": {"book": "pass"}}, "parts": [{"part": "x", "checks": ["c"]}]},
                       "999:V": {"checks": {"d": {"book": "pass"}}}}}
    problems = Q.quote_problems(reg, root=tmp_path / "main", require=True)
    assert not [p for p in problems if p.startswith("999:T")]
    assert any("999:U: `claim:` quote begins on line 2" in p for p in problems)
    assert any("999:U: `scope:` quote not found verbatim" in p for p in problems)
    assert any("999:U: part 'x' names checks it does not have: ['c']" in p for p in problems)
    assert any("999:V quotes no `claim:`" in p for p in problems)
    assert any("999:V quotes no `scope:`" in p for p in problems)


def test_every_target_quotes_its_claim_and_scope_verbatim():
    seeds = Q.seeds_dir()
    if not seeds.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"the sources are not laid out beside the checkout ({seeds}): CI must have them")
        pytest.skip(f"the sources are not laid out beside this checkout ({seeds})")
    problems = Q.quote_problems(C.load_registry(), require=True)
    assert not problems, f"{len(problems)} quote problems:\n" + "\n".join(problems[:60])


def test_a_quote_shows_its_tex_typeset_never_raw():
    """The seeds' sentences carry TeX ($\\alpha = 10^{-3}$): shown beside a verdict, it is code, as the seed has it,
    and so is a lone dollar (tests/site finds no raw $ in rendered text)."""
    from shallowflow.verdicts.scorecard import quote_text_html

    got = quote_text_html("with $\\alpha = 10^{-3}$, a < b, $$F = 1$$ and $5")
    assert got == ('with <code>$\\alpha = 10^{-3}$</code>, a &lt; b, <code>$$F = 1$$</code> and <code>$</code>5')
