"""examples/train_ddp_proteins.py and examples/bench_multigpu.py on the CPU:
gloo process groups, kernels emulated by the torch reference.

- The example's DDP wrapper (ddp_options: static_graph, one bucket, inputs
  left where they are) with its warm-up and training step, two processes
  each taking its own batch per step, against one process that takes both
  batches per step (the loss the mean of the two batches' losses, each
  batch's forward with the random state its rank had, so dropout draws
  the same masks): per-step losses and the parameters after the steps
  agree; a run on rank 0's batches alone does not. Both option sets, the
  defaults and all off, on a model wide enough that DDP's default buckets
  are two: one bucket with --one-bucket, more without.
- The script under torchrun (2 processes): it runs, writes its options and
  its bucket sizes, and its epoch time is the median of the timed epochs.
- bench_multigpu's pair statistics (median of the ratios, ratio of the
  medians, spread) on made-up runs, and --interleave end to end on a small
  problem, with --reuse of its DDP runs; bench/multigpu_combine.py on
  made-up pairs.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import traceback
from datetime import timedelta
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")
dist = pytest.importorskip("torch.distributed", reason="torch.distributed is not available")
if not dist.is_available() or not dist.is_gloo_available():
    pytest.skip("torch.distributed with the gloo backend is not available",
                allow_module_level=True)

from conftest import _lib_reason  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
STEPS = 4
HIDDEN = 384  # ~3.6 MB of f32 gradients: DDP's defaults make two buckets
WORLD = 2


def _example_env():
    env = dict(os.environ, GNNC_EMULATE="1", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO / "python"), str(EXAMPLES)] +
        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


_EXAMPLE_MODULES = ("gnn_common", "train_ddp_proteins", "train_proteins")


def _setup(patch=None):
    """The example modules, in emulation on the CPU. In a worker process
    (no `patch`) for good; in the test process through `patch` (a
    pytest.MonkeyPatch), so that the emulation, the environment and the
    path are undone for the tests that follow."""
    if patch is None:
        os.environ["GNNC_EMULATE"] = "1"
        for p in (str(EXAMPLES), str(REPO / "python")):
            if p not in sys.path:
                sys.path.insert(0, p)
    else:
        patch.setenv("GNNC_EMULATE", "1")
        for p in (str(EXAMPLES), str(REPO / "python"), str(REPO / "python" / "tests")):
            patch.syspath_prepend(p)
    import gnn_common as C
    import train_ddp_proteins as D
    import train_proteins as P
    if patch is None:
        dev = C.device()  # installs the emulation
    else:
        import emulate_segment
        emulate_segment.install(patch)
        dev = torch.device("cpu")
    return C, D, P, dev


def _batches(D, P, dev):
    data = D.molecules(160, 3, dev)
    return P.splits(data, 0, 12, dev)


def _model(P, dev):
    torch.manual_seed(0)
    return P.GIN("gnnc", 7, HIDDEN, 2).to(dev)


def _optimizer(net):
    """Plain SGD: a parameter moves by its gradient, so equal gradients mean
    equal parameters. (Adam would turn the float noise of the gradients
    that are zero in exact arithmetic, the biases before BatchNorm, into
    steps of the full learning rate.)"""
    return torch.optim.SGD(net.parameters(), lr=0.0005)


def _worker(rank, world, init_file, out_dir, flags):
    results = {}
    try:
        torch.set_num_threads(1)
        C, D, P, dev = _setup()
        dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                                world_size=world, timeout=timedelta(seconds=120))
        args = D.parser().parse_args(flags)
        batches = _batches(D, P, dev)
        net = _model(P, dev)
        ddp, _, scaler, _ = D.prepare(net, args, batches, rank, world, dev)
        assert isinstance(ddp, torch.nn.parallel.DistributedDataParallel)
        opt = _optimizer(net)
        ddp.train()  # the warm-up leaves the model in eval mode, as each epoch finds it
        losses = []
        for s in range(STEPS):
            b = batches["train"][world * s + rank]
            losses.append(float(D.train_step(ddp, opt, scaler, b, args.precision, dev)))
        results = dict(losses=losses, buckets=D.bucket_sizes(ddp),
                       options={k: (v if k != "device_ids" else str(v))
                                for k, v in D.ddp_options(net, args, dev).items()},
                       params=[p.detach().tolist() for p in net.parameters()])
        dist.destroy_process_group()
    except Exception:
        results = dict(error=traceback.format_exc())
    (Path(out_dir) / f"{rank}.json").write_text(json.dumps(results))


def _reference(batch_ids_per_step, patch):
    """One process: each step the mean of the given batches' losses, each
    batch's forward with its own copy of the random state (a rank's)."""
    C, D, P, dev = _setup(patch)
    batches = _batches(D, P, dev)
    net = _model(P, dev)
    opt = _optimizer(net)
    states = [torch.get_rng_state() for _ in range(WORLD)]
    losses = []
    for ids in batch_ids_per_step:
        opt.zero_grad(set_to_none=True)
        total, step = 0, []
        for r, i in enumerate(ids):
            torch.set_rng_state(states[r])
            b = batches["train"][i]
            loss = torch.nn.functional.cross_entropy(
                net(b["x"], b["graph"], b["batch"], b["num_graphs"]), b["y"])
            states[r] = torch.get_rng_state()
            total = total + loss / len(ids)
            step.append(float(loss.detach()))
        total.backward()
        opt.step()
        losses.append(step)
    return losses, [p.detach() for p in net.parameters()]


@pytest.fixture(scope="module")
def needs_lib():
    why = _lib_reason()
    if why:
        pytest.skip(why)


@pytest.fixture(scope="module")
def reference(needs_lib):
    loaded = {m for m in _EXAMPLE_MODULES if m in sys.modules}
    with pytest.MonkeyPatch.context() as patch, torch.random.fork_rng():
        both = _reference([[WORLD * s + r for r in range(WORLD)] for s in range(STEPS)],
                          patch)
        alone = _reference([[WORLD * s] for s in range(STEPS)], patch)
    # The examples read GNNC_EMULATE when imported: forget the emulated ones.
    for m in _EXAMPLE_MODULES:
        if m not in loaded:
            sys.modules.pop(m, None)
    return both, alone


def _run_group(flags):
    import torch.multiprocessing as mp
    with tempfile.TemporaryDirectory() as d:
        mp.spawn(_worker, args=(WORLD, os.path.join(d, "init"), d, flags), nprocs=WORLD,
                 join=True)
        out = [json.loads((Path(d) / f"{r}.json").read_text()) for r in range(WORLD)]
    for r, res in enumerate(out):
        assert "error" not in res, f"rank {r}:\n{res['error']}"
    return out


@pytest.mark.parametrize("flags,one_bucket", [
    ([], True),
    (["--no-static-graph", "--no-one-bucket", "--no-inputs-on-device"], False),
])
def test_ddp_matches_one_process_on_the_union(reference, flags, one_bucket):
    (ref_losses, ref_params), (_, alone_params) = reference
    out = _run_group(flags)
    opts = out[0]["options"]
    assert opts["static_graph"] is ("--no-static-graph" not in flags)
    assert opts["gradient_as_bucket_view"] is True and opts["broadcast_buffers"] is False
    assert opts["device_ids"] == "None"  # the CPU: no device ids either way
    grad_bytes = sum(p.numel() * 4 for p in ref_params)
    assert grad_bytes > 2**20  # wider than DDP's default first bucket
    for r in range(WORLD):
        buckets = out[r]["buckets"]
        assert sum(buckets) == grad_bytes, buckets
        assert (len(buckets) == 1) is one_bucket, buckets
        # Each rank's loss is its batch's loss in the one-process run.
        for s in range(STEPS):
            assert out[r]["losses"][s] == pytest.approx(ref_losses[s][r], rel=1e-4, abs=1e-6)
    # The ranks hold the same parameters, those of the one-process run.
    moved = False
    for k, want in enumerate(ref_params):
        p0 = torch.tensor(out[0]["params"][k])
        p1 = torch.tensor(out[1]["params"][k])
        assert torch.equal(p0, p1), f"parameter {k} differs between the ranks"
        torch.testing.assert_close(p0, want, rtol=1e-4, atol=1e-5, msg=f"parameter {k}")
        moved |= not torch.allclose(want, alone_params[k], rtol=1e-4, atol=1e-5)
    # Training on rank 0's batches alone gives other parameters: the
    # comparison sees the other rank's gradients.
    assert moved


def test_script_two_processes(needs_lib, tmp_path):
    out = tmp_path / "ddp.json"
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
         str(EXAMPLES / "train_ddp_proteins.py"), "--data", "molecules", "--molecules", "160",
         "--molecule-batch-size", "16", "--epochs", "4", "--warmup", "1", "--eval-every", "4",
         "--out", str(out)],
        env=_example_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = json.loads(out.read_text())
    assert res["world_size"] == 2 and res["ddp_wrapper"] is True
    assert res["static_graph"] is True and res["one_bucket"] is True
    assert res["inputs_on_device"] is True
    run = res["results"]["molecules"]["runs"][0]
    assert len(run["ddp_buckets"]) == 1
    timed = [e["epoch_ms"] for e in run["epochs"][1:]]
    assert len(timed) == 3 and run["epoch_ms"] == statistics.median(timed)


# --- bench_multigpu ------------------------------------------------------------

def _bench():
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    import bench_multigpu as B
    return B


def _ddp_result(world, molecules, proteins=None):
    return dict(world_size=world, results=dict(
        molecules=dict(graphs_per_s=molecules, epoch_ms=1e3 / molecules, acc_mean=70.0),
        proteins=dict(graphs_per_s=proteins, epoch_ms=1.0) if proteins
        else dict(skipped="absent")))


def test_pair_statistics():
    B = _bench()
    ones, twos = [100.0, 140.0, 120.0], [180.0, 200.0, 230.0]
    pairs = [B.ddp_pair(_ddp_result(1, a, 10.0), _ddp_result(2, b, 15.0), f"p{i}")
             for i, (a, b) in enumerate(zip(ones, twos))]
    s = B.ddp_scaling(pairs)
    ratios = [b / a for a, b in zip(ones, twos)]
    assert s["ddp_scaling_2gpu"] == pytest.approx(statistics.median(ratios))
    assert s["ddp_scaling_2gpu_pairs"][1]["scaling"] == pytest.approx(200 / 140)
    st = s["ddp_scaling_2gpu_stats"]["molecules"]
    assert st["pairs"] == 3
    assert st["ratios"] == pytest.approx(ratios)
    assert st["median_of_ratios"] == pytest.approx(statistics.median(ratios))
    assert st["ratio_of_medians"] == pytest.approx(200 / 120)
    assert st["min"] == pytest.approx(min(ratios)) and st["max"] == pytest.approx(max(ratios))
    assert st["one_gpu_graphs_per_s"] == dict(median=120.0, min=100.0, max=140.0)
    assert s["ddp_scaling_2gpu_by_data"]["proteins"] == pytest.approx(1.5)
    assert s["ddp_graphs_per_s"]["1"]["molecules"] == 120.0
    # A pair with a failed run counts nowhere; no pairs, no number.
    broken = pairs + [B.ddp_pair(None, _ddp_result(2, 1.0), "p3")]
    assert B.ddp_scaling(broken)["ddp_scaling_2gpu"] == s["ddp_scaling_2gpu"]
    assert B.ddp_scaling([])["ddp_scaling_2gpu"] is None
    # The run order interleaves the world sizes.
    assert B.ddp_run_names(3) == [("ddp_w1", 1), ("ddp_w2", 2), ("ddp_w1_p2", 1),
                                  ("ddp_w2_p2", 2), ("ddp_w1_p3", 1), ("ddp_w2_p3", 2)]
    assert B.ddp_run_names(1) == [("ddp_w1", 1), ("ddp_w2", 2)]


def test_bench_interleave_and_reuse(needs_lib, tmp_path):
    common = [sys.executable, str(EXAMPLES / "bench_multigpu.py"), "--quick", "--parts", "ddp",
              "--no-accuracy", "--molecules", "128", "--molecule-batch-size", "16",
              "--ddp-epochs", "2", "--ddp-data", "molecules"]
    first = tmp_path / "first"
    proc = subprocess.run(common + ["--interleave", "2", "--out-dir", str(first)],
                          env=_example_env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    s = json.loads((first / "summary.json").read_text())
    assert s["interleave"] == 2 and s["failed"] == []
    # The device, not the last run's name.
    assert s["device"] == "cpu (emulated)"
    assert [r["name"] for r in s["runs"]] == ["ddp_w1", "ddp_w2", "ddp_w1_p2", "ddp_w2_p2"]
    pairs = s["ddp_scaling_2gpu_pairs"]
    assert len(pairs) == 2 and all(p["scaling"] > 0 for p in pairs)
    assert s["ddp_scaling_2gpu"] == pytest.approx(
        statistics.median(p["scaling"] for p in pairs))
    st = s["ddp_scaling_2gpu_stats"]["molecules"]
    assert st["pairs"] == 2 and st["min"] <= st["median_of_ratios"] <= st["max"]
    # --reuse: the DDP pairs from the first run, nothing launched.
    second = tmp_path / "second"
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "bench_multigpu.py"), "--quick", "--parts", "accuracy",
         "--no-accuracy", "--reuse", str(first), "--out-dir", str(second)],
        env=_example_env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    s2 = json.loads((second / "summary.json").read_text())
    assert s2["runs"] == [] and len(s2["ddp_scaling_2gpu_pairs"]) == 2
    assert s2["device"] == "cpu (emulated)"
    assert s2["ddp_scaling_2gpu"] == pytest.approx(s["ddp_scaling_2gpu"])
    assert sorted(Path(p).name for p in s2["reused"]) == [
        "ddp_w1.json", "ddp_w1_p2.json", "ddp_w2.json", "ddp_w2_p2.json"]


def test_combine_uses_the_pair_statistics(tmp_path):
    """bench/multigpu_combine.py: the median of the given pairs' ratios, the
    full run's number kept beside it, mismatched pairs refused."""
    full = tmp_path / "full"
    full.mkdir()
    (full / "summary.json").write_text(json.dumps(dict(
        ddp_scaling_2gpu=2.5, fullgraph_scaling_2gpu=1.6, exchange_volume_vs_boundary=1.0,
        accuracy_delta_points=0.1)))
    files = []
    for i, (a, b) in enumerate([(100.0, 170.0), (120.0, 180.0), (90.0, 200.0)]):
        for w, v in ((1, a), (2, b)):
            f = tmp_path / f"p{i}_w{w}.json"
            f.write_text(json.dumps(_ddp_result(w, v)))
            files.append(str(f))
    out = tmp_path / "summary.json"
    cmd = [sys.executable, str(REPO / "bench" / "multigpu_combine.py"), "--full", str(full),
           "--out", str(out), "--ddp-pairs"]
    proc = subprocess.run(cmd + files, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    s = json.loads(out.read_text())
    assert s["ddp_scaling_2gpu"] == pytest.approx(1.7)
    assert s["ddp_scaling_2gpu_full_run"] == 2.5
    assert [round(q["scaling"], 4) for q in s["ddp_scaling_2gpu_pairs"]] == [1.7, 1.5, 2.2222]
    assert s["ddp_scaling_2gpu_stats"]["molecules"]["ratio_of_medians"] == pytest.approx(1.8)
    proc = subprocess.run(cmd + files[1:3], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "not a world-1 / world-2 pair" in proc.stderr
