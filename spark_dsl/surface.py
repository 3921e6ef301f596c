"""The surface inventory: every way a user or a pull request hands spark a value, and its threat class.

A surface is a place a value enters spark from outside: an option or argument of a subcommand,
a configuration key, a language server method, or a file spark reads without being told its
name. Each has one threat class, and tests/test_surface_inventory.py runs that class's hostile
suite against every surface of the class. The test enumerates the surfaces from their sources
(click's command table, spark_dsl.config.KEYS, the language server's feature registry), so a
surface added without a class here fails it, as does an entry here whose surface is gone.
docs/files-and-limits.md shows this table (spark_dsl.surface_doc renders it).

Keys:
- `spark SUBCOMMAND OPTS` for an option, its names joined with `/` as click holds them
  (`spark build -o/--output`, `spark --version` for the group's own), and `spark SUBCOMMAND NAME`
  for an argument, its click name in capitals (`spark model import PATH`);
- `config:KEY` for a key of spark.toml or `[tool.spark]` (`config:extend-exclude`);
- `lsp:METHOD` for a method the language server answers, its own or pygls's built-in
  (`lsp:textDocument/didOpen`);
- `file:NAME` for a file spark finds by name rather than being given it (`file:spark.toml`), and
  `spec:import` for the path an `import` names.
"""

from __future__ import annotations

from typing import NamedTuple

# The threat classes and what each suite throws at a surface of the class.
CLASSES = {
    "input-path": "a symlink out of the project root, a FIFO, a /proc file, a file over the size cap, "
    "a deeply nested file, a name with NUL, bytes that are not UTF-8 or a newline",
    "output-path": "an input of the same run given as the output (the spec, an import, the configuration, "
    "a symlink to the spec, the build's manifest), a FIFO, a folder, a path in a folder that does not exist",
    "pattern": "a reversed range `[z-a]`, an exponential glob against a long name, NUL, text that is not "
    "UTF-8, newlines",
    "free-string": "NUL, text that is not UTF-8, newlines, control characters, 1 MB of text",
    "number": "a huge number, a negative one, one that is not a number, NUL",
    "flag": "a value given to an option that takes none",
    "choice": "a value that is none of the choices: empty, NUL, not UTF-8, a newline",
}


class Surface(NamedTuple):
    threat: str
    why: str = ""  # said where the class is not obvious from the surface's name


def _model_and_init() -> dict[str, Surface]:
    """`spark model import` and `spark init`: the commands that write a file the user asked for."""
    return {
        "spark model -h/--help": Surface("flag"),
        "spark model import PATH": Surface(
            "input-path", "a model folder, its config.json, or a repository id in the local cache"
        ),
        "spark model import -o/--output": Surface("output-path"),
        "spark model import --name": Surface("free-string", "written into the block, checked as a name"),
        "spark model import -h/--help": Surface("flag"),
        "spark model import --repo": Surface(
            "free-string", "checked as a repository id (`ORG/NAME`), then written into the block quoted"
        ),
        "spark init --model": Surface("free-string", "checked against the catalog's models, never a path"),
        "spark init --accelerator": Surface("free-string", "checked against the catalog's accelerators"),
        "spark init --target": Surface("free-string", "checked against the target table's kinds"),
        "spark init --force": Surface("flag", "replaces the files spark init writes, never one outside the folder"),
        "spark init -h/--help": Surface("flag"),
    }


