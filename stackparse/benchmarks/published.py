"""Numbers published in the papers we reproduce, keyed the way our results are.

Joulin & Mikolov (2015), Table 2: percent of n in 1..60 whose deterministic part is predicted correctly, training on n <
20. Every column checked against the paper's text (NeurIPS version). Table 4: perplexity on the Penn Treebank, 100
hidden units (Stack RNN: 60 stacks, recurrent matrix). Grefenstette et al. (2015), Table 3: coarse and fine accuracy on
the transduction tasks, checked against the paper's text (arXiv v3, the NeurIPS version with its appendices).
"""

JOULIN_MIKOLOV_TABLE2 = {
    # task: {column: percent}
    "anbn":     {"rnn": 25.0, "lstm": 100.0, "list-rnn": 100.0, "stack-rnn": 100.0, "stack-rnn+rounding": 100.0},
    "anbncn":   {"rnn": 23.3, "lstm": 100.0, "list-rnn": 33.3, "stack-rnn": 100.0, "stack-rnn+rounding": 100.0},
    "anbncndn": {"rnn": 13.3, "lstm": 68.3, "list-rnn": 100.0, "stack-rnn": 100.0, "stack-rnn+rounding": 100.0},
    "anb2n":    {"rnn": 23.3, "lstm": 75.0, "list-rnn": 100.0, "stack-rnn": 100.0, "stack-rnn+rounding": 100.0},
    "anbmcnm":  {"rnn": 33.3, "lstm": 100.0, "list-rnn": 100.0, "stack-rnn": 43.3, "stack-rnn+rounding": 100.0},
}

JOULIN_MIKOLOV_TABLE4 = {
    # Penn Treebank perplexity (validation: RNN 137, LSTM 120, Stack RNN 124); keyed by our task name.
    "treebank-lm": {"rnn": 129.0, "lstm": 115.0, "stack-rnn": 118.0},
}

GREFENSTETTE_TABLE3_MEASURES = ("train coarse", "train fine", "test coarse", "test fine")
GREFENSTETTE_TABLE3 = {
    # Table 3 (Appendix E, arXiv v3), every row: the 1-, 2-, 4- and 8-layer LSTMs (deep-lstm-K) and the Stack-, Queue-
    # and DeQue-LSTMs, each the best of its kind by training perplexity (§5). "test": source lengths 65-128, "train":
    # sampled like the training data. Figure 2(a) repeats the rows of the best deep LSTM per task and of the memory
    # models, except Queue-LSTM reversal, test fine 0.01 there and 0.07 in Table 3.
    "copy":        {"deep-lstm-1": (0.62, 0.87, 0.00, 0.38), "deep-lstm-2": (0.80, 0.95, 0.00, 0.47),
                    "deep-lstm-4": (0.98, 0.98, 0.01, 0.50), "deep-lstm-8": (0.57, 0.83, 0.00, 0.31),
                    "neural-stack": (0.89, 0.94, 0.00, 0.22), "neural-queue": (1.00, 1.00, 1.00, 1.00),
                    "neural-deque": (1.00, 1.00, 1.00, 1.00)},
    "reversal":    {"deep-lstm-1": (0.78, 0.87, 0.01, 0.09), "deep-lstm-2": (0.91, 0.94, 0.02, 0.06),
                    "deep-lstm-4": (0.93, 0.96, 0.03, 0.15), "deep-lstm-8": (0.95, 0.98, 0.04, 0.13),
                    "neural-stack": (1.00, 1.00, 1.00, 1.00), "neural-queue": (0.44, 0.61, 0.00, 0.07),
                    "neural-deque": (1.00, 1.00, 1.00, 1.00)},
    "bigram-flip": {"deep-lstm-1": (0.53, 0.93, 0.01, 0.53), "deep-lstm-2": (0.54, 0.93, 0.02, 0.52),
                    "deep-lstm-4": (0.52, 0.93, 0.01, 0.56), "deep-lstm-8": (0.52, 0.93, 0.01, 0.53),
                    "neural-stack": (0.44, 0.90, 0.00, 0.48), "neural-queue": (0.55, 0.94, 0.55, 0.98),
                    "neural-deque": (0.55, 0.94, 0.53, 0.98)},
    "svo-sov":     {"deep-lstm-1": (0.96, 0.98, 0.96, 0.99), "deep-lstm-2": (0.97, 0.99, 0.96, 0.99),
                    "deep-lstm-4": (0.97, 0.99, 0.97, 0.99), "deep-lstm-8": (0.98, 0.99, 0.98, 0.99),
                    "neural-stack": (1.00, 1.00, 1.00, 1.00), "neural-queue": (1.00, 1.00, 1.00, 1.00),
                    "neural-deque": (1.00, 1.00, 1.00, 1.00)},
    "gender":      {"deep-lstm-1": (0.97, 0.99, 0.97, 0.99), "deep-lstm-2": (0.98, 0.99, 0.98, 0.99),
                    "deep-lstm-4": (0.98, 0.99, 0.98, 0.99), "deep-lstm-8": (0.98, 0.99, 0.99, 0.99),
                    "neural-stack": (0.93, 0.97, 0.93, 0.97), "neural-queue": (1.00, 1.00, 1.00, 1.00),
                    "neural-deque": (1.00, 1.00, 1.00, 1.00)},
}


