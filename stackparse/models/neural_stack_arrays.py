"""Full BPTT of the neural stack, queue and deque LSTMs and of the deep LSTM (`stackparse.models.neural_stack`) in
numpy, the derivatives written by hand: what their training runs (`stackparse.training.methods.TruncatedBPTT`
without cuts), and the same forward pass for scoring (`stackparse.evaluation.sequence.score_examples`). One
implementation for all four: the deep LSTM is the controller without a memory or an output layer (`MirrorParts`).

DyNet builds some eighty nodes a step for the LSTM controller, its signals and the memory, each costing far more
to build and run than its arithmetic at the paper's sizes (256 units, batch 10). Here a step is a few calls over the
whole minibatch: one matrix product for the LSTM's gates ([r_{t-1}; h_{t-1}] against the stacked weights; the
embeddings' share is one product over all steps), one compiled call for the cell's element-wise work (all four
gates' nonlinearities, c_t, h_t: `neural_stack_arrays.c`, which also holds their derivatives), one product for the
signals and one call for their nonlinearities, and one compiled call for the memory's pops, pushes and reads
(`stackparse.memories.grefenstette_arrays`). In numpy the element-wise work was some hundred operations a step,
each costing more in its call than in its arithmetic at these sizes; compiled, the step is bound by its products,
which read the whole weight matrices for ten rows (BENCHMARKS.md, issue 19's section). Each step writes into arrays
preallocated for the whole minibatch (`_Layer`), so nothing is gathered afterwards. Whatever does not feed the
recurrence waits for the whole sequence: the output layer o_t and the softmax are one product each over all steps,
and every weight's gradient is one product over all steps' (input, gradient) pairs. The kernels are compiled on
first use (`stackparse._native`); where they cannot be, `array_mirror()` gives None and DyNet's graph trains.

It mirrors the DyNet model exactly (the tests compare loss and gradients): the controller of
`stackparse.encoders.grefenstette` (DyNet's VanillaLSTMBuilder: gates i, f, o, g in that order, DyNet's forget bias
of 1 added to f's pre-activation, then the signals, with the deque's offsets), the memory's eq. 1-11, the
softmax output V o_t + c (the deep LSTM's: V h_t + c, its layers above the first reading [h below; x_t] with
`input_every_layer`), the loss Σ -log p(target) over the scored steps. Two things differ only in cost:
- Sequences run longest first, a finished one dropping out (the running ones are a prefix of the rows): its padded
  steps, which DyNet computes and masks, change nothing before them.
- DyNet's lookups touch every embedding row the padded minibatch names, padding included (their gradient may be 0),
  and its optimizers update the rows touched; `gradient` names the same rows.
The value matrix is preallocated, one row per push, the deque's bottom pushes filling it downwards from the
middle, so the live memory is a window of it (`live_rows`). A value's gradient is gathered when the backward pass
reaches its push, as its weight in every later read times that read's gradient (both kept whole: `_Forward.history`
and the backward pass's `g_reads`), instead of being accumulated into a matrix of the value matrix's size at every
step.
The weights are read, and their gradients added, through views of DyNet's memory (`stackparse._dynet_views`):
DyNet's own copies would cost more than the whole step.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import NamedTuple

import dynet as dy
import numpy as np

from stackparse._native import kernels as compiled
from stackparse._dynet_views import views
from stackparse.memories import grefenstette_arrays
from stackparse.sequences import Example, pad

FORGET_BIAS = 1.0
"""What DyNet's VanillaLSTMBuilder adds to the forget gate's pre-activation."""
FLOAT = np.float32
"""DyNet's precision."""


