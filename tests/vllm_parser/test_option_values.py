"""SPK907 agrees with vLLM's own parser: a value the checker refuses for `host`,
`served_model_name` or `model_path` is one vLLM refuses, and one it lets through vLLM accepts."""

from __future__ import annotations

import pytest

from spark_dsl.string_checks import reads_as_option

pytestmark = pytest.mark.vllm_parser

VALUES = [
    "-x",
    "--muse",
    "-",
    "--",
    "-1",
    "-12",
    "-0.5",
    "-.5",
    "-1e3",
    "-x y",
    "-1 x",
    "-x.y z",
    "x-",
    "",
    "-h",
    "--host",
]


def launches(value: str) -> dict[str, list[str]]:
    return {
        "host": ["vllm", "serve", "m", "--host", value],
        "served_model_name": ["vllm", "serve", "m", "--served-model-name", value],
        "model_path": ["vllm", "serve", value],
    }


def test_the_checker_refuses_exactly_what_vllm_refuses(vllm_verify) -> None:
    cases = [(key, value, argv) for value in VALUES for key, argv in launches(value).items()]
    # As the model, "" is refused for another reason (SPK906 here), and `--` "passes" only as the
    # end of the options, after which vLLM serves its default model: leave both out.
    cases = [(key, value, argv) for key, value, argv in cases if not (key == "model_path" and value in ("", "--"))]
    verdicts = vllm_verify([argv for _, _, argv in cases])
    disagree = [
        f"{key} = {value!r}: vLLM {'accepts' if verdict.ok else 'refuses'} it, the checker "
        f"{'refuses' if reads_as_option(value) else 'accepts'} it ({verdict.error})"
        for (key, value, _), verdict in zip(cases, verdicts, strict=True)
        if verdict.ok == reads_as_option(value)
    ]
    assert not disagree, "\n".join(disagree)
