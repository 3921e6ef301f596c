"""The fuzz corpus's shapes beyond the spec itself: configuration, `model import` and `--output-file`.

tests/test_robustness.py runs every case; this module makes the cases of three shapes and the
files around them:

- `config`: a hostile spark.toml or pyproject.toml (with or without `[tool.spark]`, the one
  without in a folder above the spec, which root discovery parses), mutated from valid ones and
  spliced with deep nesting, invalid and exponential globs, a `root` above the project, bytes
  that are not UTF-8, NUL, huge strings, a symlink out of the project and a FIFO;
- `model-import`: `spark model import` of a folder whose config.json and
  model.safetensors.index.json are mutated real ones, nested 100,000 deep, of the wrong types,
  FIFOs or symlinks out of the folder, sometimes with `-o` naming one of them;
- `output-alias`: `--output-file` naming one of the run's own inputs (the spec, a symlink or a
  hard link to it, an import, spark.toml, the manifest of the output folder). The only right
  answer is a usage error with nothing written.

Files beside the spec are `Entry` values: bytes, or a link, FIFO or folder made on disk.
A target `@/NAME` is NAME in the folder above the project (the sentinels `prepare` writes there).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spark_dsl.config import KEYS

REPO = Path(__file__).resolve().parent.parent
# Text that sits only in files outside the project; it must never reach any output.
SENTINEL = "TOPSECRET"
# A folder the exponential glob backtracks on (D5), holding one clean spec, and the folder a
# scan is given: a scan judges the folders it enters, not the one it starts from.
SCAN = "specs/scan"
A_FOLDER = SCAN + "/" + "a" * 60
EXPONENTIAL = "*a" * 14 + "*b"
CLEAN = "deployment d {\n  model       = muse-spark-open\n  accelerator = b200\n}\n"
# A spec whose build writes a deployment folder and the manifest.
BUILDS = "deployment d {\n  model       = muse-spark-open\n  accelerator = b200\n  target shell {}\n}\n"


@dataclass(frozen=True)
class Link:
    """A symbolic link to `target` (as written; `@/` is the folder above the project)."""

    target: str


@dataclass(frozen=True)
class HardLink:
    """A hard link to `target`, a path relative to the project, made after the spec is written."""

    target: str


@dataclass(frozen=True)
class Fifo:
    """A named pipe: reading it without O_NONBLOCK waits for a writer forever."""


@dataclass(frozen=True)
class Folder:
    """A folder where a file is expected."""


Entry = bytes | Link | HardLink | Fifo | Folder


@dataclass
class Extra:
    """What a shape adds to a case: files, the command line, and what the verdict expects."""

    files: dict[str, Entry]
    args: list[str] | None = None  # the whole command line, when it is not `COMMAND SPEC OPTIONS`
    argument: str | None = None  # the path given instead of the spec (a folder)
    before: tuple[tuple[str, ...], ...] = ()  # commands that must succeed first
    codes: tuple[int, ...] | None = None  # the exit codes allowed, when not the default
    writes: tuple[str, ...] = ()  # files the run may write (an output that is not an input)
    keep: tuple[str, ...] = ()  # files under out/ that must not change all the same
    spec: bytes | None = None  # the spec's bytes, when the shape decides them


def sentinels(outside: Path) -> None:
    """Files outside the project whose text is SENTINEL: reading and quoting any of them leaks it."""
    (outside / "secret.toml").write_text(f"{SENTINEL} = [\n")  # not TOML: SPK603 would quote it
    (outside / "secret-root.toml").write_text(f'root = "{SENTINEL}"\nextend-exclude = ["{SENTINEL}"]\n')
    (outside / "secret.txt").write_text(f"{SENTINEL}\n")
    config = json.loads(CONFIG_SEEDS[0][1])
    config["_name_or_path"] = f"{SENTINEL}/llama"
    (outside / "secret-config.json").write_text(json.dumps(config))


# ---- config ---------------------------------------------------------------------------------

# The two examples of docs/configuration.md: spark.toml, and the body of [tool.spark].
DOC_CONFIGS = [
    'root = "."\ninclude = ["*.spark"]\nextend-exclude = ["legacy", "drafts/*.spark"]\nignore = ["SPK4"]\n'
    'warnings-as-errors = true\noutput = "build"\n\n'
    '[per-path-ignores]\n"specs/experiments/**" = ["SPK302", "SPK304"]\n',
    'extend-exclude = ["legacy"]\nwarnings-as-errors = true\n\n'
    '[tool.spark.per-path-ignores]\n"specs/experiments/**" = ["SPK302"]\n',
]
VALUES: dict[str, list[str]] = {
    "root": ['"."', '".."', '"../.."'],
    "include": ['["*.spark"]', '["**/*.spark", "x/*"]', '["[abc]*.spark"]'],
    "exclude": ['[".git"]', '["legacy", "[!x]*"]', "[]"],
    "extend-exclude": ['["legacy"]', '["drafts/*.spark"]', '["a?c"]'],
    "select": ['["SPK3"]', '["SPK4", "SPK302"]'],
    "ignore": ['["SPK4"]', '["SPK302"]'],
    "per-path-ignores": ['{ "specs/**" = ["SPK302"] }', '{ "*.spark" = ["SPK4"] }'],
    "warnings-as-errors": ["true", "false"],
    "output": ['"build"', '"out/x"'],
}
assert set(VALUES) == set(KEYS), "a configuration key the fuzz does not know"
GLOB_KEYS = ("include", "exclude", "extend-exclude")
BAD_GLOBS = ["[z-a]", "[", "[]", "[!]", "\\", "**/[z-a]/*", "[9-0]*.spark", "a[b-a]c", "[[:alpha:]]", "\\\\[z-a]"]
BAD_ROOTS = ["../../..", "/", "../../../..", "..", "\\u0000", "specs/x/loop.spark", "/proc/self", "//", " "]
BAD_OUTPUTS = ["../../../..", "/", "\\u0000", "a" * 5000]
TOML_NOISE = ['"', "'", "[", "]", "{", "}", "=", ",", ".", "\n", "#", "\\", "\\u0000", "é", "\x00", "\x7f", "\r"]
TOML_NOISE += ['"""', "[[", "]]", "inf", "nan", "9" * 30, "\ufeff", "\u202e", "[tool.spark]", "root"]


