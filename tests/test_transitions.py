"""Transition systems: moves as ops, legality, the static oracles step by step, and the dynamic
oracle against an exhaustive search."""
import random
import time

import pytest
from hypothesis import given, settings, strategies as st

from parsers import trees
from parsers.transitions import (
    DEFAULT_SYSTEM, SYSTEMS, Action, Configuration, Op, OpKind, get_system)
from stackparse.errors import UserError
from tests.parsers_fixtures import (
    CAT_DEPRELS, CAT_HEADS, HEARING_DEPRELS, HEARING_HEADS, LABELS, ewt, random_trees)

NON_ROOT_LABELS = [label for label in LABELS if label != "root"]
NON_PROJECTIVE_SYSTEMS = {"arc-swap", "arc-hybrid-swap"}      # those that derive every tree


def config(stack, buffer, n, arcs=()):
    """A configuration over n words with the given (head, dependent, label) arcs."""
    heads, deprels = [-1] * (n + 1), [None] * (n + 1)
    for head, dependent, label in arcs:
        heads[dependent], deprels[dependent] = head, label
    return Configuration(tuple(stack), tuple(buffer), tuple(heads), tuple(deprels))


def names(system, action_ids):
    return [system.actions[action_id].name for action_id in action_ids]


def derive(system, heads, deprels):
    """Follow the oracle to the end, checking that each action is among `legal`; return the names
    and the final configuration."""
    c = system.initial(len(heads) - 1)
    taken = []
    while not system.is_terminal(c):
        action_id = system.oracle(c, heads, deprels)
        assert action_id in system.legal(c), (system.actions[action_id].name, c)
        taken.append(system.actions[action_id].name)
        c = system.apply(c, action_id)
    return taken, c


# --- actions -------------------------------------------------------------------------------------

def test_action_names():
    assert Action("SHIFT").name == "SHIFT"
    assert Action("LEFT", "nsubj").name == "LEFT-nsubj"


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_actions_one_per_label_no_left_root(name):
    system = get_system(name, LABELS)
    action_names = names(system, range(len(system.actions)))
    assert len(set(action_names)) == len(action_names)
    assert "RIGHT-root" in action_names and "LEFT-root" not in action_names
    assert {f"LEFT-{label}" for label in NON_ROOT_LABELS} <= set(action_names)
    assert ("SWAP" in action_names) == (name in NON_PROJECTIVE_SYSTEMS)
    for index, action_name in enumerate(action_names):
        assert system.action_index(action_name) == index


def test_action_ids_follow_label_order():
    system = get_system("arc-standard", ["root", "b", "a"])
    assert names(system, range(len(system.actions))) == [
        "LEFT-b", "LEFT-a", "RIGHT-b", "RIGHT-a", "RIGHT-root", "SHIFT"]


def test_registry():
    assert DEFAULT_SYSTEM == "arc-hybrid-swap"
    assert set(SYSTEMS) == {"arc-standard", "arc-hybrid", "arc-swap", "arc-hybrid-swap"}
    with pytest.raises(UserError, match="unknown transition system 'arc-eager'; valid transition "
                                        "systems: arc-hybrid, arc-hybrid-swap, arc-standard, arc-swap"):
        get_system("arc-eager", LABELS)


@pytest.mark.parametrize("labels, problem", [(["det", "nsubj"], "must include 'root'"),
                                             (["root", "det", "det"], "duplicate")])
def test_bad_label_sets(labels, problem):
    with pytest.raises(ValueError, match=problem):
        get_system("arc-standard", labels)


# --- ops and apply -------------------------------------------------------------------------------

MID = config(stack=(0, 1, 2), buffer=(3, 4), n=4)


