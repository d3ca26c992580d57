"""bench/batched_summary.py on a synthetic gnn-bench / PyG JSON pair whose
ratios are known, and examples/bench_batched_pyg.py's CPU parts: reading a
TU-layout batch into edge_index and batch, the layers' adjacency, the
checks, and the whole script with --device cpu (a check of its paths, not
of its times). No GPU needed."""
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "examples"))
import batched_summary  # noqa: E402
import bench_batched_pyg as bbp  # noqa: E402


# --- the summary ---------------------------------------------------------------

def gnnc_layer(batch, type_, width, layer, unfused, fused, fused_bwd=None, check="ok",
               best_bwd=None):
    rec = {"batch": batch, "type": type_, "width": width, "layer": layer,
           "spmm_ms": 0.01, "gemm_ms": 0.02, "unfused_ms": unfused, "fused_ms": fused,
           "check": check}
    if fused_bwd is not None:
        rec["fused_backward_ms"] = fused_bwd
        rec["backward_check"] = check
        rec["backward_plan"] = "256 fused"
        rec["backward_best_ms"] = fused_bwd if best_bwd is None else best_bwd
        rec["backward_best_plan"] = "256 fused" if best_bwd is None else "1024 unfused"
    return rec


def pyg_layer(batch, type_, width, layer, fwd, torch_bwd):
    return {"batch": batch, "type": type_, "width": width, "layer": layer,
            "pyg": {"fastest": "edge_index_cached", "forward_ms": fwd},
            "torch_unfused": {"fastest": "index_add", "forward_ms": 0.1,
                              "forward_backward_ms": 0.1 + (torch_bwd or 0),
                              "backward_ms": torch_bwd}}