class MirrorParts(NamedTuple):
    """The parameters a model's mirror runs, as the model holds them: its LSTM's layers (DyNet's [W_x, W_h, b] each),
    which columns of each layer's W_x read the input x_t (`X_FIRST`: its first ones, the rest reading the layer below
    or the memory's reads; `X_LAST`: its last ones, after the layer below; `NO_X`: none), the learned h_0 per layer
    (none: a zero h_0), the output layer (W_o, b_o) whose o_t = tanh(W_o h_t + b_o) the softmax reads (None: the
    softmax reads the top layer's h_t), and the encoder whose neural memory the LSTM controls (None: no memory)."""
    layers: list
    x_columns: list[str]
    h0: list
    output: tuple | None = None
    memory: object | None = None


X_FIRST, X_LAST, NO_X = "first", "last", ""


class ArrayGradient(NamedTuple):
    """A minibatch's summed loss and its gradient: one array per parameter of `params`, in its shape, and per
    lookup table (LookupParameters, ids (k,), rows (k, dim)) the gradient of the rows the minibatch looked up."""
    loss: float
    params: list[dy.Parameters]
    grads: list[np.ndarray]
    lookups: list[tuple[dy.LookupParameters, np.ndarray, np.ndarray]]


def _halved(n_halved: int, n: int) -> np.ndarray:
    """(n,) ones with the first `n_halved` at 0.5: the columns whose pre-activations feed a logistic. Each logistic
    is taken as sigma(a) = (1 + tanh(a / 2)) / 2, with a / 2 from weights and biases halved beforehand, so that a
    layer's nonlinearities are one tanh over all its columns (halving is exact in floating point)."""
    scale = np.ones(n, FLOAT)
    scale[:n_halved] = 0.5
    return scale


@dataclass
class _Weights:
    """The model's parameters as float32 arrays, read once per minibatch; the weights of the products every step
    makes as `_Product`s, forward (x W^T, the logistics' columns halved: `_halved`) and backward (g W)."""
    x_in: list                  # per layer, (4h, input): its weights on x_t, or None
    gates: list[_Product]       # per layer, [r_{t-1} (layer 1) or h below; h_{t-1}] -> the gates' pre-activations
    gates_back: list[_Product]  # their gradients -> the operand's
    gate_bias: list[np.ndarray] # per layer (4h,), DyNet's forget bias added; per input symbol (n_inputs, 4h) where
                                # the layer reads x_t (its share W_x x_t + b, one row per symbol)
    signals: _Product | None    # o'_t -> the signals' pre-activations, [W_du; W_v] o'_t (None: no memory)
    signals_back: _Product | None
    signal_bias: np.ndarray | None  # the deque's offsets added
    output: np.ndarray | None   # W_o (h, h); None: no output layer
    output_bias: np.ndarray | None
    V: np.ndarray               # (n_outputs, h)
    c: np.ndarray
    h0: list[np.ndarray]        # per layer (h,), zeros without learned_h0
    embedding: np.ndarray       # (n_inputs, input): E, or the identity of one-hot inputs


SMALL_PRODUCT = 1_000_000
"""m n k up to which OpenBLAS's sgemm runs its small-matrix kernel, which packs neither operand (its
`sgemm_small_kernel_permit`: 100^3)."""
NARROWEST = 64
"""Column blocks narrower than this cost more than they save (at about 32 rows): one product instead."""
TRANSPOSED_UP_TO = 96
"""Column blocks of a column-major W (a backward product's W^T) at most this wide are used in place: OpenBLAS's
small kernel takes narrow ones as a transposed operand faster than a row-major copy, and wider ones far slower
(measured at 10 rows: BENCHMARKS.md, "The gates' backward product on W^T in place")."""


def live_rows(T: int, t: int, ends: int, bottoms: int) -> tuple[int, int]:
    """The rows of a T-step value matrix live after step t, [lo, hi), for a memory of `ends` pushes a step of which
    `bottoms` push at the bottom: the top pushes go upwards from row T bottoms, the bottom pushes downwards from it."""
    base = T * bottoms
    return base - bottoms * (t + 1), base + (ends - bottoms) * (t + 1)