@pytest.mark.parametrize("name, action, ops", [
    ("arc-standard", "SHIFT", [Op(OpKind.POP_BUFFER), Op(OpKind.PUSH_STACK, 3)]),
    ("arc-standard", "LEFT-det", [Op(OpKind.POP_STACK), Op(OpKind.POP_STACK),
                                  Op(OpKind.ATTACH, 2, 1, "det"), Op(OpKind.PUSH_STACK, 2)]),
    ("arc-standard", "RIGHT-obj", [Op(OpKind.POP_STACK), Op(OpKind.POP_STACK),
                                   Op(OpKind.ATTACH, 1, 2, "obj"), Op(OpKind.PUSH_STACK, 1)]),
    ("arc-swap", "SWAP", [Op(OpKind.POP_STACK), Op(OpKind.POP_STACK),
                          Op(OpKind.PUSH_STACK, 2), Op(OpKind.PUSH_BUFFER, 1)]),
    ("arc-hybrid", "LEFT-det", [Op(OpKind.POP_STACK), Op(OpKind.POP_BUFFER),
                                Op(OpKind.ATTACH, 3, 2, "det"), Op(OpKind.PUSH_BUFFER, 3)]),
    ("arc-hybrid", "RIGHT-obj", [Op(OpKind.POP_STACK), Op(OpKind.POP_STACK),
                                 Op(OpKind.ATTACH, 1, 2, "obj"), Op(OpKind.PUSH_STACK, 1)]),
])
def test_ops(name, action, ops):
    system = get_system(name, LABELS)
    assert system.ops(MID, system.action_index(action)) == ops


@pytest.mark.parametrize("name, action, after", [
    ("arc-standard", "SHIFT", config((0, 1, 2, 3), (4,), 4)),
    ("arc-standard", "LEFT-det", config((0, 2), (3, 4), 4, [(2, 1, "det")])),
    ("arc-standard", "RIGHT-obj", config((0, 1), (3, 4), 4, [(1, 2, "obj")])),
    ("arc-swap", "SWAP", config((0, 2), (1, 3, 4), 4)),
    ("arc-hybrid", "LEFT-det", config((0, 1), (3, 4), 4, [(3, 2, "det")])),
])
def test_apply_folds_the_ops(name, action, after):
    system = get_system(name, LABELS)
    assert system.apply(MID, system.action_index(action)) == after
    assert MID == config((0, 1, 2), (3, 4), 4)   # configurations are values


def test_apply_rejects_illegal_actions():
    system = get_system("arc-swap", LABELS)
    with pytest.raises(ValueError, match="RIGHT-root is not legal"):
        system.apply(MID, system.action_index("RIGHT-root"))


# --- legality ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_legal_at_start_is_shift_only(name):
    system = get_system(name, LABELS)
    assert names(system, system.legal(system.initial(3))) == ["SHIFT"]


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_root_arc_only_as_the_last_move(name):
    system = get_system(name, LABELS)
    last = config((0, 2), (), 3, [(2, 1, "nsubj"), (2, 3, "obj")])
    assert names(system, system.legal(last)) == ["RIGHT-root"]
    # With words still in the buffer, a second root could follow: no arc from ROOT yet.
    early = config((0, 1), (2, 3), 3)
    assert not any(name.startswith("RIGHT") for name in names(system, system.legal(early)))


def test_legal_arc_standard_and_swap():
    standard, swap = get_system("arc-standard", LABELS), get_system("arc-swap", LABELS)
    arcs_between_words = [f"{d}-{label}" for d in ("LEFT", "RIGHT") for label in NON_ROOT_LABELS]
    assert names(standard, standard.legal(MID)) == arcs_between_words + ["SHIFT"]
    assert names(swap, swap.legal(MID)) == arcs_between_words + ["SWAP", "SHIFT"]
    # SWAP only for words in their original order: a swapped pair cannot be swapped back.
    swapped = config((0, 2, 1), (3,), 3)
    assert "SWAP" not in names(swap, swap.legal(swapped))