def test_summary_of_synthetic_pair(tmp_path):
    gnnc = {"device": {"name": "test"}, "date": "d", "copy_bandwidth_gbs": 1000.0,
            "batched_cases": [],
            "batched_layer_cases": [
                gnnc_layer("P", "f32", 64, "gcn", 0.4, 0.1, 0.2),   # 4x, PyG 8x, bwd 3x
                gnnc_layer("P", "f32", 64, "gin", 0.2, 0.1),        # 2x, PyG 2x, no bwd
                gnnc_layer("P", "f16", 64, "gcn", 0.3, None),       # not fused: no ratios
                gnnc_layer("P", "f16", 64, "gin", 0.5, 0.1, 0.1, check="failed"),
                gnnc_layer("M", "f32", 32, "gcn", 0.1, 0.2, 0.5,    # 0.5x, PyG 1x, bwd 0.2x
                           best_bwd=0.4),                           # the pick: 0.8x the best
            ],
            "batched_readout_cases": [
                {"batch": "P", "type": "f32", "width": 64, "reduce": "sum",
                 "forward_ms": 0.01, "backward_ms": 0.02, "copy_fraction": 0.5},
                {"batch": "P", "type": "f32", "width": 64, "reduce": "max",
                 "forward_ms": 0.02, "backward_ms": 0.02, "copy_fraction": 0.25},
                # no PyG counterpart
                {"batch": "P", "type": "f16", "width": 64, "reduce": "mean",
                 "forward_ms": 0.02, "backward_ms": 0.02, "copy_fraction": 0.3},
            ]}
    pyg = {"device": {"name": "test"}, "layer_cases": [
        pyg_layer("P", "f32", 64, "gcn", 0.8, 0.6),
        pyg_layer("P", "f32", 64, "gin", 0.2, 0.3),
        pyg_layer("P", "f16", 64, "gcn", 0.5, 0.5),
        pyg_layer("P", "f16", 64, "gin", 9.0, 9.0),
        pyg_layer("M", "f32", 32, "gcn", 0.2, 0.1),
        pyg_layer("X", "f32", 32, "gcn", 0.2, 0.1),  # no gnnc counterpart
    ], "readout_cases": [
        {"batch": "P", "type": "f32", "width": 64, "reduce": "sum", "forward_ms": 0.04,
         "backward_ms": 0.05, "check_ok": True},
        {"batch": "P", "type": "f32", "width": 64, "reduce": "max", "forward_ms": 0.01,
         "backward_ms": 0.05, "check_ok": True},
        # a failed PyG check counts in no ratio
        {"batch": "P", "type": "f32", "width": 64, "reduce": "mean", "forward_ms": 0.01,
         "backward_ms": 0.05, "check_ok": False},
    ]}
    (tmp_path / "g.json").write_text(json.dumps(gnnc))
    (tmp_path / "p.json").write_text(json.dumps(pyg))
    s = batched_summary.main([str(tmp_path / "g.json"), str(tmp_path / "out"),
                              "--pyg", str(tmp_path / "p.json")])

    u = s["fused_vs_unfused"]
    assert u["cases"] == 3 and u["worst"] == 0.5
    assert math.isclose(u["geomean"], round((4 * 2 * 0.5) ** (1 / 3), 3))
    assert u["by_layer"]["gcn"] == {"geomean": 1.414, "worst": 0.5, "cases": 2}
    assert u["by_layer"]["gin"] == {"geomean": 2.0, "worst": 2.0, "cases": 1}
    p = s["fused_vs_pyg"]
    assert p["cases"] == 3 and p["worst"] == 1.0
    assert math.isclose(p["by_layer"]["gcn"]["geomean"], round(math.sqrt(8 * 1), 3))
    assert p["by_layer"]["gin"]["geomean"] == 2.0
    b = s["fused_backward_vs_torch"]
    assert b["cases"] == 2 and b["worst"] == 0.2
    assert math.isclose(b["geomean"], round(math.sqrt(3 * 0.2), 3))
    assert set(b["by_layer"]) == {"gcn"}
    # the picked backward plan against the fastest: 1 and 0.8 (the failed
    # check left out), the fastest picked once
    pb = s["backward_plan_vs_best"]
    assert pb["cases"] == 2 and pb["worst"] == 0.8 and pb["picked_fastest"] == 1
    assert math.isclose(pb["geomean"], round(math.sqrt(0.8), 3))
    r = s["readout_vs_pyg"]
    assert r == {"geomean": 1.414, "worst": 0.5, "cases": 2}
    assert s["readout"]["cases"] == 3 and s["readout"]["copy_fraction"]["cases"] == 3
    assert s["fused_layer"] == {"cases": 5, "fused": 4, "fused_backward": 3}
    # the existing keys stay
    for k in ("batched_vs_gnnc_general", "batched_vs_cusparse_blockdiag",
              "batched_copy_fraction_w64plus", "device", "date", "note"):
        assert k in s
    out = tmp_path / "out"
    assert json.loads((out / "summary.json").read_text()) == s
    table = (out / "table.md").read_text()
    assert table == (out / "results.md").read_text()
    assert "| P | f32 | 64 | gcn | 0.0100 | 0.0200 | 0.4000 | 0.1000 | 0.2000 | " \
           "0.8000 (edge_index_cached) |" in table
    assert "| 4.00x | 8.00x | 3.00x |  |" in table
    assert "| P | f16 | 64 | gin |" in table and "check failed" in table
    assert "| X | f32 | 32 | gcn | – |" in table
    assert "| P | f32 | 64 | sum | 0.0100 | 0.0200 | 50% | 0.0400 | 0.0500 | 4.00x |  |" in table


def test_summary_without_fused_keys_or_pyg(tmp_path):
    gnnc = {"device": {"name": "test"}, "batched_cases": [
        {"batch": "P", "graphs": 2, "type": "f32", "width": 64,
         "best": {"batched_ms": 1.0, "general_ms": 2.0, "cusparse_ms": 4.0,
                  "batched_copy_fraction": 0.5, "general_copy_fraction": 0.25,
                  "batched_schedule": "#gnn.schedule<a>",
                  "general_schedule": "#gnn.schedule<b>"}}]}
    s, text = batched_summary.summarize(gnnc, None)
    assert s["batched_vs_gnnc_general"] == {"geomean": 2.0, "worst": 2.0, "cases": 1}
    assert s["batched_vs_cusparse_blockdiag"]["geomean"] == 4.0
    for k in ("readout_vs_pyg", "fused_vs_unfused", "fused_vs_pyg",
              "fused_backward_vs_torch", "readout", "fused_layer", "pyg"):
        assert s[k] is None, k
    assert "## Layers" not in text and "## Readout" not in text
    assert "| P | 2 | f32 | 64 |" in text
    # a PyG JSON alone gives its rows, and no ratio without gnnc's times
    pyg = {"layer_cases": [pyg_layer("P", "f32", 64, "gcn", 0.8, 0.6)],
           "readout_cases": [{"batch": "P", "type": "f32", "width": 64, "reduce": "sum",
                              "forward_ms": 0.04, "backward_ms": 0.05, "check_ok": True}]}
    s, text = batched_summary.summarize(gnnc, pyg)
    assert s["readout_vs_pyg"] is None and s["fused_vs_pyg"] is None
    assert "## Layers" in text and "## Readout" in text
    # a skipped PyG run says so
    s, _ = batched_summary.summarize(gnnc, {"skipped": "no CUDA GPU visible to torch",
                                            "layer_cases": [], "readout_cases": []})
    assert "no CUDA GPU" in s["note"] and s["fused_vs_pyg"] is None


