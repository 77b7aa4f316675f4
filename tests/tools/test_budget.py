"""Fair shares of the output limit, and cutting text to a share."""

from __future__ import annotations

from pi_web_tools.tools.budget import clip_to, fair_shares, utf8_length


def test_small_parts_get_all_they_need_and_the_rest_share_equally():
    """Max-min fairness: a part under the equal share keeps everything; the others split the rest."""
    assert fair_shares([10, 1000, 1000], 610) == [10, 300, 300]
    assert fair_shares([10, 20], 100) == [10, 20]
    assert fair_shares([5, 5], -3) == [0, 0]


def test_shares_never_exceed_the_budget():
    """Whatever the needs, the shares add up to at most the budget."""
    needs = [7, 300, 1, 90000, 45, 12000]
    for budget in (0, 1, 100, 5000, 100000):
        assert sum(fair_shares(needs, budget)) <= budget


def test_clip_cuts_a_long_line_by_characters_not_whole():
    """A line longer than the share is cut inside, never dropped."""
    assert clip_to("abcdef\nghi", 4, 10) == "abcd"
    assert clip_to("abc\ndef\nghi", 100, 2) == "abc\ndef"


def test_clip_never_splits_a_character():
    """A multi-byte character that does not fit is left out whole."""
    assert clip_to("aé€", 4, 1) == "aé"
    assert utf8_length(clip_to("😀" * 10, 9, 1)) == 8


def test_a_cut_window_ends_after_a_word_and_an_uncut_one_is_left_alone():
    from pi_web_tools.tools.budget import on_boundary

    assert on_boundary("the quick brown fo", cut=True) == "the quick brown "
    assert on_boundary("line one\nsecondline", cut=True) == "line one\n"
    assert on_boundary("the quick brown fo", cut=False) == "the quick brown fo"
    assert on_boundary("x" * 500, cut=True) == "x" * 500  # no boundary near: a hard cut