def grefenstette_table3(measure: str) -> dict:
    """task -> column -> the paper's number for one of GREFENSTETTE_TABLE3_MEASURES."""
    i = GREFENSTETTE_TABLE3_MEASURES.index(measure)
    return {task: {column: row[i] for column, row in columns.items()} for task, columns in GREFENSTETTE_TABLE3.items()}


# Mali, Ororbia & Giles, "The Neural State Pushdown Automata": the tables as printed (shared/reproduction-gaps.md
# §4.1 extracts them), task -> column label of our suites -> number. "Parenthesis" is read as Dyck(2); M1 is the
# second-order NSPDA (nspda2), M2 the third-order one (nspda3). Tables 1, 2, 3, 5 and 6 have no Dyck(2) column.
MALI_LANGUAGES4 = ("pda-palindrome", "pda-anbn", "pda-anbncbmam", "pda-anmbncm")
MALI_LANGUAGES = (*MALI_LANGUAGES4, "pda-dyck2")


def _by_task(rows: dict[str, tuple], tasks: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """{label: one number per task} -> {task: {label: number}}; None (a cell the paper marks NA) is left out."""
    return {t: {label: row[i] for label, row in rows.items() if row[i] is not None} for i, t in enumerate(tasks)}


def _orders(rows: dict[str, tuple]) -> dict[str, tuple]:
    """Rows of (W1/M1, W2/M2) pairs per language -> a "LABEL M1" and a "LABEL M2" row."""
    return {f"{label} {m}": values[i::2] for label, values in rows.items() for i, m in enumerate(("M1", "M2"))}


# Table 1: NSPDAs trained with and without hints (the paper states no unit; we read it as epochs to convergence).
MALI_TABLE1 = _by_task(_orders({
    "NNPDA w/o hints": (100, 81, 280, 215, None, None, None, None),
    "NNPDA w/ dead neuron hints": (92, 83, 212, 192, 485, 145, 250, 195),
    "NSPDA w/o hints": (91, 79, 221, 192, 488, 159, 339, 293),
    "NSPDA w/ Hint #1": (80, 75, 190, 170, 410, 140, 240, 160),
    "NSPDA w/ Hint #2": (70, 72, 150, 138, 389, 134, 222, 148)}), MALI_LANGUAGES4)
# Table 2: incremental learning, NSPDA without hints: characters to convergence (">200000" kept as 200000).
MALI_TABLE2 = _by_task(_orders({
    "Standard": (5699, 5912, 200000, 210000, 240000, 233000, 320000, 315000),
    "IL": (2678, 2552, 108200, 104556, 192001, 192551, 222171, 222144),
    "2-IL": (2001, 2199, 9899, 10001, 130192, 129998, 177189, 177190)}), MALI_LANGUAGES4)
# Table 3: test error (%) of the NSPDA without and with the noise regulariser.
MALI_TABLE3 = _by_task(_orders({
    "w/o reg": (4.55, 2.99, 1.28, 1.55, 5.51, 4.19, 2.18, 2.00),
    "w reg": (0.00, 0.00, 0.06, 0.01, 0.99, 0.00, 0.09, 0.00)}), MALI_LANGUAGES4)
# Tables 4 and 7: (train, test) error (%) per language; Table 7 adds the MI rows.
_TABLE4 = {
    "RNN": (0.00, 78.2, 0.00, 74.11, 0.00, 83.33, 0.00, 73.69, 30.72, 99.96),
    "LSTM": (0.00, 12.58, 0.00, 13.26, 0.00, 14.22, 0.00, 10.56, 48.92, 97.88),
    "LSTM-p": (0.00, 8.69, 0.00, 11.25, 0.00, 13.99, 0.00, 12.88, 49.68, 99.00),
    "GRU": (0.00, 14.99, 0.00, 14.89, 0.00, 19.22, 0.00, 14.00, 43.21, 98.70),
    "Stack RNN 40+10": (0.00, 4.99, 0.00, 3.01, 0.00, 34.19, 0.00, 58.66, 10.25, 9.38),
    "Stack RNN 40+10 + rounding": (0.00, 0.09, 0.00, 0.89, 0.00, 1.01, 0.00, 0.79, 4.03, 3.968),
    "listRNN 40+5": (0.00, 0.39, 0.00, 2.29, 0.00, 19.63, 0.00, 1.27, 4.89, 7.45),
    "2nd Order RNN": (0.00, 9.26, 0.00, 8.51, 0.00, 17.52, 0.00, 11.17, 27.89, 37.42),
    "2nd Order RNN reg": (0.00, 1.88, 0.00, 2.09, 0.00, 2.19, 0.00, 0.99, 21.69, 27.59),
    "NNPDA": (0.00, 7.00, 0.00, 15.25, 0.00, 17.49, 0.00, 55.28, 5.96, 29.21),
    "NNPDA reg": (0.00, 4.28, 0.00, 14.20, 0.00, 13.00, 0.00, 41.01, 5.62, 27.09),
    "NSPDA, M1": (0.00, 0.00, 0.00, 0.06, 0.00, 0.99, 0.00, 0.09, 0.58, 2.58),
    "NSPDA, M2": (0.00, 0.00, 0.00, 0.01, 0.00, 0.00, 0.00, 0.00, 0.01, 0.88),
    "MI-RNN": (0.00, 75.69, 0.00, 70.26, 0.00, 76.69, 0.00, 73.01, 29.58, 99.92),
    "MI-LSTM": (0.00, 9.99, 0.00, 10.86, 0.00, 13.55, 0.00, 14.22, 47.83, 99.80),
    "MI-GRU": (0.00, 16.22, 0.00, 13.29, 0.00, 20.02, 0.00, 14.83, 42.88, 99.20),
}
MALI_TABLE7_TRAIN = _by_task({label: row[0::2] for label, row in _TABLE4.items()}, MALI_LANGUAGES)
MALI_TABLE7_TEST = _by_task({label: row[1::2] for label, row in _TABLE4.items()}, MALI_LANGUAGES)
MALI_TABLE4_TRAIN = {t: {k: v for k, v in row.items() if not k.startswith("MI-")} for t, row in MALI_TABLE7_TRAIN.items()}
MALI_TABLE4_TEST = {t: {k: v for k, v in row.items() if not k.startswith("MI-")} for t, row in MALI_TABLE7_TEST.items()}
# Table 6: test error (%) of the NSPDA by learning algorithm.
MALI_TABLE6 = _by_task(_orders({
    "BPTT": (2.02, 1.99, 2.23, 2.55, 2.99, 2.79, 2.99, 1.59),
    "TBPTT": (2.59, 2.81, 1.05, 1.29, 2.97, 2.02, 1.58, 1.11),
    "RTRL": (0.02, 0.19, 0.09, 0.10, 1.85, 0.07, 0.09, 0.01),
    "UORO": (0.00, 0.00, 0.06, 0.01, 0.99, 0.00, 0.09, 0.00)}), MALI_LANGUAGES4)