def _generated_config(rng: random.Random) -> str:
    keys = rng.sample(KEYS, rng.randint(1, len(KEYS)))
    return "".join(f"{key} = {rng.choice(VALUES[key])}\n" for key in keys)


def _mutated(rng: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 3)):
        pos = rng.randrange(len(chars) + 1)
        if rng.random() < 0.4 and chars:
            del chars[min(pos, len(chars) - 1)]
        else:
            chars.insert(pos, rng.choice(TOML_NOISE))
    return "".join(chars)


def _hostile_line(rng: random.Random) -> tuple[str, bool]:
    """A line of TOML built to break a reader, and whether it needs a folder scan to bite."""
    kind = rng.randrange(9)
    if kind == 0:
        return "a = " + "[" * 50_000 + "\n", False
    if kind == 1:
        return "a = " + "{ b = " * rng.choice([100, 20_000]) + "1" + " }" * 3 + "\n", False
    if kind == 2:
        key = rng.choice(GLOB_KEYS)
        return f'{key} = ["{rng.choice(BAD_GLOBS)}"]\n', True
    if kind == 3:
        return f'[per-path-ignores]\n"{rng.choice([*BAD_GLOBS, EXPONENTIAL])}" = ["SPK302"]\n', True
    if kind == 4:
        return f'{rng.choice(("extend-exclude", "exclude", "include"))} = ["{EXPONENTIAL}"]\n', True
    if kind == 5:
        return f'root = "{rng.choice(BAD_ROOTS)}"\n', False
    if kind == 6:
        size = rng.choice([70_000, 400_000])
        return f'{rng.choice(GLOB_KEYS)} = ["{"a" * size}"]\n', True
    if kind == 7:
        return f'extend-exclude = ["{rng.choice(["x", "y"])}\\u0000", "\x00"]\n', False
    return f'output = "{rng.choice(BAD_OUTPUTS)}"\n', False


def _place(rng: random.Random) -> tuple[str, bool]:
    """Where the configuration goes, and whether it is read as settings (else only by discovery)."""
    return rng.choice(
        [
            ("spark.toml", True),
            ("spark.toml", True),
            ("specs/x/spark.toml", True),
            ("specs/spark.toml", True),
            ("pyproject.toml", True),
            ("specs/pyproject.toml", False),  # no [tool.spark]: root discovery still parses it
            ("pyproject.toml", False),
        ]
    )


OUT_OF_ROOT = ["../../../outside.spark", "../../../secret.txt", "../../../secret.toml", "/proc/self/environ"]