def test_check_passed_forms():
    assert batched_summary.check_passed(None)
    assert batched_summary.check_passed("ok") and batched_summary.check_passed(True)
    assert batched_summary.check_passed({"ok": True})
    assert batched_summary.check_passed({"status": "ok"})
    assert not batched_summary.check_passed("failed: row 3")
    assert not batched_summary.check_passed(False)
    assert not batched_summary.check_passed({"ok": False})


# --- reading batches -----------------------------------------------------------

def write_batch(path, graphs, **override):
    """A TU-layout .npz of the given graphs (each a node count and a list of
    (dst, src) local edges), rows = destinations, columns sorted."""
    indptr, indices, graph_ptr, edge_ptr = [0], [], [0], [0]
    base = 0
    for n, edges in graphs:
        for r in range(n):
            cols = sorted(base + s for d, s in edges if d == r)
            indices += cols
            indptr.append(len(indices))
        base += n
        graph_ptr.append(base)
        edge_ptr.append(len(indices))
    arrays = dict(indptr=np.array(indptr, np.int64), indices=np.array(indices, np.int32),
                  num_nodes=np.int64(base), graph_ptr=np.array(graph_ptr, np.int64),
                  edge_graph_ptr=np.array(edge_ptr, np.int64),
                  graph_labels=np.zeros(len(graphs), np.int64),
                  node_labels=np.zeros(base, np.int64))
    arrays.update(override)
    np.savez_compressed(path, **arrays)
    return path


def undirected(*pairs):
    return [e for a, b in pairs for e in ((a, b), (b, a))]


GRAPHS = [(3, undirected((0, 1), (1, 2))), (0, []), (4, undirected((0, 3), (1, 2), (2, 3))),
          (1, [])]


def test_read_batch_edge_index_and_batch(tmp_path):
    b = bbp.read_batch(write_batch(tmp_path / "tiny.npz", GRAPHS))
    assert b["name"] == "tiny" and b["num_nodes"] == 8 and b["num_graphs"] == 4
    assert b["batch"].tolist() == [0, 0, 0, 2, 2, 2, 2, 3]
    src, dst = b["edge_index"]
    want = sorted((d, s) for d, s in
                  [(0, 1), (1, 0), (1, 2), (2, 1)]
                  + [(3 + d, 3 + s) for d, s in undirected((0, 3), (1, 2), (2, 3))])
    assert list(zip(dst.tolist(), src.tolist())) == want
    assert b["edge_index"].dtype == np.int64 and b["self_loops"] == 0
    assert bbp.batch_vector([0, 0, 2]).tolist() == [1, 1]


def test_layer_adjacency_matches_dense_formula(tmp_path):
    b = bbp.read_batch(write_batch(tmp_path / "tiny.npz", GRAPHS))
    n = b["num_nodes"]
    a = np.zeros((n, n))
    a[b["edge_index"][1], b["edge_index"][0]] = 1
    a_i = a + np.eye(n)
    d = a_i.sum(1)
    want = {"gcn": a_i / np.sqrt(np.outer(d, d)), "gin": a_i}
    for layer in bbp.LAYERS:
        crow, col, val = bbp.layer_adjacency(b["indptr"], b["indices"], layer)
        got = np.zeros((n, n))
        for r in range(n):
            cols = col[crow[r]:crow[r + 1]]
            assert (np.diff(cols) > 0).all(), "columns sorted and unique"
            got[r, cols] = val[crow[r]:crow[r + 1]]
        np.testing.assert_allclose(got, want[layer], rtol=1e-15)
    with pytest.raises(ValueError, match="layer"):
        bbp.layer_adjacency(b["indptr"], b["indices"], "gat")


