"""Decides every vLLM flag once: the options (rendered to the exact argv) and environment of each
role and node rank."""

from __future__ import annotations

from collections.abc import Mapping

from spark_dsl import catalog
from spark_dsl.plan import host_cpus, template
from spark_dsl.plan.capacity import kv_cache_bytes
from spark_dsl.plan.drain import drain_budget
from spark_dsl.plan.managed import ENGINE_READY_ENV, FABRIC_ENV, NIXL_BACKENDS
from spark_dsl.plan.model import Launch, Plan, Pool
from spark_dsl.plan.options import Option
from spark_dsl.plan.template import Template, placeholder
from spark_dsl.plan.weights import model_id as model_id
from spark_dsl.plan.weights import ready_budget
from spark_dsl.values import SecretRef, Speculative

# Placeholders are Templates (`placeholder(NAME)`, or `Template(...)` around text that holds one):
# only those are filled, so a user's value that reads `${SPARK_HEAD_ADDRESS}` stays literal.
POOL_ADDRESS = {role: placeholder(name) for role, name in template.POOL_ADDRESS.items()}
# Each rank binds its NIXL side channel on, and advertises, the address of its own node.
NODE_ADDRESS = placeholder(template.NODE_ADDRESS)
# The interface that holds that address: Gloo's and NCCL's sockets between the nodes use it.
NODE_INTERFACE = placeholder(template.NODE_INTERFACE)
# A node's rank in its pool and a headless node's first data-parallel rank: placeholders, so the
# pool's nodes share one argv template; each launch records its own values (`Launch.ranks`).
NODE_RANK = placeholder(template.NODE_RANK)
DP_START_RANK = placeholder(template.DP_START_RANK)
KV_ROLES = {"prefill": "kv_producer", "decode": "kv_consumer"}
# The router sends `Authorization: Bearer $OPENAI_API_KEY` to the workers it routes to
# (vllm-project/router, `vllm_pd_router.rs`): the deployment's API key, under that name.
ROUTER_KEY_ENV = "OPENAI_API_KEY"


def _json(value: Mapping[str, object]) -> str:
    import json  # here: only a launch with a JSON-valued flag needs it, and a check may have none

    return json.dumps(value, separators=(",", ":"))


def api_port(plan: Plan) -> int:
    return int(plan.serve.value("port"))


