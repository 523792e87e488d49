"""The thesis's neural experiments with :mod:`bicrit.torch` (thesis §"Dependency Parsing on Deep
Network", table ``table:result_DP``), on CPU.

``parsing-bilstm``: a BiLSTM arc scorer in the style of Kiperwasser & Goldberg (2016) on UD
English EWT, margin rescaling against ProbLoss on the structured layer.
    * Encoder: word (100, words seen once are replaced by UNK with probability ½ when training)
      and gold UPOS (25) embeddings, a 2-layer BiLSTM (hidden :data:`PARSER_HIDDEN` per
      direction); arc scores MLP(r_h, r_d) = v·tanh(W_h r_h + W_d r_d + b) (hidden 100), relation
      scores the same form with R outputs. Loss: :class:`bicrit.torch.TreeLoss` on arc and
      relation scores (labelled: a wrong head costs 1, a right head with a wrong relation 1;
      Chu–Liu–Edmonds decoding with one root child), Adam (lr 1e-3), batches of 32 sentences.
    * ProbLoss is warm-started from the margin run of the same seed after half the epochs and
      continues with ProbLoss, as the thesis does (margin for iterations 1-10, ProbLoss 10-30);
      ProbLoss's search is the automatic exact one (convex hull with ban lists: the integral
      maximum).
    * Epoch chosen on dev LAS for each run; test UAS/LAS (all tokens, CoNLL 2018 convention) at
      that epoch; mean ± sd over seeds.

``ner-bilstm``: a BiLSTM tagger on CoNLL-2002 Spanish: word (lowercased, 100), capitalisation
(4 patterns) and character-CNN (25 → 30 filters) features, one BiLSTM layer (hidden 100 per
direction), unary scores by a linear layer, learned transitions/start/end. Structured heads:
margin, slack and ProbLoss (:class:`bicrit.torch.ChainLoss`, Hamming loss, exact integral
searches) against pytorch-crf's CRF negative log-likelihood on the same encoder; entity F1
(conlleval) on testb at the epoch of the best dev (testa) F1.

Both write their per-epoch logs and summary atomically to ``out`` when given. ``scale`` shrinks
the training set and the epochs; CPU only, keep ``nice -n 10``.
"""

from __future__ import annotations

import copy
import importlib.util
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from bicrit._atomic import write_text
from bicrit.errors import BicritError

PARSER_HIDDEN = 125
PARSER_EPOCHS = 6
TAGGER_EPOCHS = 6
BATCH = 32

#: Thesis, table ``table:result_DP`` (PTB, Kiperwasser & Goldberg's BiLSTM parser, full size):
#: LAS / UAS of margin rescaling and ProbLoss, and the 10-run LAS mean ± sd.
THESIS_DP = {"margin": (92.6, 94.0, "92.1±.1"), "probloss": (92.7, 94.2, "92.2±.1")}
#: The linear hashed model of ``bicrit reproduce parsing`` (test UAS / LAS the issue quotes).
LINEAR_EWT = (0.848, 0.780)


def _data_dir() -> Path:
    from bicrit.datasets.catalog import find_data_root

    root = find_data_root()
    if root is None:
        raise BicritError("no data folder: set BICRIT_DATA to the folder holding the datasets")
    return root


def _torch() -> Any:
    try:
        import torch
    except ImportError as e:  # pragma: no cover
        raise BicritError("the neural experiments need PyTorch: pip install 'bicrit[torch]'") from e
    # one intra-op thread: on a shared 2-core machine OpenMP barriers of 2 threads cost more
    # than they save on these small models (bicrit's native batch has its own rayon pool)
    torch.set_num_threads(int(os.environ.get("BICRIT_TORCH_THREADS", "1")))
    return torch


def _vocab(seqs: list[list[str]], min_count: int = 1) -> tuple[dict[str, int], Counter]:
    c = Counter(w for s in seqs for w in s)
    vocab = {"<pad>": 0, "<unk>": 1}
    for w, n in c.most_common():
        if n >= min_count:
            vocab[w] = len(vocab)
    return vocab, c