@pytest.mark.parametrize("override,member,rule", [
    (dict(indptr=np.array([0, 1, 1], np.int64)), "indptr", "num_nodes"),
    # GRAPHS' indices are [1 0 2 1 6 5 4 6 3 5]
    (dict(indices=np.array([1, 0, 2, 1, 9, 5, 4, 6, 3, 5], np.int32)), "indices", "outside"),
    (dict(graph_ptr=np.array([0, 3, 3, 7], np.int64)), "graph_ptr", "num_nodes"),
    # node 2 of graph 0 joined to node 3 of graph 2
    (dict(indices=np.array([1, 0, 2, 3, 6, 5, 4, 6, 3, 5], np.int32)), "indices",
     "leaves its graph"),
    (dict(indptr=np.array([0, 1, 3, 2, 5, 6, 8, 10, 10], np.int64)), "indptr", "decrease"),
])
def test_read_batch_names_member_and_rule(tmp_path, override, member, rule):
    path = write_batch(tmp_path / "bad.npz", GRAPHS, **override)
    with pytest.raises(bbp.BatchFileError) as e:
        bbp.read_batch(path)
    assert "bad.npz" in str(e.value) and f"'{member}'" in str(e.value)
    assert rule in str(e.value)
    np.savez_compressed(tmp_path / "short.npz", indptr=np.array([0], np.int64))
    with pytest.raises(bbp.BatchFileError, match="missing member"):
        bbp.read_batch(tmp_path / "short.npz")


def test_find_batches(tmp_path):
    write_batch(tmp_path / "a.npz", GRAPHS)
    write_batch(tmp_path / "b.npz", GRAPHS)
    assert [n for n, _ in bbp.find_batches([], tmp_path, [], None)] == ["a", "b"]
    got = bbp.find_batches([], tmp_path, ["b", "zz"], None)
    assert got == [("b", tmp_path / "b.npz"), ("zz", None)]
    assert bbp.find_batches([], None, ["a"], tmp_path) == [("a", tmp_path / "a.npz")]
    assert bbp.find_batches([], None, [], tmp_path) == [("tu_PROTEINS", None)]


# --- torch on the CPU -----------------------------------------------------------

def test_checks_catch_a_wrong_layer(tmp_path):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    b = bbp.read_batch(write_batch(tmp_path / "tiny.npz", GRAPHS))
    g = bbp.Graph(torch, b, torch.device("cpu"))
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(g.n, 4, generator=gen) * 2 - 1
    w, bias = torch.rand(4, 4, generator=gen) - 0.5, torch.rand(4, generator=gen) - 0.5
    dy = torch.rand(g.n, 4, generator=gen) - 0.5
    for layer in bbp.LAYERS:
        y, mag, grads = bbp.reference_layer(torch, g, layer, x, w, bias, dy)
        tol = bbp.TOLERANCE["f32"]
        agg = bbp.unfused_aggregation(torch, g, layer, "index_add", torch.float32)
        good = torch.relu(torch.nn.functional.linear(agg(x), w, bias))
        assert bbp.check_all([(good, y, mag["y"], "Y")], tol)[0]
        # the other layer's aggregation, or one weight off, fails
        other = bbp.unfused_aggregation(torch, g, "gin" if layer == "gcn" else "gcn",
                                        "index_add", torch.float32)
        wrong = torch.relu(torch.nn.functional.linear(other(x), w, bias))
        assert not bbp.check_all([(wrong, y, mag["y"], "Y")], tol)[0]
        w2 = w.clone()
        w2[1, 2] += 1e-2
        off = torch.relu(torch.nn.functional.linear(agg(x), w2, bias))
        assert not bbp.check_all([(off, y, mag["y"], "Y")], tol)[0]
        nan = good.clone()
        nan[0, 0] = float("nan")
        ok, report = bbp.check_all([(nan, y, mag["y"], "Y")], tol)
        assert not ok and "non-finite" in report
        ref = grads((y > 0).double())
        assert set(ref) == {"gx", "gw", "gb"}


def run_script(*args):
    return subprocess.run([sys.executable, str(REPO / "examples" / "bench_batched_pyg.py"),
                           *args], capture_output=True, text=True, timeout=600)