class LaunchBuilder:
    """Builds the launches of a plan without errors (rules have passed)."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.ports = catalog.load().recipe.ports
        self.serve = plan.serve
        self.runtime = plan.runtime
        self.ready_seconds = str(ready_budget(plan).seconds)
        self.drain_seconds = str(drain_budget(plan).drain)

    def build(self) -> list[Launch]:
        launches: list[Launch] = []
        for pool in self.plan.pools:
            for offset in range(pool.nodes):
                launches.append(self._server(pool, offset))
        if self.plan.disaggregated:
            launches.insert(1 if launches else 0, self._router())
            launches.sort(key=lambda launch: (launch.node_rank, launch.role != "router"))
        return launches

    # ---- vllm serve ---------------------------------------------------------

    def _pool_port(self, pool: Pool) -> int:
        if pool.role == "server":
            return api_port(self.plan)
        return self.ports.prefill if pool.role == "prefill" else self.ports.decode

    def _server(self, pool: Pool, offset: int) -> Launch:
        # A rank group on a node after the pool's first serves no API: vLLM's `--headless`.
        headless = offset > 0 and pool.nodes > 1 and (pool.dp is not None or pool.pp > 1)
        port = self._pool_port(pool)
        options = [] if headless else self._api(port)
        options.append(Option("--tensor-parallel-size", str(pool.tp)))
        if pool.ep:
            options.append(Option("--enable-expert-parallel"))
        # This node's values of the rank placeholders `_pipeline` and `_data_parallel` write.
        ranks: dict[str, str] = {}
        options += self._pipeline(pool, offset, headless, ranks)
        options += self._data_parallel(pool, offset, headless, ranks)
        options += self._engine(pool)
        options += self._modalities()
        options += self._speculative(self.plan.value("speculative"))
        if pool.role in KV_ROLES:
            options.append(Option("--kv-transfer-config", _json(self._kv_transfer(pool))))
        # Headless too: vllm/entrypoints/cli/serve.py:263.
        options.append(Option("--shutdown-timeout", self.drain_seconds))
        return Launch(
            role=pool.role,
            node_rank=pool.first_rank + offset,
            command=("vllm", "serve", model_id(self.plan)),
            options=tuple(options),
            extra_args=tuple(self.serve.value("extra_args") or ()),
            env=self._env(pool, headless),
            secrets=self._secrets(headless),
            port=None if headless else port,
            api_server=not headless,
            ranks=tuple(ranks.items()),
        )

    def _api(self, port: int) -> list[Option]:
        """Where the API server listens and the name it serves the model under."""
        options = []
        name = self.serve.value("served_model_name")
        if name:
            options.append(Option("--served-model-name", name))
        host = self.serve.value("host")
        if host:
            options.append(Option("--host", host))
        return [*options, Option("--port", str(port))]

    def _engine(self, pool: Pool) -> list[Option]:
        """The engine's settings: quantization, context and batch limits, the KV cache, attention."""
        plan = self.plan
        options = []
        quantization = plan.checkpoint.quantization if plan.checkpoint else None
        if quantization and plan.vendor.online_quantization_env is None:
            options.append(Option("--quantization", quantization))
        for key, flag in (("max_model_len", "--max-model-len"), ("max_num_seqs", "--max-num-seqs")):
            value = plan.value(key)
            if value is not None:
                options.append(Option(flag, str(value)))
        if plan.value("kv_cache_dtype") != "auto":
            options.append(Option("--kv-cache-dtype", plan.value("kv_cache_dtype")))
        if plan.value("gpu_memory_utilization") is not None:
            options.append(Option("--gpu-memory-utilization", f"{plan.value('gpu_memory_utilization'):g}"))
        kv_bytes = kv_cache_bytes(plan, pool)  # vLLM's CPU backend: each rank's KV cache, from host memory
        if kv_bytes is not None:
            options.append(Option("--kv-cache-memory-bytes", str(kv_bytes)))
        switches = (("prefix_caching", "--enable-prefix-caching"), ("chunked_prefill", "--enable-chunked-prefill"))
        for key, flag in switches:
            value = plan.value(key)
            if value is not None:
                options.append(Option(flag, bool(value)))  # off: vLLM's `--no-` spelling
        attention = plan.value("attention")
        if attention is not None and attention != "auto":
            backend = catalog.load().attention_backend(attention)
            assert backend is not None  # the schema admits only the catalog's backends
            options.append(Option("--attention-backend", backend.vllm))
        return options

    def _kv_transfer(self, pool: Pool) -> dict[str, object]:
        """NixlConnector's config. NIXL's transport is UCX unless `kv_connector_extra_config.backends`
        names another (vLLM 0.33.0, `nixl/base_worker.py`:624-626, default ["UCX"]); UCX has no EFA
        transport, and vLLM's NixlConnector guide selects LIBFABRIC for it, which NIXL's libfabric
        backend runs over the `efa` provider (docs/targets.md, "Fabric")."""
        config: dict[str, object] = {"kv_connector": "NixlConnector", "kv_role": KV_ROLES[pool.role]}
        backends = NIXL_BACKENDS.get(self.runtime.value("fabric") or "")
        if backends:
            config["kv_connector_extra_config"] = {"backends": list(backends)}
        return config

    def _data_parallel(self, pool: Pool, offset: int, headless: bool, ranks: dict[str, str]) -> list[Option]:
        if pool.dp is None:
            return []
        if pool.nodes == 1:
            return [Option("--data-parallel-size", str(pool.dp))]
        local = max(pool.dp // pool.nodes, 1)
        options = [
            Option("--data-parallel-size", str(pool.dp)),
            Option("--data-parallel-size-local", str(local)),
            Option("--data-parallel-address", POOL_ADDRESS[pool.role]),
            Option("--data-parallel-rpc-port", str(self.ports.data_parallel_rpc)),
        ]
        if headless:
            options += [Option("--headless"), Option("--data-parallel-start-rank", DP_START_RANK)]
            ranks[template.DP_START_RANK] = str(offset * local)
        return options

    def _pipeline(self, pool: Pool, offset: int, headless: bool, ranks: dict[str, str]) -> list[Option]:
        """`pp(N)`: the stages, and over several nodes vLLM's multiprocessing rendezvous (its docs'
        "Parallelism and Scaling": `--nnodes`, `--node-rank`, `--master-addr`, `--headless` after
        the first node), at the pool's head address."""
        if pool.pp == 1:
            return []
        options = [Option("--pipeline-parallel-size", str(pool.pp))]
        if pool.nodes == 1:
            return options
        options += [
            Option("--distributed-executor-backend", "mp"),
            Option("--nnodes", str(pool.nodes)),
            Option("--node-rank", NODE_RANK),
            Option("--master-addr", POOL_ADDRESS[pool.role]),
            Option("--master-port", str(self.ports.pipeline_master)),
        ]
        ranks[template.NODE_RANK] = str(offset)
        if headless:
            options.append(Option("--headless"))
        return options

    def _modalities(self) -> list[Option]:
        from spark_dsl.schema import MODALITIES

        # Only what the model itself takes can be left out: a text-only model gets no flag.
        model = set(self.plan.model.modalities)
        chosen = tuple(self.plan.value("modalities"))
        if set(chosen) >= model:
            return []
        if chosen == ("text",):
            return [Option("--language-model-only")]
        left_out = {m: 0 for m in MODALITIES if m in model and m not in chosen and m != "text"}
        return [Option("--limit-mm-per-prompt", _json(left_out))]

    def _speculative(self, spec: Speculative) -> list[Option]:
        draft = self.plan.model.draft
        if spec.mode != "dspark" or draft is None:
            return []
        config: dict[str, object] = {
            "method": draft.method,  # the catalog's or the declaration's (`dspark` for Muse Spark Open)
            "model": draft.repository,
            "num_speculative_tokens": spec.tokens or draft.num_speculative_tokens,
        }
        if spec.adaptive:
            config["enable_adaptive_verification"] = True
        return [Option("--speculative-config", _json(config))]

    def _env(self, pool: Pool, headless: bool) -> tuple[tuple[str, str], ...]:
        plan = self.plan
        env: dict[str, str] = {}
        env.update(self.serve.block("env").mapping())
        if plan.value("frontend") == "rust" and not headless:
            env["VLLM_USE_RUST_FRONTEND"] = "1"
        runner = plan.value("model_runner")
        if runner is not None:
            env["VLLM_USE_V2_MODEL_RUNNER"] = "1" if runner == "v2" else "0"
        if plan.model.id == catalog.load().recipe.model:  # the recipe's vendor settings (AITER on AMD)
            env.update(plan.vendor.env)
        quantization = plan.checkpoint.quantization if plan.checkpoint else None
        if quantization and plan.vendor.online_quantization_env is not None:
            env[plan.vendor.online_quantization_env] = quantization
        fabric = self.runtime.value("fabric")
        env.update(FABRIC_ENV.get(fabric or "", {}))
        cores = self.runtime.value("cpu_cores")  # vLLM's CPU backend: each rank's threads on its CPUs
        if cores and plan.accelerator.on_host:
            ids = host_cpus.parse(cores)
            assert isinstance(ids, list)  # SPK240 reports a list that does not parse
            env[host_cpus.THREADS_BIND_ENV] = host_cpus.binding(ids, host_cpus.local_ranks(pool))
        if pool.nodes > 1:
            # A pool over several nodes (data or pipeline parallel): each rank advertises its own
            # node's address, not the default route's (vLLM's get_ip(), `vllm/utils/network_utils.py`),
            # and Gloo and NCCL use the interface that holds it, since Gloo otherwise binds what the
            # host name resolves to, 127.0.1.1 on Debian (torch's ProcessGroupGloo.cpp,
            # createDefaultDevice; vLLM's troubleshooting guide, "Incorrect network setup"). The
            # spec's serve.env wins (VLLM_HOST_IP is the compiler's only for a pipeline, SPK904).
            env.setdefault("VLLM_HOST_IP", NODE_ADDRESS)
            env.setdefault("GLOO_SOCKET_IFNAME", NODE_INTERFACE)
            # NCCL reads a list of name prefixes; a leading `=` makes it this exact name (NCCL's
            # "Environment Variables", NCCL_SOCKET_IFNAME), so `ib0` does not also take `ib0.8001`.
            env.setdefault("NCCL_SOCKET_IFNAME", Template(f"={NODE_INTERFACE}"))
        if pool.role in KV_ROLES:
            env["VLLM_NIXL_SIDE_CHANNEL_HOST"] = NODE_ADDRESS
            env["VLLM_NIXL_SIDE_CHANNEL_PORT"] = str(self.ports.nixl(pool.role))
        # vLLM gives its engines VLLM_ENGINE_READY_TIMEOUT_S (600 s by default, `vllm/envs.py`) to
        # load before the API server gives up; the ready budget covers the checkpoint's load. A
        # value of the user's own stays (SPK544 reports one shorter than the budget).
        env.setdefault(ENGINE_READY_ENV, self.ready_seconds)
        return tuple(sorted(env.items()))

    def _secrets(self, headless: bool) -> tuple[tuple[str, SecretRef], ...]:
        out: dict[str, SecretRef] = {}
        if self.runtime.value("hf_token") is not None:
            out["HF_TOKEN"] = self.runtime.value("hf_token")
        if self.serve.value("api_key") is not None and not headless:
            out["VLLM_API_KEY"] = self.serve.value("api_key")
        return tuple(sorted(out.items()))

    # ---- router -------------------------------------------------------------

    def _router(self) -> Launch:
        prefill = next(p for p in self.plan.pools if p.role == "prefill")
        decode = next(p for p in self.plan.pools if p.role == "decode")
        options = (
            Option("--vllm-pd-disaggregation"),
            Option("--prefill", Template(f"http://{POOL_ADDRESS['prefill']}:{self._pool_port(prefill)}")),
            Option("--decode", Template(f"http://{POOL_ADDRESS['decode']}:{self._pool_port(decode)}")),
            Option("--host", "0.0.0.0"),
            Option("--port", str(api_port(self.plan))),
            # It waits this long for its workers' /health, then exits (600 s by default).
            Option("--worker-startup-timeout-secs", self.ready_seconds),
        )
        key = self.serve.value("api_key")
        secrets = ((ROUTER_KEY_ENV, key),) if key is not None else ()
        return Launch(
            role="router",
            node_rank=0,
            command=("vllm-router",),
            options=options,
            env=(),
            secrets=secrets,
            port=api_port(self.plan),
        )


def build_launches(plan: Plan) -> list[Launch]:
    if plan.checkpoint is None:
        return []
    return LaunchBuilder(plan).build()
