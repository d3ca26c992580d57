"""Heterogeneous graphs of ../shared/datasets as RGCN inputs: one node id
space (the node types one after the other) and one relation id per edge.
numpy only.

- hetero_acm_heco.npz: paper, author, subject; each relation's CSR
  `{src}__{rel}__{dst}__indptr/indices` (rows = destinations, columns =
  sources), reverse relations included: 4 relations.
- hetero_fb15k237.npz: the training triples (train_src, train_etype,
  train_dst) over 14,541 entities: 237 relations.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import numpy as np

REPO = Path(__file__).resolve().parents[1]

FILES = {"hetero_acm_heco": "hetero_acm_heco.npz",
         "hetero_fb15k237": "hetero_fb15k237.npz"}


def datasets_dir() -> Optional[Path]:
    """$GNNC_DATASETS, else ../shared/datasets next to the repository."""
    env = os.environ.get("GNNC_DATASETS")
    for p in ([Path(env)] if env else []) + [REPO.parent / "shared" / "datasets"]:
        if p.is_dir():
            return p
    return None


def dataset_path(name: str) -> Optional[Path]:
    d = datasets_dir()
    if d is None:
        return None
    p = d / FILES[name]
    return p if p.is_file() else None


def load_hetero(name: str) -> Optional[dict]:
    """{"edge_index": int64 [2, E] (sources, destinations), "edge_type":
    int64 [E], "num_nodes", "num_relations", "relations": names}, or None
    when the file is absent."""
    path = dataset_path(name)
    if path is None:
        return None
    z = np.load(path, allow_pickle=False)
    if name == "hetero_acm_heco":
        names = [str(s) for s in z["ntype_names"]]
        counts = [int(c) for c in z["ntype_counts"]]
        base = dict(zip(names, np.concatenate([[0], np.cumsum(counts)[:-1]]).tolist()))
        rels = sorted(k[: -len("__indptr")] for k in z.files if k.endswith("__indptr")
                      and k.count("__") == 3)
        src, dst, typ = [], [], []
        for r, rel in enumerate(rels):
            s_type, _, d_type = rel.split("__")
            indptr = z[rel + "__indptr"].astype(np.int64)
            indices = z[rel + "__indices"].astype(np.int64)
            rows = np.repeat(np.arange(indptr.shape[0] - 1, dtype=np.int64),
                             np.diff(indptr))
            src.append(indices + base[s_type])
            dst.append(rows + base[d_type])
            typ.append(np.full(indices.shape[0], r, dtype=np.int64))
        return dict(edge_index=np.stack([np.concatenate(src), np.concatenate(dst)]),
                    edge_type=np.concatenate(typ), num_nodes=int(sum(counts)),
                    num_relations=len(rels), relations=rels, path=str(path))
    if name == "hetero_fb15k237":
        rels = [str(s) for s in z["relation_names"]]
        return dict(edge_index=np.stack([z["train_src"].astype(np.int64),
                                         z["train_dst"].astype(np.int64)]),
                    edge_type=z["train_etype"].astype(np.int64),
                    num_nodes=int(z["entity_names"].shape[0]),
                    num_relations=len(rels), relations=rels, path=str(path))
    raise ValueError(f"unknown heterogeneous dataset {name!r}")
