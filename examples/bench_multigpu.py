"""Runs the multi-GPU examples with torchrun at world sizes 1 and 2 and
writes summary.json, the runs' results (raw/) and their logs (logs/) to
--out-dir.

  python examples/bench_multigpu.py --out-dir bench-multigpu           # ~5-8 min on 2 H100s
  python examples/bench_multigpu.py --scale 20 --out-dir bench-20      # a smaller R-MAT graph
  python examples/bench_multigpu.py --quick --out-dir bench-quick      # smoke run
  python examples/bench_multigpu.py --parts ddp --reuse bench-multigpu --out-dir X
                                    # rerun one part, the others' results from an earlier run
  python examples/bench_multigpu.py --parts ddp --interleave 3 --reuse bench-multigpu --out-dir Y
                                    # three one-GPU / two-GPU pairs, alternating

Runs: train_ddp_proteins.py (GIN, DistributedDataParallel; PROTEINS in
batches of 128 graphs and generated molecules in batches of
--molecule-batch-size per rank, default 1024 of 32,768: such a step keeps
an H200 busy for about a fifth of its 4-5 ms, the rest is host work, to
which DDP adds about 0.9 ms; batches of 8,192 measured no better) and train_fullgraph_dist.py --parts rmat
(row-partitioned full-graph GCN and GIN on an R-MAT graph) on 1 and 2
GPUs, then train_fullgraph_dist.py --parts planetoid (cora and citeseer
accuracy over --seeds seeds, default 20: distributed vs the same model on
one process, and vs train_node.py's NodeModel) on 2 GPUs. With one GPU
the 2-GPU runs are skipped and the summary says so.

--interleave N makes N pairs of DDP runs, alternating one process and
two (1,2,1,2,...), so that drifts of the machine fall on both sides; a
one-GPU run's throughput varies by 10-20% from one process to the next,
so one pair says little. Each run's epoch time and throughput are the
median over its timed epochs.

summary.json:
- ddp_scaling_2gpu: training throughput (graphs/s) on 2 GPUs over 1 GPU,
  generated molecules (PROTEINS when the molecules did not run), the
  median of the pairs' ratios; ddp_scaling_2gpu_pairs: each pair's runs
  and ratio; ddp_scaling_2gpu_stats: per dataset, the ratios, their
  median, the ratio of the median throughputs, the range of the ratios
  and each side's throughput median / min / max;
  ddp_scaling_2gpu_by_data: the median ratio of each dataset;
- fullgraph_scaling_2gpu: R-MAT epoch time on 1 GPU over 2 GPUs, the
  smaller over GCN and GIN (fullgraph_scaling_2gpu_by_model: each);
- exchange_volume_vs_boundary: bytes the halo exchanges sent (forward,
  all ranks and layers) over the boundary bytes the partition implies
  (distinct referenced rows x width x element size), the largest over
  the models; 1.0 means only referenced rows travelled;
- accuracy_delta_points: |distributed - one process| test accuracy
  (points, mean over seeds) of the same model with the same weights and
  dropout masks (which do not depend on the partition), the largest over
  datasets and models: what distributing the rows changes, the order of
  floating-point sums; accuracy lists each dataset and model (with the
  per-seed paired difference's mean, spread and standard error), with the
  NodeModel reference (other dropout draws, so seed noise included) as
  single_node_model and acc_delta_points_node_model;
- ddp_scaling_2gpu's one-GPU side trains the plain model (no DDP
  wrapper), as a one-GPU user would;
- reused: the raw results taken from --reuse (runs not made this time);
- the raw numbers (epoch times and their exchange / all_reduce / compute
  parts, bytes, edge cut, accuracy), the device, the date, what was skipped.
A key is null when its runs did not run or failed.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def device_info():
    """(GPUs usable by the runs, device name)."""
    if os.environ.get("GNNC_EMULATE") == "1":
        return 2, "cpu (emulated)"
    import torch
    if not torch.cuda.is_available():
        return 0, "none"
    return torch.cuda.device_count(), torch.cuda.get_device_name(0)


def launch(name, script, world, args, out_dir, timeout):
    """Runs `script` under torchrun with `world` processes; returns its JSON
    results (None when it failed) and a record of the run."""
    raw = out_dir / "raw" / f"{name}.json"
    log = out_dir / "logs" / f"{name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    raw.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
           f"--nproc_per_node={world}", str(HERE / script), *map(str, args),
           "--out", str(raw)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO / "python")] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    print(f"== {name}: {' '.join(cmd[2:])}", flush=True)
    t0 = time.perf_counter()
    with open(log, "w") as f:
        try:
            rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env,
                                timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    wall = time.perf_counter() - t0
    text = log.read_text(errors="replace")
    shown = [ln for ln in text.splitlines()
             if not ln.startswith(("    epoch", "*****", "Setting OMP_NUM_THREADS"))]
    print("\n".join(shown[-40:]))
    record = dict(name=name, world_size=world, wall_s=wall, returncode=rc, log=str(log))
    if rc != 0 or not raw.is_file():
        print(f"!! {name} failed ({rc}); see {log}", flush=True)
        return None, record
    print(f"== {name}: {wall:.0f} s", flush=True)
    return json.loads(raw.read_text()), record


def _ratio(a, b):
    return a / b if a is not None and b else None


def ddp_throughput(res, data):
    r = (res or {}).get("results", {}).get(data) or {}
    return r.get("graphs_per_s")


DDP_DATA = ("molecules", "proteins")  # ddp_scaling_2gpu: the first that ran


def ddp_run_names(interleave):
    """The DDP runs in launch order, (name, world size): world 1 then 2,
    `interleave` times; the first pair keeps the names ddp_w1 / ddp_w2."""
    return [(f"ddp_w{w}" + (f"_p{i}" if i > 1 else ""), w)
            for i in range(1, interleave + 1) for w in (1, 2)]


def ddp_run(res, data, file=None):
    """One run's record for a pair: throughput and median epoch time."""
    r = (res or {}).get("results", {}).get(data) or {}
    return dict(file=file, graphs_per_s=r.get("graphs_per_s"), epoch_ms=r.get("epoch_ms"),
                batch_size=r.get("batch_size"), world_size=(res or {}).get("world_size"),
                ddp_wrapper=(res or {}).get("ddp_wrapper", True),
                broadcast_buffers=(res or {}).get("broadcast_buffers", True),
                static_graph=(res or {}).get("static_graph", False),
                one_bucket=(res or {}).get("one_bucket", False),
                test_acc=r.get("acc_mean"))


