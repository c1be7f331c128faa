"""The stack-LSTM parser of Dyer et al. (2015), "Transition-Based Dependency Parsing with Stack
Long Short-Term Memory", with the character-based word representations of Ballesteros et al. (2015).

The model only scores. A `TransitionSystem` says which actions are legal and what each does, as a
list of primitive `Op`s; the model replays the same ops on its own persistent structures:

    stack, buffer, action history   persistent stack-LSTMs (`stackparse.StackLSTM`) whose payload
                                    is the word index, so pop is free and old versions stay valid
    word representations            one vector per word, replaced on ATTACH by the composition

Equations (numbers as in Dyer et al. 2015, §3):
    token      x_i = ReLU(V [w_i; t_i; c_i; w~_i] + b)          learned word, UPOS, char BiLSTM,
                                                               optional fixed pretrained vector (§3.3);
                                                               without the tagger (Dyer et al.)
    state      p_t = ReLU(W [s_t; b_t; a_t] + d)               (§3.1)
    action     p(z | p_t) = softmax over the legal actions of g_z . p_t + q_z     (eq. 1)
    compose    c = tanh(U [h; d; r] + e)                       head, dependent, relation (§3.4)
The tagger (on by default, `tagger`): the sentence encoder's first layer is a BiLSTM over the tokens,
without their tags, whose vectors e_i score the tags, and the parser reads them with a tag:
    token      x_i = ReLU(V [w_i; c_i; w~_i] + b)
    tagger     e_i = BiLSTM(x)_i,   p(UPOS_i) = softmax(A e_i + a),   p(XPOS_i) likewise
    parser in  [e_i; t_i], t_i the embedding of the predicted UPOS (or of the input's: `parse`)
so that the parser's encoder is trained by both losses (stack-propagation, Zhang & Weiss 2016) and
text without tags parses on the tagger's tags. Training may mix gold and predicted tags (`gold_tags`).
Two common extensions, on by default (`context_layers=0, top_features=False` give Dyer et al.'s
model exactly): a BiLSTM over the sentence contextualises x_i before it enters the stack and
buffer, and the parser state also sees the vectors of the top items s0, s1 and b0.

Training uses word dropout (unknown-word training, Kiperwasser & Goldberg 2016: a word becomes UNK
with probability alpha / (alpha + count)) and, after `explore_after` epochs, exploration with a
dynamic oracle (Ballesteros et al. 2016; see `loss`), its actions drawn ahead by the numpy engine of
`parsers.inference` (`explore_every`). The sentence encoder takes a whole batch of sentences as DyNet
batches (an element per word: `_Batch`, `bilstm`); the transitions advance the batch's sentences in
lockstep, and DyNet's autobatching computes each step's scores for all of them at once (`parsers.inference`
decodes greedily in numpy).
"""
from __future__ import annotations

import heapq
import itertools
import warnings
from dataclasses import dataclass
from typing import NamedTuple

import dynet as dy
import numpy as np

from parsers import trees
from parsers.transitions import DEFAULT_SYSTEM, SYSTEMS, Configuration, OpKind, TransitionSystem, perform
from parsers.vocab import Vocab
from stackparse.config import SettingError, check, setting
from stackparse.errors import UserError
from stackparse.memories import StackLSTM, StackState


POSITIVE = {"min": 1}


@dataclass(frozen=True)
class ParserModelConfig:
    """Settings of the parser model (sizes follow Dyer et al. 2015 where they give them), saved in its
    model directory. The transition system is the model's: it fixes the actions the model scores."""
    system: str = setting(DEFAULT_SYSTEM, "transition system: arc-hybrid-swap or arc-swap (any tree), "
                          "arc-hybrid or arc-standard (projective trees)", choices=SYSTEMS)
    word_dim: int = setting(100, "learned word embedding dimension", **POSITIVE)
    upos_dim: int = setting(25, "UPOS embedding dimension", **POSITIVE)
    char_dim: int = setting(32, "character embedding dimension", **POSITIVE)
    char_hidden: int = setting(50, "character BiLSTM units per direction, 0 = no character model", min=0)
    vectors: str = setting("", "pretrained word vectors, word2vec / fastText text format, fixed in training; "
                               "several files joined by commas are read side by side (`corpus get en-glove` and "
                               "`corpus get en-lexicon` build English ones)")
    vectors_limit: int = setting(1_000_000, "keep this many (most frequent) words of each file of vectors",
                                 **POSITIVE)
    token_dim: int = setting(100, "token vector dimension", **POSITIVE)
    context_layers: int = setting(1, "BiLSTM layers over the sentence, 0 = Dyer et al. exactly", min=0)
    context_dim: int = setting(50, "units per direction of the sentence BiLSTM (stack items are twice as "
                               "wide)", **POSITIVE)
    lstm_dim: int = setting(100, "stack-LSTM units (Dyer et al.: 100; measured against 200 on dev: BENCHMARKS.md)",
                            **POSITIVE)
    lstm_layers: int = setting(1, "stack-LSTM layers (Dyer et al.: 2; one measured as good on dev epoch for epoch, "
                               "and faster to train and to parse: BENCHMARKS.md)", **POSITIVE)
    action_dim: int = setting(20, "action embedding dimension", **POSITIVE)
    rel_dim: int = setting(20, "relation embedding dimension", **POSITIVE)
    state_dim: int = setting(100, "parser state dimension", **POSITIVE)
    top_features: bool = setting(True, "the parser state also sees s0, s1 and b0 (off: Dyer et al.)")
    tagger: bool = setting(True, "predict UPOS (and XPOS where the treebank has them) from the sentence encoder, "
                           "trained jointly, and parse on those tags when the input has none; off: the parser "
                           "reads the input's UPOS (Dyer et al.), which must then be there")
    tagger_dim: int = setting(100, "units per direction of the tagger's BiLSTM, the sentence encoder's first layer",
                              **POSITIVE)
    tag_reading: str = setting("best", "how the parser reads the tags the tagger predicts: the embedding of its "
                               "best tag; the embedding expected under its distribution over the tags (a "
                               "doubtful word then reads a mix of its likely tags; gradients reach the tagger "
                               "where it trains on predicted tags); or none, the unknown tag's embedding, so that "
                               "the parser relies on the sentence encoder alone where no tags are given (train "
                               "with gold_tags below 1 so that it learns to)", choices=("best", "expected", "none"))

    def validate(self) -> None:
        check(self)


