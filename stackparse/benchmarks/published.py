"""Numbers published in the papers we reproduce, keyed the way our results are.

Joulin & Mikolov (2015), Table 2: percent of n in 1..60 whose deterministic part is predicted
correctly, training on n < 20. Every column checked against the paper's text (NeurIPS version).
Table 4: perplexity on the Penn Treebank, 100 hidden units (Stack RNN: 60 stacks, recurrent matrix).
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
