"""Decides what a build may change in its output folder, then changes it, or reports what it would change.

A build owns a deployment folder only when the manifest says spark wrote it *and* the folder still
holds what the manifest recorded (file names and SHA-256). Anything else, a folder a person made,
edited or linked, is never replaced or removed: the build stops before touching anything and names
the folder; `--take-over` lets it replace or remove folders spark does not own (never a symbolic
link, never anything outside the output folder). Builds into one folder run one at a time (a lock),
and all changes of a build happen together or not at all (see `transaction`).

A build streams: `open_build` takes the lock, then each deployment is staged as soon as it is
rendered (`Build.stage`) and only its name, source, hashes and folder state are kept, so a build's
memory does not grow with its outputs; `Build.commit` then decides, as before anything was staged,
whether the build may change the folder, and swaps the staged folders in or removes them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from msgspec import Struct, field
from msgspec.structs import replace

from spark_dsl.files import display, printable
from spark_dsl.targets import output_lock, transaction
from spark_dsl.targets.build import EXECUTABLE, DeploymentOutput
from spark_dsl.targets.codes import NOT_OWNED, OUTPUT_UNWRITABLE, UNTRUSTED_MANIFEST
from spark_dsl.targets.folders import FolderState, differences, digest, inspect
from spark_dsl.targets.manifest import (
    MANIFEST,
    Entry,
    Manifest,
    ManifestError,
    Pieces,
    is_deployment_name,
    read,
    render,
)

TAKE_OVER = "--take-over"


class Problem(Struct, frozen=True):
    """Why the build will not write: a code, a message naming the path, and what to do."""

    code: str
    message: str
    help: str


class OutputError(Exception):
    """The output folder cannot be written as asked; nothing was changed."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(p.message for p in problems))
        self.problems = problems


class Change(Struct, frozen=True):
    """One path a build would change: `missing`, `stale`, `unexpected` or `removed`.

    `data` and `mode` are what the build would write there (None for a path it would remove), so
    `spark build --check --diff` can show the change.
    """

    kind: str
    path: Path
    data: bytes | None = None
    mode: int | None = None

    def __str__(self) -> str:
        return f"{self.kind}: {printable(self.path.as_posix())}{'/' if self.kind == 'removed' else ''}"


class Scope(Struct, frozen=True):
    """Which earlier deployment folders this build speaks for.

    `inputs` are the paths named on the command line, `read` the specs this build read and `unsure`
    those it read with errors (all resolved). A folder is retired only when its spec is under
    `inputs` and either is gone, or was read without errors and no longer produces the folder. So
    building one file, or specs of another folder into a shared output folder, never retires the
    folders of specs it did not read.
    """

    root: Path
    inputs: tuple[Path, ...]
    read: frozenset[Path] = frozenset()
    unsure: frozenset[Path] = frozenset()

    def may_retire(self, spec: Path) -> bool:
        if not any(spec == i or spec.is_relative_to(i) for i in self.inputs):
            return False  # another folder's spec, or one this build only imported
        if spec in self.read:
            return spec not in self.unsure
        return not os.path.lexists(spec)


def _mode(file_name: str) -> int:
    return 0o755 if file_name in EXECUTABLE else 0o644


def _encoded(output: DeploymentOutput) -> dict[str, tuple[bytes, int]]:
    return {name: (text.encode("utf-8"), _mode(name)) for name, text in output.files.items()}


class _Seen(Struct, frozen=True):
    """What a build keeps of one rendered deployment once its text is dropped: its name, the spec's
    path as rendered, each file's SHA-256 (in target order), the folder's state when it was
    rendered, whether that folder holds exactly these files already, and the staged copy (if any)."""

    name: str
    source: str
    contents: dict[str, str]
    state: FolderState
    same: bool
    staged: transaction.Write | None = None


def _seen(output: DeploymentOutput, files: dict[str, tuple[bytes, int]], state: FolderState) -> _Seen:
    if not is_deployment_name(output.name):  # checked by SPK108 first; never a path
        raise ValueError(f"deployment name {output.name!r} cannot name a folder")
    contents = {f: digest(d) for f, (d, _) in files.items()}
    return _Seen(output.name, output.source, contents, state, _same(state, files, contents))


def _same(state: FolderState, files: dict[str, tuple[bytes, int]], contents: dict[str, str]) -> bool:
    """The folder already holds exactly these files (`contents`: their hashes), executable bits included."""
    if state.kind != "folder" or state.files is None or sorted(state.files) != sorted(files):
        return False
    return all(
        state.files[name].digest == contents[name] and state.files[name].executable == bool(mode & 0o111)
        for name, (_, mode) in files.items()
    )


def _shown(out_dir: Path, name: str) -> str:
    return f"{_printed(out_dir / name)}/"


