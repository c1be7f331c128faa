"""Pure functions on dependency trees given as head lists.

A tree over n words is `heads: list[int]` of length n + 1: word i (1..n) has head `heads[i]`, 0 is the
artificial ROOT and `heads[0] == -1`. Partial trees (a parser's configuration) may hold -1 for words
not yet attached; the functions that need a complete tree say so.

The conventions follow spaCy's `nonproj.pyx`, whose tests also use plain head lists as fixtures.
"""
from __future__ import annotations

from collections.abc import Sequence

_UNATTACHED = -1


def children(heads: Sequence[int]) -> list[list[int]]:
    """The dependents of every node.

    Args:
        heads: head of each word, `heads[0] == -1`; -1 marks a word without a head.

    Returns:
        A list of length n + 1 whose entry h lists the dependents of h (0 = ROOT) in linear order.
    """
    kids: list[list[int]] = [[] for _ in heads]
    for dependent in range(1, len(heads)):
        if heads[dependent] != _UNATTACHED:
            kids[heads[dependent]].append(dependent)
    return kids


def roots(heads: Sequence[int]) -> list[int]:
    """The words attached to ROOT (UD requires exactly one).

    Args:
        heads: head of each word, `heads[0] == -1`.

    Returns:
        The words i >= 1 with `heads[i] == 0`, in linear order.
    """
    return [word for word in range(1, len(heads)) if heads[word] == 0]


def find_cycle(heads: Sequence[int]) -> list[int] | None:
    """A cycle in the head relation, if there is one.

    Each word is followed up its chain of heads at most once (words known to reach ROOT or an
    unattached word are marked done), so this takes O(n) time.

    Args:
        heads: head of each word, each in -1..n, `heads[0] == -1`; -1 (unattached) ends a chain.

    Returns:
        None if following heads from every word reaches ROOT or an unattached word; otherwise the
        words of one cycle, starting from its smallest word, each followed by its head:
        `[w, heads[w], heads[heads[w]], ...]`.
    """
    unvisited, on_path, done = 0, 1, 2
    state = [unvisited] * len(heads)
    for start in range(1, len(heads)):
        path = []
        word = start
        while word > 0 and state[word] == unvisited:
            state[word] = on_path
            path.append(word)
            word = heads[word]
        if word > 0 and state[word] == on_path:
            cycle = path[path.index(word):]
            smallest = cycle.index(min(cycle))
            return cycle[smallest:] + cycle[:smallest]
        for visited in path:
            state[visited] = done
    return None


def projective_order(heads: Sequence[int]) -> list[int]:
    """The words in the projective order of the tree (Nivre 2009, §3).

    The projective order <_G is the inorder traversal of the tree in which every node is placed
    between its left and its right dependents, each subtree in turn kept together. Sorting the words
    into this order makes every tree projective; it is the order the SWAP transition sorts the input
    into (Nivre 2009, "Non-Projective Dependency Parsing in Expected Linear Time", ACL-IJCNLP), and
    its oracle swaps s0 before s1 exactly when s0 <_G s1.

    The traversal is iterative: UD trees can be deep enough to exceed Python's recursion limit.

    Args:
        heads: a complete tree: every word's head in 0..n, no cycle, `heads[0] == -1`.

    Returns:
        The words 1..n in projective order (ROOT, always first, is left out).

    Raises:
        ValueError: some word is not reachable from ROOT (a cycle or an unattached word).
    """
    kids = children(heads)
    order: list[int] = []
    # Work list of (node, expand): expand a node into its left subtrees, itself, its right
    # subtrees; a node that is not to be expanded is emitted. Reversed, so the leftmost pops first.
    todo = [(0, True)]
    while todo:
        node, expand = todo.pop()
        if not expand:
            order.append(node)
            continue
        items = [(kid, True) for kid in kids[node]]
        items.insert(sum(kid < node for kid in kids[node]), (node, False))
        todo.extend(reversed(items))
    order.remove(0)
    if len(order) != len(heads) - 1:
        raise ValueError(f"not a tree: only {len(order)} of {len(heads) - 1} words reach ROOT")
    return order


def is_projective(heads: Sequence[int]) -> bool:
    """Whether the tree has no crossing arcs.

    A tree is projective exactly when every subtree covers a contiguous span of words, which is
    exactly when its projective order (an inorder traversal that keeps subtrees together) is the
    linear order 1..n.

    Args:
        heads: a complete tree: every word's head in 0..n, no cycle, `heads[0] == -1`.

    Returns:
        True if no two arcs cross (arcs from ROOT included).

    Raises:
        ValueError: the heads do not form a tree.
    """
    return projective_order(heads) == list(range(1, len(heads)))


def nonprojective_arcs(heads: Sequence[int]) -> list[int]:
    """The dependents whose arc is non-projective: some word between head and dependent is not
    dominated by the head (Nivre 2009's definition; a projective-only system cannot build these).

    Args:
        heads: a complete tree: every word's head in 0..n, no cycle, `heads[0] == -1`.

    Returns:
        The dependents d (1..n) of the non-projective arcs heads[d] -> d, in order.
    """
    def dominated(word: int, head: int) -> bool:
        while word not in (head, 0):
            word = heads[word]
        return word == head

    return [d for d in range(1, len(heads))
            if not all(dominated(k, heads[d]) for k in range(min(d, heads[d]) + 1, max(d, heads[d])))]