def _batches(lengths: np.ndarray, size: int, rng: np.random.Generator | None) -> list[np.ndarray]:
    """Batches of similar lengths (little padding: pair scores cost n² per sentence), in random
    order when training (sorted within random pools of 50 batches), by length otherwise."""
    n = len(lengths)
    if rng is None:
        order = np.argsort(lengths, kind="stable")
        return [order[i : i + size] for i in range(0, n, size)]
    perm = rng.permutation(n)
    pool = 50 * size
    out = []
    for p in range(0, n, pool):
        chunk = perm[p : p + pool]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        out += [chunk[i : i + size] for i in range(0, len(chunk), size)]
    return [out[i] for i in rng.permutation(len(out))]


# ----------------------------------------------------------------------------------------------
# parsing


def _parser_model(torch: Any, n_words: int, n_pos: int, n_rels: int, hidden: int) -> Any:
    nn = torch.nn

    class Parser(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.word = nn.Embedding(n_words, 100, padding_idx=0)
            self.pos = nn.Embedding(n_pos, 25, padding_idx=0)
            self.lstm = nn.LSTM(125, hidden, num_layers=2, batch_first=True, bidirectional=True)
            self.arc_h = nn.Linear(2 * hidden, 100)
            self.arc_d = nn.Linear(2 * hidden, 100, bias=False)
            self.arc_v = nn.Linear(100, 1)
            self.rel_h = nn.Linear(2 * hidden, 100)
            self.rel_d = nn.Linear(2 * hidden, 100, bias=False)
            self.rel_v = nn.Linear(100, n_rels)

        def forward(self, words: Any, pos: Any, lengths: Any) -> tuple[Any, Any]:
            x = torch.cat([self.word(words), self.pos(pos)], dim=-1)  # [B, n + 1, 125]
            packed = nn.utils.rnn.pack_padded_sequence(
                x, (lengths + 1).cpu(), batch_first=True, enforce_sorted=False
            )
            r, _ = self.lstm(packed)
            r, _ = nn.utils.rnn.pad_packed_sequence(r, batch_first=True, total_length=x.shape[1])
            a = torch.tanh(self.arc_h(r).unsqueeze(2) + self.arc_d(r).unsqueeze(1))
            arcs = self.arc_v(a).squeeze(-1)  # [B, h, d]
            b = torch.tanh(self.rel_h(r).unsqueeze(2) + self.rel_d(r).unsqueeze(1))
            return arcs, self.rel_v(b)  # [B, h, d, R]

    return Parser()


def _parser_tensors(
    torch: Any,
    tb: Any,
    idx: np.ndarray,
    wv: dict,
    pv: dict,
    rv: dict,
    counts: Counter | None,
    rng: np.random.Generator | None,
) -> tuple[Any, ...]:
    n = max(len(tb.words[i]) for i in idx)
    b = len(idx)
    words = np.zeros((b, n + 1), dtype=np.int64)
    pos = np.zeros((b, n + 1), dtype=np.int64)
    heads = np.zeros((b, n), dtype=np.int64)
    rels = np.zeros((b, n), dtype=np.int64)
    lengths = np.zeros(b, dtype=np.int64)
    words[:, 0] = pos[:, 0] = 1  # the root symbol
    for k, i in enumerate(idx):
        ws = tb.words[i]
        lengths[k] = len(ws)
        for j, w in enumerate(ws):
            wi = wv.get(w.lower(), 1)
            if (
                counts is not None
                and rng is not None
                and counts[w.lower()] == 1
                and rng.random() < 0.5
            ):
                wi = 1
            words[k, j + 1] = wi
            pos[k, j + 1] = pv.get(tb.upos[i][j], 1)
            heads[k, j] = tb.heads[i][j]
            rels[k, j] = rv.get(tb.deprels[i][j].split(":")[0], 0)
    t = torch.from_numpy
    return t(words), t(pos), t(heads), t(rels), t(lengths)


def _parse_eval(
    torch: Any, model: Any, tb: Any, vocab: tuple, id2rel: list[str]
) -> dict[str, float]:
    from bicrit.metrics.dependency import dependency_report
    from bicrit.torch import tree_decode

    wv, pv, rv = vocab
    model.eval()
    ph, pr = [], []
    with torch.no_grad():
        lens = np.array([len(w) for w in tb.words])
        order = []
        for idx in _batches(lens, 64, None):
            order.extend(idx.tolist())
            words, pos, _, _, lengths = _parser_tensors(torch, tb, idx, wv, pv, rv, None, None)
            arcs, labels = model(words, pos, lengths)
            heads, rels = tree_decode(arcs.double(), lengths=lengths, labels=labels.double())
            for k in range(len(idx)):
                n = int(lengths[k])
                ph.append(heads[k, :n].numpy())
                pr.append([id2rel[r] for r in rels[k, :n].tolist()])
    gold_rels = [[r.split(":")[0] for r in tb.deprels[i]] for i in order]
    rep = dependency_report([tb.heads[i] for i in order], ph, gold_rels, pr)
    return {"uas": rep["uas"], "las": rep["las"]}


def _train_parser(
    torch: Any,
    train: Any,
    dev: Any,
    test: Any,
    vocab: tuple,
    id2rel: list[str],
    counts: Counter,
    seed: int,
    surrogate: str,
    epochs: range,
    state: dict | None,
    log: list[dict],
    name: str,
    hidden: int,
) -> tuple[dict, dict]:
    from bicrit.torch import TreeLoss

    wv, pv, rv = vocab
    torch.manual_seed(seed)
    model = _parser_model(torch, len(wv), len(pv), len(rv), hidden)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.9))
    if state is not None:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
    loss_fn = TreeLoss(surrogate=surrogate, reduction="mean")
    rng = np.random.default_rng(seed + 1000 * epochs.start)
    best: dict[str, Any] = {"dev_las": -1.0}
    best_state = None
    snapshots: dict[int, dict] = {}
    train_lens = np.array([len(w) for w in train.words])
    for ep in epochs:
        model.train()
        t0, total = time.process_time(), 0.0
        for idx in _batches(train_lens, BATCH, rng):
            words, pos, heads, rels, lengths = _parser_tensors(
                torch, train, idx, wv, pv, rv, counts, rng
            )
            arcs, labels = model(words, pos, lengths)
            loss = loss_fn(arcs.double(), heads, lengths=lengths, labels=labels.double(), rels=rels)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            total += float(loss.detach()) * len(idx)
        d = _parse_eval(torch, model, dev, vocab, id2rel)
        row = {
            "run": name,
            "seed": seed,
            "epoch": ep + 1,
            "train_loss": total / len(train),
            "dev_uas": d["uas"],
            "dev_las": d["las"],
            "cpu_s": time.process_time() - t0,
        }
        log.append(row)
        print(row, flush=True)
        state = {k: v.clone() for k, v in model.state_dict().items()}
        if d["las"] > best["dev_las"]:
            best, best_state = dict(row), state
        snapshots[ep + 1] = {"model": state, "opt": copy.deepcopy(opt.state_dict())}
    if best_state is not None:  # test once, at the epoch chosen on dev
        model.load_state_dict(best_state)
        te = _parse_eval(torch, model, test, vocab, id2rel)
        best.update(test_uas=te["uas"], test_las=te["las"])
    return best, snapshots