def _printed(path: Path) -> str:
    """A path as given, safe to print (a `-o` with control characters cannot forge output lines)."""
    return printable(path.as_posix())


def _spec(out_real: Path, source: str) -> Path:
    """A recorded source as a path: it is relative to the output folder's real location."""
    return Path(os.path.normpath(out_real / source))


class _Plan(Struct):
    writes: list[transaction.Write] = field(default_factory=list)
    removals: list[str] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    in_flight: list[Entry] = field(default_factory=list)
    # Problems `--take-over` settles, and problems nothing settles.
    refusals: list[Problem] = field(default_factory=list)
    blockers: list[Problem] = field(default_factory=list)
    report: list[str] = field(default_factory=list)

    def problems(self, take_over: bool) -> list[Problem]:
        return self.blockers + ([] if take_over else self.refusals)

    def keep(self, entry: Entry, in_flight: Entry | None = None) -> None:
        self.entries.append(entry)
        self.in_flight.append(in_flight or entry)


def _not_a_folder(out_dir: Path, name: str, state: FolderState, doing: str) -> Problem:
    path = _printed(out_dir / name)
    if state.kind == "link":
        return Problem(
            OUTPUT_UNWRITABLE,
            f"cannot {doing} {path}: it is a symbolic link (to {os.readlink(out_dir / name)!r}), "
            "and spark never follows or removes one",
            f"remove the link {path} (or rename the deployment), then build again",
        )
    return Problem(
        OUTPUT_UNWRITABLE,
        f"cannot {doing} {path}: it exists and is not a folder",
        f"move {path} away (or rename the deployment), then build again",
    )


def _unowned(out_dir: Path, name: str, entry: Entry | None, state: FolderState, doing: str) -> Problem | None:
    """Why spark may not replace or remove this folder on its own, or None when it may."""
    shown = _shown(out_dir, name)
    if entry is None:
        return Problem(
            NOT_OWNED,
            f"cannot {doing} {shown}: {_printed(out_dir / MANIFEST)} does not list it, so spark did not write it",
            f"move {shown} away or rename the deployment; or build with {TAKE_OVER} "
            f"to let spark {doing} it (its contents are lost)",
        )
    found = state.contents
    if found is not None and found in entry.states():
        return None
    if found is None:
        what = "it holds something besides the files spark wrote"
    elif entry.files is None:
        what = "its files are not the ones spark wrote there"
    else:
        what = ", ".join(differences(entry.files, found))
    return Problem(
        NOT_OWNED,
        f"cannot {doing} {shown}: it was edited since spark wrote it ({what})",
        f"move your changes into the spec, then build with {TAKE_OVER} to let spark {doing} it; or move {shown} away",
    )


def _clash(out_dir: Path, name: str, entry: Entry | None, source: str, scope: Scope) -> Problem | None:
    """Another spec that still exists wrote this folder: two specs, one name, one output folder."""
    if entry is None or entry.source is None or entry.source == source:
        return None
    out_real = out_dir.resolve()
    earlier = _spec(out_real, entry.source)
    if not os.path.lexists(earlier) or (earlier in scope.read and earlier not in scope.unsure):
        return None  # the spec is gone, or this build read it and it no longer makes this folder
    shown = _shown(out_dir, name)
    return Problem(
        NOT_OWNED,
        f"cannot replace {shown}: it was written from {display(earlier)}, which still exists; "
        f"this build writes it from {display(_spec(out_real, source))}",
        f"give one of the two deployments another name, or use another output folder; "
        f"or build with {TAKE_OVER} to let this spec's outputs replace the other's",
    )


def _recorder(scope: Scope, out_real: Path) -> Callable[[str], str]:
    """A rendered source (relative to the root) as the manifest records it: relative to the output
    folder. Each spec folder's way from the output folder is worked out once (`relpath` reads the
    working folder each time), then the file's name joined to it."""
    ways: dict[str, str] = {}

    def recorded(source: str) -> str:
        folder, name = os.path.split(os.path.normpath(os.path.join(scope.root, source)))
        way = ways.get(folder)
        if way is None:
            way = ways[folder] = Path(os.path.relpath(folder, out_real)).as_posix()
        return name if way == "." else f"{way}/{name}"

    return recorded


def _carried(entry: Entry, state: FolderState) -> Entry | None:
    """An earlier entry this build keeps, recording the state its folder is in."""
    if state.kind != "folder" or entry.files is None:
        return None  # spark owns no link, and cannot vouch for an unreadable version-1 entry
    if state.contents is not None and state.contents == entry.previous:
        return Entry(entry.name, entry.source, entry.previous)
    return replace(entry, previous=None)