def ddp_pair(one, two, name):
    """A one-process run and the two-process run launched after it."""
    return dict(name=name, one=one, two=two)


def _spread(values):
    return dict(median=statistics.median(values), min=min(values), max=max(values))


def ddp_scaling(pairs):
    """ddp_scaling_2gpu and its companions from pairs of runs (ddp_pair):
    per dataset, each pair's ratio (two-GPU / one-GPU graphs/s), the median
    of the ratios (the headline), the ratio of the medians, their range and
    the spread of each side's throughput. Pairs with a failed side count
    nowhere."""
    stats, by_data, rows = {}, {}, []
    for data in DDP_DATA:
        ok = [(q, ddp_throughput(q["one"], data), ddp_throughput(q["two"], data))
              for q in pairs]
        ok = [(q, a, b) for q, a, b in ok if a and b is not None]
        if not ok:
            by_data[data] = None
            continue
        ratios = [b / a for _, a, b in ok]
        ones, twos = [a for _, a, _ in ok], [b for _, _, b in ok]
        stats[data] = dict(pairs=len(ok), ratios=ratios,
                           median_of_ratios=statistics.median(ratios),
                           ratio_of_medians=statistics.median(twos) / statistics.median(ones),
                           min=min(ratios), max=max(ratios), range=max(ratios) - min(ratios),
                           one_gpu_graphs_per_s=_spread(ones),
                           two_gpu_graphs_per_s=_spread(twos))
        by_data[data] = stats[data]["median_of_ratios"]
    head = next((d for d in DDP_DATA if by_data.get(d) is not None), None)
    if head:
        for q in pairs:
            a, b = ddp_throughput(q["one"], head), ddp_throughput(q["two"], head)
            if a and b is not None:
                rows.append(dict(name=q["name"], data=head,
                                 one_gpu=ddp_run(q["one"], head, q["name"]),
                                 two_gpu=ddp_run(q["two"], head, q["name"]),
                                 scaling=b / a))
    return dict(
        ddp_scaling_2gpu=by_data[head] if head else None,
        ddp_scaling_2gpu_pairs=rows,
        ddp_scaling_2gpu_stats=stats,
        ddp_scaling_2gpu_by_data=by_data,
        ddp_graphs_per_s={w: {d: s[f"{side}_graphs_per_s"]["median"]
                              for d, s in stats.items()}
                          for w, side in (("1", "one_gpu"), ("2", "two_gpu"))} if stats else {},
    )


def fullgraph_rows(res):
    return {r["model"]: r for r in (res or {}).get("rmat", [])}


def ddp_pair_count(names):
    """How many DDP pairs the run names (ddp_w1, ddp_w2, ddp_w1_p2, ...) hold."""
    found = [int(m.group(1)) for m in map(re.compile(r"ddp_w[12]_p(\d+)$").match, names) if m]
    return max([1] + found)