@dataclass(frozen=True)
class ParserTrainingConfig:
    """How the parser trains (not saved with the model: parsing never uses it)."""
    word_dropout: float = setting(0.25, "alpha of word dropout (p(UNK) = alpha / (alpha + count)), 0 = off",
                                  min=0)
    dropout: float = setting(0.2, "dropout on token vectors and the parser state", min=0, max=1, max_open=True)
    explore_after: int = setting(1, "training with exploration (arc-hybrid systems): epochs of static-oracle "
                                 "training, then the parser follows its own sampled actions and learns the "
                                 "dynamic oracle's; -1 = never", min=-1)
    explore_alpha: float = setting(1.0, "exploration draws actions with probability p^alpha (renormalised): "
                                   "above 1 follows the model's best guess more often", min=0, min_open=True)
    explore_every: int = setting(20, "exploration's actions drawn ahead by the numpy engine (no dropout), from "
                                 "weights read every N updates: faster epochs, as good epoch for epoch on dev "
                                 "(BENCHMARKS.md); 0 = drawn from each step's scores in the training graph, dropout "
                                 "on (Ballesteros et al. as written)", min=0)
    explore_process: bool = setting(False, "draw exploration's roll-outs (`explore_every`) in a second process, on "
                                    "another core, while this one trains on the ones drawn before: roll-outs from "
                                    "weights up to twice explore_every updates old; off: drawn here, between updates")
    tag_weight: float = setting(1.0, "weight of the tagger's loss (UPOS and XPOS, summed over words) beside the "
                                "parser's (summed over transitions)", min=0)
    gold_tags: float = setting(1.0, "share of training sentences whose parser reads the gold UPOS; the others read "
                               "the tagger's own predictions, as when parsing text without tags (1: chosen on dev, "
                               "BENCHMARKS.md)", min=0, max=1)
    teachers: str = setting("", "model directories, separated by commas, of parsers trained on the same treebank "
                            "and system whose ensemble teaches this one (distillation, Liu et al. 2018: "
                            "parsers.distillation): the student learns their action and tag distributions on the "
                            "oracle's path and on paths they sample, which replace its own exploration "
                            "(explore_after -1); \"\" = none")
    distill: float = setting(0.5, "with teachers: weight of their distributions beside the gold action and tags on "
                             "the oracle's path (1 = theirs alone)", min=0, max=1)
    teacher_samples: int = setting(1, "with teachers: paths they sample per sentence, drawn once before training; "
                                   "each epoch a sentence follows the oracle's path or one of these, with equal "
                                   "chances", min=0)
    teacher_temperature: float = setting(1.0, "with teachers: their distributions are taught raised to 1/T, "
                                         "renormalised: above 1 softer (teachers trained on the same sentences are "
                                         "nearly sure of them), 1 = as they are", min=0, min_open=True)
    tag_noise: float = setting(0.0, "share of the gold UPOS the parser reads in training that are replaced by the "
                               "tagger's best other tag, so that it learns what the tagger's mistakes look like "
                               "(a cheap stand-in for jackknifing; measured no better on its own tags, worse on gold "
                               "ones: BENCHMARKS.md)", min=0, max=1)

    def validate(self, model: ParserModelConfig) -> None:
        """Check the settings, that exploring has a dynamic oracle in the model's system, and that a parser that
        reads no tag where the tagger tags is trained to parse so."""
        check(self)
        system = model.system
        if self.explore_after >= 0 and not SYSTEMS[system].dynamic_oracle:
            with_oracle = ", ".join(name for name, s in SYSTEMS.items() if s.dynamic_oracle)
            raise SettingError("explore_after", f"needs a system with a dynamic oracle ({with_oracle}), not "
                               f"{system}; -1 trains with the static oracle alone")
        if self.teachers and self.explore_after >= 0:
            raise SettingError("explore_after", "must be -1 with teachers: the paths they sample replace the "
                               "parser's own exploration")
        if model.tagger and model.tag_reading == "none" and self.gold_tags == 1:
            raise SettingError("gold_tags", "must be below 1 with tag_reading none: the parser must see sentences "
                               "without tags in training to parse text without them")


def read_vectors(path: str, limit: int) -> tuple[list[str], np.ndarray]:
    """Words and vectors from a word2vec / fastText text file (an optional "count dim" first line), `limit` words of
    it at most. Files joined by commas are read side by side: the union of their words, in the order they come, each
    word's vector the concatenation of every file's for it, looked up as the parser looks a form up (as spelled,
    then lower-cased) and zeros where a file has neither; so GloVe's lower-cased words and the lexicon's spellings
    (`corpus get en-glove`, `en-lexicon`) serve every form together."""
    sources = [_read_vector_file(p, limit) for p in path.split(",")]
    if len(sources) == 1:
        return sources[0]
    indexes = [{w: i for i, w in enumerate(words)} for words, _ in sources]
    union = list(dict.fromkeys(w for words, _ in sources for w in words))
    parts = []
    for index, (_, matrix) in zip(indexes, sources):
        rows = [vector_row(index, w, -1) for w in union]
        padded = np.vstack([matrix, np.zeros((1, matrix.shape[1]), dtype=matrix.dtype)])   # row -1: zeros
        parts.append(padded[rows])
    return union, np.hstack(parts)


