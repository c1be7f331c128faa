"""Greedy parsing in numpy: a trained `StackLSTMParser`'s weights, read once, evaluated without DyNet.

`NumpyParser` mirrors `parsers.model.StackLSTMParser` at inference (no dropout, no word dropout): the
same token vectors, sentence BiLSTM, stack-LSTMs, composition and parser state, in float32. What
changes is only the schedule of the arithmetic: DyNet builds a graph node per operation of every
sentence and autobatches it again at every step; here the sentences of a batch advance in lockstep
and each step's LSTM pushes, compositions and scores are one matrix product per layer for the batch.
The transition system still decides which actions are legal and applies them; the engine only
scores. Beam search stays on DyNet (`StackLSTMParser.parse`). Several engines (models of one treebank) can
decode as one (`Ensemble`, `lockstep`): their tag and action distributions averaged, every engine taking the
ensemble's tags and actions.

Equations (those of `parsers.model`; W^T are stored transposed, row vectors times matrices):
    LSTM step (DyNet's VanillaLSTMBuilder: gates in the order i, f, o, g; forget bias 1; zero
    initial state; layer l > 1 reads layer l - 1's h)
        [a_i; a_f; a_o; a_g] = W_x x_t + W_h h_{t-1} + b
        c_t = sigmoid(a_f + 1) * c_{t-1} + sigmoid(a_i) * tanh(a_g)
        h_t = sigmoid(a_o) * tanh(c_t)
    char vector   c_w = [fwd LSTM over w's characters, last h; bwd LSTM over them reversed, last h]
    token         x_i = ReLU(V [w_i; t_i; c_i; w~_i] + b),   x_0 = the learned ROOT vector
                  with the tagger: x_i = ReLU(V [w_i; c_i; w~_i] + b), then
    tagger        e_i = BiLSTM(x)_i,  UPOS_i = argmax over the known tags of A e_i + a (XPOS alike),
                  and the sentence BiLSTM reads [e_i; t_i], t_i the embedding of the UPOS read
                  (the input's, or as `tag_reading` says: the predicted tag's, Σ_k p(k | e_i) T_k with
                  p = softmax over the known tags of A e_i + a, or the unknown tag's), ROOT's the unknown tag's
    item          v_i = [fwd(x_0..x_n)_i; bwd(x_0..x_n)_i]   (the sentence BiLSTM; v_i = x_i without it)
    stack-LSTM    the empty stack is one step on the learned guard from the zero state; push = one
                  LSTM step from the node below (a node is (h, c) per layer and its parent); pop = parent
    state         p = ReLU(d + W_s h(stack) + W_b h(buffer) + W_a h(actions)
                           + T_0 v(s0) + T_1 v(s1) + T_2 v(b0))   (an absent item reads `absent`)
    scores        g = G p + q; the action is the best-scoring legal one
    compose       on ATTACH, v(head) <- tanh(U_h v(head) + U_d v(dep) + U_r r(label) + e)

Every item vector v is used only through fixed linear maps (the first layer of the stack- and
buffer-LSTM, U_h, U_d, T_0..T_2), so the engine stores each item once as its projections
`v [W_x^stack | W_x^buffer | U_h | U_d | T_0 | T_1 | T_2]` (one row of `_Items`), computed when the
item is made; likewise the action LSTM's first layer reads a precomputed row per action.
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Sequence

import numpy as np

from parsers.decoding import length_batches, parse_sentences
from parsers.model import Parsed, best_tags, draw, tag_distribution, to_tag, vector_row
from parsers.transitions import Configuration, OpKind, perform
from stackparse.errors import UserError

Chooser = Callable[[list, list, list, list, "np.ndarray | None"], list]
"""choose(active, configs, legal, scored, scores) -> the action of each sentence of `active` (batch indices of
the sentences not yet done), instead of the best-scoring legal one: `configs` the batch's configurations,
`legal[k]` the legal action ids of sentence active[k], `scored` the k whose choice is open (more than one legal
action) and `scores` their rows, (len(scored), n_actions), None when none is open. One call per step for the
whole batch (exploration draws all its actions in one go, `draw`); for exploration, distillation and tests."""

F32 = np.float32
_quiet = np.errstate(over="ignore")
"""The engine's entry points run under this: `lstm_cell`'s exponentials overflow to inf by design (set
once per call rather than at every cell, where it cost more than the cell's arithmetic on small batches)."""


# ---- LSTMs ------------------------------------------------------------------------------------
def lstm_layers(builder) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Each layer's (W_x^T, W_h^T, b) of a DyNet VanillaLSTMBuilder, float32, prepared for
    `lstm_cell`: the columns of the gates i, f, o times -1, those of g times -2 (both exact in binary
    floating point), and the forget bias folded into b."""
    hidden = builder.get_parameters()[0][1].shape()[1]
    scale = np.repeat(np.array([-1, -1, -1, -2], F32), hidden)
    shift = np.zeros(4 * hidden, F32)
    shift[hidden:2 * hidden] = -1.0                      # DyNet's forget bias: sigmoid(a_f + 1)
    return [(_t(wx) * scale, _t(wh) * scale, _a(b) * scale + shift) for wx, wh, b in builder.get_parameters()]


def lstm_cell(z: np.ndarray, c_prev: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """h, c (B, H) from the previous c (B, H) and the prepared pre-activations `z` (B, 4H; overwritten)
    = [-a_i; -a_f - 1; -a_o; -2 a_g] (`lstm_layers`).

    With s(x) = 1 / (1 + e^-x): sigmoid(a) = s(a) and tanh(a) = 2 s(2a) - 1, so that one exp over
    all four gates does what three sigmoids and a tanh would (numpy's exp is much faster than its tanh).
    Its exponentials overflow to inf by design: the engine runs it under `_quiet`."""
    hidden = c_prev.shape[1]
    np.exp(z, out=z)                                     # e^z = inf gives s = 0, as it should (`_quiet`)
    z += 1.0
    np.reciprocal(z, out=z)
    g = z[:, 3 * hidden:]
    g *= 2.0
    g -= 1.0
    g *= z[:, :hidden]                                   # i * tanh(a_g)
    c = z[:, hidden:2 * hidden] * c_prev
    c += g
    h = c * -2.0
    np.exp(h, out=h)
    h += 1.0
    np.reciprocal(h, out=h)
    h *= 2.0
    h -= 1.0                                             # tanh(c)
    h *= z[:, 2 * hidden:3 * hidden]
    return h, c


def bilstm(fwd, bwd, xs: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """[fwd LSTM; bwd LSTM] of each of several sequences stacked in `xs` (sum of lengths, I), the
    sequences starting at rows `starts`, run all at once: (sum of lengths, H_fwd + H_bwd).

    Time-major and padded at the end; the backward LSTM reads each sequence reversed from t = 0."""
    seq = np.repeat(np.arange(len(starts)), lengths)
    pos = np.arange(len(xs)) - starts[seq]
    back = lengths[seq] - 1 - pos
    padded = np.zeros((lengths.max(), len(starts), xs.shape[1]), F32)
    padded[pos, seq] = xs
    ahead = transduce(fwd, padded)[pos, seq]
    padded[back, seq] = xs
    behind = transduce(bwd, padded)[back, seq]
    return np.concatenate([ahead, behind], axis=1)


def transduce(layers, xs: np.ndarray) -> np.ndarray:
    """The top layer's h at every step of a stacked LSTM from the zero state: xs (T, B, I) -> (T, B, H).

    Sequences of different lengths are padded at the end: outputs before a sequence's end do not
    depend on the padding."""
    for wx, wh, b in layers:
        steps, batch, _ = xs.shape
        proj = (xs.reshape(steps * batch, -1) @ wx + b).reshape(steps, batch, -1)   # (T, B, 4H)
        h = np.zeros((batch, wh.shape[0]), F32)
        c = np.zeros_like(h)
        out = np.empty((steps, batch, wh.shape[0]), F32)
        for t in range(steps):
            gates = h @ wh
            gates += proj[t]
            h, c = lstm_cell(gates, c)
            out[t] = h
        xs = out
    return xs


class _Nodes:
    """The versions of one persistent stack-LSTM in a batch: node k's h and c per layer, and its parent.

    Node 0 is the zero state and node 1 the empty stack (one step on the guard from node 0)."""

    def __init__(self, layers, guard: np.ndarray, capacity: int = 4096):
        self.layers = layers
        dim = layers[0][1].shape[0]
        self.h = [np.zeros((capacity, dim), F32) for _ in layers]
        self.c = [np.zeros((capacity, dim), F32) for _ in layers]
        self.guard_x = guard[None, :] @ layers[0][0] + layers[0][2]       # (1, 4H): its first-layer input
        self.w_upper = [np.vstack([wx, wh]) for wx, wh, _ in layers[1:]]
        self.reset()

    def reset(self) -> None:
        self.parent, self.size = [-1], 1
        self.push(self.guard_x, np.zeros(1, dtype=np.intp))

    def push(self, x0: np.ndarray, parents: np.ndarray) -> range:
        """Push one item on each of the nodes `parents` (B,); `x0` (B, 4H) is the first layer's input
        projection W_x x + b (prepared as `lstm_layers` says). Returns the new nodes' ids."""
        batch, start = len(parents), self.size
        if start + batch > len(self.h[0]):
            self._grow(start + batch)
        x = None
        for layer, (wx, wh, b) in enumerate(self.layers):
            if layer == 0:
                gates = self.h[0][parents] @ wh
                gates += x0
            else:                                # [x; h] times [W_x; W_h]: one product, not two and a sum
                gates = np.concatenate([x, self.h[layer][parents]], axis=1) @ self.w_upper[layer - 1]
                gates += b
            x, c = lstm_cell(gates, self.c[layer][parents])
            self.h[layer][start:start + batch] = x
            self.c[layer][start:start + batch] = c
        self.parent += parents.tolist()
        self.size = start + batch
        return range(start, start + batch)

    def output(self, nodes) -> np.ndarray:
        """The stack encodings (top layer's h) of `nodes`, (B, H)."""
        return self.h[-1][nodes]

    def _grow(self, needed: int) -> None:
        capacity = max(needed, 2 * len(self.h[0]))
        for arrays in (self.h, self.c):
            for layer, a in enumerate(arrays):
                arrays[layer] = np.concatenate([a, np.zeros((capacity - len(a), a.shape[1]), F32)])


class _Items:
    """The item vectors of a batch as their projections (see the module docstring), one row each;
    row 0 is the `absent` vector (only its T columns are read)."""

    def __init__(self, capacity: int, width: int):
        self.rows = np.empty((capacity, width), F32)
        self.size = 0

    def add(self, projections: np.ndarray) -> range:
        start = self.size
        self.rows[start:start + len(projections)] = projections
        self.size += len(projections)
        return range(start, self.size)


# ---- the engine -------------------------------------------------------------------------------
class NumpyParser:
    """Greedy decoding of a trained `StackLSTMParser` in numpy (see the module docstring).

    The weights are read when the engine is made: make a new one after the model's weights change
    (a training step, `populate`).

    Args:
        model: the trained parser (its vocabularies, transition system and settings are used as is).
    """

    def __init__(self, model):
        c = self.config = model.config
        self.vocab, self.system = model.vocab, model.system
        self.words, self.tags = _a(model.words), _a(model.tags)
        self.chars = _a(model.chars) if c.char_hidden else None
        if c.char_hidden:
            self.char_fwd, self.char_bwd = lstm_layers(model.char_fwd), lstm_layers(model.char_bwd)
        self.pretrained_index = model.pretrained_index
        self.pretrained = model.pretrained_matrix if model.pretrained_index else None
        self.V = np.vstack([_t(v) for v in model.V])                      # (sum of parts, token_dim)
        self.b, self.root = _a(model.b), _a(model.root)
        if c.context_layers:
            self.ctx_fwd, self.ctx_bwd = lstm_layers(model.ctx_fwd), lstm_layers(model.ctx_bwd)
        self.A_xpos = None
        if c.tagger:
            self.tag_fwd, self.tag_bwd = lstm_layers(model.tag_fwd), lstm_layers(model.tag_bwd)
            self.A_upos, self.a_upos = _t(model.A_upos), _a(model.a_upos)
            if model.vocab.xpos:
                self.A_xpos, self.a_xpos = _t(model.A_xpos), _a(model.a_xpos)
        self._token_cache: dict[tuple, np.ndarray] = {}
        self._mask_rows: dict[int, tuple[list[int], np.ndarray]] = {}
        self._item_maps(model)
        self.stack = _Nodes(lstm_layers(model.stack_lstm.lstm), _a(model.stack_lstm.guard))
        self.buffer = _Nodes(lstm_layers(model.buffer_lstm.lstm), _a(model.buffer_lstm.guard))
        self.actions = _Nodes(lstm_layers(model.action_lstm.lstm), _a(model.action_lstm.guard))
        wx, _, b = self.actions.layers[0]
        self.action_x = _a(model.action_emb) @ wx + b                      # (n_actions, 4H)
        self.W = np.vstack([_t(w) for w in model.W])                        # (3 lstm_dim, state_dim)
        self.d, self.G, self.q = _a(model.d), _t(model.G), _a(model.q)

    def __getstate__(self) -> dict:
        """For another process (exploration's roll-outs): the weights, without the caches (the mask rows
        are keyed by the identity of this process's lists)."""
        return {**self.__dict__, "_token_cache": {}, "_mask_rows": {}}

    def _item_maps(self, model) -> None:
        """The item projection matrix and the column ranges of its parts."""
        c = self.config
        maps = [lstm_layers(model.stack_lstm.lstm)[0], lstm_layers(model.buffer_lstm.lstm)[0]]
        blocks = [maps[0][0], maps[1][0], _t(model.U[0]), _t(model.U[1])]
        biases = [maps[0][2], maps[1][2], np.zeros(2 * blocks[2].shape[1], F32)]
        if c.top_features:
            blocks += [_t(t) for t in model.T]
            biases.append(np.zeros(3 * c.state_dim, F32))
            self.absent = _a(model.absent)
        else:
            self.absent = np.zeros(blocks[2].shape[0], F32)
        edges = np.cumsum([0] + [blk.shape[1] for blk in blocks])
        self.cols = [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]
        self.item_map, self.item_bias = np.hstack(blocks), np.concatenate(biases)
        # U_r r(label) + e for every label: the composition's constant part
        self.relations = _a(model.rel_emb) @ _t(model.U[2]) + _a(model.e)
        self.label_index = model.label_index

    # ---- the sentence encoder: tokens, the tagger, the sentence BiLSTM ------------------------
    @_quiet
    def char_vectors(self, forms: Sequence[str]) -> np.ndarray:
        """The character BiLSTM vector of each form, (len(forms), 2 char_hidden); forms of one length
        run as one batch."""
        out = np.zeros((len(forms), 2 * self.config.char_hidden), F32)
        by_length: dict[int, list[int]] = {}
        for k, form in enumerate(forms):
            by_length.setdefault(len(form), []).append(k)
        for length, ks in by_length.items():
            if length == 0:
                continue
            ids = np.array([[self.vocab.char(ch) for ch in forms[k]] for k in ks])        # (B, L)
            xs = self.chars[ids.T]                                                      # (L, B, char_dim)
            fwd = transduce(self.char_fwd, xs)[-1]
            bwd = transduce(self.char_bwd, xs[::-1])[-1]
            out[ks] = np.concatenate([fwd, bwd], axis=1)
        return out

    def token_vectors(self, keys: Sequence[tuple]) -> np.ndarray:
        """x for each key, (len(keys), token_dim): (form,) with the tagger, (form, UPOS) without. A
        token's vector depends on these only, so each is computed once and kept."""
        cache = self._token_cache
        new = list(dict.fromkeys(k for k in keys if k not in cache))
        if new:
            if len(cache) + len(new) > 500_000:
                cache.clear()
            forms = [k[0] for k in new]
            parts = [self.words[[self.vocab.word(f) for f in forms]]]
            if not self.config.tagger:
                parts.append(self.tags[[self.vocab.tag(k[1]) for k in new]])
            if self.config.char_hidden:
                parts.append(self.char_vectors(forms))
            if self.pretrained_index:
                parts.append(self.pretrained[[vector_row(self.pretrained_index, f, 0) for f in forms]])
            xs = np.maximum(np.concatenate(parts, axis=1) @ self.V + self.b, 0)
            cache.update(zip(new, xs))
        return np.array([cache[k] for k in keys], dtype=F32).reshape(len(keys), self.V.shape[1])

    @_quiet
    def tag_scores(self, sentences, predict: Sequence[bool]) -> "_Tagging":
        """The sentence encoder up to the tags (`_Tagging`): token vectors, and with the tagger its BiLSTM
        vectors e_i and the UPOS and XPOS scores of the sentences it tags (`predict`)."""
        lengths = np.array([len(s.forms) + 1 for s in sentences])
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.intp)
        keys = [(f,) for s in sentences for f in s.forms] if self.config.tagger else \
            [k for s in sentences for k in zip(s.forms, s.upos)]
        xs = np.insert(self.token_vectors(keys), starts - np.arange(len(starts)), self.root, axis=0)  # ROOT first
        if not self.config.tagger:
            return _Tagging(xs, starts, lengths, [None] * len(sentences))
        es = bilstm(self.tag_fwd, self.tag_bwd, xs, starts, lengths)
        scores = []
        for i in range(len(sentences)):
            words = slice(starts[i] + 1, starts[i] + lengths[i])
            scores.append(None if not predict[i] else
                          ((es[words] @ self.A_upos + self.a_upos).T,
                           None if self.A_xpos is None else (es[words] @ self.A_xpos + self.a_xpos).T))
        return _Tagging(es, starts, lengths, scores)

    @_quiet
    def encode(self, sentences, tagging: "_Tagging", tags: Sequence["_Tags | None"]) -> np.ndarray:
        """The items v_0..v_n of every sentence, stacked (sum of n + 1, item dim), from `tagging` and the tags
        the parser reads where the tagger tagged (`tags`, `choose_tags`; None: the sentence's own UPOS).

        With the tagger, e_i is joined with the embedding of the tag the parser reads (ROOT: the unknown tag;
        a predicted tag as `tag_reading` says: the best's, the expected one, or the unknown tag's)."""
        xs = tagging.vectors
        if self.config.tagger:
            tag_ids = np.zeros(len(xs), dtype=np.intp)
            mixed = []                          # (words, expected tag embeddings) of the predicted sentences
            for i, (s, chosen) in enumerate(zip(sentences, tags)):
                words = slice(tagging.starts[i] + 1, tagging.starts[i] + tagging.lengths[i])
                if chosen is None:
                    tag_ids[words] = [self.vocab.tag(u) for u in s.upos]
                    continue
                tag_ids[words] = 0 if self.config.tag_reading == "none" else chosen.upos
                if self.config.tag_reading == "expected":
                    mixed.append((words, chosen.distribution.astype(self.tags.dtype) @ self.tags[1:]))
            read = self.tags[tag_ids]
            for words, rows in mixed:
                read[words] = rows
            xs = np.concatenate([xs, read], axis=1)
        if self.config.context_layers:
            xs = bilstm(self.ctx_fwd, self.ctx_bwd, xs, tagging.starts, tagging.lengths)
        return xs

    def project(self, items: np.ndarray) -> np.ndarray:
        """Item vectors (B, item dim) -> their rows (B, width) of the item table."""
        return items @ self.item_map + self.item_bias

    # ---- decoding -----------------------------------------------------------------------------
    def parse(self, sentences, predict_tags: bool = False, choose: Chooser | None = None) -> list[Parsed]:
        """Greedy decoding of `sentences` (one batch, in lockstep): as `StackLSTMParser.parse` with
        beam 1, each final configuration and the tags predicted (which sentences the tagger tags:
        the model's rule).

        Args:
            sentences: objects with `forms` and `upos` (e.g. `conllu_io.Sentence`).
            predict_tags: tag every sentence (else only those without UPOS).
            choose: picks each action instead of the best-scoring legal one (tests, exploration).
        """
        return lockstep([self], sentences, predict_tags, choose)

    def begin(self, items_v: np.ndarray, starts: np.ndarray, n_words: list[int]) -> "_Run":
        """A batch's decoding state before its first action (`_Run`), from its items (`encode`)."""
        items = _Items(1 + len(items_v) + sum(n_words), self.item_map.shape[1])     # + one per arc
        items.add(self.project(self.absent[None, :]))
        first = items.add(self.project(items_v)).start
        rows = [list(range(first + s, first + s + n + 1)) for s, n in zip(starts, n_words)]
        for nodes in (self.stack, self.buffer, self.actions):
            nodes.reset()
        stack_top = list(self.stack.push(items.rows[[r[0] for r in rows], self.cols[0]],
                                         np.ones(len(rows), dtype=np.intp)))
        return _Run([self.system.initial(n) for n in n_words], rows, stack_top, self._initial_buffers(items, rows),
                    [1] * len(rows), items)

    def masks(self, legal: list[list[int]]) -> np.ndarray:
        """(len(legal), n_actions): 0 at the legal actions of each list, -inf elsewhere.

        A system hands out the same list for every configuration with the same valid moves
        (`TransitionSystem.legal`), so the rows are kept by list; the list is kept beside its row,
        so that an id is never read for another list's."""
        rows, cache = [], self._mask_rows
        for lg in legal:
            kept = cache.get(id(lg))
            if kept is None or kept[0] is not lg:
                if len(cache) > 10_000:
                    cache.clear()
                row = np.full(len(self.system.actions), -np.inf, F32)
                row[lg] = 0.0
                kept = cache[id(lg)] = (lg, row)
            rows.append(kept[1])
        return np.array(rows)

    def _initial_buffers(self, items: _Items, rows: list[list[int]]) -> list[int]:
        """Words n..1 pushed on each sentence's empty buffer, all sentences at once; the top nodes."""
        top = [1] * len(rows)
        lengths = [len(r) - 1 for r in rows]
        for t in range(max(lengths, default=0)):
            batch = [i for i, n in enumerate(lengths) if n > t]
            word_rows = [rows[i][lengths[i] - t] for i in batch]
            new = self.buffer.push(items.rows[word_rows, self.cols[1]], np.array([top[i] for i in batch]))
            for i, node in zip(batch, new):
                top[i] = node
        return top

    def scores(self, batch: list[int], state: "_Run") -> np.ndarray:
        """Action scores g = G p + q of the sentences `batch`, (B, n_actions)."""
        configs, rows, stack_top, buffer_top, action_top, items = state
        summaries = np.concatenate([self.stack.output([stack_top[i] for i in batch]),
                                    self.buffer.output([buffer_top[i] for i in batch]),
                                    self.actions.output([action_top[i] for i in batch])], axis=1)
        p = summaries @ self.W
        p += self.d
        if self.config.top_features:
            s0, s1, b0 = [], [], []
            for i in batch:
                stack, buffer, r = configs[i].stack, configs[i].buffer, rows[i]
                s0.append(r[stack[-1]] if stack else 0)
                s1.append(r[stack[-2]] if len(stack) > 1 else 0)
                b0.append(r[buffer[0]] if buffer else 0)
            for cols, which in zip(self.cols[4:7], (s0, s1, b0)):
                p += items.rows[which, cols]
        np.maximum(p, 0, out=p)
        scores = p @ self.G
        scores += self.q
        return scores

    def advance(self, active: list[int], chosen: list[int], state: "_Run") -> None:
        """Apply the chosen actions: the system's ops replayed on the stack-LSTMs and item rows.

        A sentence's ops run in order; pops are free, and each round batches, over the sentences,
        the next composition or push that each one waits on (an action has at most two)."""
        configs, rows, stack_top, buffer_top, action_top, items = state
        system, stack_parent, buffer_parent = self.system, self.stack.parent, self.buffer.parent
        pending = []
        for i, action in zip(active, chosen):
            ops = system.ops(configs[i], action)
            configs[i] = perform(configs[i], ops)
            pending.append((i, ops, 0))
        pop_stack, pop_buffer, push_stack, push_buffer = (OpKind.POP_STACK, OpKind.POP_BUFFER, OpKind.PUSH_STACK,
                                                          OpKind.PUSH_BUFFER)
        while pending:
            attach, to_stack, to_buffer, waiting = [], [], [], []
            for i, ops, k in pending:
                end = len(ops)
                while k < end:
                    op = ops[k]
                    k += 1
                    kind = op.kind
                    if kind is pop_stack:
                        stack_top[i] = stack_parent[stack_top[i]]
                    elif kind is pop_buffer:
                        buffer_top[i] = buffer_parent[buffer_top[i]]
                    else:
                        queue = to_stack if kind is push_stack else to_buffer if kind is push_buffer else attach
                        queue.append((i, op))
                        if k < end:
                            waiting.append((i, ops, k))
                        break
            if attach:
                self._compose(attach, rows, items)
            for todo, nodes, tops, cols in ((to_stack, self.stack, stack_top, self.cols[0]),
                                            (to_buffer, self.buffer, buffer_top, self.cols[1])):
                if todo:
                    new = nodes.push(items.rows[[rows[i][op.word] for i, op in todo], cols],
                                     np.array([tops[i] for i, _ in todo]))
                    for (i, _), node in zip(todo, new):
                        tops[i] = node
            pending = waiting
        new = self.actions.push(self.action_x[chosen], np.array([action_top[i] for i in active]))
        for i, node in zip(active, new):
            action_top[i] = node

    def _compose(self, attach: list, rows: list[list[int]], items: _Items) -> None:
        """v(head) <- tanh(U_h v(head) + U_d v(dep) + U_r r + e) for each (sentence, ATTACH op)."""
        heads = [rows[i][op.word] for i, op in attach]
        deps = [rows[i][op.dep] for i, op in attach]
        composed = items.rows[heads, self.cols[2]] + items.rows[deps, self.cols[3]]
        composed += self.relations[[self.label_index[op.label] for _, op in attach]]
        new = items.add(self.project(np.tanh(composed)))
        for (i, op), row in zip(attach, new):
            rows[i][op.word] = row


class _Tagging(NamedTuple):
    """A batch's sentence encoder up to the tags (`NumpyParser.tag_scores`): the vectors the parser's reading
    continues from (e_i with the tagger, else the token vectors), each sentence's first row and length (with
    ROOT), and each sentence's (UPOS, XPOS) scores (tags x words; XPOS None without them), None where the
    sentence's own UPOS are read."""
    vectors: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    scores: list


class _Tags(NamedTuple):
    """The tags chosen for a sentence's words (`choose_tags`): UPOS ids, the UPOS distribution over the known
    tags (words, tags - 1) or None where `tag_reading` does not read it, XPOS ids or None."""
    upos: list[int]
    distribution: np.ndarray | None
    xpos: list[int] | None


class _Run(NamedTuple):
    """One engine's decoding state of a batch (`NumpyParser.begin`): each sentence's configuration, the item
    rows of its words, the top nodes of its stack-, buffer- and action-LSTMs, and the item table."""
    configs: list[Configuration]
    rows: list[list[int]]
    stack_top: list[int]
    buffer_top: list[int]
    action_top: list[int]
    items: _Items


def choose_tags(scores: list, expected: bool) -> _Tags:
    """The tags of a sentence from its (UPOS, XPOS) scores by each engine: one engine's best tags (the unknown
    tag excluded); several engines' best under their mean distribution (`tag_distribution`). `expected`: keep
    the UPOS distribution (`tag_reading` expected)."""
    (upos, xpos), n = scores[0], scores[0][0].shape[1]
    if len(scores) == 1:
        distribution = tag_distribution(upos) if expected else None
        return _Tags(best_tags(upos, n), distribution, None if xpos is None else best_tags(xpos, n))
    distribution = np.mean([tag_distribution(u) for u, _ in scores], axis=0)
    mean_xpos = None if xpos is None else np.mean([tag_distribution(x) for _, x in scores], axis=0)
    return _Tags((distribution.argmax(axis=1) + 1).tolist(), distribution if expected else None,
                 None if mean_xpos is None else (mean_xpos.argmax(axis=1) + 1).tolist())


class Encoded(NamedTuple):
    """One batch through each engine's sentence encoder (`encode_batch`), ready to be decoded any number of times:
    per engine its `_Tagging` and its items (`NumpyParser.encode`), and per sentence the tags the parser reads
    (None: the sentence's own UPOS)."""
    taggings: list
    tags: list
    items: list


def encode_batch(engines: Sequence[NumpyParser], sentences, predict_tags: bool = False,
                 score_all: bool = False) -> Encoded:
    """The batch's `Encoded` for `lockstep`: the tagger tags the sentences the model's rule says (`to_tag`: those
    without UPOS, or all with `predict_tags`), each word's tags the best under the mean of the engines' tag
    distributions. With `score_all` every sentence's tag scores are kept in the taggings, the parser still
    reading the tags the rule says."""
    config = engines[0].config
    # which sentences the tagger tags, and the refusal of untagged input without one: the model's rule
    predict = to_tag(sentences, config.tagger, predict_tags)
    taggings = [e.tag_scores(sentences, [True] * len(sentences) if score_all else predict) for e in engines]
    expected = any(e.config.tag_reading == "expected" for e in engines)
    tags = [choose_tags([t.scores[i] for t in taggings], expected) if predict[i] else None
            for i in range(len(sentences))]
    return Encoded(taggings, tags, [e.encode(sentences, t, tags) for e, t in zip(engines, taggings)])


@_quiet
def lockstep(engines: Sequence[NumpyParser], sentences, predict_tags: bool = False,
             choose: Chooser | None = None, encoded: Encoded | None = None) -> list[Parsed]:
    """Greedy decoding of one batch by one engine or an ensemble of engines in lockstep (`NumpyParser.parse`),
    from the batch's `encode_batch` (made here if not given).

    An ensemble's engines are models of one treebank (`check_ensemble`): each word's tags are the best under
    the mean of the engines' tag distributions, and every engine reads them; each action is the best legal
    one under the mean of the engines' action distributions (softmax over the actions, `mean_probabilities`),
    and every engine takes it. Averaging probabilities, not scores: models trained apart put their scores on
    other scales."""
    first = engines[0]
    system = first.system
    if encoded is None:
        encoded = encode_batch(engines, sentences, predict_tags)
    tags = encoded.tags
    n_words = [len(s.forms) for s in sentences]
    runs = [e.begin(items, t.starts, n_words) for e, items, t in zip(engines, encoded.items, encoded.taggings)]
    configs = runs[0].configs
    active = [i for i in range(len(sentences)) if not system.is_terminal(configs[i])]
    while active:
        legal = [system.legal(configs[i]) for i in active]
        scored = [k for k, lg in enumerate(legal) if len(lg) > 1]
        scores = None
        if scored:
            batch = [active[k] for k in scored]
            scores = first.scores(batch, runs[0]) if len(engines) == 1 else \
                mean_probabilities([e.scores(batch, run) for e, run in zip(engines, runs)])
        if choose is not None:
            chosen = choose(active, configs, legal, scored, scores)
        else:
            chosen = [lg[0] for lg in legal]
            if scored:                                   # the best legal action of each, in one argmax
                best = (scores + first.masks([legal[k] for k in scored])).argmax(axis=1)
                for k, action in zip(scored, best.tolist()):
                    chosen[k] = action
        for engine, run in zip(engines, runs):
            engine.advance(active, chosen, run)
        active = [i for i in active if not system.is_terminal(configs[i])]
    vocab = first.vocab
    return [Parsed(c, *((None, None) if t is None else
                        ([vocab.upos[k] for k in t.upos], t.xpos and [vocab.xpos[k] for k in t.xpos])))
            for c, t in zip(configs, tags)]


class Ensemble:
    """Several numpy engines decoding as one (`lockstep`), for `parse_greedy`: models of one treebank and one
    transition system, trained apart (other seeds, other settings).

    Args:
        engines: the models' engines; `mismatch` of each with the first must be None."""

    def __init__(self, engines: Sequence[NumpyParser]):
        self.engines = list(engines)

    def parse(self, sentences, predict_tags: bool = False) -> list[Parsed]:
        return lockstep(self.engines, sentences, predict_tags)


def engine_for(models: Sequence) -> NumpyParser | Ensemble:
    """The numpy engine of one model, or of several decoding as one (`Ensemble`)."""
    engines = [NumpyParser(m) for m in models]
    return engines[0] if len(engines) == 1 else Ensemble(engines)


def refuse_ensemble(beam: int, engine: str) -> None:
    """The one-line error of an ensemble asked to decode other than greedily on the numpy engine."""
    if beam > 1 or engine != "numpy":
        raise UserError("an ensemble parses greedily on the numpy engine only (--beam 1, --engine numpy)")


def mismatch(first, other) -> str | None:
    """What keeps `other` from decoding beside `first` in an ensemble (None: nothing), each a model or its engine
    (what has `system`, `config` and `vocab`): the actions (the system and the treebank's labels) and the tags (the
    tagger, its UPOS and XPOS) must be the same."""
    if first.system.actions != other.system.actions:
        return "its transitions differ (another transition system, or another treebank's relations)"
    if first.config.tagger != other.config.tagger:
        return "one model has a tagger and the other not"
    if first.vocab.upos != other.vocab.upos or first.vocab.xpos != other.vocab.xpos:
        return "its tag sets differ (another treebank)"
    return None


def mean_probabilities(scores: list[np.ndarray]) -> np.ndarray:
    """log of the mean over the engines of each row's softmax, from each engine's scores (B, n_actions), in
    log space: a probability below float32's least (an action both models rule out) stays finite."""
    logs = [s - s.max(axis=1, keepdims=True) for s in scores]
    logs = [x - np.log(np.exp(x).sum(axis=1, keepdims=True)) for x in logs]
    return np.logaddexp.reduce(logs, axis=0) - np.log(len(scores))


def parse_greedy(engine: NumpyParser | Ensemble, sentences, batch_size: int = 256, progress=None,
                 words_per_batch: int = 8000, predict_tags: bool = False) -> list[Parsed]:
    """Greedy decoding with the numpy engine (as `parsers.decoding.parse_sentences` with beam 1), in
    batches of similar length (at most `batch_size` sentences and `words_per_batch` words)."""
    result: list[Parsed | None] = [None] * len(sentences)
    for chunk in length_batches([len(s.words) for s in sentences], batch_size, words_per_batch):
        for i, parsed in zip(chunk, engine.parse([sentences[i] for i in chunk], predict_tags)):
            result[i] = parsed
        if progress is not None:
            progress(sum(len(sentences[i].words) for i in chunk))
    return result


class Exploration(NamedTuple):
    """A sentence's roll-out: the actions drawn, and at each step where the choice was not forced the
    dynamic oracle's correct actions (None where it was), which the training graph then only reads."""
    actions: list[int]
    correct: list[list[int] | None]


def draw_explorations(engine: NumpyParser, sentences, alpha: float, rng: np.random.Generator,
                      batch_size: int = 256) -> list[Exploration]:
    """Each sentence's actions, each drawn with probability p^alpha over the legal ones (`model.draw`)
    from the engine's scores, with the dynamic oracle's answers on the way (the sentences' trees must be
    projective): the roll-outs of training with exploration, ahead of its graph."""
    out = [Exploration([], []) for _ in sentences]
    optimal = engine.system.optimal
    for chunk in length_batches([len(s.words) for s in sentences], batch_size, 8000):
        golds = [(tuple(sentences[i].heads), tuple(sentences[i].deprels)) for i in chunk]

        def choose(active, configs, legal, scored, scores, chunk=chunk, golds=golds):
            chosen = [lg[0] for lg in legal]
            correct: list = [None] * len(active)
            if scored:
                for k, action in zip(scored, draw(scores, [legal[k] for k in scored], alpha, rng)):
                    chosen[k], correct[k] = action, optimal(configs[active[k]], *golds[active[k]])
            for i, action, right in zip(active, chosen, correct):
                roll_out = out[chunk[i]]
                roll_out.actions.append(action)
                roll_out.correct.append(right)
            return chosen
        engine.parse([sentences[i] for i in chunk], choose=choose)
    return out


def _a(param) -> np.ndarray:
    """A DyNet parameter's values as a float32 array (DyNet hands them out as float64)."""
    return np.ascontiguousarray(param.as_array(), dtype=F32)


def _t(param) -> np.ndarray:
    """A DyNet weight matrix transposed, float32, for row-vector batches."""
    return np.ascontiguousarray(param.as_array().T, dtype=F32)


ENGINES = ("numpy", "dynet")
"""How greedy decoding runs: this module's engine, or DyNet graphs (`StackLSTMParser.parse`)."""
DEFAULT_BATCH = {"numpy": 256, "dynet": 32}
"""Sentences decoded in lockstep: the numpy engine's matrix products grow more efficient with the
batch, DyNet's autobatching walks a graph that grows with it."""


def decode(model, sentences, engine: str = "numpy", batch_size: int | None = None, progress=None,
           beam: int = 1, predict_tags: bool = False,
           numpy_parser: NumpyParser | Ensemble | None = None) -> list[Parsed]:
    """The parses of `sentences` (tags as `StackLSTMParser.parse` says) by `engine`; beam search
    (beam > 1) always runs on DyNet.

    Args:
        model: a trained `StackLSTMParser`; the numpy engine reads its weights now.
        engine: "numpy" or "dynet" (`ENGINES`).
        batch_size: sentences per lockstep batch; None: the engine's `DEFAULT_BATCH`.
        progress: called with the number of words of each finished batch.
        numpy_parser: the numpy engine of `model` if one is at hand (its token cache is kept), or an ensemble
            of engines with `model`'s first (`Ensemble`).
    """
    if engine not in ENGINES:
        raise UserError(f"unknown engine {engine!r}: choose one of {', '.join(ENGINES)}")
    if beam < 1:
        raise UserError(f"--beam must be at least 1 (got {beam})")
    if engine == "dynet" or beam > 1:
        return parse_sentences(model, sentences, batch_size or DEFAULT_BATCH["dynet"], progress, beam,
                               predict_tags=predict_tags)
    return parse_greedy(numpy_parser or NumpyParser(model), sentences, batch_size or DEFAULT_BATCH["numpy"], progress,
                        predict_tags=predict_tags)