def parsing_bilstm(
    scale: float = 1.0,
    seeds: int = 3,
    out: Path | None = None,
    *,
    epochs: int | None = None,
    first_seed: int = 0,
) -> pl.DataFrame:
    """EWT: BiLSTM arc scorer (Kiperwasser & Goldberg style), margin vs ProbLoss, UAS/LAS.

    ``epochs`` overrides the scaled default (ProbLoss starts from the margin run's epoch
    ``epochs // 2``); seeds are ``first_seed … first_seed + seeds − 1`` (one process per seed
    runs them in parallel; their CSV files are named by seed)."""
    torch = _torch()
    from bicrit.datasets.conllu import read_conllu

    root = _data_dir() / "ud_english_ewt"
    train = read_conllu(root / "en_ewt-ud-train.conllu.gz")
    dev = read_conllu(root / "en_ewt-ud-dev.conllu")
    test = read_conllu(root / "en_ewt-ud-test.conllu")
    n_train = max(50, int(len(train) * scale))
    if epochs is None:
        epochs = max(2, round(PARSER_EPOCHS * min(1.0, 2 * scale)))
    warm = max(1, epochs // 2)
    wv, counts = _vocab([[w.lower() for w in s] for s in train.words])
    pv, _ = _vocab(train.upos)
    rels = sorted({r.split(":")[0] for s in train.deprels for r in s})
    rv = {r: k for k, r in enumerate(rels)}
    log: list[dict] = []
    summary = []
    tag = "" if first_seed == 0 else f"_seed{first_seed}"
    for seed in range(first_seed, first_seed + seeds):
        sub = np.random.default_rng(seed).permutation(len(train))[:n_train]
        tr = _subset(train, sub)
        b_m, snaps = _train_parser(
            torch,
            tr,
            dev,
            test,
            (wv, pv, rv),
            rels,
            counts,
            seed,
            "margin",
            range(epochs),
            None,
            log,
            "margin",
            PARSER_HIDDEN,
        )
        b_p, _ = _train_parser(
            torch,
            tr,
            dev,
            test,
            (wv, pv, rv),
            rels,
            counts,
            seed,
            "probloss",
            range(warm, epochs),
            snaps[warm],
            log,
            "probloss",
            PARSER_HIDDEN,
        )
        summary += [{**b_m, "run": "margin"}, {**b_p, "run": "probloss"}]
        if out is not None:
            write_text(out / f"parsing_bilstm_log{tag}.csv", pl.DataFrame(log).write_csv())
            write_text(out / f"parsing_bilstm_best{tag}.csv", pl.DataFrame(summary).write_csv())
    df = pl.DataFrame(summary)
    table = (
        df.group_by("run", maintain_order=True)
        .agg(
            pl.col("test_uas").mean().alias("uas_mean"),
            pl.col("test_uas").std().alias("uas_sd"),
            pl.col("test_las").mean().alias("las_mean"),
            pl.col("test_las").std().alias("las_sd"),
            pl.col("epoch").cast(pl.String).str.join(",").alias("epochs_chosen"),
            pl.len().alias("seeds"),
        )
        .with_columns(
            pl.col("run")
            .replace_strict({k: v[0] for k, v in THESIS_DP.items()})
            .alias("thesis_las_ptb"),
            pl.col("run")
            .replace_strict({k: v[1] for k, v in THESIS_DP.items()})
            .alias("thesis_uas_ptb"),
            pl.lit(LINEAR_EWT[0]).alias("linear_uas"),
            pl.lit(LINEAR_EWT[1]).alias("linear_las"),
        )
    )
    if out is not None:
        write_text(out / f"parsing_bilstm_table{tag}.csv", table.write_csv())
    return table


def _subset(tb: Any, idx: np.ndarray) -> Any:
    from dataclasses import replace

    pick = lambda v: None if v is None else [v[i] for i in idx]  # noqa: E731
    return replace(
        tb,
        words=pick(tb.words),
        heads=pick(tb.heads),
        deprels=pick(tb.deprels),
        upos=pick(tb.upos),
        xpos=pick(tb.xpos),
        lemmas=pick(tb.lemmas),
        sent_ids=[tb.sent_ids[i] for i in idx] if tb.sent_ids else [],
    )


# ----------------------------------------------------------------------------------------------
# tagging


def _case(w: str) -> int:
    if w.isupper():
        return 1
    if w[:1].isupper():
        return 2
    if any(c.isdigit() for c in w):
        return 3
    return 0


def _tagger_model(torch: Any, n_words: int, n_chars: int, n_tags: int, head: str) -> Any:
    nn = torch.nn

    class Tagger(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.word = nn.Embedding(n_words, 100, padding_idx=0)
            self.case = nn.Embedding(4, 10)
            self.char = nn.Embedding(n_chars, 25, padding_idx=0)
            self.cnn = nn.Conv1d(25, 30, 3, padding=1)
            self.drop = nn.Dropout(0.5)
            self.lstm = nn.LSTM(140, 100, batch_first=True, bidirectional=True)
            self.out = nn.Linear(200, n_tags)
            if head == "crf":
                from torchcrf import CRF

                self.crf = CRF(n_tags, batch_first=True)
            else:
                self.transitions = nn.Parameter(torch.zeros(n_tags, n_tags))
                self.start = nn.Parameter(torch.zeros(n_tags))
                self.end = nn.Parameter(torch.zeros(n_tags))

        def forward(self, words: Any, case: Any, chars: Any, lengths: Any) -> Any:
            b, t, c = chars.shape
            ch = self.char(chars.view(b * t, c)).transpose(1, 2)
            ch = torch.relu(self.cnn(ch)).max(dim=2).values.view(b, t, 30)
            x = self.drop(torch.cat([self.word(words), self.case(case), ch], dim=-1))
            packed = nn.utils.rnn.pack_padded_sequence(
                x, lengths.cpu(), batch_first=True, enforce_sorted=False
            )
            r, _ = self.lstm(packed)
            r, _ = nn.utils.rnn.pad_packed_sequence(r, batch_first=True, total_length=t)
            return self.out(self.drop(r))

    return Tagger()


def _tagger_tensors(torch: Any, ds: Any, idx: np.ndarray, wv: dict, cv: dict, tv: dict) -> tuple:
    t = max(len(ds.tokens[i]) for i in idx)
    c = max(min(len(w), 20) for i in idx for w in ds.tokens[i])
    b = len(idx)
    words = np.zeros((b, t), dtype=np.int64)
    case = np.zeros((b, t), dtype=np.int64)
    chars = np.zeros((b, t, c), dtype=np.int64)
    tags = np.zeros((b, t), dtype=np.int64)
    lengths = np.zeros(b, dtype=np.int64)
    for k, i in enumerate(idx):
        toks = ds.tokens[i]
        lengths[k] = len(toks)
        for j, w in enumerate(toks):
            words[k, j] = wv.get(w.lower(), 1)
            case[k, j] = _case(w)
            for q, ch in enumerate(w[:20]):
                chars[k, j, q] = cv.get(ch, 1)
            tags[k, j] = tv[ds.tags[i][j]]
    f = torch.from_numpy
    return f(words), f(case), f(chars), f(tags), f(lengths)


def _tag_eval(torch: Any, model: Any, ds: Any, voc: tuple, id2tag: list[str], head: str) -> float:
    from bicrit.metrics.sequence import entity_scores
    from bicrit.torch import chain_decode

    wv, cv, tv = voc
    model.eval()
    pred = []
    with torch.no_grad():
        lens = np.array([len(s) for s in ds.tokens])
        order = []
        for idx in _batches(lens, 64, None):
            order.extend(idx.tolist())
            words, case, chars, _, lengths = _tagger_tensors(torch, ds, idx, wv, cv, tv)
            u = model(words, case, chars, lengths)
            if head == "crf":
                mask = torch.arange(u.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)
                paths = model.crf.decode(u, mask=mask)
            else:
                tags = chain_decode(
                    u.double(),
                    model.transitions.double(),
                    lengths=lengths,
                    start=model.start.double(),
                    end=model.end.double(),
                )
                paths = [tags[k, : int(lengths[k])].tolist() for k in range(len(idx))]
            pred += [[id2tag[x] for x in p] for p in paths]
    return float(entity_scores([ds.tags[i] for i in order], pred)["micro"]["f1"])


def ner_bilstm(
    scale: float = 1.0,
    seeds: int = 1,
    out: Path | None = None,
    *,
    epochs: int | None = None,
    heads: tuple[str, ...] = ("margin", "slack", "probloss", "crf"),
    first_seed: int = 0,
) -> pl.DataFrame:
    """CoNLL-2002 esp: BiLSTM tagger, margin / slack / ProbLoss vs pytorch-crf's CRF, entity F1.

    ``epochs`` overrides the scaled default; ``heads`` picks the structured heads (one process
    per head runs them in parallel; their CSV files are named by head)."""
    torch = _torch()
    from bicrit.datasets.conll import read_conll
    from bicrit.torch import ChainLoss

    root = _data_dir() / "conll2002"
    train = read_conll(root / "esp.train", encoding="latin-1").to_iob2()
    dev = read_conll(root / "esp.testa", encoding="latin-1").to_iob2()
    test = read_conll(root / "esp.testb", encoding="latin-1").to_iob2()
    tags = train.tag_names
    tv = {t: k for k, t in enumerate(tags)}
    wv, _ = _vocab([[w.lower() for w in s] for s in train.tokens], min_count=2)
    cv, _ = _vocab([list(w) for s in train.tokens for w in s])
    n_train = max(100, int(len(train) * scale))
    if epochs is None:
        epochs = max(2, round(TAGGER_EPOCHS * min(1.0, 2 * scale)))
    tag = "" if len(heads) == 4 else "_" + "-".join(heads)
    tag += "" if first_seed == 0 else f"_seed{first_seed}"
    log: list[dict] = []
    summary = []
    for seed in range(first_seed, first_seed + seeds):
        sub = np.random.default_rng(seed).permutation(len(train))[:n_train]
        for head in heads:
            if head == "crf" and importlib.util.find_spec("torchcrf") is None:
                print(
                    "pytorch-crf is not installed (pip install 'bicrit[torch-peers]'): no CRF row"
                )
                continue
            torch.manual_seed(seed)
            model = _tagger_model(torch, len(wv), len(cv), len(tags), head)
            opt = torch.optim.Adam(model.parameters(), lr=1e-3)
            loss_fn = None if head == "crf" else ChainLoss(surrogate=head, reduction="mean")
            rng = np.random.default_rng(seed)
            best: dict[str, Any] = {"dev_f1": -1.0}
            best_state = None
            sub_lens = np.array([len(train.tokens[i]) for i in sub])
            for ep in range(epochs):
                model.train()
                t0 = time.process_time()
                for idx in _batches(sub_lens, BATCH, rng):
                    words, case, chars, gold, lengths = _tagger_tensors(
                        torch, train, sub[idx], wv, cv, tv
                    )
                    u = model(words, case, chars, lengths)
                    if head == "crf":
                        mask = torch.arange(u.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)
                        loss = -model.crf(u, gold, mask=mask, reduction="mean")
                    else:
                        loss = loss_fn(
                            u.double(),
                            model.transitions.double(),
                            gold,
                            lengths=lengths,
                            start=model.start.double(),
                            end=model.end.double(),
                        )
                    opt.zero_grad()
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
                    opt.step()
                row = {
                    "head": head,
                    "seed": seed,
                    "epoch": ep + 1,
                    "dev_f1": _tag_eval(torch, model, dev, (wv, cv, tv), tags, head),
                    "cpu_s": time.process_time() - t0,
                }
                log.append(row)
                print(row, flush=True)
                if row["dev_f1"] > best["dev_f1"]:
                    best = dict(row)
                    best_state = {k: v.clone() for k, v in model.state_dict().items()}
            if best_state is not None:  # test once, at the epoch chosen on dev
                model.load_state_dict(best_state)
                best["test_f1"] = _tag_eval(torch, model, test, (wv, cv, tv), tags, head)
            summary.append(best)
            if out is not None:
                write_text(out / f"ner_bilstm_log{tag}.csv", pl.DataFrame(log).write_csv())
                write_text(out / f"ner_bilstm_best{tag}.csv", pl.DataFrame(summary).write_csv())
    df = pl.DataFrame(summary)
    table = df.group_by("head", maintain_order=True).agg(
        pl.col("test_f1").mean().alias("f1_mean"),
        pl.col("test_f1").std().alias("f1_sd"),
        pl.col("epoch").cast(pl.String).str.join(",").alias("epochs_chosen"),
        pl.len().alias("seeds"),
    )
    if out is not None:
        write_text(out / f"ner_bilstm_table{tag}.csv", table.write_csv())
    return table