def _cli() -> dict[str, Surface]:
    checking = ("check", "plan", "build")
    out: dict[str, Surface] = {
        "spark --version": Surface("flag"),
        "spark -h/--help": Surface("flag"),
        "spark explain TOPIC": Surface("free-string", "a code, key, block or model name, looked up, never a path"),
        "spark explain --format": Surface("choice"),
        "spark explain --list": Surface("flag"),
        "spark explain --spec": Surface("input-path", "a spec or folder read for declared models"),
        "spark explain -h/--help": Surface("flag"),
        "spark fmt --check": Surface("flag"),
        "spark fmt --diff": Surface("flag"),
        "spark lsp --stdio": Surface("flag"),
        "spark lsp -h/--help": Surface("flag"),
        **_model_and_init(),
        "spark build -t/--target": Surface("free-string", "checked against the target kinds after parsing"),
        "spark build -o/--output": Surface("output-path", "a folder of deployment folders and manifest.json"),
        "spark build --check": Surface("flag"),
        "spark build --diff": Surface("flag"),
        "spark build --take-over": Surface("flag"),
        "spark check --show-settings": Surface("flag"),
        "spark check --fix": Surface("flag", "writes the specs it read, which are the run's inputs by design"),
        "spark check --unsafe-fixes": Surface("flag"),
        "spark check --diff": Surface("flag"),
        "spark check --statistics": Surface("flag"),
        "spark check --exit-zero": Surface("flag"),
        "spark plan --node": Surface("number"),
        "spark plan --verify-vllm": Surface("flag"),
        "spark plan --vllm-python": Surface("input-path", "an interpreter spark runs, not a file it reads"),
    }
    for command in (*checking, "fmt"):
        out[f"spark {command} PATHS"] = Surface("input-path")
        out[f"spark {command} --stdin-filename"] = Surface(
            "input-path", "the file standard input stands for: its folder is read for imports and settings"
        )
        out[f"spark {command} -q/--quiet"] = Surface("flag")
        out[f"spark {command} -h/--help"] = Surface("flag")
    for command in checking:
        out[f"spark {command} --root"] = Surface("input-path", "a folder: the project root imports may not leave")
        out[f"spark {command} --output-file"] = Surface("output-path")
        out[f"spark {command} -d/--deployment"] = Surface("free-string", "a deployment's name, compared, never a path")
        out[f"spark {command} --color"] = Surface("choice")
        out[f"spark {command} --deny"] = Surface("choice")
        out[f"spark {command} --format"] = Surface("choice")
        out[f"spark {command} --no-color"] = Surface("flag")
        for codes in ("--select", "--extend-select", "--ignore"):
            out[f"spark {command} {codes}"] = Surface(
                "free-string", "codes or prefixes (SPK3, SPK302), comma-separated, each checked against the codes"
            )
    return out


CONFIG = {
    "config:root": Surface("input-path", "a folder: the project root imports may not leave"),
    "config:include": Surface("pattern"),
    "config:exclude": Surface("pattern"),
    "config:extend-exclude": Surface("pattern"),
    "config:select": Surface("free-string", "code prefixes (SPK1, SPK101), each checked against the codes"),
    "config:ignore": Surface("free-string", "code prefixes, as select"),
    "config:per-path-ignores": Surface("pattern", "a table whose keys are globs and whose values are code prefixes"),
    "config:warnings-as-errors": Surface("flag", "a TOML boolean"),
    "config:output": Surface("output-path", "a folder: build's default -o"),
}

_DOCUMENT = "names a document by URI: the server checks it, reading its imports and its project's configuration"
_READS = "names a document by URI: when the editor has not opened it, the server reads the file"
_NO_FILE = "no document: pygls keeps its parameters and spark reads no file for them"
LSP = {
    "lsp:initialize": Surface("input-path", "the workspace folders: the server works from the first"),
    "lsp:initialized": Surface("free-string", _NO_FILE),
    "lsp:shutdown": Surface("free-string", "no parameters"),
    "lsp:exit": Surface("free-string", "no parameters"),
    "lsp:$/setTrace": Surface("free-string", _NO_FILE),
    "lsp:window/workDoneProgress/cancel": Surface("free-string", _NO_FILE),
    "lsp:workspace/executeCommand": Surface("free-string", "spark registers no command"),
    "lsp:workspace/didChangeWorkspaceFolders": Surface("free-string", _NO_FILE),
    "lsp:workspace/didChangeWatchedFiles": Surface("input-path", "file URIs: the documents that read them are checked"),
    "lsp:notebookDocument/didOpen": Surface("free-string", _NO_FILE),
    "lsp:notebookDocument/didChange": Surface("free-string", _NO_FILE),
    "lsp:notebookDocument/didClose": Surface("free-string", _NO_FILE),
    "lsp:textDocument/didOpen": Surface("input-path", _DOCUMENT),
    "lsp:textDocument/didChange": Surface("input-path", _DOCUMENT),
    "lsp:textDocument/didClose": Surface("input-path", "the documents that imported it are checked again"),
    "lsp:textDocument/hover": Surface("input-path", _DOCUMENT),
    "lsp:textDocument/definition": Surface("input-path", _DOCUMENT),
    "lsp:textDocument/documentSymbol": Surface("input-path", _DOCUMENT),
    "lsp:textDocument/completion": Surface("input-path", _READS),
    "lsp:textDocument/codeAction": Surface("input-path", _READS),
    "lsp:textDocument/formatting": Surface("input-path", _READS),
}

FILES = {
    "file:spark.toml": Surface("input-path", "found in every folder above a spec"),
    "file:pyproject.toml": Surface("input-path", "found in every folder above a spec, parsed for [tool.spark]"),
    "file:manifest.json": Surface("input-path", "read from the output folder by every build"),
    "file:config.json": Surface("input-path", "read from the model folder by spark model import"),
    "file:model.safetensors.index.json": Surface("input-path", "read beside config.json for the weights' size"),
    "spec:import": Surface("input-path", "the path an import names, relative to the importing spec"),
}

INVENTORY: dict[str, Surface] = {**_cli(), **CONFIG, **LSP, **FILES}
