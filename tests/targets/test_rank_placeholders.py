"""The launches write the values that tell a pool's nodes apart (a pipeline's `--node-rank`, a
headless node's `--data-parallel-start-rank`) as rank placeholders, so the nodes share one argv
template, and each target fills them: shell and Slurm run each launch's own argv, Kubernetes' one
worker template reads them from the LWS index. No target finds a flag in argv by its position."""

from __future__ import annotations

from target_helpers import spec_plans

from spark_dsl.plan.template import DP_START_RANK, NODE_RANK, RANKS, Template, placeholder, with_ranks
from spark_dsl.targets.kubernetes import WORKER_INDEX

FLAG_OF = {NODE_RANK: "--node-rank", DP_START_RANK: "--data-parallel-start-rank"}


def test_the_nodes_of_a_pool_share_one_template_with_their_own_ranks() -> None:
    workers_seen = 0
    for planned in spec_plans().values():
        for pool in planned.plan.pools:
            launches = [launch for launch in planned.launches if launch.role == pool.role]
            workers = [launch for launch in launches if not launch.api_server]
            for launch in launches:
                assert launch.argv == with_ranks(launch.template, dict(launch.ranks))
                for name, value in launch.ranks:
                    at = launch.template.index(FLAG_OF[name]) + 1
                    assert launch.template[at] == placeholder(name) and isinstance(launch.template[at], Template)
                    assert launch.argv[at] == value
            assert len({launch.template for launch in workers}) <= 1
            workers_seen += len(workers)
    assert workers_seen > 0  # the specs hold multi-node pools (data parallel and a pipeline)


def test_only_the_compilers_placeholder_is_a_rank() -> None:
    # A user's extra argument that reads `${SPARK_NODE_RANK}` is text, and reaches vLLM as written.
    argv = ("vllm", "--node-rank", placeholder(NODE_RANK), "--tag", "${SPARK_NODE_RANK}")
    assert with_ranks(argv, {NODE_RANK: "1"}) == ("vllm", "--node-rank", "1", "--tag", "${SPARK_NODE_RANK}")


def test_a_kubernetes_worker_reads_every_rank_from_its_lws_index() -> None:
    from spark_dsl.targets.common import Job
    from spark_dsl.targets.kubernetes import Manifest

    checked = 0
    for planned in spec_plans().values():
        if planned.plan.total_nodes < 2:
            continue
        manifest = Manifest(Job(planned.plan, planned.launches, "kubernetes", "spec.spark"))
        for pool in planned.plan.pools:
            workers = [w for w in planned.launches if w.role == pool.role and not w.api_server]
            # One rank group per node: each worker's ranks are its index (else the build refuses).
            if not workers or any(v != str(w.node_rank - pool.first_rank) for w in workers for _, v in w.ranks):
                continue
            args = manifest.worker_container(pool, workers)["args"]
            names = [name for name, _ in workers[0].ranks]
            assert names and set(names) <= set(RANKS)
            for name in names:
                assert args[args.index(FLAG_OF[name]) + 1] == WORKER_INDEX
            checked += 1
    assert checked > 0