def _plan(
    out_dir: Path,
    seen: list[_Seen],
    held: set[str],
    scope: Scope,
    previous: Manifest,
    look: Callable[[str], FolderState],
) -> _Plan:
    plan = _Plan()
    out_real = out_dir.resolve()
    recorded = _recorder(scope, out_real)
    for output in seen:
        name, state = output.name, output.state
        entry = previous.entries.get(name)
        new = Entry(name, recorded(output.source), output.contents)
        if state.kind in ("link", "other"):
            plan.blockers.append(_not_a_folder(out_dir, name, state, "replace"))
            continue
        if state.kind == "absent":
            plan.writes.append(transaction.Write(name, tuple(output.contents), replace=False))
        else:
            problem = _clash(out_dir, name, entry, new.source or "", scope) or (
                None if output.same else _unowned(out_dir, name, entry, state, "replace")
            )
            if problem is not None:
                plan.refusals.append(problem)
            if output.same:
                plan.keep(new)
                continue
            plan.writes.append(transaction.Write(name, tuple(output.contents), replace=True))
        plan.keep(new, replace(new, previous=state.contents))
        plan.report.append(f"wrote {_shown(out_dir, name)} ({', '.join(output.contents)})")
    produced = {o.name for o in seen}
    for name, entry in previous.entries.items():
        if name in produced:
            continue
        state = look(name)
        if state.kind == "absent":
            continue  # nothing left to own: the entry goes
        retiring = name not in held and entry.source is not None and scope.may_retire(_spec(out_real, entry.source))
        if not retiring:
            carried = _carried(entry, state)
            if carried is not None:
                plan.keep(carried)
            continue
        if state.kind != "folder":
            plan.blockers.append(_not_a_folder(out_dir, name, state, "remove"))
            continue
        problem = _unowned(out_dir, name, entry, state, "remove")
        if problem is not None:
            plan.refusals.append(problem)
        plan.removals.append(name)
        plan.in_flight.append(Entry(name, entry.source, state.contents or entry.files or {}))
        plan.report.append(f"removed {_shown(out_dir, name)} (no spec produces it any more)")
    return plan


def _read_manifest(out_dir: Path) -> Manifest:
    def contents(name: str) -> dict[str, str] | None:
        return inspect(out_dir / name).contents

    try:
        return read(out_dir, contents)
    except ManifestError as err:
        path = _printed(out_dir / MANIFEST)
        raise OutputError(
            [
                Problem(
                    UNTRUSTED_MANIFEST,
                    f"{path} {err}",
                    f"restore {path} from version control, or delete it (spark then replaces no existing "
                    f"folder without {TAKE_OVER}); nothing was changed",
                )
            ]
        ) from None


def _usable(out_dir: Path) -> None:
    if os.path.lexists(out_dir) and not out_dir.is_dir():
        raise OutputError(
            [
                Problem(
                    OUTPUT_UNWRITABLE,
                    f"cannot write {_printed(out_dir)}: it exists and is not a folder",
                    f"choose another output folder with -o, or move {_printed(out_dir)} away",
                )
            ]
        )


def _unwritable(out_dir: Path, err: OSError) -> OutputError:
    return OutputError(
        [
            Problem(
                OUTPUT_UNWRITABLE,
                f"cannot write {_printed(out_dir)}: {err.strerror or err}",
                f"nothing was changed; make room or make {_printed(out_dir)} writable, then build again",
            )
        ]
    )


class Build:
    """One build into an output folder, holding its lock: `stage` each rendered deployment, then
    `commit`. Made by `open_build`, which removes whatever was staged if the build stops before its
    commit (a refusal, a renderer that failed, Ctrl-C)."""

    def __init__(self, out_dir: Path, previous: Manifest, take_over: bool) -> None:
        self.out_dir = out_dir
        self.previous = previous
        self.take_over = take_over
        self.seen: list[_Seen] = []
        # The first write the disk refused: nothing more is staged, and the commit reports it
        # unless a refusal, which says more, stops the build first.
        self.failure: OSError | None = None
        # A folder that must not be replaced was seen: staging more would be wasted, the build stops.
        self.refused = False

    def stage(self, output: DeploymentOutput) -> None:
        """Writes `output`'s folder beside its place if it changes; keeps its names and hashes only."""
        files = _encoded(output)
        try:
            state = inspect(os.path.join(self.out_dir, output.name))
        except OSError as err:  # reported by `commit`, so the renderers' diagnostics all still come
            self.failure = self.failure or err
            return
        seen = _seen(output, files, state)
        entry = self.previous.entries.get(output.name)
        if state.kind in ("link", "other"):
            self.refused = True
        elif state.kind == "folder" and not seen.same and not self.take_over:
            self.refused = self.refused or _unowned(self.out_dir, output.name, entry, state, "replace") is not None
        if not seen.same and not self.refused and self.failure is None and state.kind in ("absent", "folder"):
            try:
                transaction.stage(self.out_dir, output.name, files)
            except OSError as err:
                self.failure = err
            else:
                seen = replace(seen, staged=transaction.Write(output.name, tuple(files), state.kind == "folder"))
        self.seen.append(seen)

    def commit(self, held: set[str], scope: Scope) -> list[str]:
        """Swaps the staged folders in and retires those no spec produces, all or nothing; returns
        what changed. Raises OutputError, having changed nothing, as `write` does."""
        out_dir = self.out_dir
        plan = _plan(out_dir, self.seen, held, scope, self.previous, lambda name: inspect(out_dir / name))
        problems = plan.problems(self.take_over)
        if problems:
            raise OutputError(problems)
        if self.failure is not None:
            raise self.failure
        staged = [s.staged for s in self.seen if s.staged is not None]
        assert staged == plan.writes, "the commit swaps in exactly the folders staged for it"
        final = Pieces(plan.entries)
        if plan.writes or plan.removals:
            # Into an empty folder the in-flight manifest is the final one: one text, not two.
            in_flight = final if plan.in_flight == plan.entries else Pieces(plan.in_flight)
            change = transaction.Change(plan.writes, plan.removals, in_flight, final, self.previous.text)
            transaction.apply(out_dir, change)
        elif self.previous.text != str(final):  # nothing swapped: the manifest only if it changed
            transaction.write_manifest(out_dir, final)
        return plan.report