def test_legal_arc_hybrid():
    system = get_system("arc-hybrid", LABELS)
    assert names(system, system.legal(config((0,), (1, 2), 2))) == ["SHIFT"]   # ROOT is no dependent
    assert names(system, system.legal(config((0, 1, 2), (), 2))) == [
        f"RIGHT-{label}" for label in NON_ROOT_LABELS]


@pytest.mark.parametrize("name", sorted(SYSTEMS))
@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 10), seed=st.integers(0, 2 ** 32 - 1))
def test_any_legal_walk_ends_in_a_single_rooted_tree(name, n, seed):
    """The parser can never get stuck nor loop, and always builds a UD-valid tree; `legal` (a list kept
    per pattern of valid moves) is at every step exactly the actions `is_legal` allows."""
    system, rng = get_system(name, LABELS), random.Random(seed)
    c = system.initial(n)
    for _ in range(2 * n + n * n):   # SWAP bounds a derivation to O(n^2) moves (Nivre 2009)
        if system.is_terminal(c):
            break
        legal = system.legal(c)
        assert legal == [a for a in range(len(system.actions)) if system.is_legal(c, a)]
        c = system.apply(c, rng.choice(legal))
    assert system.is_terminal(c)
    heads = list(c.heads)
    if n:
        assert len(trees.roots(heads)) == 1 and trees.find_cycle(heads) is None
        assert [c.deprels[w] == "root" for w in range(1, n + 1)] == [h == 0 for h in heads[1:]]


# --- oracles step by step ------------------------------------------------------------------------

CAT_ARC_STANDARD = [
    "SHIFT", "SHIFT",          # [0 The cat]
    "LEFT-det",                # The <- cat
    "SHIFT", "LEFT-nsubj",     # cat <- sat
    "SHIFT", "SHIFT", "SHIFT",  # [0 sat on the mat]
    "LEFT-det", "LEFT-case",   # the <- mat, on <- mat
    "RIGHT-obl",               # sat -> mat
    "RIGHT-root",              # ROOT -> sat, last
]


@pytest.mark.parametrize("name", ["arc-standard", "arc-swap"])
def test_arc_standard_oracle_on_projective_tree(name):
    system = get_system(name, LABELS)
    taken, final = derive(system, CAT_HEADS, CAT_DEPRELS)
    assert taken == CAT_ARC_STANDARD
    assert list(final.heads) == CAT_HEADS and list(final.deprels[1:]) == CAT_DEPRELS[1:]


def test_arc_hybrid_oracle_on_projective_tree():
    system = get_system("arc-hybrid", LABELS)
    taken, final = derive(system, CAT_HEADS, CAT_DEPRELS)
    assert taken == [
        "SHIFT", "LEFT-det",       # The <- cat (b0)
        "SHIFT", "LEFT-nsubj",     # cat <- sat (b0)
        "SHIFT", "SHIFT", "SHIFT",  # [0 sat on the], mat in the buffer
        "LEFT-det", "LEFT-case",   # the <- mat, on <- mat
        "SHIFT", "RIGHT-obl",      # sat -> mat
        "RIGHT-root",
    ]
    assert list(final.heads) == CAT_HEADS


def test_lazy_swap_oracle_on_non_projective_tree():
    """Nivre, Kuhlmann & Hall (2009): the maximal projective components here are {A hearing},
    {is}, {scheduled}, {on the issue}, {today}, {.}; "on the issue" is built before it is swapped
    past "scheduled" and "is", with two swaps where the eager oracle needs more."""
    system = get_system("arc-swap", LABELS)
    taken, final = derive(system, HEARING_HEADS, HEARING_DEPRELS)
    assert taken == [
        "SHIFT", "SHIFT", "LEFT-det",          # A <- hearing
        "SHIFT", "SHIFT",                      # [0 hearing is scheduled]
        "SHIFT",                               # on: s0 <_G s1, but b0 "the" is in on's component
        "SHIFT", "SHIFT", "LEFT-det",          # the <- issue
        "RIGHT-obj",                           # on -> issue: component {on the issue} done
        "SWAP",                                # scheduled back to the buffer (b0 today: other MPC)
        "SWAP",                                # is back to the buffer
        "RIGHT-nmod",                          # hearing -> on
        "SHIFT", "LEFT-nsubj",                 # hearing <- is
        "SHIFT", "SHIFT", "RIGHT-obl",         # scheduled -> today
        "RIGHT-xcomp",                         # is -> scheduled
        "SHIFT", "RIGHT-punct",                # is -> .
        "RIGHT-root",
    ]
    assert list(final.heads) == HEARING_HEADS and list(final.deprels[1:]) == HEARING_DEPRELS[1:]


