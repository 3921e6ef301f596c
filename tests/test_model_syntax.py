"""`model NAME { ... }` declarations (issue 15): the grammar, the tree, the formatter."""

from __future__ import annotations

from spark_dsl.format import format_text
from spark_dsl.syntax import ast
from spark_dsl.syntax.parser import parse

DECLARED = """model my-llama {
  layers = 80
  checkpoint bf16 {
    dtype = bf16
  }
}

deployment d {
  model = my-llama
}
"""


def test_a_model_declaration_is_a_statement_with_its_body() -> None:
    result = parse(DECLARED, "t.spark")
    assert result.diagnostic is None and result.module is not None
    (decl,) = result.module.models
    assert isinstance(decl, ast.ModelDecl) and decl.name.name == "my-llama" and decl.extends == ()
    assert [e.key.name if isinstance(e, ast.Attribute) else e.kind.name for e in decl.body.entries] == [
        "layers",
        "checkpoint",
    ]
    assert DECLARED[decl.span.start : decl.span.end].startswith("model my-llama {")
    assert [d.name.name for d in result.module.deployments] == ["d"]


def test_model_stays_a_name_wherever_a_name_may_stand() -> None:
    text = "deployment model extends model { model = model\n serve { model = 1 }\n model model {} }\nprofile model {}"
    result = parse(text, "t.spark")
    assert result.diagnostic is None and result.module is not None
    (dep,) = result.module.deployments
    assert dep.name.name == "model" and [p.name for p in dep.extends] == ["model"]
    first = dep.body.entries[0]
    assert isinstance(first, ast.Attribute) and first.key.name == "model"
    assert isinstance(first.value, ast.Symbol) and first.value.name == "model"


def test_where_a_statement_starts_the_error_names_model() -> None:
    bad = parse("accelerator = b200", "t.spark").diagnostic
    assert bad is not None and bad.code == "SPK001"
    assert bad.message == 'expected "import", "profile", "deployment", "model" or end of file, found "accelerator"'
    # A key without "=" inside a body is still read as one, `model` included.
    inside = parse("deployment d {\n  model my-llama\n}", "t.spark").diagnostic
    assert inside is not None and inside.message == 'expected "=" or "{" after "model", found "my-llama"'
    assert inside.fixes and inside.fixes[0].safe
    # At the top level `model x` is a declaration missing its body, not a key.
    top = parse("model x", "t.spark").diagnostic
    assert top is not None and top.message == 'expected "{" after "x", found end of file' and not top.fixes


def test_the_formatter_prints_a_model_declaration() -> None:
    messy = "model   my-llama{layers=80\ncheckpoint bf16 {dtype=bf16}}\ndeployment d { model = my-llama }\n"
    formatted = format_text(messy, "t.spark").text
    assert formatted == DECLARED
    assert format_text(DECLARED, "t.spark").text == DECLARED