def vector_row(index: dict[str, int], form: str, missing: int) -> int:
    """The row of `form`'s vector in `index`: as spelled, else lower-cased (GloVe's words are all lower-cased,
    the lexicon's keep their spelling), else `missing`."""
    return index.get(form, index.get(form.lower(), missing))


def _read_vector_file(path: str, limit: int) -> tuple[list[str], np.ndarray]:
    """Words and vectors of one word2vec / fastText text file (`read_vectors`). The numbers of all lines are
    parsed by numpy in one go (a float() per number made reading GloVe's the slowest part of building the model,
    which counts in the time budget); a line it cannot read is then found and named by `_bad_vector_line`."""
    words, numbers, first = [], [], 1
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                word, _, rest = line.rstrip().partition(" ")
                if number == 1 and rest.isdigit() and word.isdigit():     # word2vec's "count dim" line
                    first = 2
                    continue
                if len(words) >= limit:
                    break
                words.append(word)
                numbers.append(rest)
    except OSError as e:
        raise UserError(f"{path}: cannot read vectors ({e.strerror})") from None
    if not words:
        raise UserError(f"{path}: no vectors found")
    dim = numbers[0].count(" ") + 1
    try:
        with warnings.catch_warnings():
            # text numpy cannot read to its end: a warning in some versions, an error in others
            warnings.simplefilter("error", DeprecationWarning)
            flat = np.fromstring(" ".join(numbers), dtype=np.float32, sep=" ")
    except (ValueError, DeprecationWarning):
        flat = None
    if flat is None or flat.size != dim * len(words) or any(row.count(" ") != dim - 1 for row in numbers):
        raise UserError(f"{path}:{_bad_vector_line(words, numbers, dim, first)}")
    return words, flat.reshape(len(words), dim)


def _bad_vector_line(words: list[str], numbers: list[str], dim: int, first: int) -> str:
    """"LINE: what is wrong" for the first of the lines (numbered from `first`) that is not a word and `dim` numbers."""
    for number, (word, row) in enumerate(zip(words, numbers), first):
        parts = row.split(" ")
        if len(parts) != dim:
            return f"{number}: expected {dim} numbers, found {len(parts)}"
        try:
            [float(x) for x in parts]
        except ValueError:
            return f"{number}: not a number in the vector of {word!r}"
    return f"{first}: the vectors could not be read as numbers"


class _Batch:
    """The positions of a batch of sentences laid end to end as the elements of a DyNet batch: sentence i's
    ROOT at `starts[i]`, its words after it (`lengths[i]` positions in all)."""

    def __init__(self, sentences):
        self.forms = [f for s in sentences for f in s.forms]     # the words, sentence after sentence
        self.lengths = [len(s.forms) + 1 for s in sentences]
        self.starts = [0] + list(itertools.accumulate(self.lengths))[:-1]
        self.positions = sum(self.lengths)
        self.words = [start + j for start, n in zip(self.starts, self.lengths) for j in range(1, n)]
        ends = list(itertools.accumulate(n - 1 for n in self.lengths))
        self.spans = [slice(end - n + 1, end) for end, n in zip(ends, self.lengths)]   # sentence i's in `forms`

    def with_roots(self, words: dy.Expression, root: dy.Expression) -> dy.Expression:
        """The batch of all positions from that of the words and ROOT's vector."""
        order, k = [], 0
        for n in self.lengths:
            order += [len(self.forms)] + list(range(k, k + n - 1))
            k += n - 1
        return dy.pick_batch_elems(dy.concatenate_to_batch([words, root]), order)

    def split(self, positions: dy.Expression) -> list[list[dy.Expression]]:
        """Each sentence's position vectors (ROOT's first), as expressions of their own."""
        return [[dy.pick_batch_elem(positions, k) for k in range(start, start + n)]
                for start, n in zip(self.starts, self.lengths)]


class _Tagged(NamedTuple):
    """The tagger's view of a batch (`_Batch`)."""
    upos: dy.Expression | None         # UPOS scores, a batch element per word (None: no tagger)
    xpos: dy.Expression | None         # XPOS scores (None: no tagger, or a treebank without XPOS)
    batch: "_Batch"
    tags: list[list[int] | None]       # per sentence the predicted UPOS the parser read; None: its own