@contextmanager
def open_build(out_dir: Path, take_over: bool = False, on_wait: Callable[[], None] | None = None) -> Iterator[Build]:
    """Locks `out_dir` (made if need be), reads its manifest and puts back what a killed build left,
    for the block; any OSError in the block becomes an OutputError, and everything staged and not
    committed is removed when the block ends.

    Raises OutputError, having changed nothing, when the build would touch a folder spark does not
    own, the manifest cannot be trusted, or the disk refuses a write.
    """
    _usable(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        with output_lock.locked(out_dir, on_wait):
            previous = _read_manifest(out_dir)
            transaction.recover(out_dir, previous.entries)
            try:
                yield Build(out_dir, previous, take_over)
            finally:
                transaction.discard(out_dir)
    except OSError as err:
        raise _unwritable(out_dir, err) from None


def write(
    out_dir: Path,
    outputs: Iterable[DeploymentOutput],
    held: set[str],
    scope: Scope,
    take_over: bool = False,
    on_wait: Callable[[], None] | None = None,
) -> list[str]:
    """Writes every deployment folder and retires those no spec produces, all or nothing; returns what changed.

    `outputs` may be a generator: each is staged and dropped before the next is asked for.
    Raises OutputError, having changed nothing, when the build would touch a folder spark does not
    own, the manifest cannot be trusted, or the disk refuses a write.
    """
    with open_build(out_dir, take_over, on_wait) as build:
        for output in outputs:
            build.stage(output)
        return build.commit(held, scope)


def _as_recovered(out_dir: Path, previous: Manifest) -> Callable[[str], FolderState]:
    """A folder as the next build will find it once it has put back what a killed build moved aside."""

    def look(name: str) -> FolderState:
        state = inspect(out_dir / name)
        if state.kind == "absent" and name in previous.entries:
            aside = inspect(out_dir / f"{transaction.OLD}{name}")
            if aside.kind == "folder":
                return aside
        return state

    return look


def check(
    out_dir: Path, outputs: list[DeploymentOutput], held: set[str], scope: Scope, take_over: bool = False
) -> tuple[list[Change], list[Problem]]:
    """Every path `write` would change, and the problems that would stop it, writing nothing."""
    _usable(out_dir)
    previous = _read_manifest(out_dir)
    look = _as_recovered(out_dir, previous)
    encoded = [(output, _encoded(output), look(output.name)) for output in outputs]
    plan = _plan(out_dir, [_seen(o, files, state) for o, files, state in encoded], held, scope, previous, look)
    changes: list[Change] = []
    for output, files, state in encoded:
        folder = out_dir / output.name
        found = state.files or {}
        for name, (data, mode) in files.items():
            if name not in found:
                changes.append(Change("missing", folder / name, data, mode))
            elif found[name].digest != digest(data) or found[name].executable != bool(mode & 0o111):
                changes.append(Change("stale", folder / name, data, mode))
        changes += [Change("unexpected", folder / extra) for extra in state.names if extra not in files]
    changes += [Change("removed", out_dir / name) for name in plan.removals]
    manifest = out_dir / MANIFEST
    expected = render(plan.entries)
    if previous.text is None:
        changes.append(Change("missing", manifest, expected.encode("utf-8"), 0o644))
    elif previous.text != expected:
        changes.append(Change("stale", manifest, expected.encode("utf-8"), 0o644))
    return changes, plan.problems(take_over)
