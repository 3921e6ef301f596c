"""The rule decorator: each rule carries its code, severity, title and explain text.

Rule modules import this module to register their checks; this module imports none of them.
`spark_dsl.rules.table` lists the rule modules and runs the rules."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from msgspec import Struct, field

from spark_dsl.code_doc import CodeDoc
from spark_dsl.diagnostics import Diagnostic, Fix, Note, Severity, replacement
from spark_dsl.plan.model import Plan, Resolved
from spark_dsl.rules.examples import examples
from spark_dsl.schema import IDENTITY_KEYS
from spark_dsl.span import Location


class Finding(Struct, frozen=True):
    """What a rule found: the value that breaks it, the message, and the smallest fix."""

    message: str
    at: Resolved | None
    help: str
    label: str | None = None
    notes: tuple[tuple[str, Resolved | None], ...] = ()
    replace_with: str | None = None
    severity: Severity | None = None
    # A fix other than replacing the value at `at` (adding a setting, removing a block).
    fix: Fix | None = None


Check = Callable[[Plan], Iterable[Finding]]

# A title or explain text as `@rule(...)` takes it: a string, or a function that writes it from the
# catalog's facts each time it is shown (`spark_dsl.rules.catalog_texts`), so a text that names an
# accelerator list, a threshold or a checkpoint follows the catalog without an edit. A check's cold
# start shows no explain text, so it writes none.
Text = str | Callable[[], str]


def _written(text: Text) -> str:
    return text if isinstance(text, str) else text()


class Rule(Struct, frozen=True):
    code: str
    severity: Severity
    # Writes the explain text (`doc`), with the catalog's facts as they are when it is read.
    explain: Callable[[], CodeDoc]
    check: Check
    suppressed_by: frozenset[str] = field(default_factory=frozenset)
    # The target whose settings the rule checks: it finds nothing in a plan that does not build
    # it (tests/test_rules.py proves each), so such a plan does not run it.
    target: str | None = None

    @property
    def doc(self) -> CodeDoc:
        return self.explain()


_RULES: dict[str, Rule] = {}
# The checks of the recipe's own rules: they apply only to plans of the recipe's model
# (`recipe.yaml`'s `model`); every other rule applies to every model (docs/models.md).
_RECIPE_CHECKS: set[Check] = set()


def recipe_only(fn: Check) -> Check:
    """Marks a registered rule as the recipe's: written above its `@rule(...)`."""
    _RECIPE_CHECKS.add(fn)
    return fn


def is_recipe_rule(rule_: Rule) -> bool:
    return rule_.check in _RECIPE_CHECKS


def registered() -> dict[str, Rule]:
    """The rules registered so far, by code (all of them once `spark_dsl.rules.table` is imported)."""
    return _RULES


def rule(
    code: str,
    severity: str,
    title: Text,
    *,
    checks: Text,
    basis: Text,
    suppressed_by: Iterable[str] = (),
    target: str | None = None,
) -> Callable[[Check], Check]:
    """Registers a check function as the rule `code`. Its failing and fixed examples are its
    fixtures' (`spark_dsl.rules.examples`), read when the explain text is shown."""

    def register(fn: Check) -> Check:
        if code in _RULES:
            raise ValueError(f"rule code {code} is registered twice")

        def explain() -> CodeDoc:
            return CodeDoc(code, severity, _written(title), _written(checks), _written(basis), *examples(code))

        _RULES[code] = Rule(code, Severity(severity), explain, fn, frozenset(suppressed_by), target)
        return fn

    return register


def _location(plan: Plan, resolved: Resolved | None) -> Location:
    """Where a finding points: the value that breaks the rule. A default has no text of its own;
    the accelerator, whose defaults they are, stands for it, never the deployment's name."""
    if resolved is not None and resolved.location is not None:
        return resolved.location
    accelerator = plan.setting("accelerator")
    if accelerator is not None and accelerator.location is not None:
        return accelerator.location
    dep = plan.deployment
    return Location(dep.source.name, dep.node.name.span)


def _origin_note(plan: Plan, resolved: Resolved | None, what: str) -> Note | None:
    if resolved is None:
        return None
    dep = plan.deployment
    if resolved.profile is not None:
        via = next((i for i in dep.node.extends if i.name == resolved.profile), None)
        via = via or (dep.node.extends[0] if dep.node.extends else None)
        where = Location(dep.source.name, via.span) if via else None
        return Note(f"{what} comes from profile `{resolved.profile}`, which `{plan.name}` extends", where)
    if resolved.location is None:
        return Note(f"{what} is the {resolved.origin}")
    return None


def _replaces_identity(plan: Plan, fix: Fix) -> bool:
    """Whether a fix edits the written `model` or `accelerator`: no fix replaces what is deployed
    or where (docs/fixes.md); the help may still name another, as a suggestion."""
    for key in IDENTITY_KEYS:
        setting = plan.setting(key)
        where = setting.location if setting is not None else None
        if where is None:
            continue
        span = where.span
        for edit in fix.edits:
            at = edit.location.span
            if edit.location.file == where.file and at.start < span.end and span.start < max(at.end, at.start + 1):
                return True
    return False


def to_diagnostic(plan: Plan, rule_: Rule, finding: Finding) -> Diagnostic:
    location = _location(plan, finding.at)
    notes: list[Note] = []
    primary_note = _origin_note(plan, finding.at, "this value")
    if primary_note:
        notes.append(primary_note)
    for message, resolved in finding.notes:
        where = resolved.location if resolved is not None else None
        notes.append(Note(message, where))
        extra = _origin_note(plan, resolved, "that value") if resolved is not None and resolved.profile else None
        if extra:
            notes.append(extra)
    fixes: tuple[Fix, ...] = (finding.fix,) if finding.fix is not None else ()
    if finding.replace_with is not None and finding.at is not None and finding.at.location is not None:
        loc = finding.at.location
        fixes = (replacement(finding.help, loc.file, loc.span, finding.replace_with),)
    fixes = tuple(f for f in fixes if not _replaces_identity(plan, f))
    return Diagnostic(
        rule_.code,
        finding.severity or rule_.severity,
        finding.message,
        location,
        label=finding.label,
        help=finding.help,
        notes=tuple(notes),
        fixes=fixes,
        deployment=plan.name,
    )


def shown(text: str) -> str:
    """A value quoted for a message: escapes keep a newline or quote from breaking the line."""
    import json  # here, not at the top: only a finding quotes, and a clean check imports no json

    return json.dumps(text, ensure_ascii=False)