def summarize(runs, scale, interleave=1):
    pairs = []
    names = [n for n, _ in ddp_run_names(max(interleave, ddp_pair_count(runs)))]
    for one, two in zip(names[::2], names[1::2]):
        if one in runs or two in runs:
            pairs.append(ddp_pair(runs.get(one), runs.get(two), one.replace("ddp_w1", "pair")))
    ddp = ddp_scaling(pairs)
    d1 = runs.get("ddp_w1")
    f1, f2 = fullgraph_rows(runs.get("fullgraph_w1")), fullgraph_rows(runs.get("fullgraph_w2"))
    by_model = {m: _ratio(f1[m]["epoch_ms"], f2[m]["epoch_ms"])
                for m in f1 if m in f2}
    volume = [r.get("exchange_volume_vs_boundary") for r in f2.values()]
    volume = [v for v in volume if v is not None]

    def parts(rows):
        return {m: {k: r[k] for k in ("epoch_ms", "compute_ms", "exchange_ms",
                                      "allreduce_ms", "peak_mib", "exchange_bytes_sent",
                                      "boundary_bytes", "first_epoch_s")}
                for m, r in rows.items()}
    cut = None
    if f2:
        p = next(iter(f2.values()))["partition"]
        cut = dict(edge_cut=p[0]["edge_cut"], edge_cut_fraction=p[0]["edge_cut_fraction"],
                   halo_rows=[q["n_halo"] for q in p], local_rows=[q["n_local"] for q in p],
                   local_edges=[q["local_edges"] for q in p])
    acc = (runs.get("accuracy") or {}).get("planetoid") or []
    deltas = [r["acc_delta_points"] for r in acc if r.get("acc_delta_points") is not None]
    return dict(
        **ddp,
        fullgraph_scaling_2gpu=min(by_model.values()) if by_model else None,
        fullgraph_scaling_2gpu_by_model=by_model,
        exchange_volume_vs_boundary=max(volume) if volume else None,
        accuracy_delta_points=max(deltas) if deltas else None,
        rmat_scale=scale,
        ddp_test_acc={w: {k: ((r or {}).get("results", {}).get(k) or {}).get("acc_mean")
                          for k in DDP_DATA}
                      for w, r in (("1", d1), ("2", runs.get("ddp_w2"))) if r},
        fullgraph_epoch={w: parts(rows) for w, rows in (("1", f1), ("2", f2)) if rows},
        fullgraph_partition_2gpu=cut,
        accuracy=[dict(dataset=r["dataset"], model=r["model"], seeds=r["distributed"]["seeds"],
                       distributed=r["distributed"]["acc_mean"],
                       single=r.get("single", {}).get("acc_mean"),
                       acc_delta_points=r.get("acc_delta_points"),
                       paired_difference=r.get("paired_difference"),
                       single_node_model=r.get("single_node_model", {}).get("acc_mean"),
                       acc_delta_points_node_model=r.get("acc_delta_points_node_model"))
                  for r in acc],
    )


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out-dir", default="bench-multigpu")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: R-MAT scale 16, few epochs, 4,096 molecules, 1 seed")
    p.add_argument("--scale", type=int, help="R-MAT scale (default 22)")
    p.add_argument("--models", nargs="+", default=["gcn", "gin"], choices=["gcn", "gin"])
    p.add_argument("--epochs", type=int, help="timed full-graph epochs (default 10)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--ddp-epochs", type=int, help="DDP epochs (default 12)")
    p.add_argument("--molecules", type=int,
                   help="generated molecules (default 32768: 80%% of them, the training "
                        "graphs, make 26 batches of 1,024, split evenly over 2 ranks)")
    p.add_argument("--molecule-batch-size", type=int, default=1024,
                   help="molecules per DDP batch and rank (PROTEINS stays at 128)")
    p.add_argument("--interleave", type=int, default=1, metavar="N",
                   help="DDP runs: N pairs, one process then two, alternating "
                        "(1,2,1,2,...); ddp_scaling_2gpu is the median of the pairs' ratios")
    p.add_argument("--ddp-data", nargs="+", choices=["proteins", "molecules"],
                   default=["proteins", "molecules"], help="the DDP runs' datasets")
    p.add_argument("--ddp-flags", type=shlex.split, default=[], metavar="FLAGS",
                   help="more train_ddp_proteins.py flags for every DDP run, one string: "
                        "--ddp-flags='--no-static-graph --no-one-bucket'")
    p.add_argument("--seeds", type=int, help="accuracy seeds (default 20)")
    p.add_argument("--no-accuracy", action="store_true",
                   help="skip the cora/citeseer accuracy run")
    p.add_argument("--parts", nargs="+", default=["ddp", "fullgraph", "accuracy"],
                   choices=["ddp", "fullgraph", "accuracy"], help="the runs to make")
    p.add_argument("--reuse", metavar="DIR",
                   help="take the runs not made from DIR/raw (an earlier --out-dir); "
                        "the summary lists which")
    p.add_argument("--precision", default="f32", choices=["f32", "f16"])
    p.add_argument("--timeout", type=int, default=420, help="seconds per run")
    args = p.parse_args()
    if args.interleave < 1:
        p.error(f"--interleave {args.interleave}: needs at least one pair")
    q = args.quick
    scale = args.scale or (16 if q else 22)
    epochs = args.epochs or (3 if q else 10)
    warmup = 1 if q else args.warmup
    ddp_epochs = args.ddp_epochs or (3 if q else 12)
    molecules = args.molecules or (4096 if q else 32768)
    seeds = args.seeds or (1 if q else 20)
    out = Path(args.out_dir)
    gpus, device_name = device_info()
    worlds = [1, 2] if gpus >= 2 else [1] if gpus == 1 else []
    skipped = []
    if gpus < 2:
        skipped.append(f"2-GPU runs: {gpus} GPU(s) available")
    if not worlds:
        raise SystemExit("no GPU (GNNC_EMULATE=1 runs the examples on the CPU)")
    t0 = time.perf_counter()
    runs, records = {}, []
    ddp_args = ["--epochs", ddp_epochs, "--warmup", min(2, ddp_epochs - 1),
                "--eval-every", max(1, ddp_epochs // 3), "--molecules", molecules,
                "--batch-size", 128, "--molecule-batch-size",
                min(args.molecule_batch_size, 512) if q else args.molecule_batch_size,
                "--precision", args.precision, "--data", *args.ddp_data, *args.ddp_flags]
    full_args = ["--parts", "rmat", "--scales", scale, "--models", *args.models,
                 "--epochs", epochs, "--warmup", warmup, "--precision", args.precision]
    reused = []

    def reuse(name):
        if args.reuse:
            raw = Path(args.reuse) / "raw" / f"{name}.json"
            if raw.is_file():
                runs[name] = json.loads(raw.read_text())
                reused.append(str(raw))
                return
        skipped.append(f"{name}: not in --parts")

    if "ddp" not in args.parts:
        # Every pair the earlier run made (ddp_w1 / ddp_w2, ddp_w1_p2 / ...).
        have = [f.stem for f in Path(args.reuse).glob("raw/ddp_w*.json")] if args.reuse else []
        for run_name, world in ddp_run_names(ddp_pair_count(have)):
            if world in worlds:
                reuse(run_name)
    else:
        for run_name, world in ddp_run_names(args.interleave):
            if world not in worlds:
                continue
            runs[run_name], rec = launch(run_name, "train_ddp_proteins.py", world, ddp_args,
                                         out, args.timeout)
            records.append(rec)
    for world in worlds:
        if "fullgraph" not in args.parts:
            reuse(f"fullgraph_w{world}")
            continue
        res, rec = launch(f"fullgraph_w{world}", "train_fullgraph_dist.py", world,
                          full_args, out, args.timeout)
        runs[f"fullgraph_w{world}"] = res
        records.append(rec)
    if args.no_accuracy:
        skipped.append("accuracy: --no-accuracy")
    elif "accuracy" not in args.parts:
        reuse("accuracy")
    else:
        acc_args = ["--parts", "planetoid", "--seeds", seeds, "--precision", args.precision]
        if q:
            acc_args += ["--train-epochs", 50, "--datasets", "cora"]
        res, rec = launch("accuracy", "train_fullgraph_dist.py", worlds[-1], acc_args, out,
                          args.timeout)
        runs["accuracy"] = res
        records.append(rec)
    summary = summarize(runs, scale, args.interleave)
    summary.update(device=device_name, gpus=gpus, date=datetime.datetime.now().isoformat(
        timespec="seconds"), precision=args.precision, quick=q, skipped=skipped,
        interleave=args.interleave, ddp_flags=args.ddp_flags,
        failed=[r["name"] for r in records if r["returncode"] != 0], reused=reused,
        runs=records, wall_s=time.perf_counter() - t0)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    print(json.dumps({k: summary[k] for k in (
        "ddp_scaling_2gpu", "fullgraph_scaling_2gpu", "exchange_volume_vs_boundary",
        "accuracy_delta_points", "device", "skipped", "failed", "wall_s")}, indent=2, default=str))
    for data, st in summary["ddp_scaling_2gpu_stats"].items():
        print(f"ddp {data}: pairs {[round(r, 3) for r in st['ratios']]}, median of ratios "
              f"{st['median_of_ratios']:.3f}, ratio of medians {st['ratio_of_medians']:.3f}, "
              f"range {st['min']:.3f}-{st['max']:.3f}")
    print(f"wrote {out / 'summary.json'}")


if __name__ == "__main__":
    main()
