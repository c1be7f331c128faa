"""Tree utilities on plain head lists (spaCy's nonproj tests use the same kind of fixture)."""
import itertools

import pytest
from hypothesis import given, settings

from parsers import trees
from tests.parsers_fixtures import CAT_HEADS, HEARING_HEADS, HEARING_PROJECTIVE_ORDER, random_trees


def crossing_arcs_reference(heads):
    """Projectivity by its definition: some pair of arcs (ROOT's included) crosses."""
    arcs = [tuple(sorted((heads[d], d))) for d in range(1, len(heads))]
    return not any(a < c < b < d for (a, b), (c, d) in itertools.permutations(arcs, 2))


def test_children_in_linear_order_per_node():
    assert trees.children(HEARING_HEADS) == [[3], [], [1, 5], [2, 4, 9], [8], [7], [], [6], [], []]


def test_children_skip_unattached_words():
    assert trees.children([-1, -1, 1, -1]) == [[], [2], [], []]


def test_roots():
    assert trees.roots(CAT_HEADS) == [3]
    assert trees.roots([-1, 0, 1, 0]) == [1, 3]
    assert trees.roots([-1, 2, 1]) == []


@pytest.mark.parametrize("heads, cycle", [
    (CAT_HEADS, None),
    (HEARING_HEADS, None),
    ([-1, 0, 3, 2], [2, 3]),            # 2 and 3 head each other
    ([-1, 0, 2], [2]),                  # a word is its own head
    ([-1, 4, 1, 0, 2, 3], [1, 4, 2]),   # longer, listed from its smallest word along the heads
    ([-1, -1, 1, -1], None),            # a partial tree: chains end at unattached words
])
def test_find_cycle(heads, cycle):
    assert trees.find_cycle(heads) == cycle


def test_projective_order_of_projective_tree_is_linear_order():
    assert trees.projective_order(CAT_HEADS) == [1, 2, 3, 4, 5, 6]


def test_projective_order_keeps_subtrees_together():
    # "on the issue" (5-7) follows its head "hearing" (2) before "is" (3): Nivre (2009), Fig. 1.
    assert trees.projective_order(HEARING_HEADS) == HEARING_PROJECTIVE_ORDER


def test_projective_order_handles_trees_deeper_than_the_recursion_limit():
    n = 5000
    chain = [-1] + list(range(2, n + 1)) + [0]   # each word headed by the next
    assert trees.projective_order(chain) == list(range(1, n + 1))


@pytest.mark.parametrize("heads", [[-1, 0, 3, 2], [-1, 0, -1]])
def test_projective_order_rejects_non_trees(heads):
    with pytest.raises(ValueError, match="not a tree"):
        trees.projective_order(heads)


def test_is_projective():
    assert trees.is_projective(CAT_HEADS)
    assert not trees.is_projective(HEARING_HEADS)
    assert not trees.is_projective([-1, 3, 0, 2])   # 1 <- 3 crosses ROOT -> 2


@settings(max_examples=300, deadline=None)
@given(random_trees())
def test_is_projective_matches_crossing_arcs_definition(heads):
    assert trees.is_projective(heads) == crossing_arcs_reference(heads)


def test_nonprojective_arcs_names_the_dependents_of_crossing_arcs():
    assert trees.nonprojective_arcs(CAT_HEADS) == []
    assert trees.nonprojective_arcs([-1, 3, 0, 2]) == [1]      # 3 -> 1 spans 2, which ROOT heads


@settings(max_examples=300, deadline=None)
@given(random_trees())
def test_a_tree_is_projective_exactly_when_no_arc_is_nonprojective(heads):
    assert trees.is_projective(heads) == (trees.nonprojective_arcs(heads) == [])
