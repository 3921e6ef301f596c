"""The globs of the configuration (`include`, `exclude`, `extend-exclude`, the keys of
`per-path-ignores`): a pattern is parsed once, when the configuration is read, into a `Glob`
or an `Invalid` saying what is wrong and how to write it; a `Glob` then matches in time linear
in the path, whatever the pattern.

The syntax (docs/configuration.md, "Globs"):

- `*` is any run of characters within one folder name, `?` one character other than `/`;
- `[abc]` and `[a-z]` are one character of the class, `[!abc]` and `[^abc]` one character not
  in it and not `/`; a `]` right after the `[` (or `[!`) is a member, and a `[` with no `]`
  after it stands for itself;
- `**` is any run of characters, across folders; `**/` any number of whole folders, none too;
- a trailing `/` is dropped; a pattern with a `/` left is anchored at the configuration file's
  folder (a leading `/` then changes nothing), one without matches a name at any depth;
- every other character, `\\` included, stands for itself.

Invalid: a range written high to low (`[z-a]`), a class with no character (`[!]`), a `/` inside a
class, a NUL, a pattern of slashes only, a pattern longer than `MAX_LENGTH`.

Why not a regular expression: `*a*a*a…b` as `[^/]*a[^/]*a…b` makes Python's backtracking `re`
try every way to split a name of 60 `a`s among the stars, which takes hours. Here the pattern is
a row of states and the set of states still alive after each character is one integer, a bit a
state (the shift-and method of Baeza-Yates and Gonnet): each character costs a few integer
operations, so a match is O(len(path) * len(pattern) / 64) and never backtracks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

# The longest path Linux accepts (PATH_MAX): a longer pattern names no file, and the cap keeps
# the cost of one match bounded.
MAX_LENGTH = 4096


class Invalid(NamedTuple):
    """Why a pattern is not a glob (`message`), how to write it (`help`), and the pattern fixed
    when there is one clear fix (a reversed range turned round)."""

    message: str
    help: str
    fixed: str | None = None


class _Class(NamedTuple):
    """`[...]`: the ranges it names (a single character is a range of one), or the opposite."""

    negated: bool
    ranges: tuple[tuple[str, str], ...]

    def accepts(self, ch: str) -> bool:
        inside = any(low <= ch <= high for low, high in self.ranges)
        return ch != "/" and inside != self.negated


# The tokens of a pattern: a character (a one-letter str), `?`, a class, or one of the stars.
_ONE = "?"
_STAR = "*"  # `*`: within a folder name
_ANY = "**"  # `**` not followed by `/`: across folders
_FOLDERS = "**/"  # any number of whole folders
_Token = str | _Class
_STARS = (_STAR, _ANY, _FOLDERS)


def parse(pattern: str, show: Callable[[str], str] = str) -> Glob | Invalid:
    """The glob `pattern` is, or why it is none; `show` makes the parts an `Invalid` quotes
    printable (the configuration reader passes `files.printable`)."""
    problem = _whole_problem(pattern)
    if problem is not None:
        return problem
    body = pattern.rstrip("/")
    anchored = "/" in body
    offset = len(body) - len(body.lstrip("/"))  # where `body` starts in `pattern`
    body = body[offset:]
    tokens: list[_Token] = []
    i = 0
    while i < len(body):
        if body.startswith("**/", i):
            token: _Token = _FOLDERS
            i += 3
        elif body.startswith("**", i):
            token, i = _ANY, i + 2
        elif body[i] in "*?":
            token, i = body[i], i + 1
        elif body[i] == "[" and (close := body.find("]", i + 2)) != -1:
            found = _class(pattern, offset + i, body[i + 1 : close], show)
            if isinstance(found, Invalid):
                return found
            token, i = found, close + 1
        else:
            token, i = body[i], i + 1
        _append(tokens, token)
    return Glob(pattern, anchored, tokens)


def _whole_problem(pattern: str) -> Invalid | None:
    if "\x00" in pattern:
        return Invalid("it holds a NUL character, which no file name has", "remove the NUL character")
    if len(pattern) > MAX_LENGTH:
        return Invalid(
            f"it is {len(pattern)} characters long, more than any path ({MAX_LENGTH})",
            "shorten it: `**` stands for any number of folders",
        )
    if not pattern.strip("/"):
        what = "it is empty" if not pattern else "slashes alone name no file or folder"
        return Invalid(what, "name files or folders, such as `legacy/` or `drafts/*.spark`")
    return None


def _class(pattern: str, at: int, inner: str, show: Callable[[str], str]) -> _Class | Invalid:
    """The class `[inner]` written at `pattern[at]`, read as today's regular expressions did."""
    negated = inner[0] in "!^"
    members = inner[1:] if negated else inner
    start = at + 1 + negated  # where `members` starts in `pattern`
    written = show(f"[{inner}]")
    if not members:
        return Invalid(
            f"the class `{written}` names no character",
            f"name at least one character, as in `{show(f'[{inner}.]')}`; `[[]` matches a `[` itself",
        )
    if "/" in members:
        return Invalid(
            f"the class `{written}` holds a `/`, but a class matches one character of a name",
            "write the `/` outside the class: `a/b` for the folder `a` holding `b`",
        )
    ranges = []
    k = 0
    while k < len(members):
        low = members[k]
        if members[k + 1 : k + 2] == "-" and k + 2 < len(members):
            high = members[k + 2]
            if high < low:
                at_range = start + k
                fixed = pattern[:at_range] + f"{high}-{low}" + pattern[at_range + 3 :]
                return Invalid(
                    f"the range `{show(low)}-{show(high)}` in `{written}` runs backwards",
                    f"write the range low to high: `{show(fixed)}`",
                    fixed,
                )
            ranges.append((low, high))
            k += 3
        else:
            ranges.append((low, low))
            k += 1
    return _Class(negated, tuple(ranges))