def test_whole_script_on_the_cpu(tmp_path):
    pytest.importorskip("torch", reason="torch is not installed")
    pytest.importorskip("torch_geometric", reason="torch_geometric is not installed")
    write_batch(tmp_path / "tiny.npz", GRAPHS)
    out = tmp_path / "pyg.json"
    r = run_script("--batches", str(tmp_path), "--only", "tiny,missing", "--out", str(out),
                   "--device", "cpu", "--types", "f32", "--widths", "4,8",
                   "--runs", "2", "--warmups", "1")
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(out.read_text())
    assert doc["skipped"] == [{"batch": "missing", "why": "missing.npz not found"}]
    assert doc["batches"][0]["graphs"] == 4
    assert len(doc["layer_cases"]) == 2 * 2 and len(doc["readout_cases"]) == 2 * 3
    for c in doc["layer_cases"]:
        cands = c["pyg"]["candidates"]
        assert c["pyg"]["fastest"] in cands and c["pyg"]["forward_ms"] > 0
        assert cands["edge_index"]["status"] == "ok" and cands["edge_index"]["check_ok"]
        assert cands["edge_index"]["time_ms"]["runs"] == 2
        if c["layer"] == "gcn":
            assert "edge_index_cached" in cands
        u = c["torch_unfused"]
        assert u["candidates"]["index_add"]["check_ok"], u["candidates"]["index_add"]
        assert u["backward_ms"] == pytest.approx(u["forward_backward_ms"] - u["forward_ms"])
    for c in doc["readout_cases"]:
        assert c["status"] == "ok" and c["check_ok"], c
        assert c["function"] == bbp.POOL_FUNCTIONS[c["reduce"]]
    # the summary takes it
    s, text = batched_summary.summarize({"batched_cases": []}, doc)
    assert "| tiny | f32 | 8 | gin |" in text


def test_skips_cleanly_without_cuda(tmp_path):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is present: the skip path is not taken")
    out = tmp_path / "pyg.json"
    r = run_script("--out", str(out))
    assert r.returncode == 0 and "SKIP" in r.stdout, r.stdout + r.stderr
    assert json.loads(out.read_text())["skipped"]


def test_help_documents_the_options():
    r = run_script("--help")
    assert r.returncode == 0
    for word in ("--batches", "--only", "--types", "--widths", "--runs", "--out",
                 "--device", "global_add_pool", "GCNConv", "edge_index_sorted"):
        assert word in r.stdout, word


def test_compiler_choice_against_the_best_of_both_strategies(tmp_path):
    def case(width, general, batched, chosen, ms, status="ok"):
        return {"batch": "P", "graphs": 10, "type": "f32", "width": width,
                "best": {"batched_ms": batched, "general_ms": general, "cusparse_ms": 1.0,
                         "batched_copy_fraction": 0.5, "general_copy_fraction": 0.5,
                         "batched_schedule": "#gnn.schedule<strategy = batched>",
                         "general_schedule": "#gnn.schedule<vector_width = 4>"},
                "compiler_choice": {"schedule": chosen, "ms": ms, "status": status,
                                    "strategy": "batched" if "batched" in chosen
                                    else "vertex_parallel"}}
    batched = "#gnn.schedule<strategy = batched, tile_rows = 64>"
    general = "#gnn.schedule<vector_width = 4, dim_workers = 8>"
    doc = {"device": {"name": "test"}, "batched_cases": [
        case(16, 0.2, 0.1, batched, 0.1),    # right, at the best: 1.0
        case(32, 0.2, 0.4, batched, 0.4),    # wrong strategy: 0.5
        case(64, 0.3, 0.6, general, 0.4),    # right strategy, not its best: 0.75
        case(128, 0.3, 0.6, general, 0.1, status="wrong"),  # failed: not counted
    ]}
    # The choice made with measured leaders, in one case: the general side.
    doc["batched_cases"][1]["compiler_choice_measured"] = {
        "schedule": general, "ms": 0.25, "status": "ok", "strategy": "vertex_parallel"}
    (tmp_path / "g.json").write_text(json.dumps(doc))
    s = batched_summary.main([str(tmp_path / "g.json"), str(tmp_path / "out")])
    m = s["compiler_choice_measured_vs_best"]
    assert m == {"geomean": 0.8, "worst": 0.8, "cases": 1, "batched_picks": 0,
                 "right_strategy": 1}
    c = s["compiler_choice_vs_best"]
    assert c["cases"] == 3 and c["worst"] == 0.5
    assert math.isclose(c["geomean"], round((1.0 * 0.5 * 0.75) ** (1 / 3), 3))
    assert c["batched_picks"] == 2 and c["right_strategy"] == 2
    # Without recorded choices the key is null.
    for k in doc["batched_cases"]:
        del k["compiler_choice"]
        k.pop("compiler_choice_measured", None)
    (tmp_path / "g.json").write_text(json.dumps(doc))
    s = batched_summary.main([str(tmp_path / "g.json"), str(tmp_path / "out2")])
    assert s["compiler_choice_vs_best"] is None
    assert s["compiler_choice_measured_vs_best"] is None

