"""Distilling an ensemble of parsers into one (Liu et al. 2018, "Distilling Knowledge for Search-based
Structured Prediction", ACL): what the teachers say of each training sentence, computed once before training.

Several parsers trained apart parse better together (`parsers.inference.Ensemble`) than each alone, at the price
of their speed. Here their knowledge is handed to one student, which parses at one model's speed:
    - on the *reference path* (the static oracle's actions), the student learns the teachers' mean distribution
      over the legal actions at each configuration beside the oracle's action (Liu et al.'s "distillation from
      reference": the ensemble says which wrong actions are nearly right);
    - on *paths the teachers sample* (each action drawn from their mean distribution), the student learns their
      distribution at configurations the oracle never visits, those a parser's mistakes lead to (their
      "distillation from exploration", in place of the student's own exploration with a dynamic oracle);
    - for the tagger, the teachers' mean UPOS and XPOS distributions of each word beside the gold tag.
The loss (`parsers.model.StackLSTMParser.loss`): -Σ_t [w Σ_a q_t(a) log p_t(a) + (1 - w) log p_t(gold_t)] on the
reference path, -Σ_t Σ_a q_t(a) log p_t(a) on a sampled one, and the tags' alike, w = `distill`. Which path a
sentence follows is drawn each epoch (`ParserObjective`).

The teachers read the treebank's UPOS on both paths, as the student does in training (`gold_tags` 1). A teacher's
distribution is kept at its `TOP` likeliest legal actions, renormalised (the rest hold a negligible mass and would
cost memory at every step of every path).
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Sequence

import numpy as np

from parsers.decoding import length_batches
from parsers.inference import Encoded, NumpyParser, encode_batch, lockstep
from parsers.model import draw, tag_distribution

TOP = 8
"""Actions kept of a teacher's distribution at each step."""


class Path(NamedTuple):
    """One derivation of a sentence with the teachers' distribution at each step: the actions taken, and the
    `TOP` likeliest legal actions `ids` (steps, TOP) with their probabilities `probs` (rows summing to 1; a row of
    zeros where the step was forced, one action being legal). `reference`: the oracle's path (each action is the
    gold one), else sampled from the teachers."""
    actions: list[int]
    ids: np.ndarray
    probs: np.ndarray
    reference: bool


class Lesson(NamedTuple):
    """What the teachers say of one sentence: its paths (the reference first, then the sampled ones) and their
    mean UPOS and XPOS distributions over the known tags, (words, tags - 1) (None: no tagger, or no XPOS)."""
    paths: list[Path]
    upos: np.ndarray | None
    xpos: np.ndarray | None


def teach(engines: Sequence[NumpyParser], sentences, oracles: list[list[int]], samples: int,
          rng: np.random.Generator, temperature: float = 1.0, batch_size: int = 256,
          progress: Callable[[int], None] | None = None) -> list[Lesson]:
    """Each sentence's `Lesson` from the teachers' engines (models of the student's treebank and system:
    `parsers.inference.mismatch`): the reference path along `oracles[i]` and `samples` paths drawn from the
    teachers' mean distribution. The distributions taught are the teachers' mean p raised to 1 / `temperature`,
    renormalised (Hinton et al. 2015: above 1, softer; the paths are drawn from p itself). `progress` is called
    with each batch's number of words."""
    lessons: list[Lesson | None] = [None] * len(sentences)
    for chunk in length_batches([len(s.words) for s in sentences], batch_size, 8000):
        batch = [sentences[i] for i in chunk]
        encoded = encode_batch(engines, batch, score_all=True)       # once for the tags and every path
        upos, xpos = _tags(encoded.taggings, temperature)
        paths = [_path(engines, batch, encoded, [oracles[i] for i in chunk], None, temperature)]
        paths += [_path(engines, batch, encoded, None, rng, temperature) for _ in range(samples)]
        for k, i in enumerate(chunk):
            lessons[i] = Lesson([p[k] for p in paths], upos[k], xpos[k])
        if progress is not None:
            progress(sum(len(s.words) for s in batch))
    return lessons


def _tags(taggings: list, temperature: float) -> tuple[list, list]:
    """Each sentence's mean UPOS and XPOS distributions over the engines' `taggings` (every sentence scored), at
    `temperature` (None where there are none)."""
    upos, xpos = [], []
    for k in range(len(taggings[0].scores)):
        scores = [t.scores[k] for t in taggings]
        if scores[0] is None:
            upos.append(None)
            xpos.append(None)
            continue
        upos.append(_soften(np.mean([tag_distribution(u) for u, _ in scores], axis=0), temperature))
        xpos.append(None if scores[0][1] is None else
                    _soften(np.mean([tag_distribution(x) for _, x in scores], axis=0), temperature))
    return upos, xpos


def _path(engines: Sequence[NumpyParser], batch, encoded: Encoded, oracles: list[list[int]] | None,
          rng: np.random.Generator | None, temperature: float) -> list[Path]:
    """Each sentence's path through the teachers' lockstep decoding: the oracle's actions, or (`oracles` None)
    actions drawn from the teachers' mean distribution with `rng`; the distribution kept at each step is at
    `temperature`."""
    actions = [[] for _ in batch]
    rows = [[] for _ in batch]

    def choose(active, configs, legal, scored, scores):
        chosen = [lg[0] for lg in legal]
        open_rows = dict(zip(scored, range(len(scored))))
        sampled = {} if oracles is not None or not scored else \
            dict(zip(scored, draw(scores, [legal[k] for k in scored], 1.0, rng)))
        for k, i in enumerate(active):
            if k not in open_rows:
                rows[i].append((np.full(TOP, legal[k][0]), np.zeros(TOP, np.float32)))
            else:
                ids, probs = _distribution(scores[open_rows[k]], legal[k], temperature)
                rows[i].append(_top(ids, probs))
                chosen[k] = oracles[i][len(actions[i])] if oracles is not None else sampled[k]
            actions[i].append(chosen[k])
        return chosen

    lockstep(engines, batch, choose=choose, encoded=encoded)
    return [Path(a, np.array([ids for ids, _ in r], np.int32), np.array([p for _, p in r], np.float32),
                 oracles is not None) for a, r in zip(actions, rows)]


def _distribution(scores: np.ndarray, legal: list[int], temperature: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(legal action ids, their probabilities) from one configuration's scores: a softmax over the legal actions
    of scores / `temperature`. `lockstep` hands an ensemble's scores as log mean probabilities
    (`mean_probabilities`): their softmax over the legal actions is the mean distribution renormalised to them."""
    logits = np.asarray(scores, dtype=np.float64)[legal] / temperature
    p = np.exp(logits - logits.max())
    return np.asarray(legal), p / p.sum()


def _soften(p: np.ndarray, temperature: float) -> np.ndarray:
    """Each row of p raised to 1 / temperature and renormalised, float32."""
    if temperature != 1:
        p = p ** (1 / temperature)
        p /= p.sum(axis=1, keepdims=True)
    return p.astype(np.float32)


def _top(ids: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The `TOP` likeliest of (ids, probs), renormalised; padded with the first id at probability 0."""
    order = np.argsort(-probs, kind="stable")[:TOP]
    kept, p = ids[order], probs[order] / probs[order].sum()
    pad = TOP - len(kept)
    return np.concatenate([kept, np.full(pad, kept[0])]), np.concatenate([p, np.zeros(pad)]).astype(np.float32)