FEW_ROWS = 32
"""Products of at most this many rows go to `few_row_products.c` where it runs: beyond, OpenBLAS's packing of W is
a small share of one call, and its kernels reach the arithmetic's speed."""
MOST_ROWS = 12
"""The rows `few_row_products.c` takes at once (its MOST_ROWS): its scratch holds K floats for each."""


class _Product:
    """x W for a fixed W (K, N) and x of at most `rows` rows. A step's products have few rows (the minibatch's
    running sequences) and large weights. Where the processor has AVX2 without AVX-512, W is packed once for the
    compiled product of `few_row_products.c` (twice OpenBLAS's speed there at ten rows: BENCHMARKS.md), which takes
    every call of two rows or more (at one row OpenBLAS is as fast). Elsewhere OpenBLAS's general sgemm would pack
    the whole W at every call, which costs more than the arithmetic; W is cut into blocks of columns whose products
    stay under `SMALL_PRODUCT`, each then done by the small-matrix kernel: about half the time at 10 rows
    (BENCHMARKS.md). Many rows: one product."""

    def __init__(self, W: np.ndarray, rows: int, scale: np.ndarray | None = None):
        """W's columns multiplied by `scale` (N,) first, if given."""
        K, self.n = W.shape
        self.kernel = _few_row_products() if rows <= FEW_ROWS else None
        if scale is not None:
            W = W * scale           # then packed: faster than numpy's multiply into the packed layout
        if self.kernel is not None:
            full, rest = divmod(self.n, 8)
            self.packed = np.empty((full + (rest > 0), K, 8), FLOAT)              # strip, k, its 8 columns
            self.packed[:full] = W[:, :8 * full].reshape(K, full, 8).transpose(1, 0, 2)
            if rest:
                self.packed[full, :, rest:] = 0
                self.packed[full, :, :rest] = W[:, 8 * full:]
            self.scratch = np.empty(K * MOST_ROWS, FLOAT)
            self.at = (self.packed.ctypes.data, self.scratch.ctypes.data)          # `_at`'s microsecond, once
            self.blocks = [(slice(0, self.n), W)]                                   # for a call of one row
            return
        width = SMALL_PRODUCT // max(rows * K, 1) // 16 * 16
        if width >= self.n or width < NARROWEST:
            width = self.n
        in_place = W.flags.f_contiguous and width <= TRANSPOSED_UP_TO
        self.blocks = [(slice(j, j + width), W[:, j:j + width] if in_place else np.ascontiguousarray(W[:, j:j + width]))
                       for j in range(0, self.n, width)]

    def __call__(self, x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        if self.kernel is not None and len(x) >= 2:
            if out is None:
                out = np.empty((len(x), self.n), FLOAT)
            assert x.dtype == out.dtype == FLOAT and x.strides[1] == out.strides[1] == x.itemsize    # rows in order
            packed, scratch = self.at
            self.kernel.packed_product(len(x), x.shape[1], self.n, x.ctypes.data, x.strides[0] // x.itemsize, packed,
                                       out.ctypes.data, out.strides[0] // out.itemsize, scratch)
            return out
        if len(self.blocks) == 1:
            return np.matmul(x, self.blocks[0][1], out=out)
        if out is None:
            out = np.empty((len(x), self.n), x.dtype)
        for columns, block in self.blocks:
            np.matmul(x, block, out=out[:, columns])
        return out


def _array(p) -> np.ndarray:
    """A parameter's values, float32 in its shape: a view of DyNet's memory where one can be had, else a copy."""
    view = views(p)
    return view.values if view is not None else p.as_array().astype(FLOAT)


class _Layer(NamedTuple):
    """One LSTM layer's values over the whole minibatch, a row per running sequence and step, the steps one after
    the other (step t's rows: `starts[t]` on): its operand [r_{t-1} (layer 1) or h below; h_{t-1}], the gates
    [i, f, o, g] after their nonlinearities, c_t, tanh(c_t) and h_t."""
    z: np.ndarray               # (N, below + h)
    act: np.ndarray             # (N, 4h)
    c: np.ndarray               # (N, h)
    tanh_c: np.ndarray          # (N, h)
    h: np.ndarray               # (N, h)


class _Forward(NamedTuple):
    """What the backward pass needs of the forward one: the memory's signals after their nonlinearities (N, S), its
    strengths after every step (T, B, R; `keep`), value matrix (B, R, m) and the weights of every read (B, T ends,
    R; `keep`), each layer's values, and where each step's rows start in them ((T + 1,): `starts[-1]` is the number
    of rows N)."""
    signals: np.ndarray | None
    strengths: np.ndarray | None
    values: np.ndarray | None
    history: np.ndarray | None
    layers: list[_Layer]
    starts: np.ndarray


class LSTMArrays:
    """The numpy mirror of an LSTM over embedded inputs read by a softmax, with or without a neural memory
    (`MirrorParts`): its training loss and gradient (`gradient`), its scores (`scores`)."""

    def __init__(self, model, parts: MirrorParts):
        self.model, self.parts = model, parts
        encoder = parts.memory
        self.layers, self.h = len(parts.layers), parts.layers[0][1].shape()[1]              # W_h: (4h, h)
        memory = encoder.memory_class if encoder is not None else None
        self.ends, self.m = (memory.ends, encoder.spec.memory_size) if memory else (0, 0)
        self.read_from_top, self.push_at_top = (memory.read_from_top, memory.push_at_top) if memory else ((), ())
        self.bottoms = sum(not top for top in self.push_at_top)       # ends pushing at the bottom
        self.signal_offsets = np.array(encoder.signal_offsets if memory else (), dtype=FLOAT)
        self.S = 2 * self.ends + self.ends * self.m                  # a step's signals: d_t, u_t per end, v_t
        self.read_bits = grefenstette_arrays.end_bits(self.read_from_top)
        self.push_bits = grefenstette_arrays.end_bits(self.push_at_top)
        self.memory = grefenstette_arrays.kernels() if memory else None

    def parameters(self) -> list[dy.Parameters]:
        """The trained parameters, in the order `gradient` gives their gradients."""
        e, model, parts = self.parts.memory, self.model, self.parts
        signals = [e.W_du, e.b_du, e.W_v, e.b_v] if e is not None else []
        return [*(p for layer in parts.layers for p in layer), *signals, *(parts.output or ()), model.V, model.c,
                *parts.h0]

    def _weights(self, rows: int) -> _Weights:
        """The weights, for steps of at most `rows` sequences."""
        e, model, h, ends, parts = self.parts.memory, self.model, self.h, self.ends, self.parts
        x = model.input_size()
        gate_scale = _halved(3 * h, 4 * h)                                               # i, f, o
        shift = np.zeros(4 * h, FLOAT)
        shift[h:2 * h] = FORGET_BIAS
        table = (model.E if model.E is not None else model.onehot).as_array().astype(FLOAT)
        x_in, gates, biases = [], [], []
        for (wx, wh, b), reads in zip(([_array(p) for p in layer] for layer in parts.layers), parts.x_columns):
            cut = {X_FIRST: x, X_LAST: wx.shape[1] - x, NO_X: wx.shape[1]}[reads]
            x_cols, below = (slice(0, cut), slice(cut, None)) if reads == X_FIRST else (slice(cut, None), slice(0, cut))
            gates.append(np.concatenate([wx[:, below].T, wh.T]))                        # W_x's other columns, W_h
            x_in.append(np.ascontiguousarray(wx[:, x_cols]) if reads else None)
            biases.append(table @ x_in[-1].T + b + shift if reads else b + shift)        # by input symbol
        signals = (None, None, None)
        if e is not None:
            weights = np.concatenate([_array(e.W_du).T, _array(e.W_v).T], axis=1)       # (h, 2 ends + ends m)
            bias = np.concatenate([_array(e.b_du), _array(e.b_v)])
            bias[:2 * ends] += self.signal_offsets
            scale = _halved(2 * ends, len(bias))                                         # d_t, u_t
            signals = (_Product(weights, rows, scale), _Product(weights.T, rows), bias * scale)
        output = [_array(p) for p in parts.output] if parts.output else (None, None)
        return _Weights(
            x_in=x_in, gates=[_Product(g, rows, gate_scale) for g in gates],
            gates_back=[_Product(g.T, rows) for g in gates], gate_bias=[b * gate_scale for b in biases],
            signals=signals[0], signals_back=signals[1], signal_bias=signals[2],
            output=output[0], output_bias=output[1], V=_array(model.V), c=_array(model.c),
            h0=[_array(p) for p in parts.h0] or [np.zeros(h, FLOAT)] * self.layers, embedding=table)

    def gradient(self, batch: list[Example]) -> ArrayGradient:
        """Σ over the minibatch's sequences and scored steps of -log p(target), and its gradient (not divided by
        the number of sequences)."""
        _, inputs, targets, mask, active = _longest_first(batch)
        ids = np.concatenate([inputs[t, :k] for t, k in enumerate(active)])      # (N,): the steps run, in order
        w = self._weights(len(batch))
        forward = self._forward(w, inputs, active, keep=True)
        loss, g_hidden, readout = _readout(w, forward.layers[-1].h, targets, mask, active)
        lstm, signals, h0, g_embedding = self._backward(w, forward, g_hidden, ids)
        grads = [*lstm, *signals, *readout, *(h0 if self.parts.h0 else [])]
        lookups = []
        if self.model.E is not None:
            touched = np.unique(inputs)                                           # padding included, as DyNet's
            lookups = [(self.model.E, touched, g_embedding[touched])]
        return ArrayGradient(loss, self.parameters(), grads, lookups)

    def scores(self, examples: list[Example]) -> np.ndarray:
        """The output scores V o_t + c of every step of `examples`, each from the initial state: (n_outputs, T, B),
        padded (0 past an example's end), in the order given."""
        order, inputs, _, _, active = _longest_first(examples)
        w = self._weights(len(examples))
        _, flat = _outputs(w, self._forward(w, inputs, active, keep=False).layers[-1].h)   # (N, n_outputs)
        scores = np.zeros((len(w.c), *inputs.shape), FLOAT)
        start = 0
        for t, k in enumerate(active):
            scores[:, t, order[:k]] = flat[start:start + k].T
            start += k
        return scores

    # ---- the forward pass --------------------------------------------------------------------------------------
    def _forward(self, w: _Weights, inputs: np.ndarray, active: list[int], keep: bool) -> _Forward:
        """Every step's values; the memory's strengths and reads' weights, which only the backward pass needs, only
        with `keep`."""
        T, B = inputs.shape
        h, m, ends, cell = self.h, self.m, self.ends, _cell_kernels()
        starts = np.concatenate([[0], np.cumsum(active)])
        N = int(starts[-1])
        layers = [_Layer(np.empty((N, below + h), FLOAT), np.empty((N, 4 * h), FLOAT),
                         *(np.empty((N, h), FLOAT) for _ in range(3)))
                  for below in [ends * m] + [h] * (self.layers - 1)]
        symbol_bias = [b[inputs] if b.ndim == 2 else b for b in w.gate_bias]   # (T, B, 4h) where by input symbol
        hs = [np.broadcast_to(h0, (B, h)) for h0 in w.h0]
        read = np.zeros((B, ends * m), FLOAT)
        act, c, tanh_c, h_out = ([_rows(getattr(x, name)) for x in layers] for name in ("act", "c", "tanh_c", "h"))
        bias_at = [_rows(b) if b.ndim == 3 else (lambda _, at=_at(b): at) for b in symbol_bias]    # step t's
        bias_stride = [4 * h if b.ndim == 3 else 0 for b in symbol_bias]
        signals = strengths = values = history = None
        if ends:
            memory, R = self.memory, self._slots(T)
            signals = np.empty((N, self.S), FLOAT)
            values = np.zeros((B, R, m), FLOAT)
            history = np.zeros((B, T * ends, R), FLOAT) if keep else None
            strengths = np.zeros((T if keep else 2, B, R), FLOAT)          # without `keep`, two in turn
            scratch = np.empty(R, FLOAT)                                    # held here: the kernel writes to it
            signals_at, strengths_at = _rows(signals), _rows(strengths)
            constants = _at(w.signal_bias), _at(values), _at(read), _at(history) if keep else None, _at(scratch)
            signal_bias, values_at, read_at, history_at, scratch_at = constants
        for t, k in enumerate(active):
            rows, first = slice(starts[t], starts[t] + k), int(starts[t])
            # the controller (DyNet's VanillaLSTMBuilder), layer by layer
            below = read[:k]
            for layer, x in enumerate(layers):
                z = x.z[rows]
                split = z.shape[1] - h
                z[:, :split] = below
                z[:, split:] = hs[layer][:k]
                w.gates[layer](z, out=x.act[rows])
                cell.cell_forward(k, h, act[layer](first), bias_at[layer](t), bias_stride[layer],
                                  c[layer](starts[t - 1]) if t else None, c[layer](first), tanh_c[layer](first),
                                  h_out[layer](first))
                below = hs[layer] = x.h[rows]
            if not ends:
                continue
            # the signals d_t, u_t per end (interleaved), v_t, then the memory: pops (eq. 2, 4, 7-8), pushes (eq. 1,
            # 6, 9) and the reads of the next step (eq. 3, 5, 10-11)
            w.signals(below, out=signals[rows])
            cell.activate(k, self.S, signals_at(first), signal_bias, 0, 2 * ends)
            (lo, hi), previous = self._window(T, t), self._window(T, t - 1)
            memory.memory_forward(k, ends, self.read_bits, self.push_bits, m, R, signals_at(first), self.S,
                                  strengths_at((t - 1) % len(strengths)) if t else None, *previous,
                                  strengths_at(t % len(strengths)), lo, hi, values_at,
                                  read_at if t + 1 < len(active) else None, history_at, T * ends, t * ends, scratch_at)
        return _Forward(signals, strengths, values, history, layers, starts)

    def _slots(self, T: int) -> int:
        """The value matrix's rows for T steps: one per push."""
        return T * len(self.push_at_top)

    def _window(self, T: int, t: int) -> tuple[int, int]:
        return live_rows(T, t, len(self.push_at_top), self.bottoms)

    # ---- the backward pass -------------------------------------------------------------------------------------
    def _backward(self, w: _Weights, forward: _Forward, g_hidden: np.ndarray, ids: np.ndarray):
        """The gradients of the LSTM's weights (per layer W_x, W_h, b), of the signals' (W_du, b_du, W_v, b_v), of
        h_0 (per layer), and of the embedding table (n_inputs, input), given those of every step's o'_t from the
        output, (N, h); `ids` are the input symbols of the steps run, in order."""
        signals, strengths, values, history, layers, starts = forward
        B, T, h, m, ends, cell = int(starts[1]), len(starts) - 1, self.h, self.m, self.ends, _cell_kernels()
        gh = [np.zeros((B, h), FLOAT) for _ in range(self.layers)]
        gc = [np.zeros((B, h), FLOAT) for _ in range(self.layers)]
        no_c = np.zeros(h, FLOAT)                               # c_{-1}
        g_read = np.zeros((B, ends * m), FLOAT)                 # of r_t, read after step t by step t + 1
        g_gates = [np.empty_like(x.act) for x in layers]        # of the gates' pre-activations, (N, 4h) per layer
        act, c, tanh_c = ([_rows(getattr(x, name)) for x in layers] for name in ("act", "c", "tanh_c"))
        g_act = [_rows(g) for g in g_gates]
        gh_at, gc_at, no_c_at = [_at(g) for g in gh], [_at(g) for g in gc], _at(no_c)
        g_signals = None
        if ends:
            memory, R = self.memory, self._slots(T)
            g_reads = np.zeros((B, T * ends, m), FLOAT)         # of every read, the ends' in turn
            g_strengths = np.zeros((B, R), FLOAT)               # of s_t, from step t + 1's pops (`memory_backward`)
            g_signals = np.empty_like(signals)
            scratch = np.empty(2 * R, FLOAT)
            signals_at, g_signals_at, strengths_at = _rows(signals), _rows(g_signals), _rows(strengths)
            constants = _at(g_strengths), _at(values), _at(history), _at(g_reads), _at(g_read), _at(scratch)
            g_strengths_at, values_at, history_at, g_reads_at, g_read_at, scratch_at = constants
        for t in range(T - 1, -1, -1):
            k, first = int(starts[t + 1] - starts[t]), int(starts[t])
            rows = slice(first, first + k)
            if not ends:
                g_above = g_hidden[rows]
            else:
                memory.memory_backward(k, ends, self.read_bits, self.push_bits, m, R, signals_at(first), self.S,
                                       g_signals_at(first), strengths_at(t - 1) if t else None,
                                       *self._window(T, t - 1), strengths_at(t), *self._window(T, t), g_strengths_at,
                                       values_at, history_at, g_reads_at, T * ends, t * ends,
                                       g_read_at if t + 1 < T else None, scratch_at)
                cell.activate_backward(k, self.S, signals_at(first), g_signals_at(first), 2 * ends)
                g_above = w.signals_back(g_signals[rows])
                g_above += g_hidden[rows]
            # the LSTM, top layer first
            for layer in range(self.layers - 1, -1, -1):
                cell.cell_backward(k, h, act[layer](first), tanh_c[layer](first),
                                   c[layer](starts[t - 1]) if t else None, _at(g_above),
                                   g_above.strides[0] // g_above.itemsize, gh_at[layer], gc_at[layer],
                                   g_act[layer](first), no_c_at)
                g_z = w.gates_back[layer](g_gates[layer][rows])
                split = g_z.shape[1] - h
                g_above, gh[layer][:k] = g_z[:, :split], g_z[:, split:]
            g_read[:k] = g_above                                 # layer 1's: of r_{t-1}
        # Each weight's gradient is computed transposed, (inputs, outputs) row-major: DyNet's column-major layout,
        # so that `PrecomputedLoss` adds it into DyNet's memory in order.
        lstm, g_x = [], np.zeros((len(ids), w.embedding.shape[1]), FLOAT)       # g_x: of every step's x_t
        x_t = w.embedding[ids].T                                                   # (input, N), for every layer
        for x, g_a, reads, x_in in zip(layers, g_gates, self.parts.x_columns, w.x_in):
            g_w = x.z.T @ g_a                                                      # (below + h, 4h)
            split = len(g_w) - h
            g_wx = g_w[:split]
            if reads:
                g_x += g_a @ x_in
                by_x = x_t @ g_a
                g_wx = np.concatenate([by_x, g_wx] if reads == X_FIRST else [g_wx, by_x])
            lstm += [g_wx.T, g_w[split:].T, g_a.sum(axis=0)]
        signals = []
        if ends:
            g_ws = (layers[-1].h.T @ g_signals).T                                   # (2 ends + ends m, h)
            g_bs = g_signals.sum(axis=0)
            signals = [g_ws[:2 * ends], g_bs[:2 * ends], g_ws[2 * ends:], g_bs[2 * ends:]]
        by_symbol = np.zeros((len(w.embedding), len(ids)), FLOAT)                  # one-hot, (n_inputs, N)
        by_symbol[ids, np.arange(len(ids))] = 1
        return lstm, signals, [g.sum(axis=0) for g in gh], by_symbol @ g_x


@cache
def _few_row_products():
    """The compiled product of few rows (`few_row_products.c`), or None where it does not run: no C compiler, or a
    processor without AVX2 and FMA, or with AVX-512 (OpenBLAS's kernels there)."""
    kernel = compiled(Path(__file__).with_name("few_row_products.c"),
                      {"few_row_products_available": "p", "packed_product": "iiipippip"})
    if kernel is None:
        return None
    yes = np.zeros(1, np.int32)
    kernel.few_row_products_available(yes.ctypes.data)
    return kernel if yes[0] else None


@cache
def _cell_kernels():
    """The compiled element-wise steps: `activate`, `activate_backward`, `cell_forward`, `cell_backward` (their
    arguments are documented in `neural_stack_arrays.c`), or None where no C compiler works (`stackparse._native`)."""
    return compiled(Path(__file__).with_suffix(".c"), {"activate": "iippii", "activate_backward": "iippi",
                                                       "cell_forward": "iippipppp", "cell_backward": "iippppipppp"})


def available(memory: bool) -> bool:
    """Whether the mirror's compiled kernels load here (a model with a neural memory needs the memory's too)."""
    return _cell_kernels() is not None and (not memory or grefenstette_arrays.kernels() is not None)


def _at(array: np.ndarray) -> int:
    """The address of `array`'s first element, for the kernels."""
    return array.ctypes.data


def _rows(array: np.ndarray):
    """row -> the address of `array`'s row `row` along its first axis (`ctypes.data` costs a microsecond a call,
    some thirty times a step)."""
    base, stride = array.ctypes.data, array.strides[0]
    return lambda row: base + int(row) * stride


def _longest_first(batch: list[Example]):
    """The minibatch padded with its sequences longest first (stable) and their order in `batch`; and at each step
    how many still run (a prefix of the rows): (order, inputs, targets, mask, active)."""
    order = sorted(range(len(batch)), key=lambda b: -len(batch[b]))
    inputs, targets, mask = pad([batch[b] for b in order])                        # (T, B)
    lengths = np.array([len(batch[b]) for b in order])
    return np.array(order), inputs, targets, mask, [int((lengths > t).sum()) for t in range(len(inputs))]


def _outputs(w: _Weights, hidden: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """o_t = tanh(W_o o'_t + b_o) (without an output layer, o'_t itself) and the scores V o_t + c, for the rows o'_t
    of `hidden`."""
    out = hidden if w.output is None else np.tanh(hidden @ w.output.T + w.output_bias)
    return out, out @ w.V.T + w.c


def _readout(w: _Weights, hidden: np.ndarray, targets: np.ndarray, mask: np.ndarray, active: list[int]):
    """The loss Σ mask -log softmax(V tanh(W_o o'_t + b_o) + c)[target] (or V o'_t + c) over all steps at once, given
    every step's o'_t, (N, h); the gradient of every o'_t, (N, h), and those of W_o and b_o (if any), V and c."""
    target = np.concatenate([targets[t, :k] for t, k in enumerate(active)])
    weight = np.concatenate([mask[t, :k] for t, k in enumerate(active)]).astype(FLOAT)
    out, scores = _outputs(w, hidden)
    scores -= scores.max(axis=1, keepdims=True)
    exp = np.exp(scores)
    total = exp.sum(axis=1)
    rows = np.arange(len(target))
    loss = float(np.sum(weight.astype(np.float64) * (np.log(total) - scores[rows, target])))
    g_scores = exp / total[:, None] * weight[:, None]
    g_scores[rows, target] -= weight
    readout = [(out.T @ g_scores).T, g_scores.sum(axis=0)]
    if w.output is None:
        return loss, g_scores @ w.V, readout
    g_pre = (g_scores @ w.V) * (1 - out ** 2)
    return loss, g_pre @ w.output, [(hidden.T @ g_pre).T, g_pre.sum(axis=0), *readout]
