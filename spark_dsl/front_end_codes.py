"""Explain texts of the front end's codes: syntax (SPK0xx), names and types (SPK1xx), literal secrets
and values no target can write (SPK901, SPK905-SPK907)."""

from __future__ import annotations

from spark_dsl.code_doc import CodeDoc

_LANG = "The language reference (docs/language.md) defines this; it is not a recipe rule."

CODES = [
    CodeDoc(
        "SPK001",
        "error",
        "syntax error",
        "The parser met a token it cannot use at this point. The message says what it found "
        'and what the language allows there, in words (`expected "=" or "{" after "accelerator"`).',
        _LANG,
        "deployment muse {\n  accelerator b200\n}",
        "deployment muse {\n  accelerator = b200\n}",
    ),
    CodeDoc(
        "SPK002",
        "error",
        "unterminated string",
        'A string opened with `"` has no closing quote on the same line. Strings cannot span lines.',
        _LANG,
        'target kubernetes { namespace = "inference }',
        'target kubernetes { namespace = "inference" }',
    ),
    CodeDoc(
        "SPK003",
        "error",
        "unbalanced braces",
        "A `{` is never closed before the end of the file, or a `}` closes nothing. For an "
        "unclosed block the diagnostic points at the `{` whose block most likely lacks its `}` "
        "(judged by indentation).",
        _LANG,
        "deployment muse {\n  serve {\n    port = 8000\n}",
        "deployment muse {\n  serve {\n    port = 8000\n  }\n}",
    ),
    CodeDoc(
        "SPK004",
        "error",
        "unexpected character",
        "A character that is not part of the language appears outside a string or comment.",
        _LANG,
        "deployment muse {\n  model       = muse-spark-open\n  accelerator = b200;\n}",
        "deployment muse {\n  model       = muse-spark-open\n  accelerator = b200\n}",
    ),
    CodeDoc(
        "SPK005",
        "error",
        "invalid escape in a string",
        'Strings know the escapes `\\"`, `\\\\`, `\\n`, `\\t` and `\\u{...}` (a Unicode code point '
        "in hex). Any other backslash sequence, or a code point that is not a character, is an error.",
        _LANG,
        'serve { served_model_name = "muse\\q" }',
        'serve { served_model_name = "muse\\\\q" }',
    ),
    CodeDoc(
        "SPK006",
        "error",
        "malformed number",
        "`_` may separate digits (`32_768`) but may not end a number or appear twice in a row.",
        _LANG,
        "max_model_len = 32__768",
        "max_model_len = 32_768",
    ),
    CodeDoc(
        "SPK007",
        "error",
        "file is not UTF-8",
        "Spec files are read as UTF-8; a file with bytes that are not valid UTF-8 cannot be parsed.",
        _LANG,
        "(a file saved as Latin-1 with a non-ASCII character)",
        "(the same file saved as UTF-8)",
    ),
    CodeDoc(
        "SPK008",
        "error",
        "nesting too deep",
        "Blocks, lists and calls (`{`, `[`, `(`) nest more than 32 levels deep, counting the "
        "deployment's or profile's own `{`. The file is refused as it is read, and the error points at "
        "the bracket that opens level 33. Brackets inside strings and comments do not count.",
        "Real specs nest four or five levels. Every later stage (the checker, `spark fmt`, the "
        "language server) walks the tree recursively; a limit checked before the tree exists keeps "
        "a hostile file from exhausting the stack.",
        "deployment muse {\n  serve { extra_args = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]] }\n}",
        'deployment muse {\n  serve { extra_args = ["--max-num-batched-tokens", "8192"] }\n}',
    ),
    CodeDoc(
        "SPK009",
        "error",
        "file too long",
        "The file holds more than 100,000 tokens: names, numbers, strings, punctuation and comments "
        "(whitespace does not count). The file is refused as it is read, and the error points at "
        "the token past the limit.",
        "Real specs hold hundreds of tokens. Checking, formatting and every diagnostic cost time "
        "and memory per token, and specs are checked in CI on every pull request: a limit checked "
        "before the parser builds anything keeps a generated or hostile file from taking minutes "
        "and gigabytes (a 1 MiB file of `a=1` lines took over 10 s and 1.5 GB).",
        "profile p { }\n# ... followed by 100,000 more tokens",
        'import "part-1.spark"\nimport "part-2.spark"',
    ),
    CodeDoc(
        "SPK101",
        "error",
        "unknown key or block",
        "A key or block that the body does not define. The message suggests the closest known "
        "name and the help lists every name the body takes.",
        _LANG,
        "deployment muse {\n  max_model_length = 32K\n}",
        "deployment muse {\n  max_model_len = 32K\n}",
    ),
    CodeDoc(
        "SPK102",
        "error",
        "wrong type",
        "A value of the wrong kind for its key: a string where a symbol belongs, a number for a "
        "boolean, an attribute where a block belongs, or the reverse.",
        _LANG,
        'checkpoint = "nvfp4"\nprefix_caching = "false"',
        "checkpoint = nvfp4\nprefix_caching = false",
    ),
    CodeDoc(
        "SPK103",
        "error",
        "value not in the key's allowed set",
        "A symbol that the key does not allow, such as an accelerator the catalog does not know "
        "or a misspelled checkpoint. The closest valid choice is suggested.",
        "Known but unvalidated accelerators (H100, MI300X, ...) are accepted here and reported "
        "by SPK201 instead; ids the catalog does not know at all are name errors.",
        "accelerator = b2000",
        "accelerator = b200",
    ),
    CodeDoc(
        "SPK104",
        "error",
        "unit not accepted",
        "A unit suffix that the key's type does not take (a size unit on a count, `8K` for "
        "`gpus`), a size or duration without a unit, or a badly chained duration. Counts take "
        "`k` `K` `m` `M` `g` `G` (lowercase decimal, uppercase binary, as vLLM reads them); sizes "
        "take `B` `KB` `MB` `GB` `TB` `KiB` `MiB` `GiB` `TiB`; durations take `d` `h` `m` `s`.",
        "vLLM's own human-readable integers use the same count suffixes, so `32K` means 32,768 here "
        "and in `vllm serve`.",
        "max_model_len = 32KiB\nruntime { shm_size = 64 }",
        "max_model_len = 32K\nruntime { shm_size = 64GiB }",
    ),
    CodeDoc(
        "SPK105",
        "error",
        "number out of range or not whole",
        "A number outside its key's range (a port above 65535, a memory fraction above 1), or a "
        "quantity that does not come out whole (`1.0001k` tokens). As in vLLM, a fractional count "
        "takes only a lowercase suffix (`25.6k`, never `1.5K`). Every integer, after its unit, is at "
        "most 2^53 (9007199254740992), and a number literal is at most 64 characters long; a longer "
        "one is refused as the file is read, before any arithmetic.",
        _LANG,
        "max_model_len = 1.5K\ngpu_memory_utilization = 92",
        "max_model_len = 1536\ngpu_memory_utilization = 0.92",
    ),
    CodeDoc(
        "SPK106",
        "error",
        "duplicate key",
        "A key (or a block with the same label) appears twice in one body, or an item twice in a "
        "list. The error points at the later one with a note at the first.",
        "A later value would silently win; an explicit override belongs in `extends`.",
        "serve {\n  port = 8000\n  port = 9000\n}",
        "serve {\n  port = 9000\n}",
    ),
    CodeDoc(
        "SPK107",
        "error",
        "missing required key",
        "Every deployment needs `model` and `accelerator`, set in its body or in a profile it extends.",
        "Every recipe default depends on the model and the accelerator.",
        "deployment muse {\n  checkpoint = nvfp4\n}",
        "deployment muse {\n  model       = muse-spark-open\n  accelerator = b200\n}",
    ),
    CodeDoc(
        "SPK108",
        "error",
        "bad deployment name",
        "A deployment name must be a DNS-1123 label of at most 40 characters: lowercase letters, "
        "digits and `-`, starting and ending with a letter or digit.",
        "Every target names things after the deployment and adds suffixes (`-prefill`, "
        "`-router`): Kubernetes objects, Slurm jobs, Compose projects and output folders.",
        "deployment Muse_B200 {\n  model       = muse-spark-open\n  accelerator = b200\n}",
        "deployment muse-b200 {\n  model       = muse-spark-open\n  accelerator = b200\n}",
    ),
    CodeDoc(
        "SPK109",
        "error",
        "duplicate deployment name",
        "Two deployments in one run share a name.",
        "Their outputs would be written to the same folder and overwrite each other.",
        "deployment muse {\n  model       = muse-spark-open\n  accelerator = b200\n}\n"
        "deployment muse {   # here or in another file of the run\n  model       = muse-spark-open\n"
        "  accelerator = b300\n}",
        "deployment muse {\n  model       = muse-spark-open\n  accelerator = b200\n}\n"
        "deployment muse-b300 {\n  model       = muse-spark-open\n  accelerator = b300\n}",
    ),
    CodeDoc(
        "SPK110",
        "error",
        "bad block label",
        "`target` blocks need a label naming the output (`shell`, `compose`, `slurm`, "
        "`kubernetes`, `vllm-config`); other blocks take no label.",
        _LANG,
        "target kubernets {}\nserve main { port = 8000 }",
        "target kubernetes {}\nserve { port = 8000 }",
    ),
    CodeDoc(
        "SPK111",
        "error",
        "imported file not found",
        "An `import` names a file that does not exist. Paths are relative to the importing file.",
        _LANG,
        'import "profile/base.spark"',
        'import "profiles/base.spark"',
    ),
    CodeDoc(
        "SPK112",
        "error",
        "import leaves the project root",
        "An `import` resolves to a file outside the project root: the nearest folder above the spec "
        "with `spark.toml`, a `pyproject.toml` with `[tool.spark]`, or `.git` (else the spec's own "
        'folder), or `--root` when given; a `root = ".."` setting can widen it (docs/configuration.md).',
        "Specs compiled in CI must not read files from outside the repository.",
        'import "../outside.spark"',
        'import "profiles/base.spark"',
    ),
    CodeDoc(
        "SPK113",
        "error",
        "import cycle",
        "A file imports itself through a chain of imports. The error is at the `import` that closes the cycle.",
        _LANG,
        '# SPK113.fail.spark, a file that imports itself\nimport "SPK113.fail.spark"\n'
        "# a.spark importing b.spark importing a.spark is the same error, at b.spark's import",
        "# drop the import of itself; for a longer cycle, move the shared profiles into a file both import",
    ),
    CodeDoc(
        "SPK114",
        "error",
        "duplicate profile name",
        "Two profiles with one name are visible in a file: defined twice, or brought in by its "
        "imports. The error points at the second definition or at the `import` that brings it.",
        "`extends` would otherwise depend on import order.",
        'import "profiles/base.spark"   # defines profile base\nprofile base { }',
        'import "profiles/base.spark"\nprofile local { }',
    ),
    CodeDoc(
        "SPK115",
        "error",
        "unknown profile",
        "`extends` names a profile that is not defined in the file or its imports.",
        _LANG,
        "deployment muse extends bsae {\n  model       = muse-spark-open\n  accelerator = b200\n}\nprofile base { }",
        "deployment muse extends base {\n  model       = muse-spark-open\n  accelerator = b200\n}\nprofile base { }",
    ),
    CodeDoc(
        "SPK116",
        "error",
        "`extends` cycle",
        "A chain of `extends` leads back to a profile already in the chain: a profile that extends "
        "itself, or a cycle such as `a -> b -> a`, reported at each of its links.",
        _LANG,
        "profile a extends b { }\nprofile b extends a { }",
        "profile a { }\nprofile b extends a { }",
    ),
    CodeDoc(
        "SPK117",
        "error",
        "unknown model",
        "`model` names no shipped model and no model declared in the file or its imports, or a "
        'Hugging Face id (`model = "org/name"`) that is the repository of none of their '
        "checkpoints (ids compare without regard to case, as the Hub's do). The help lists the "
        "declared models. A near name is named in the message but never written by a fix: another "
        "model would make every capacity number wrong.",
        "Every rule needs the model's facts (sizes, heads, experts, context). A model the catalog "
        "does not ship is declared with a `model NAME { }` block (docs/models.md), which `spark model "
        "import ORG/NAME -o models/NAME.spark` writes from the local Hugging Face cache; the spec then "
        'imports that file. Other weights of a shipped model are `runtime { model_path = "..." }`.',
        'model = "Qwen/Qwen3-30B-A3X"   # no shipped or declared model has this repository\ngpus  = 4',
        'model = "Qwen/Qwen3-30B-A3B"   # the repository of the shipped qwen3-30b-a3b\ngpus  = 4',
    ),
    CodeDoc(
        "SPK120",
        "error",
        "file cannot be read",
        "An imported file, or a file named on the command line, exists but cannot be read as a "
        "spec: it is a directory, a FIFO, a socket or a device rather than a regular file; it is "
        "larger than 10 MiB; the user running spark may not read it; its name is too long for the "
        "file system; a symbolic link on its path loops; or its path holds a NUL (`\\u{0}`). The "
        "message says which. An import is reported at its path string, a named file at its start. "
        "(Naming a FIFO, a device or an unreadable path on the command line is a usage error, exit 2.)",
        "Specs are compiled in CI on every pull request: a path that would block (a FIFO waits "
        "for a writer forever), never end (`/dev/zero`) or fill memory must be refused before "
        "it is opened for reading.",
        'import "profiles"   # a folder',
        'import "profiles/base.spark"',
    ),
    CodeDoc(
        "SPK121",
        "error",
        "bad call arguments",
        "A call such as `dp(N)`, `tp(N)`, `pp(N)`, `dspark(...)`, `secret(...)`, `env(...)`, `pvc(...)` or "
        "`hostpath(...)` has missing, surplus, unknown or mistyped arguments.",
        _LANG,
        "parallel = dp + tp\nnodes = 2\nserve { api_key = secret(vllm-key) }",
        'parallel = dp(2) + tp\nnodes = 2\nserve { api_key = secret("vllm-key") }',
    ),
    CodeDoc(
        "SPK122",
        "error",
        "bad parallelism",
        "`parallel` combines `tp`, `tp(N)`, `pp(N)`, `ep` and `dp(N)` with `+`, each at most once, or is `auto` alone.",
        _LANG,
        "parallel = tp + cp",
        "parallel = tp + ep",
    ),
    CodeDoc(
        "SPK123",
        "error",
        "bad secret or variable name",
        'A `secret("name")` must name a DNS label that starts with a letter (it becomes a '
        "Kubernetes Secret and, upper-cased with `_` for `-`, an environment variable); its "
        '`key` must be a Secret key (letters, digits, `-`, `_`, `.`); an `env("NAME")` must be '
        "a valid environment variable name. Names are matched whole: a trailing newline is an error.",
        "Targets derive object and variable names from it, and write the name and key into "
        "`${HF_TOKEN:?...}` checks, Compose interpolations and Kubernetes manifests, where any "
        "other character would be code or break the file.",
        'runtime { hf_token = secret("HF Token") }',
        'runtime { hf_token = secret("hf-token") }',
    ),
    CodeDoc(
        "SPK124",
        "error",
        "imports or `extends` nested too deep",
        "Imports nest more than 64 files deep (a file importing a file importing a file ...), or "
        "an `extends` chain is more than 1,000 profiles long. The import that would be the 65th "
        "in a row, or the `extends` link that makes a chain 1,001 profiles long, is the error; "
        "profiles below it are not reported again.",
        "Limits far beyond any real project bound the work a hostile spec can cause. `extends` "
        "is resolved once per profile and without recursion, so chains up to the limit and "
        "diamond-shaped graphs check in linear time.",
        "profile c0 { }\nprofile c1 extends c0 { }\n# ... 998 more, each extending the one before\n"
        "profile c1000 extends c999 { }",
        "profile c0 { }\nprofile c1 extends c0 { }\n# ... up to c999: a chain of at most 1,000 profiles",
    ),
    CodeDoc(
        "SPK126",
        "error",
        "model declaration leaves out a fact",
        "A `model NAME { }` declaration has no `layers`, `hidden_size`, `query_heads`, "
        "`kv_heads`, `head_dim` or `max_context`; a `checkpoint` block has no `repository` or "
        "`size`; a `draft` block has no `method`, `repository` or `size`. The fix adds the key "
        "with an example value to replace with the model's own.",
        "Every rule that reads the model (parallelism against its heads, capacity from its "
        "dimensions, context against its limit) needs these facts; docs/models.md lists them "
        "and where a model's config.json gives each.",
        "model my-llama {\n  layers      = 32\n  query_heads = 32\n  head_dim    = 128\n}",
        "model my-llama {\n"
        "  layers      = 32\n"
        "  hidden_size = 4096\n"
        "  query_heads = 32\n"
        "  kv_heads    = 8\n"
        "  head_dim    = 128\n"
        "  max_context = 128k\n"
        "  checkpoint bf16 {\n"
        '    repository = "meta-llama/Llama-3.1-8B-Instruct"\n'
        "    size       = 16GB\n"
        "  }\n"
        "}",
    ),
    CodeDoc(
        "SPK127",
        "error",
        "model facts contradict each other",
        "A declared model's facts cannot all be true: `kv_heads` that does not divide "
        "`query_heads`, more `sliding_window_layers` than `layers` or no `sliding_window` for them, "
        "`experts` without `experts_per_token` or fewer experts than `experts_per_token`, no "
        "`checkpoint` block, or a checkpoint whose `dtype` is not its label.",
        "Grouped-query attention gives each KV head a whole group of query heads; the capacity "
        "estimate counts full-attention layers as `layers - sliding_window_layers`.",
        "model my-llama {\n  query_heads = 32\n  kv_heads    = 12\n}",
        "model my-llama {\n"
        "  layers      = 32\n"
        "  hidden_size = 4096\n"
        "  query_heads = 32\n"
        "  kv_heads    = 8\n"
        "  head_dim    = 128\n"
        "  max_context = 128k\n"
        "  checkpoint bf16 {\n"
        '    repository = "meta-llama/Llama-3.1-8B-Instruct"\n'
        "    size       = 16GB\n"
        "  }\n"
        "}",
    ),
    CodeDoc(
        "SPK128",
        "error",
        "model declared twice",
        "A `model` declaration has the name of a shipped catalog model, or two declarations of "
        "one name meet in a file and its imports.",
        "`model = NAME` must name one model. A shipped model's facts are cited in the catalog; a "
        "declaration may not quietly replace them.",
        "model muse-spark-open {",
        "model my-llama {\n"
        "  layers      = 32\n"
        "  hidden_size = 4096\n"
        "  query_heads = 32\n"
        "  kv_heads    = 8\n"
        "  head_dim    = 128\n"
        "  max_context = 128k\n"
        "  checkpoint bf16 {\n"
        '    repository = "meta-llama/Llama-3.1-8B-Instruct"\n'
        "    size       = 16GB\n"
        "  }\n"
        "}",
    ),
    CodeDoc(
        "SPK901",
        "error",
        "literal secret",
        "A secret-bearing key (`serve.api_key`, `runtime.hf_token`) holds a literal string, or any "
        "string of the spec (an `env(...)` name, a `serve.env` value, an item of `extra_args`, ...) "
        "holds what looks like a Hugging Face access token: `hf_` or `api_org_` and 34 letters "
        "or digits (the shape secret scanners such as gitleaks look for). The message shows only "
        "the token's first characters.",
        "Compiled outputs are committed and shared; a literal secret would be written into every "
        "one of them and into `spark plan`. Secrets travel as references, resolved by the target "
        "at run time.",
        'serve { api_key = "sk-live-123" }',
        'serve { api_key = secret("vllm-api-key") }',
    ),
    CodeDoc(
        "SPK905",
        "error",
        "NUL character in a string",
        "A string holds `\\u{0}`. Every string of a spec ends up as a program argument, an "
        "environment variable or a YAML value, and none of the first two can hold NUL: the "
        "character would be dropped or cut the value short without a word.",
        "Arguments and environment variables are C strings (POSIX `execve`); bash drops NUL from `$'...'` words.",
        'serve { served_model_name = "muse\\u{0}" }',
        'serve { served_model_name = "muse" }',
    ),
    CodeDoc(
        "SPK906",
        "error",
        "empty value",
        'A string key is set to `""`. Targets would leave it out as if it were not set (an empty '
        "`image`, `host` or `namespace` means the default), so the spec would not say what runs.",
        "Leaving the key out says the same thing, visibly.",
        'runtime { image = "" }',
        'runtime { image = "vllm/vllm-openai:v0.33.0" }',
    ),
    CodeDoc(
        "SPK907",
        "error",
        "value vLLM would read as an option",
        "`serve.host`, `serve.served_model_name` or `runtime.model_path` starts with `-`. vLLM "
        "receives each as a word of its own (`--host VALUE`, the model as the first argument), "
        "and its parser (argparse) takes a word that starts with `-` for an option: `vllm serve` "
        "refuses to start (`argument --host: expected one argument`). A negative whole number, "
        "or a value with a space and no `.` in it, is read as a value and passes (a `-` word "
        "with a `.` is a dotted option to vLLM: `-0.5` fails too).",
        "Checked against vLLM's own parser (tests/vllm_parser/test_option_values.py).",
        'serve { host = "-0.0.0.0" }',
        'serve { host = "0.0.0.0" }',
    ),
]