def config_case(rng: random.Random, texts: list[str]) -> Extra:
    where, settings = _place(rng)
    pyproject = where.endswith("pyproject.toml")
    roll = rng.random()
    scan = False
    if roll < 0.12:  # the file is no regular file, or not the project's
        entry: Entry = rng.choice(
            [Link("@/secret.toml"), Link("@/secret-root.toml"), Fifo(), Folder(), Link("/dev/zero")]
        )
    else:
        body = rng.choice([DOC_CONFIGS[pyproject], _generated_config(rng)])
        if roll < 0.35:
            body = _mutated(rng, body)
        else:
            line, scan = _hostile_line(rng)
            lines = body.splitlines(keepends=True)
            at = rng.randint(0, len(lines))
            body = "".join([*lines[:at], line, *lines[at:]])
        if pyproject:
            body = (
                f"[project]\nname = 'x'\n\n[tool.spark]\n{body}"
                if settings
                else f"[project]\nname = 'x'\n[tool.other]\n{body}"
            )
        data = body.encode("utf-8", "surrogatepass")
        if rng.random() < 0.1:  # bytes that are not UTF-8
            at = rng.randrange(len(data) + 1)
            data = data[:at] + bytes([rng.randint(0x80, 0xFF)]) + data[at:]
        entry = data
    spec = rng.choice(texts)
    if rng.random() < 0.3:  # an import that only a root above the project could reach
        target = rng.choice(
            ["../../../outside.spark", "../../../secret.txt", "../../../secret.toml", "/proc/self/environ"]
        )
        spec = f'import "{target}"\n' + spec
    argument = SCAN if (scan and rng.random() < 0.7) or rng.random() < 0.1 else None
    return Extra(files={where: entry}, argument=argument, spec=spec.encode())


# ---- model import ---------------------------------------------------------------------------

# Real config.json files as their publishers ship them (tests/data/hf_configs/README.md names
# each source): Llama 3.1 8B, Qwen3 30B A3B (MoE), Mixtral 8x7B, Gemma 3 12B IT (text_config).
CONFIG_SEEDS = [
    (name, (REPO / "tests/data/hf_configs" / name / "config.json").read_text())
    for name in ("llama-3.1-8b", "qwen3-30b-a3b", "mixtral-8x7b-v0.1", "gemma-3-12b-it")
]
INDEX_SEED = {"metadata": {"total_size": 16060522496}, "weight_map": {"lm_head.weight": "model-1.safetensors"}}
READ_KEYS = [
    "num_hidden_layers",
    "hidden_size",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "max_position_embeddings",
    "torch_dtype",
    "dtype",
    "quantization_config",
    "text_config",
    "sliding_window",
    "layer_types",
    "num_local_experts",
    "num_experts",
    "num_experts_per_tok",
    "_name_or_path",
    "architectures",
    "vision_config",
]
WRONG: list[Any] = ["x", "", [], {}, None, True, False, -1, 0, 2**64, 10**300, 1e308, 0.5, "\x00", "\u202e\n"]
WRONG += [float("inf"), float("nan"), "a" * 100_000, [[[[[[[1]]]]]]], {"quant_method": [1]}, {"quant_algo": None}]
JSON_NOISE = ['"', "{", "}", "[", "]", ":", ",", "\\", "\\u0000", "\\ud800", "-", "1e999", "9" * 5000, "é", "\x00"]


def _mutated_json(rng: random.Random, raw: dict[str, Any]) -> bytes:
    roll = rng.random()
    if roll < 0.45:
        for _ in range(rng.randint(1, 3)):
            target = raw
            if isinstance(raw.get("text_config"), dict) and rng.random() < 0.3:
                target = raw["text_config"]
            target[rng.choice(READ_KEYS)] = rng.choice(WRONG)
        return json.dumps(raw).encode()
    if roll < 0.55:
        raw.pop(rng.choice(READ_KEYS), None)
        return json.dumps(raw).encode()
    if roll < 0.75:
        text = list(json.dumps(raw, indent=2))
        for _ in range(rng.randint(1, 3)):
            text.insert(rng.randrange(len(text) + 1), rng.choice(JSON_NOISE))
        return "".join(text).encode("utf-8", "surrogatepass")
    if roll < 0.85:
        depth = rng.choice([100_000, 5_000, 900])
        inner = rng.choice(["[" * depth, '{"a":' * depth, "[" * depth + "]" * depth])
        key = rng.choice(READ_KEYS)
        return rng.choice([inner, f'{{"{key}": {inner}']).encode()
    if roll < 0.92:
        data = json.dumps(raw).encode()
        at = rng.randrange(len(data) + 1)
        return data[:at] + bytes([rng.randint(0x80, 0xFF)]) + data[at:]
    return rng.choice([b"", b"\xef\xbb\xbf" + json.dumps(raw).encode(), json.dumps(raw).encode("utf-16"), b"null"])


