"""Secret references: `secret("name")` (with an optional `key = "..."`) or `env("NAME")`, never
the secret itself."""

from __future__ import annotations

from spark_dsl.schema import KeySpec
from spark_dsl.string_checks import content
from spark_dsl.syntax import ast
from spark_dsl.typecheck.calls import call_args
from spark_dsl.typecheck.context import Context
from spark_dsl.typecheck.names import ENV_NAME, SECRET_KEY, SECRET_NAME, env_name, kubernetes_secret_key, secret_name
from spark_dsl.values import SecretRef


def read_secret(ctx: Context, key: KeySpec, value: ast.Value) -> SecretRef:
    if isinstance(value, ast.String):
        ctx.error(
            "SPK901",
            f"`{key.name}` is a literal secret; it would be written into every output",
            value.span,
            help=f'store it outside the spec and refer to it: `{key.name} = secret("name")` or `env("NAME")`',
        )
    if not isinstance(value, ast.Call) or value.name.name not in ("secret", "env"):
        ctx.wrong_type(key, value, 'secret("name")')
    assert isinstance(value, ast.Call)
    fn = value.name.name
    call_args(ctx, value, {"key": "key inside the Secret"} if fn == "secret" else {}, 1)
    arg = _name_arg(ctx, value, fn)
    name = arg.value
    ctx.report(content(f"`{fn}(...)`", name), arg.span)
    _check_name(ctx, fn, arg)
    secret_key = None
    if "key" in value.named:
        secret_key = _key_arg(ctx, value.named["key"].value)
    return SecretRef(fn, name, secret_key)


def _name_arg(ctx: Context, call: ast.Call, fn: str) -> ast.String:
    """The call's first positional argument, which names the Secret or the variable: a string."""
    if not call.positional or not isinstance(call.positional[0], ast.String):
        # An unquoted name (`secret(vllm-key)` reads as a symbol) is the user's own: quote it.
        first = call.positional[0] if call.positional else None
        name = first.name if isinstance(first, ast.Symbol) else ("hf-token" if fn == "secret" else "HF_TOKEN")
        example = f'{fn}("{name}")'
        ctx.error(
            "SPK121",
            f"`{fn}(...)` needs a name as a string",
            call.span,
            help=f"write `{example}`",
            fixes=(ctx.rewrite(f"write `{example}`", call, example),),
        )
    arg = call.positional[0]
    assert isinstance(arg, ast.String)
    return arg


def _check_name(ctx: Context, fn: str, arg: ast.String) -> None:
    """A Secret's name is a DNS label; a variable's name is one a shell and Kubernetes accept."""
    name = arg.value
    if fn == "secret" and (not SECRET_NAME.fullmatch(name) or len(name) > 63):
        fixed = secret_name(name)
        ctx.error(
            "SPK123",
            f'secret name "{name}" is not a DNS label that starts with a letter',
            arg.span,
            help="use lowercase letters, digits and `-`, starting with a letter (at most 63), "
            f"e.g. `{fixed or 'hf-token'}`",
            fixes=(ctx.rewrite(f'write "{fixed}"', arg, f'"{fixed}"'),) if fixed else (),
        )
    if fn == "env" and not ENV_NAME.fullmatch(name):
        fixed = env_name(name)
        ctx.error(
            "SPK123",
            f'"{name}" is not an environment variable name',
            arg.span,
            help=f"use letters, digits and `_`, not starting with a digit, e.g. `{fixed or 'HF_TOKEN'}`",
            fixes=(ctx.rewrite(f'write "{fixed}"', arg, f'"{fixed}"'),) if fixed else (),
        )


def _key_arg(ctx: Context, k: ast.Value) -> str:
    """`secret(..., key = "token")`: a non-empty key that a Kubernetes Secret accepts."""
    if not isinstance(k, ast.String) or not k.value:
        ctx.error(
            "SPK121",
            "`key` takes a string",
            k.span,
            help='write `key = "token"`',
            fixes=(ctx.rewrite('write `"token"`', k, '"token"'),),
        )
    assert isinstance(k, ast.String)
    ctx.report(content("`key`", k.value), k.span)
    if not SECRET_KEY.fullmatch(k.value) or len(k.value) > 253:
        fixed = kubernetes_secret_key(k.value)
        ctx.error(
            "SPK123",
            f'secret key "{k.value}" is not a key Kubernetes accepts',
            k.span,
            help=f"use letters, digits, `-`, `_` and `.` (at most 253), e.g. `{fixed or 'token'}`",
            fixes=(ctx.rewrite(f'write "{fixed}"', k, f'"{fixed}"'),) if fixed else (),
        )
    return k.value