def _append(tokens: list[_Token], token: _Token) -> None:
    """Adds `token`, merging a run of stars into one: `***` is `**`, `**/**/` is `**/`. The match
    is the same, and no run of stars lengthens the closure over skipped states."""
    last = tokens[-1] if tokens else None
    if token in (_STAR, _ANY) and last in (_STAR, _ANY):
        tokens[-1] = _ANY if _ANY in (token, last) else _STAR
    elif not (token == _FOLDERS and last == _FOLDERS):
        tokens.append(token)


class Glob:
    """A valid pattern, ready to match: a literal prefix and suffix, and the tokens between
    them as states, state `s` being the bit `1 << s` and the last state the accepting one."""

    def __init__(self, text: str, anchored: bool, tokens: list[_Token]) -> None:
        self.text = text
        self.anchored = anchored
        start = 0
        while start < len(tokens) and _plain(tokens[start]):
            start += 1
        end = len(tokens)
        while end > start and _plain(tokens[end - 1]):
            end -= 1
        self._prefix = "".join(str(t) for t in tokens[:start])
        self._suffix = "".join(str(t) for t in tokens[end:])
        middle = tokens[start:end]
        # The shapes of nearly every real pattern (`legacy`, `*.spark`, `legacy/**`,
        # `specs/**/x.spark`: nothing, or one star, between the literals) are answered by string
        # methods, at C speed; any other middle runs the states.
        self._shape = "" if not middle else middle[0] if len(middle) == 1 and middle[0] in _STARS else None
        self._chars: dict[str, int] = {}  # a character: the states that move on past it
        self._one = 0  # states that move past any character but `/`
        self._classes: list[tuple[int, _Class]] = []
        self._loop_name = 0  # states that stay on any character but `/` (`*`)
        self._loop_any = 0  # states that stay on any character (`**`, inside `**/`)
        self._skip1 = 0  # states that may be passed without a character, to the next state
        self._skip2 = 0  # ... to the one after (`**/` matching no folder)
        self._by_class: dict[str, int] = {}  # a character: the class states it moves past
        state = 0
        for token in middle:
            state += self._add(1 << state, token)
        self._final = 1 << state
        self._start = self._close(1)

    def _add(self, bit: int, token: _Token) -> int:
        """Adds the states of one token at `bit`; returns how many it took."""
        if isinstance(token, _Class):
            self._classes.append((bit, token))
        elif token == _ONE:
            self._one |= bit
        elif token in (_STAR, _ANY):
            self._skip1 |= bit
            if token == _STAR:
                self._loop_name |= bit
            else:
                self._loop_any |= bit
        elif token == _FOLDERS:
            # Two states: before the folders (skip both, or enter), and inside them (stay on any
            # character, leave on a `/`): `(?:.*/)?`.
            self._skip1 |= bit
            self._skip2 |= bit
            self._loop_any |= bit << 1
            self._chars["/"] = self._chars.get("/", 0) | bit << 1
            return 2
        else:
            self._chars[token] = self._chars.get(token, 0) | bit
        return 1

    def matches(self, relative: str | None, name: str) -> bool:
        """Whether the pattern matches: an anchored one the path `relative` to the configuration
        file's folder (None: the path is outside it), any other the file or folder `name`."""
        subject = relative if self.anchored else name
        if subject is None or len(subject) < len(self._prefix) + len(self._suffix):
            return False
        if not (subject.startswith(self._prefix) and subject.endswith(self._suffix)):
            return False
        middle = subject[len(self._prefix) : len(subject) - len(self._suffix)]
        if self._shape == "":
            return not middle
        if self._shape == _STAR:
            return "/" not in middle
        if self._shape == _ANY:
            return True
        if self._shape == _FOLDERS:
            return not middle or middle.endswith("/")
        return self._run(middle)

    def _run(self, text: str) -> bool:
        """Whether the states match all of `text`: one step a character, each a few operations on
        integers, with the states passed without a character added after each."""
        chars, classes, one = self._chars, self._classes, self._one
        loop_any, loop_name = self._loop_any, self._loop_name | self._loop_any
        skip1, skip2 = self._skip1, self._skip2
        states = self._start
        for ch in text:
            move = chars.get(ch, 0)
            if classes:
                move |= self._class_states(ch)
            if ch == "/":
                stay = states & loop_any
            else:
                move |= one
                stay = states & loop_name
            states = ((states & move) << 1) | stay
            more = states | ((states & skip1) << 1) | ((states & skip2) << 2)
            while more != states:
                states = more
                more = states | ((states & skip1) << 1) | ((states & skip2) << 2)
            if not states:
                return False
        return bool(states & self._final)

    def _class_states(self, ch: str) -> int:
        if not self._classes:
            return 0
        found = self._by_class.get(ch)
        if found is None:
            found = 0
            for bit, cls in self._classes:
                if cls.accepts(ch):
                    found |= bit
            self._by_class[ch] = found
        return found

    def _close(self, states: int) -> int:
        """`states` with every state reachable from them without a character."""
        while True:
            more = states | ((states & self._skip1) << 1) | ((states & self._skip2) << 2)
            if more == states:
                return states
            states = more

    def __repr__(self) -> str:
        return f"Glob({self.text!r})"


def _plain(token: _Token) -> bool:
    """Whether `token` is a character standing for itself."""
    return isinstance(token, str) and len(token) == 1 and token not in (_ONE, _STAR)
