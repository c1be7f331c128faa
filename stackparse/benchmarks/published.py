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
    # Table 3 (Appendix E, arXiv v3), the rows we run: the 2-layer LSTM (as many parameters as the
    # memory models, §4.4) and the Stack-, Queue- and DeQue-LSTMs, each the best of its kind by training
    # perplexity (§5). "test": source lengths 65-128, "train": sampled like the training data. Figure
    # 2(a) repeats these rows, except Queue-LSTM reversal, test fine 0.01 there and 0.07 in Table 3.
    "copy":        {"deep-lstm": (0.80, 0.95, 0.00, 0.47), "neural-stack": (0.89, 0.94, 0.00, 0.22),
                    "neural-queue": (1.00, 1.00, 1.00, 1.00), "neural-deque": (1.00, 1.00, 1.00, 1.00)},
    "reversal":    {"deep-lstm": (0.91, 0.94, 0.02, 0.06), "neural-stack": (1.00, 1.00, 1.00, 1.00),
                    "neural-queue": (0.44, 0.61, 0.00, 0.07), "neural-deque": (1.00, 1.00, 1.00, 1.00)},
    "bigram-flip": {"deep-lstm": (0.54, 0.93, 0.02, 0.52), "neural-stack": (0.44, 0.90, 0.00, 0.48),
                    "neural-queue": (0.55, 0.94, 0.55, 0.98), "neural-deque": (0.55, 0.94, 0.53, 0.98)},
    "svo-sov":     {"deep-lstm": (0.97, 0.99, 0.96, 0.99), "neural-stack": (1.00, 1.00, 1.00, 1.00),
                    "neural-queue": (1.00, 1.00, 1.00, 1.00), "neural-deque": (1.00, 1.00, 1.00, 1.00)},
    "gender":      {"deep-lstm": (0.98, 0.99, 0.98, 0.99), "neural-stack": (0.93, 0.97, 0.93, 0.97),
                    "neural-queue": (1.00, 1.00, 1.00, 1.00), "neural-deque": (1.00, 1.00, 1.00, 1.00)},
}


def grefenstette_table3(measure: str) -> dict:
    """task -> column -> the paper's number for one of GREFENSTETTE_TABLE3_MEASURES."""
    i = GREFENSTETTE_TABLE3_MEASURES.index(measure)
    return {task: {column: row[i] for column, row in columns.items()} for task, columns in GREFENSTETTE_TABLE3.items()}


MALI_TABLE4_TEST = {
    # Mali, Ororbia & Giles, Table 4: mean test error (%, 5 runs, strings up to T = 60), the rows our `grammar`
    # columns stand for (rnn2 and nnpda: the "reg (ours)" rows, trained with the regulariser; nspda2 = M1,
    # nspda3 = M2); "Parenthesis" read as Dyck(2). As extracted in shared/reproduction-gaps.md §4.1.
    "pda-palindrome": {"rnn2": 1.88, "nnpda": 4.28, "nspda2": 0.00, "nspda3": 0.00},
    "pda-anbn":       {"rnn2": 2.09, "nnpda": 14.20, "nspda2": 0.06, "nspda3": 0.01},
    "pda-anbncbmam":  {"rnn2": 2.19, "nnpda": 13.00, "nspda2": 0.99, "nspda3": 0.00},
    "pda-anmbncm":    {"rnn2": 0.99, "nnpda": 41.01, "nspda2": 0.09, "nspda3": 0.00},
    "pda-dyck2":      {"rnn2": 27.59, "nnpda": 27.09, "nspda2": 2.58, "nspda3": 0.88},
}
