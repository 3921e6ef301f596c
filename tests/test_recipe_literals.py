"""Recipe facts live in the catalog only: no accelerator, checkpoint, attention backend, KV cache
dtype, image, GPU resource, device or vendor variable is spelled in `spark_dsl/**/*.py` outside
`spark_dsl/catalog/` (issue 13). Changing a recipe fact is then one catalog line and a snapshot diff.

The words come from the catalog itself, so a fact added there is guarded here at once. What is read:
every string constant (f-string parts included) of the code. Not read: docstrings and comments, and
the documentation of a code (`rule(...)` and `CodeDoc(...)` arguments: title, checks, basis and the
failing and fixed examples, which are spec text written for a reader, like the fixtures).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from spark_dsl import catalog

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "spark_dsl"
# Calls whose arguments are a code's documentation, not a fact the code acts on.
DOC_CALLS = {"rule", "CodeDoc"}

# (file, text in the constant, why it may stay). Keep this short; every entry needs a reason.
ALLOWED = {
    (
        "spark_dsl/rules/advice.py",
        "` on AMD stays on plain tensor parallelism: its Triton experts are slower under expert parallelism",
    ): "names vLLM's Triton MoE kernels of BF16 weights, not the `triton` attention backend",
    (
        "spark_dsl/lsp/completion.py",
        "deployment ${1:name} {\n\tmodel       = ${2:muse-spark-open}\n\taccelerator = ${3:b200}\n}",
    ): "an editor snippet's placeholder text (lsp/* belongs to issue 14's work; to derive from "
    "`catalog.load().examples()` there)",
    (
        "spark_dsl/lsp/server.py",
        "deployment warm {\n  model = muse-spark-open\n  accelerator = b200\n}\n",
    ): "the document the language server checks once to warm up (lsp/* belongs to issue 14's work; "
    "to derive from `catalog.load().examples()` there)",
    # The `cpu` accelerator's id is also a word of Kubernetes and of vLLM's build: these name those.
    ("spark_dsl/targets/pod_resources.py", "cpu"): "Kubernetes' `cpu` resource, a container's CPU request",
    ("spark_dsl/targets/kubernetes.py", "cpu"): "the `cpu` key of `target kubernetes`, the pods' CPU request",
    ("spark_dsl/plan/in_effect.py", "target.kubernetes.cpu"): "that key's dotted path in `spark plan`",
    ("spark_dsl/data/check_launches.py", "cpu"): "VLLM_TARGET_DEVICE=cpu, the device vLLM's parser is built for",
}


def _facts() -> tuple[re.Pattern[str], tuple[str, ...]]:
    """Word-like facts (ids, matched as whole words in any case) and verbatim ones (matched anywhere)."""
    cat = catalog.load()
    recipe = cat.recipe
    # An accelerator named as its vendor (`cpu`) is matched as vendor ids are, below: in its own
    # case, so prose ("vLLM's CPU backend", "CPU cores") stays text for a reader.
    words = {*(a for a in cat.accelerators if a not in recipe.vendors), *recipe.checkpoints}
    words |= {c for model in cat.models.values() for c in model.checkpoints}
    words |= {b.name for b in recipe.attention_backends} | {b.vllm for b in recipe.attention_backends}
    words |= {d for d in recipe.kv_cache_dtypes if d != "auto"}
    verbatim = {image.repository for image in recipe.images.values()}
    for vendor in recipe.vendors.values():
        runtime = vendor.runtime
        verbatim |= {*filter(None, [runtime.kubernetes_gpu_resource]), *cat.vendor_env_names()}
        if runtime.compose_devices is not None:
            verbatim |= set(runtime.compose_devices.devices)
    alternatives = "|".join(sorted(map(re.escape, words), key=len, reverse=True))
    # The vendor (recipe path) ids as code spells them, `plan.path == "amd"`: matched in their own
    # case only, since a message names the vendor in prose ("the AMD path"), which is text for a
    # reader like a code's documentation, while the id is a recipe fact a rule would act on.
    vendors = "|".join(sorted(map(re.escape, {*recipe.vendors, *recipe.paths}), key=len, reverse=True))
    # Longest first, so `vllm/vllm-openai-rocm` is named rather than its prefix; an id before a
    # dot is a domain's (`amd.com/gpu`), named by the verbatim facts below.
    return re.compile(rf"(?<![\w-])({alternatives}|(?-i:(?:{vendors})(?!\.)))(?![\w-])", re.IGNORECASE), tuple(
        sorted(verbatim, key=len, reverse=True)
    )


def _skipped(tree: ast.Module) -> set[int]:
    """Ids of the constants that are documentation: docstrings and the arguments of DOC_CALLS."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skipped.add(id(first.value))
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if name in DOC_CALLS:
                for arg in [*node.args, *(k.value for k in node.keywords)]:
                    skipped |= {id(inner) for inner in ast.walk(arg)}
    return skipped