def model_case(rng: random.Random) -> Extra:
    folder = "models/m"
    _, seed = rng.choice(CONFIG_SEEDS)
    raw = json.loads(seed)
    config: Entry = json.dumps(raw).encode() if rng.random() < 0.2 else _mutated_json(rng, raw)
    if rng.random() < 0.1:
        config = rng.choice(
            [Fifo(), Folder(), Link("@/secret-config.json"), Link("/dev/zero"), Link("../../../secret.txt")]
        )
    found: dict[str, Entry] = {f"{folder}/config.json": config}
    index_roll = rng.random()
    index = json.loads(json.dumps(INDEX_SEED))
    if index_roll < 0.5:
        found[f"{folder}/model.safetensors.index.json"] = json.dumps(index).encode()
    elif index_roll < 0.75:
        index["metadata"]["total_size"] = rng.choice(WRONG)
        found[f"{folder}/model.safetensors.index.json"] = (
            json.dumps(index).encode() if rng.random() < 0.5 else _mutated_json(rng, index)
        )
    elif index_roll < 0.85:
        found[f"{folder}/model.safetensors.index.json"] = rng.choice([Fifo(), Link("@/secret.txt"), Folder()])
    elif index_roll < 0.95:
        found[f"{folder}/model.safetensors"] = b"\x00" * rng.randint(0, 64)
    args = ["model", "import", rng.choice([folder, folder + "/config.json", "./" + folder + "/"])]
    writes: tuple[str, ...] = ()
    out_roll = rng.random()
    if out_roll < 0.25:
        args += ["-o", "models/out.spark"]
        writes = ("models/out.spark",)
    elif out_roll < 0.4:  # the output is one of the inputs: a usage error, nothing written
        found[f"{folder}/config.json"] = json.dumps(json.loads(seed)).encode()  # valid, so only the clash stops it
        target = rng.choice(["config.json", "model.safetensors.index.json", "link.json"])
        if target == "link.json":
            found[f"{folder}/link.json"] = Link("config.json")
        elif target == "model.safetensors.index.json":
            found[f"{folder}/{target}"] = json.dumps(INDEX_SEED).encode()
        args += ["-o", f"{folder}/{target}"]
    if rng.random() < 0.1:
        args += ["--name", rng.choice(["x\ny", "ok-name", "import", "é", "a" * 200, "-"])]
    return Extra(files=found, args=args, codes=(0, 2), writes=writes)


# ---- --output-file naming an input -------------------------------------------------------------

ALIAS_COMMANDS = (
    ("check",),
    ("check", "--format", "json"),
    ("check", "--format", "sarif"),
    ("plan", "--format", "json"),
    ("plan",),
    ("build", "-o", "out", "--format", "json"),
)
SPEC = "specs/x/fuzz.spark"


def alias_case(rng: random.Random, texts: list[str]) -> Extra:
    spec = rng.choice([CLEAN, rng.choice(texts)])
    command = list(rng.choice(ALIAS_COMMANDS))
    found: dict[str, Entry] = {}
    argument = SPEC
    before: tuple[tuple[str, ...], ...] = ()
    keep: tuple[str, ...] = ()
    kind = rng.choice(["spec", "spelled", "absolute", "symlink", "hard", "import", "toml", "scanned", "manifest"])
    if kind == "spec":
        target = SPEC
    elif kind == "spelled":
        target = "./specs/x/../x/fuzz.spark"
    elif kind == "absolute":
        target = "{root}/" + SPEC
    elif kind == "symlink":
        found["specs/x/link.spark"] = Link("fuzz.spark")
        target = "specs/x/link.spark"
    elif kind == "hard":
        found["specs/x/hard.spark"] = HardLink(SPEC)
        target = "specs/x/hard.spark"
    elif kind == "import":
        spec = 'import "profiles/common.spark"\n' + spec
        target = "specs/x/profiles/common.spark"
    elif kind == "toml":
        found["spark.toml"] = b"warnings-as-errors = false\n"
        target = "spark.toml"
    elif kind == "scanned":  # a spec the folder scan reads
        argument, target = SCAN, A_FOLDER + "/d.spark"
    else:  # the manifest of the output folder, after a build that wrote it
        spec, command = BUILDS, ["build", "-o", "out", "--format", "json"]
        before = (("build", SPEC, "-o", "out"),)
        target, keep = "out/manifest.json", ("out/manifest.json",)
    args = [command[0], argument, *command[1:], "--output-file", target]
    return Extra(files=found, args=args, before=before, codes=(2,), keep=keep, spec=spec.encode())