def bilstm(fwd: dy.VanillaLSTMBuilder, bwd: dy.VanillaLSTMBuilder, xs: dy.Expression, lengths: list[int]):
    """[forward LSTM; backward LSTM] vectors of sequences laid end to end in the batch `xs` (an element per
    position, the sequences `lengths` long), in the same order. All sequences step at once, one batched LSTM
    step per position over the sequences still running (longest first: the batch shrinks as they end, so no
    step is spent on padding); the backward LSTM reads each sequence reversed from its first step."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])          # stable: ties keep their order
    starts = [0] + list(itertools.accumulate(lengths))[:-1]
    running = [sum(1 for n in lengths if n > t) for t in range(max(lengths))]   # sequences at step t
    offsets = [0] + list(itertools.accumulate(running))[:-1]                # step t's outputs in the result
    rank = {i: j for j, i in enumerate(order)}

    def run(builder, element) -> dy.Expression:
        state, outputs = builder.initial_state(), []
        for t, n in enumerate(running):
            if t and n < running[t - 1]:     # sequences ended: carry the others' state on
                state = builder.initial_state([dy.pick_batch_elems(e, list(range(n))) for e in state.s()])
            state = state.add_input(dy.pick_batch_elems(xs, [element(i, t) for i in order[:n]]))
            outputs.append(state.output())
        return dy.concatenate_to_batch(outputs) if len(outputs) > 1 else outputs[0]

    ahead = run(fwd, lambda i, t: starts[i] + t)
    behind = run(bwd, lambda i, t: starts[i] + lengths[i] - 1 - t)
    where = [(i, t) for i, n in enumerate(lengths) for t in range(n)]
    return dy.concatenate([dy.pick_batch_elems(ahead, [offsets[t] + rank[i] for i, t in where]),
                           dy.pick_batch_elems(behind, [offsets[lengths[i] - 1 - t] + rank[i] for i, t in where])])


class Parsed(NamedTuple):
    """A parse: the final configuration, and the tags predicted for the words (None: the input's kept)."""
    config: Configuration
    upos: list[str] | None
    xpos: list[str] | None


def draw(scores: np.ndarray, legal: list[list[int]], alpha: float, rng: np.random.Generator) -> list[int]:
    """One legal action per row of `scores` (B, n_actions), each drawn with probability p(z)^alpha over the row's
    legal actions `legal[k]` (in id order), renormalised (alpha = `explore_alpha`); uniforms from `rng` in row order.

    `Generator.choice(len(legal[k]), p=...)`'s own arithmetic (the inverse of the cumulative distribution at one
    uniform), without its checks of p, for all rows at once: a few array operations per step of a batch instead
    of a dozen per sentence, the same draws from the same stream as one `choice` per row."""
    mask = np.full(scores.shape, -np.inf, dtype=np.float64)
    for row, actions in zip(mask, legal):
        row[actions] = 0.0
    logits = alpha * np.asarray(scores, dtype=np.float64) + mask
    p = np.exp(logits - logits.max(axis=1, keepdims=True))           # 0 at the illegal actions
    cdf = np.cumsum(p, axis=1)
    cdf /= cdf[:, -1:]
    # searchsorted(cdf, u, side="right") of each row: an illegal action adds nothing to the cdf, so it is never
    # the first entry above u
    return (cdf <= rng.random(len(cdf))[:, None]).sum(axis=1).tolist()


def tag_distribution(scores: np.ndarray) -> np.ndarray:
    """Each word's probabilities of the known tags (the unknown tag 0 excluded), from its scores (tags x words):
    (words, tags - 1), rows summing to 1."""
    known = np.asarray(scores, dtype=np.float64)[1:].T
    p = np.exp(known - known.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


def best_tags(scores: np.ndarray, n: int) -> list[int]:
    """The best tag of each of n words from its scores (tags x words), the unknown tag (0) excluded."""
    return [int(i) + 1 for i in np.asarray(scores).reshape(-1, n)[1:].argmax(axis=0)]


def confuse(tags: list[int], scores: np.ndarray, share: float, rng: np.random.Generator) -> list[int]:
    """`tags` with a `share` of them, drawn per word, replaced by the best other tag by `scores` (tags x
    words; neither the unknown tag 0 nor the word's own): the mistake the tagger would most likely make
    there. A parser trained on gold tags alone trusts them more than a tagger's tags deserve; jackknifing
    (tagging each part of the training set with a tagger trained on the rest) would show it real
    mistakes at the cost of several taggers, this shows it mistakes of the same kind and rate."""
    scores = np.asarray(scores, dtype=float).reshape(-1, len(tags))
    chosen = np.flatnonzero(rng.random(len(tags)) < share)
    out = np.array(tags)
    if chosen.size:
        candidates = scores[:, chosen]                  # a copy: fancy indexing
        candidates[0] = -np.inf
        candidates[out[chosen], np.arange(chosen.size)] = -np.inf
        out[chosen] = candidates.argmax(axis=0)
    return out.tolist()


def to_tag(sentences, tagger: bool, predict_tags: bool) -> list[bool]:
    """Which sentences a model tags (see `StackLSTMParser.parse`): with a `tagger`, those without UPOS, or
    all with `predict_tags`; without one, a sentence without UPOS is refused."""
    lacking = [lacks_tags(s) for s in sentences]
    if not tagger:
        for s, lacks in zip(sentences, lacking):
            if lacks:
                raise UserError(f"{s.path}:{s.line}: the sentence has no UPOS tags (`_`), and this model has no "
                                f"tagger (trained with --no-tagger): tag the input first, or parse with a model "
                                f"trained with a tagger")
        return lacking
    return [predict_tags or lacks for lacks in lacking]


def lacks_tags(sentence) -> bool:
    """Whether a sentence has no UPOS to read: any word's is `_` (text, or a tokenizer's output)."""
    return any(u == "_" for u in sentence.upos)


class _Parse(NamedTuple):
    """One sentence being parsed: the configuration and the network's mirror of it."""
    config: Configuration
    stack: StackState
    buffer: StackState
    actions: StackState
    reps: tuple            # the current vector of each word (composed once it has dependents)


class StackLSTMParser:
    """Scores transitions; the transition system, not the model, changes configurations.

    Args:
        pc: the ParameterCollection to build in (a sub-collection is used).
        config: model settings.
        vocab: vocabularies of the training treebank.
        system: the transition system named by `config.system`, over `vocab.labels`.
        pretrained: (words, matrix) of fixed pretrained vectors, or None.
        training: the training behaviour `loss` follows (dropouts, exploration).
    """

    def __init__(self, pc: dy.ParameterCollection, config: ParserModelConfig, vocab: Vocab, system: TransitionSystem,
                 pretrained: tuple[list[str], np.ndarray] | None = None,
                 training: ParserTrainingConfig = ParserTrainingConfig()):
        config.validate()
        self.config, self.vocab, self.system, self.training = config, vocab, system, training
        self.pc = pc.add_subcollection("parser")
        c = config
        self.words = self.pc.add_lookup_parameters((len(vocab.words), c.word_dim), name="words")
        self.tags = self.pc.add_lookup_parameters((len(vocab.upos), c.upos_dim), name="upos")
        parts = [c.word_dim] if c.tagger else [c.word_dim, c.upos_dim]      # with a tagger, tags enter later
        if c.char_hidden:
            self.chars = self.pc.add_lookup_parameters((len(vocab.chars), c.char_dim), name="chars")
            self.char_fwd = dy.VanillaLSTMBuilder(1, c.char_dim, c.char_hidden, self.pc)
            self.char_bwd = dy.VanillaLSTMBuilder(1, c.char_dim, c.char_hidden, self.pc)
            parts.append(2 * c.char_hidden)
        self.pretrained_index = {}
        if pretrained is not None:
            words, matrix = pretrained
            self.pretrained_index = {w: i + 1 for i, w in enumerate(words)}      # 0: no vector
            # Fixed (§3.3): tuning would move only the training words' rows, away from the unseen words'
            # rows they share a space with, which are the reason to have pretrained vectors at all. So they are
            # inputs, not parameters: rows of a numpy matrix that the graph reads as constants and `save_parser`
            # writes as an array (a DyNet table of half a million rows took seconds to fill at every load, and
            # its lookups kept gradients nothing used).
            self.pretrained_matrix = np.vstack([np.zeros((1, matrix.shape[1]), dtype=np.float32),
                                                matrix.astype(np.float32, copy=False)])
            parts.append(matrix.shape[1])
        self.V = [self.pc.add_parameters((c.token_dim, p)) for p in parts]
        self.b = self.pc.add_parameters((c.token_dim,), init=0.0)
        self.root = self.pc.add_parameters((c.token_dim,), name="root")
        context_input = c.token_dim
        if c.tagger:
            self.tag_fwd = dy.VanillaLSTMBuilder(1, c.token_dim, c.tagger_dim, self.pc)
            self.tag_bwd = dy.VanillaLSTMBuilder(1, c.token_dim, c.tagger_dim, self.pc)
            self.A_upos = self.pc.add_parameters((len(vocab.upos), 2 * c.tagger_dim), name="Aupos")
            self.a_upos = self.pc.add_parameters((len(vocab.upos),), init=0.0, name="aupos")
            if vocab.xpos:
                self.A_xpos = self.pc.add_parameters((len(vocab.xpos), 2 * c.tagger_dim), name="Axpos")
                self.a_xpos = self.pc.add_parameters((len(vocab.xpos),), init=0.0, name="axpos")
            context_input = 2 * c.tagger_dim + c.upos_dim
        item = 2 * c.context_dim if c.context_layers else context_input     # a stack item: a word's vector
        if c.context_layers:
            self.ctx_fwd = dy.VanillaLSTMBuilder(c.context_layers, context_input, c.context_dim, self.pc)
            self.ctx_bwd = dy.VanillaLSTMBuilder(c.context_layers, context_input, c.context_dim, self.pc)
        self.stack_lstm = StackLSTM(self.pc, item, c.lstm_dim, c.lstm_layers)
        self.buffer_lstm = StackLSTM(self.pc, item, c.lstm_dim, c.lstm_layers)
        self.action_lstm = StackLSTM(self.pc, c.action_dim, c.lstm_dim, c.lstm_layers)
        n_actions = len(self.system.actions)
        self.action_emb = self.pc.add_lookup_parameters((n_actions, c.action_dim), name="actions")
        self.rel_emb = self.pc.add_lookup_parameters((len(vocab.labels), c.rel_dim), name="relations")
        self.label_index = {label: i for i, label in enumerate(vocab.labels)}
        self.U = [self.pc.add_parameters((item, d)) for d in (item, item, c.rel_dim)]
        self.e = self.pc.add_parameters((item,), init=0.0)
        self.W = [self.pc.add_parameters((c.state_dim, c.lstm_dim)) for _ in range(3)]
        if c.top_features:
            self.T = [self.pc.add_parameters((c.state_dim, item)) for _ in range(3)]     # s0, s1, b0
            self.absent = self.pc.add_parameters((item,), name="absent")                # no such item
        self.d = self.pc.add_parameters((c.state_dim,), init=0.0)
        self.G = self.pc.add_parameters((n_actions, c.state_dim))
        self.q = self.pc.add_parameters((n_actions,), init=0.0)

    def param_collection(self) -> dy.ParameterCollection:
        return self.pc

    # ---- token representations ------------------------------------------------------------
    # The whole batch's words are encoded as DyNet batches, a word (or a sentence position) per batch element:
    # a layer costs a few nodes per batch, not per word, where graph building and autobatching's analysis
    # cost per node. Sentence positions are laid end to end, ROOT first in each sentence (`_Batch`).
    def _char_reps(self, forms: list[str]) -> dy.Expression:
        """The character BiLSTM vector of each of `forms`, one batch element per form in order. Each
        distinct form is run once, the forms of one length as one batched pass."""
        by_length: dict[int, list[str]] = {}
        for form in sorted(set(forms)):     # a fixed graph order: set order follows per-process string hashes
            by_length.setdefault(len(form), []).append(form)
        groups, where = [], {}
        for length, group in sorted(by_length.items()):
            where.update({form: len(where) + k for k, form in enumerate(group)})
            if length == 0:                 # (no characters: zeros, as in the numpy engine)
                groups.append(dy.zeros(2 * self.config.char_hidden, batch_size=len(group)))
                continue
            chars = [dy.lookup_batch(self.chars, [self.vocab.char(form[j]) for form in group]) for j in range(length)]
            fwd = self.char_fwd.initial_state().transduce(chars)[-1]
            bwd = self.char_bwd.initial_state().transduce(chars[::-1])[-1]
            groups.append(dy.concatenate([fwd, bwd]))
        reps = dy.concatenate_to_batch(groups) if len(groups) > 1 else groups[0]
        return dy.pick_batch_elems(reps, [where[form] for form in forms])

    def _encode(self, sentences, rng: np.random.Generator | None,
                predict: list[bool]) -> tuple[list[list[dy.Expression]], _Tagged]:
        """x_0..x_n per sentence (x_0 is ROOT) and the tagger's scores; `rng` given = training (dropouts on).

        With the tagger, sentence i's parser reads the tagger's best UPOS if `predict[i]`, else the
        sentence's own: the tagger's scores of all sentences are computed first (one forward)."""
        c, t = self.config, self.training
        batch = _Batch(sentences)
        drop = rng is not None and t.dropout > 0
        ids = [self.vocab.word(f) for f in batch.forms]
        if rng is not None and t.word_dropout > 0:
            counts = np.array([self.vocab.word_counts[i] for i in ids], dtype=float)
            dropped = rng.random(len(ids)) < t.word_dropout / (t.word_dropout + counts)
            ids = [0 if dr else i for i, dr in zip(ids, dropped)]
        parts = [dy.lookup_batch(self.words, ids)]
        if not c.tagger:
            parts.append(dy.lookup_batch(self.tags, [self.vocab.tag(u) for s in sentences for u in s.upos]))
        if c.char_hidden:
            parts.append(self._char_reps(batch.forms))
        if self.pretrained_index:
            rows = self.pretrained_matrix[[vector_row(self.pretrained_index, f, 0) for f in batch.forms]]
            # (DyNet's batched inputTensor refuses a batch of one)
            parts.append(dy.inputTensor(rows.T, batched=True) if len(rows) > 1 else dy.inputVector(rows[0]))
        x = dy.rectify(dy.affine_transform([self.b] + [a for pair in zip(self.V, parts) for a in pair]))
        if drop:
            x = dy.dropout(x, t.dropout)       # a mask per word: DyNet draws one over the batch's elements
        xs = batch.with_roots(x, self.root.expr(True))     # (True: this DyNet's `expr()` is a constant)
        if not c.tagger:
            return batch.split(self._context(xs, batch)), _Tagged(None, None, batch, [None] * len(sentences))
        # The tagger: a BiLSTM over the words, the sentence encoder's first layer, and its scores of each word
        es = bilstm(self.tag_fwd, self.tag_bwd, xs, batch.lengths)
        if drop:
            es = dy.dropout(es, t.dropout)
        words = dy.pick_batch_elems(es, batch.words)
        upos = dy.affine_transform([self.a_upos, self.A_upos, words])
        xpos = dy.affine_transform([self.a_xpos, self.A_xpos, words]) if self.vocab.xpos else None
        noisy = rng is not None and t.tag_noise > 0
        scores = None
        if any(predict) or noisy:
            scores = upos.npvalue().reshape(len(self.vocab.upos), -1)
        tags, read = [], [0] * batch.positions          # ROOT reads the unknown tag: it has none
        for i, (s, p) in enumerate(zip(sentences, predict)):
            if p:
                own = best_tags(scores[:, batch.spans[i]], len(s.words))
            else:
                own = [self.vocab.tag(u) for u in s.upos]
                if noisy:
                    own = confuse(own, scores[:, batch.spans[i]], t.tag_noise, rng)
            tags.append(own if p else None)
            if not (p and c.tag_reading == "none"):      # none: the unknown tag's embedding
                read[batch.starts[i] + 1:batch.starts[i] + batch.lengths[i]] = own
        tag_vectors = dy.lookup_batch(self.tags, read)
        if any(predict) and c.tag_reading == "expected":
            # E^T softmax(known tags' scores), per word: the tagger's doubt reaches the parser
            n = len(self.vocab.upos)
            known = dy.concatenate_cols([self.tags[tag] for tag in range(1, n)])
            mixed = known * dy.softmax(dy.pick_range(upos, 1, n, d=0), d=0)          # (upos_dim) per word
            expected = {k for i, p in enumerate(predict) if p for k in range(batch.starts[i] + 1,
                                                                           batch.starts[i] + batch.lengths[i])}
            word_index = {position: k for k, position in enumerate(batch.words)}
            tag_vectors = dy.pick_batch_elems(dy.concatenate_to_batch([tag_vectors, mixed]), [
                batch.positions + word_index[k] if k in expected else k for k in range(batch.positions)])
        items = self._context(dy.concatenate([es, tag_vectors]), batch)
        return batch.split(items), _Tagged(upos, xpos, batch, tags)

    def _context(self, xs: dy.Expression, batch: "_Batch") -> dy.Expression:
        """The sentence BiLSTM's vectors of the batch's positions (the vectors themselves without one)."""
        return bilstm(self.ctx_fwd, self.ctx_bwd, xs, batch.lengths) if self.config.context_layers else xs

    def _tag_loss(self, sentences, tagged: "_Tagged", lessons=None) -> dy.Expression:
        """-log p(gold UPOS) (+ -log p(gold XPOS)) summed over the batch's words; a tag the training treebank
        never had (the unknown tag) teaches nothing. With the teachers' `lessons` (`parsers.distillation`):
        -[w Σ_k q(k) log p(k) + (1 - w) log p(gold)] per word, q their mean distribution, w = `distill`."""
        w = self.training.distill if lessons is not None else 0.0
        terms = []
        for scores, gold, field in ((tagged.upos, [self.vocab.tag(u) for s in sentences for u in s.upos], "upos"),
                                    (tagged.xpos, [self.vocab.xtag(word.xpos) for s in sentences for word in s.words],
                                     "xpos")):
            if scores is None:
                continue
            known = [i for i, g in enumerate(gold) if g]
            if known and w < 1:
                picked = dy.pick_batch_elems(scores, known)
                term = dy.sum_batches(dy.pickneglogsoftmax_batch(picked, [gold[i] for i in known]))
                terms.append(term if lessons is None else term * (1 - w))
            qs = [] if lessons is None else [getattr(lesson, field) for lesson in lessons]
            if qs and w > 0 and all(q is not None for q in qs):     # q: (words, known tags), not the unknown tag 0
                q = np.concatenate(qs)
                # (DyNet's batched inputTensor refuses a batch of one: one word's target is a plain vector)
                target = dy.inputTensor(np.ascontiguousarray(q.T), batched=True) if len(q) > 1 else dy.inputVector(q[0])
                soft = dy.dot_product(dy.pick_range(dy.log_softmax(scores), 1, scores.dim()[0][0]), target)
                terms.append(dy.sum_batches(soft) * -w)
        return dy.esum(terms) if terms else dy.scalarInput(0.0)

    # ---- the parser state and its mirror of the transition system ---------------------------
    def _start(self, tokens: list[dy.Expression]) -> _Parse:
        """ROOT on the stack, words 1..n in the buffer (word 1 on top of the buffer's stack)."""
        config = self.system.initial(len(tokens) - 1)
        stack = self.stack_lstm.initial_state()
        for w in config.stack:
            stack = stack.push(tokens[w], w)
        buffer = self.buffer_lstm.initial_state()
        for w in reversed(config.buffer):
            buffer = buffer.push(tokens[w], w)
        return _Parse(config, stack, buffer, self.action_lstm.initial_state(), tuple(tokens))

    def _scores(self, p: _Parse, train: bool) -> dy.Expression:
        """Action scores g . p_t + q (eq. 1), from p_t = ReLU(W [s; b; a] + d), and with
        `top_features` p_t = ReLU(W [s; b; a] + T [v(s0); v(s1); v(b0)] + d): the summaries of
        whole structures miss detail of the items the next action is about (cf. the feature
        sets of Kiperwasser & Goldberg 2016)."""
        parts = [self.d, self.W[0], p.stack.output(), self.W[1], p.buffer.output(), self.W[2], p.actions.output()]
        if self.config.top_features:
            stack = list(itertools.islice(p.stack, 2))
            tops = stack + [None] * (2 - len(stack)) + [p.buffer.top]
            for T, word in zip(self.T, tops):
                parts += [T, self.absent if word is None else p.reps[word]]
        state = dy.rectify(dy.affine_transform(parts))
        if train and self.training.dropout:
            state = dy.dropout(state, self.training.dropout)
        return dy.affine_transform([self.q, self.G, state])

    def _advance(self, p: _Parse, action: int) -> _Parse:
        """Replay the system's ops for `action` on the network's stack, buffer and word vectors."""
        ops = self.system.ops(p.config, action)
        stack, buffer, reps = p.stack, p.buffer, p.reps
        for op in ops:
            if op.kind is OpKind.POP_STACK:
                stack = stack.pop()
            elif op.kind is OpKind.PUSH_STACK:
                stack = stack.push(reps[op.word], op.word)
            elif op.kind is OpKind.POP_BUFFER:
                buffer = buffer.pop()
            elif op.kind is OpKind.PUSH_BUFFER:
                buffer = buffer.push(reps[op.word], op.word)
            else:     # ATTACH: the head's vector becomes the composition c = tanh(U[h; d; r] + e)
                r = self.rel_emb[self.label_index[op.label]]
                composed = dy.tanh(dy.affine_transform([self.e, self.U[0], reps[op.word],
                                                        self.U[1], reps[op.dep], self.U[2], r]))
                reps = reps[:op.word] + (composed,) + reps[op.word + 1:]
        actions = p.actions.push(self.action_emb[action], action)
        return _Parse(perform(p.config, ops), stack, buffer, actions, reps)

    # ---- training and decoding --------------------------------------------------------------
    def loss(self, sentences, oracles: list[list[int]], rng: np.random.Generator,
             explore: bool = False, drawn: list | None = None, taught: list | None = None) -> dy.Expression:
        """Sum over the sentences' states of -log p(correct actions | state), softmax over the legal actions,
        plus `tag_weight` times the tagger's loss (`_tag_loss`).

        With the tagger, a share `gold_tags` of the sentences (drawn per sentence) is parsed reading the
        gold UPOS, the others reading the tagger's predictions (a parser trained on gold tags may trust
        them more than predicted ones deserve). On EWT's dev set all gold (the default) parsed as well on
        predicted tags as half and half, and better on gold ones (BENCHMARKS.md): the shared encoder, trained
        by both losses, already carries what the tags say. Both losses are sums of -log p over decisions
        (transitions, tags), summed unweighted by default: each decision counts once.

        Without `explore`, each sentence follows its static oracle `oracles[i]`, whose action is the
        correct one. With `explore`, a sentence with a projective tree follows actions drawn from the
        model itself, p(z)^alpha renormalised (Ballesteros et al. 2016, "Training with Exploration
        Improves a Greedy Stack LSTM Parser", EMNLP: the states seen in training are then those the
        parser's own mistakes lead to), and the correct actions are the dynamic oracle's, their
        probabilities summed (our choice: where several actions are optimal, the model may prefer any).
        Non-projective sentences keep the static oracle (see `parsers.transitions`).

        The sentences advance in lockstep; when some explore, each step's scores are computed (one
        autobatched forward) before the actions are drawn, unless `drawn` gives each exploring sentence's
        actions and the dynamic oracle's answers, drawn beforehand (`drawn[i]`, an `inference.Exploration`,
        None for a sentence that does not explore: see `parsers.inference.draw_explorations`); then the
        graph is built in one go.

        With `taught` (distillation, `parsers.distillation`), sentence i follows the path `taught[i][0]` and
        learns the teachers' distribution along it and their tag distributions `taught[i][1]` (a `Lesson`):
        -[w Σ_a q(a) log p(a) + (1 - w) log p(gold)] at each step of a reference path and for each word's tags,
        -Σ_a q(a) log p(a) at each step of a sampled path, w = `distill`.
        """
        system = self.system
        predict = list(rng.random(len(sentences)) >= self.training.gold_tags) if self.config.tagger else \
            [False] * len(sentences)
        encoded, tagged = self._encode(sentences, rng, predict)
        parses = [self._start(items) for items in encoded]
        golds = [(tuple(s.heads), tuple(s.deprels)) for s in sentences]     # once, not at every step
        exploring = [explore and trees.is_projective(heads) for heads, _ in golds]
        steps = [0] * len(parses)
        terms, active = [], list(range(len(parses)))
        while active:
            legal = {i: system.legal(parses[i].config) for i in active}
            scores = {i: self._scores(parses[i], True) for i in active if len(legal[i]) > 1}
            to_draw = [i for i in scores if exploring[i]] if drawn is None else []
            drawn_now = {}
            if to_draw:
                dy.forward([scores[i] for i in to_draw])
                drawn_now = dict(zip(to_draw, draw(np.stack([scores[i].npvalue() for i in to_draw]),
                                                   [legal[i] for i in to_draw], self.training.explore_alpha, rng)))
            for i in active:
                teacher = None
                if taught is not None:
                    path, step = taught[i][0], steps[i]
                    action, steps[i], teacher = path.actions[step], step + 1, (path, step)
                    correct = [action] if path.reference else []
                elif exploring[i] and drawn is not None:
                    action, correct = drawn[i].actions[steps[i]], drawn[i].correct[steps[i]]
                    steps[i] += 1
                elif exploring[i]:
                    correct = system.optimal(parses[i].config, *golds[i])
                    action = drawn_now.get(i, legal[i][0])
                else:
                    action, steps[i] = oracles[i][steps[i]], steps[i] + 1
                    correct = [action]
                if i in scores:        # a forced move teaches nothing
                    log_p = dy.log_softmax(scores[i], restrict=legal[i])
                    # log of the probability of all correct actions: one node for all of them (a zero-cost arc
                    # that is not gold allows every label: dozens of them)
                    gold = None if not correct else \
                        dy.logsumexp_dim(dy.select_rows(log_p, correct), d=0) if len(correct) > 1 else \
                        dy.pick(log_p, correct[0])
                    terms.append(-gold if teacher is None else -self._taught(log_p, gold, *teacher))
                parses[i] = self._advance(parses[i], action)
            active = [i for i in active if not system.is_terminal(parses[i].config)]
        loss = dy.esum(terms) if terms else dy.scalarInput(0.0)
        if self.config.tagger and self.training.tag_weight:
            lessons = None if taught is None else [lesson for _, lesson in taught]
            loss = loss + self._tag_loss(sentences, tagged, lessons) * self.training.tag_weight
        return loss

    def _taught(self, log_p: dy.Expression, gold: dy.Expression | None, path, step: int) -> dy.Expression:
        """w Σ_a q(a) log p(a) + (1 - w) log p(gold) at a step of a teachers' path (gold None: a sampled path,
        the teachers' distribution alone)."""
        soft = dy.dot_product(dy.select_rows(log_p, path.ids[step].tolist()), dy.inputVector(path.probs[step]))
        w = self.training.distill
        return soft if gold is None else soft * w + gold * (1 - w)

    def parse(self, sentences, beam: int = 1, predict_tags: bool = False) -> list[Parsed]:
        """Beam search over a batch of sentences in lockstep (beam 1: greedy decoding); returns
        each sentence's best final configuration and, where the tagger tagged it, its tags.

        The tagger tags a sentence that lacks UPOS (`lacks_tags`), and every sentence with `predict_tags`;
        a model without a tagger refuses a sentence without tags.

        Hypotheses are `_Parse` values: the persistent stacks let every hypothesis extend a shared
        prefix without copying. A hypothesis scores the sum of its actions' log-probabilities
        (softmax over the legal actions); finished ones stay in their beam until all are finished.
        Call `dy.renew_cg(autobatching=True)` first, so each step's scores are one batch.
        """
        encoded, tagged = self._encode(sentences, None, to_tag(sentences, self.config.tagger, predict_tags))
        tags = self._tags(tagged)
        beams = [[(0.0, self._start(items))] for items in encoded]
        while True:
            legal = {(b, h): self.system.legal(p.config) for b, hyps in enumerate(beams)
                     for h, (_, p) in enumerate(hyps) if not self.system.is_terminal(p.config)}
            if not legal:
                return [Parsed(max(hyps, key=lambda hyp: hyp[0])[1].config, *tagged)
                        for hyps, tagged in zip(beams, tags)]
            scores = {key: self._scores(beams[key[0]][key[1]][1], False) for key, lg in legal.items() if len(lg) > 1}
            if scores:
                dy.forward(list(scores.values()))
            beams = [self._extend(b, hyps, legal, scores, beam) for b, hyps in enumerate(beams)]

    def _tags(self, tagged: _Tagged) -> list[tuple[list[str] | None, list[str] | None]]:
        """(UPOS, XPOS) strings of the tagged sentences; (None, None) for those whose own tags were read."""
        xpos = None
        if tagged.xpos is not None and any(tags is not None for tags in tagged.tags):
            xpos = tagged.xpos.npvalue().reshape(len(self.vocab.xpos), -1)
        out = []
        for tags, span in zip(tagged.tags, tagged.batch.spans):
            if tags is None:
                out.append((None, None))
                continue
            x = None if xpos is None else [self.vocab.xpos[i] for i in best_tags(xpos[:, span], len(tags))]
            out.append(([self.vocab.upos[i] for i in tags], x))
        return out

    def _extend(self, b: int, hyps: list, legal: dict, scores: dict, beam: int) -> list:
        """The `beam` best one-action extensions of sentence b's hypotheses (finished ones kept)."""
        candidates = []
        for h, (score, p) in enumerate(hyps):
            if (b, h) not in legal:
                candidates.append((score, p, None))
                continue
            lg = legal[(b, h)]
            logits = scores[(b, h)].npvalue()[lg] if (b, h) in scores else np.zeros(1)
            logp = logits - np.logaddexp.reduce(logits)
            candidates += [(score + lp, p, a) for lp, a in zip(logp, lg)]
        best = heapq.nlargest(beam, candidates, key=lambda c: c[0])     # stable: ties keep order
        return [(score, p if a is None else self._advance(p, a)) for score, p, a in best]