@pytest.mark.parametrize("name", ["arc-standard", "arc-hybrid"])
def test_projective_systems_cannot_derive_non_projective_trees(name):
    system = get_system(name, LABELS)
    with pytest.raises(ValueError, match="no move .* leads to the gold tree"):
        system.oracle_sequence(HEARING_HEADS, HEARING_DEPRELS)


def test_oracle_rejects_root_label_misuse_and_unknown_labels():
    system = get_system("arc-swap", LABELS)
    with pytest.raises(ValueError, match="'root' goes with head 0"):
        system.oracle_sequence([-1, 2, 0], ["", "root", "root"])
    with pytest.raises(ValueError, match="'amod' is not one of the system's labels"):
        system.oracle_sequence([-1, 2, 0], ["", "amod", "root"])


def test_oracle_sequence_is_the_derivation():
    system = get_system("arc-swap", LABELS)
    assert names(system, system.oracle_sequence(HEARING_HEADS, HEARING_DEPRELS)) == \
        derive(system, HEARING_HEADS, HEARING_DEPRELS)[0]


@st.composite
def labeled_trees(draw):
    heads = draw(random_trees())
    deprels = [""] + ["root" if head == 0 else draw(st.sampled_from(NON_ROOT_LABELS))
                      for head in heads[1:]]
    return heads, deprels


@pytest.mark.parametrize("name", sorted(SYSTEMS))
@settings(max_examples=150, deadline=None)
@given(tree=labeled_trees())
def test_oracle_takes_legal_actions_and_builds_the_gold_tree(name, tree):
    heads, deprels = tree
    if name not in NON_PROJECTIVE_SYSTEMS and not trees.is_projective(heads):
        return   # arc-standard and arc-hybrid only derive projective trees
    _, final = derive(get_system(name, LABELS), heads, deprels)
    assert list(final.heads) == heads and list(final.deprels[1:]) == deprels[1:]


# --- the whole EWT training set ------------------------------------------------------------------

def test_oracles_reproduce_every_ewt_train_tree():
    """The swap systems derive every tree of EWT train, the projective systems every projective one.

    `apply` checks that each oracle action is legal. The counts pin the mirror (its checksum is
    pinned too) and the oracles: arc-swap's lazy oracle swaps 428 times, where the eager oracle of
    Nivre (2009) would swap 2113 times, as arc-hybrid-swap's eager oracle does.
    """
    sentences = ewt("train")
    start = time.perf_counter()
    labels = sorted({deprel for sentence in sentences for deprel in sentence.deprels[1:]})
    derived, swaps = {}, dict.fromkeys(SYSTEMS, 0)
    for name in SYSTEMS:
        system = get_system(name, labels)
        derived[name] = 0
        for sentence in sentences:
            heads, deprels = sentence.heads, sentence.deprels
            if name not in NON_PROJECTIVE_SYSTEMS and not trees.is_projective(heads):
                continue
            c = system.initial(len(heads) - 1)
            while not system.is_terminal(c):
                action_id = system.oracle(c, heads, deprels)
                swaps[name] += system.actions[action_id].transition == "SWAP"
                c = system.apply(c, action_id)
            assert list(c.heads) == heads and list(c.deprels[1:]) == deprels[1:], \
                f"{name}: {sentence.path}:{sentence.line}"
            derived[name] += 1
    print(f"EWT train oracles: {derived}, {swaps} swaps, {time.perf_counter() - start:.1f} s")
    non_projective = len(sentences) - derived["arc-standard"]
    assert (len(sentences), non_projective) == (12544, 288)
    assert (swaps["arc-swap"], swaps["arc-hybrid-swap"]) == (428, 2113)
    assert derived["arc-hybrid"] == derived["arc-standard"]
    assert derived["arc-swap"] == derived["arc-hybrid-swap"] == len(sentences)


