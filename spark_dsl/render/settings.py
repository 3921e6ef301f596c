"""`spark check --show-settings`: each project's root and settings, where each comes from, its files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from spark_dsl import config
from spark_dsl.files import display, printable
from spark_dsl.project import Project


def _value(project: Project, key: str, value: Any) -> Any:
    """A setting's value as it would be written in spark.toml (paths relative to the file's folder)."""
    if isinstance(value, Path):
        if key == "output" and project.settings.output.origin is config.DEFAULT:
            return config.DEFAULT_OUTPUT
        return Path(os.path.relpath(value, project.home)).as_posix()
    if key == "per-path-ignores":
        return {pattern: list(codes) for pattern, codes in value}
    if isinstance(value, tuple):
        return list(value)
    return value


def _settings(project: Project, deny_warnings: bool) -> list[tuple[str, Any, config.Origin]]:
    out = []
    for key in config.KEYS:
        setting = project.settings.setting(key)
        value, origin = _value(project, key, setting.value), setting.origin
        if key == "warnings-as-errors" and deny_warnings:
            value, origin = True, config.Origin(option="--deny warnings")
        out.append((key, value, origin))
    return out


def _toml(key: str, value: Any) -> str:
    if value is None:
        return "(every code)" if key == "select" else "(none)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        inner = ", ".join(f"{_string(k)} = {_toml(key, v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    if isinstance(value, list):
        return "[" + ", ".join(_string(v) for v in value) + "]"
    return _string(str(value))


def _string(text: str) -> str:
    return printable(json.dumps(text, ensure_ascii=False))


def render_text(projects: list[Project], files: dict[Path, list[Path]], deny_warnings: bool) -> str:
    lines: list[str] = []
    for project in projects:
        configuration = project.settings.file
        lines.append(f"project root: {printable(str(project.root))}")
        lines.append(f"  found by: {project.found_by}")
        lines.append(f"  configuration: {display(configuration) if configuration else '(none)'}")
        rows = [(key, _toml(key, value), str(origin)) for key, value, origin in _settings(project, deny_warnings)]
        width = max(len(key) for key, _, _ in rows)
        lines += [f"  {key:<{width}} = {value}  # {origin}" for key, value, origin in rows]
        if project.settings.output.origin is config.DEFAULT:
            lines.append("  (the default `output` is relative to the current folder; a configured one to its file)")
        checked = files.get(project.home, [])
        lines.append(f"  files ({len(checked)}):")
        lines += [f"    {display(path)}" for path in checked]
        lines.append("")
    return "\n".join(lines)


def render_json(
    projects: list[Project], files: dict[Path, list[Path]], deny_warnings: bool, diagnostics: dict[str, Any]
) -> str:
    doc = {
        "version": 1,
        "projects": [
            {
                "root": str(project.root),
                "found_by": project.found_by,
                "configuration": str(project.settings.file) if project.settings.file else None,
                "settings": {
                    key: {"value": value, "origin": origin.as_json()}
                    for key, value, origin in _settings(project, deny_warnings)
                },
                "files": [display(path) for path in files.get(project.home, [])],
            }
            for project in projects
        ],
        "diagnostics": diagnostics["diagnostics"],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