def recipe_literals(source: str) -> list[tuple[int, str, str]]:
    """(line, constant, the fact it spells) for each string constant of `source` that spells a recipe fact."""
    words, verbatim = _facts()
    tree = ast.parse(source)
    skipped = _skipped(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped:
            text = node.value
            match = words.search(text)
            hit = match.group(0) if match else next((v for v in verbatim if v in text), None)
            if hit is not None:
                found.append((node.lineno, text, hit))
    return sorted(found)


def _sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "catalog" not in p.relative_to(PACKAGE).parts[:1])


def test_no_recipe_fact_is_spelled_outside_the_catalog() -> None:
    problems = []
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        for line, text, fact in recipe_literals(path.read_text(encoding="utf-8")):
            if (rel, text) not in ALLOWED:
                problems.append(f"{rel}:{line}: `{fact}` in {text[:80]!r}")
    assert not problems, "recipe facts belong in spark_dsl/catalog/ (docs/catalog.md):\n" + "\n".join(problems)


def test_every_allowed_entry_is_still_needed() -> None:
    """An allow-list entry whose text is gone (or no longer spells a fact) is removed, not kept."""
    stale = []
    for rel, text in ALLOWED:
        texts = {t for _, t, _ in recipe_literals((ROOT / rel).read_text(encoding="utf-8"))}
        if text not in texts:
            stale.append(f"{rel}: {text[:60]!r}")
    assert not stale, "stale allow-list entries:\n" + "\n".join(stale)


def test_the_grep_finds_each_kind_of_fact() -> None:
    """The scan itself: each kind of literal is caught, in code, f-strings and messages alike."""
    source = (
        'ACC = "mi355x"\n'
        'CKPT = {"nvidia": "NVFP4"}\n'
        'def f(x):\n    return f"use `attention = flashinfer` for {x}"\n'
        'IMAGE = "vllm/vllm-openai-rocm:v1"\n'
        'RES = "amd.com/gpu"\n'
        'DEV = ["/dev/kfd"]\n'
        'ENV = "VLLM_ROCM_USE_AITER"\n'
        'KV = "fp8"\n'
        'def g(plan):\n    return plan.path == "amd"\n'
    )
    facts = [fact for _, _, fact in recipe_literals(source)]
    assert facts == [
        "mi355x",
        "NVFP4",
        "nvidia",
        "flashinfer",
        "vllm/vllm-openai-rocm",
        "amd.com/gpu",
        "/dev/kfd",
        "VLLM_ROCM_USE_AITER",
        "fp8",
        "amd",
    ]


def test_documentation_and_neighbouring_words_are_not_facts() -> None:
    source = (
        '"""Module docstring naming b200."""\n'
        'rule("SPK1", "error", "title with MXFP4", checks="on mi355x", failing="accelerator = b200")\n'
        'KV = "fp8_e4m3x"\n'
        'NAME = "b2000"\n'
        'MESSAGE = "the AMD path runs with prefix caching off"\n'
        'FLAG = "--amdgpu"\n'
    )
    assert recipe_literals(source) == []
