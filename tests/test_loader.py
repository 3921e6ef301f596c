"""Imports confined to the root, profiles and `extends` merged as LANGUAGE.md says, origins kept."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from spark_dsl.pipeline import run
from spark_dsl.values import Parallel

Project = Callable[[dict[str, str]], Path]

BASE = "model = muse-spark-open\n  accelerator = b200\n"


def check(root: Path, *names: str) -> object:
    return run([root / n for n in names], root)


def codes(result: object) -> list[tuple[str, str, int]]:
    out = []
    for d in result.diagnostics:  # type: ignore[attr-defined]
        src = result.sources[d.location.file]  # type: ignore[attr-defined]
        out.append((d.code, Path(d.location.file).name, src.index.position(d.location.span.start)[0]))
    return out


def test_import_is_relative_to_the_importing_file(project: Project) -> None:
    root = project(
        {
            "specs/a.spark": 'import "../profiles/p.spark"\ndeployment a extends p {\n  ' + BASE + "}\n",
            "profiles/p.spark": 'import "q.spark"\nprofile p extends q { gpus = 4 }\n',
            "profiles/q.spark": "profile q { nodes = 1 }\n",
        }
    )
    result = check(root, "specs/a.spark")
    assert codes(result) == []
    (dep,) = result.deployments  # type: ignore[attr-defined]
    assert dep.body.value("gpus") == 4 and dep.body.value("nodes") == 1
    assert dep.profiles == ("q", "p")


def test_imported_deployments_are_not_compiled_by_the_importer(project: Project) -> None:
    root = project(
        {
            "a.spark": 'import "b.spark"\n',
            "b.spark": "profile p { }\ndeployment b {\n  " + BASE + "}\n",
        }
    )
    assert [d.name for d in check(root, "a.spark").deployments] == []  # type: ignore[attr-defined]


def test_import_errors_point_at_the_import_line(project: Project) -> None:
    root = project(
        {
            "proj/a.spark": '# top\nimport "missing.spark"\nimport "../outside.spark"\nimport "b.spark"\n',
            "proj/b.spark": 'import "a.spark"\n',
            "outside.spark": "profile o { }\n",
        }
    )
    result = run([root / "proj/a.spark"], root / "proj")
    assert codes(result) == [("SPK111", "a.spark", 2), ("SPK112", "a.spark", 3), ("SPK113", "b.spark", 1)]


def test_duplicate_profiles_across_the_import_closure(project: Project) -> None:
    root = project(
        {
            "a.spark": 'import "b.spark"\nimport "c.spark"\n',
            "b.spark": "profile common { }\n",
            "c.spark": "profile common { }\n",
        }
    )
    result = check(root, "a.spark")
    assert codes(result) == [("SPK114", "a.spark", 2)]
    (d,) = result.diagnostics  # type: ignore[attr-defined]
    assert {Path(n.location.file).name for n in d.notes if n.location} == {"b.spark", "c.spark"}


def test_merge_order_later_wins_blocks_merge_lists_replace(project: Project) -> None:
    root = project(
        {
            "a.spark": """
profile one {
  modalities = [text, image]
  parallel = tp
  serve { port = 8000 host = "0.0.0.0" }
}
profile two {
  modalities = [text]
  serve { port = 9000 }
}
deployment d extends one, two {
  """
            + BASE
            + """  parallel = tp + ep
  serve { served_model_name = "muse" }
}
""",
        }
    )
    result = check(root, "a.spark")
    assert codes(result) == []
    (dep,) = result.deployments  # type: ignore[attr-defined]
    body = dep.body
    assert body.value("modalities") == ("text",)
    assert body.value("parallel") == Parallel(has_tp=True, ep=True)
    serve = body.block("serve")
    assert serve is not None
    assert (serve.value("port"), serve.value("host"), serve.value("served_model_name")) == (9000, "0.0.0.0", "muse")
    assert serve.get("port").origin.profile == "two"  # type: ignore[union-attr]
    assert serve.get("host").origin.profile == "one"  # type: ignore[union-attr]
    assert serve.get("served_model_name").origin.profile is None  # type: ignore[union-attr]
    assert body.get("parallel").origin.describe() == "user"  # type: ignore[union-attr]


def test_origin_points_at_the_value_in_its_own_file(project: Project) -> None:
    root = project(
        {
            "a.spark": 'import "p.spark"\ndeployment d extends p {\n  ' + BASE + "}\n",
            "p.spark": "profile p {\n  max_model_len = 32K\n}\n",
        }
    )
    result = check(root, "a.spark")
    (dep,) = result.deployments  # type: ignore[attr-defined]
    s = dep.body.get("max_model_len")
    assert s.value == 32768 and Path(s.origin.file).name == "p.spark" and s.origin.profile == "p"
    text = (root / "p.spark").read_text()
    assert text[s.origin.span.start : s.origin.span.end] == "32K"


def test_a_profile_error_is_reported_once_in_the_profile_file(project: Project) -> None:
    root = project(
        {
            "a.spark": 'import "p.spark"\ndeployment d1 extends p {\n  ' + BASE + "}\n"
            "deployment d2 extends p {\n  " + BASE + "}\n",
            "p.spark": "profile p {\n  checkpoint = nvfp5\n}\n",
        }
    )
    assert codes(check(root, "a.spark")) == [("SPK103", "p.spark", 2)]


def test_a_rejected_required_key_is_not_also_reported_missing(project: Project) -> None:
    root = project({"a.spark": "deployment d {\n  model = muse-spark-open\n  accelerator = b2000\n}\n"})
    assert [c for c, _, _ in codes(check(root, "a.spark"))] == ["SPK103"]


def test_duplicate_deployments_across_files(project: Project) -> None:
    root = project(
        {
            "a.spark": "deployment d {\n  " + BASE + "}\n",
            "b.spark": "deployment d {\n  " + BASE + "}\n",
        }
    )
    assert codes(check(root, "a.spark", "b.spark")) == [("SPK109", "b.spark", 1)]


def test_overlays_replace_file_contents(project: Project) -> None:
    root = project({"a.spark": "deployment d {\n  " + BASE + "}\n"})
    result = run([root / "a.spark"], root, overlays={root / "a.spark": "deployment d { }\n"})
    assert [d.code for d in result.diagnostics] == ["SPK107", "SPK107"]


def test_ignore_comments_never_silence_errors(project: Project) -> None:
    root = project(
        {"a.spark": "deployment d {\n  model = muse-spark-open\n  # spark: ignore[SPK103]\n  accelerator = b2000\n}\n"}
    )
    # The error stays, and the ignore that tried to silence it is itself reported (SPK125).
    codes = [d.code for d in check(root, "a.spark").diagnostics]  # type: ignore[attr-defined]
    assert sorted(codes) == ["SPK103", "SPK125"]