# --- the dynamic oracle --------------------------------------------------------------------------

def least_loss(system, config, heads, memo):
    """Exhaustive search: the fewest gold heads missed by any tree reachable from `config`."""
    if config not in memo:
        if system.is_terminal(config):
            memo[config] = sum(config.heads[w] != heads[w] for w in range(1, len(heads)))
        else:
            memo[config] = min(least_loss(system, system.apply(config, a), heads, memo)
                               for a in system.legal(config))
    return memo[config]


@pytest.mark.parametrize("name", ["arc-hybrid", "arc-hybrid-swap"])
@settings(max_examples=40, deadline=None)
@given(heads=random_trees(max_words=6), seed=st.integers(0, 2 ** 32 - 1))
def test_dynamic_oracle_is_exact_on_projective_trees(name, heads, seed):
    """From the configurations of a random walk, the dynamic oracle's actions are exactly those
    after which an exhaustive search still reaches the best tree (Goldberg & Nivre 2013: arc-hybrid
    is arc-decomposable). Labels all right, so that only attachment counts; the search is over
    arc-hybrid's moves, as SWAP is never taught on a projective tree."""
    if not trees.is_projective(heads):
        return
    deprels = [""] + ["root" if head == 0 else "dep" for head in heads[1:]]
    search, system = get_system("arc-hybrid", ["root", "dep"]), get_system(name, ["root", "dep"])
    rng, memo = random.Random(seed), {}
    c = system.initial(len(heads) - 1)
    while not system.is_terminal(c):
        legal = [a for a in search.legal(c)]
        after = {a: least_loss(search, search.apply(c, a), heads, memo) for a in legal}
        best = min(after.values())
        optimal = system.optimal(c, heads, deprels)
        assert {system.actions[a].name for a in optimal} == \
            {search.actions[a].name for a in legal if after[a] == best}, c
        c = search.apply(c, rng.choice(legal))


@pytest.mark.parametrize("name", ["arc-hybrid", "arc-hybrid-swap"])
@settings(max_examples=60, deadline=None)
@given(tree=labeled_trees())
def test_dynamic_oracle_contains_the_static_oracle_and_labels_count(name, tree):
    """Along the static oracle's derivation of a projective tree, the static action is optimal, and
    an arc with the right head but another label is not."""
    heads, deprels = tree
    if not trees.is_projective(heads):
        return
    system = get_system(name, LABELS)
    c = system.initial(len(heads) - 1)
    while not system.is_terminal(c):
        action_id = system.oracle(c, heads, deprels)
        optimal = system.optimal(c, heads, deprels)
        assert action_id in optimal
        action = system.actions[action_id]
        if action.label is not None:
            assert [system.actions[a].name for a in optimal if system.actions[a].transition == action.transition] \
                == [action.name]
        c = system.apply(c, action_id)


def test_dynamic_oracle_refuses_what_it_cannot_do():
    with pytest.raises(ValueError, match="arc-standard has no dynamic oracle"):
        get_system("arc-standard", LABELS).optimal(config((0,), (1, 2, 3), 3), CAT_HEADS[:4], CAT_DEPRELS[:4])
    system = get_system("arc-hybrid-swap", LABELS)
    with pytest.raises(ValueError, match="needs a projective gold tree"):
        system.optimal(system.initial(len(HEARING_HEADS) - 1), HEARING_HEADS, HEARING_DEPRELS)
