"""The layer rules of docs/architecture.md, checked on the real import statements.

Every module under ``taskflow/`` belongs to a layer (``core``, ``store``,
``service``, ``worker``, ``api``, ``cli``, or one of the top-level modules),
and each layer may import only the layers listed for it. Relative imports are
resolved before they are judged. The pure core is also checked for calls that
read the clock, draw randomness, touch files or the network: those belong to
the shell, which hands the core ``now`` and parsed values.

No import circles either: a cycle among modules (not only among layers) is a
design smell to remove by moving the shared piece where both sides can import it.
Every import counts, at module level or inside a function; only imports under
``if TYPE_CHECKING:`` are left out (they never run). ``from pkg import mod`` is an
edge to ``pkg.mod`` only; ``from pkg import name`` one to ``pkg``.

The checker proves itself: the tests plant each kind of violation (and a cycle) in a
copy of the package and expect it to be reported.
"""

from __future__ import annotations

import ast
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "taskflow"

_CORE = ("taskflow.core", "taskflow.errors")
#: Settings: one package, ``taskflow/config/`` (the settings, their e-mail and webhook parts,
#: and reading values from the environment).
_SHELL = ("taskflow.errors", "taskflow.config", "taskflow.clock")

#: layer -> the taskflow modules it may import (prefixes). A layer is a sub-package of
#: taskflow or one top-level module; ``taskflow.__init__`` is the layer "taskflow". Inside
#: a layer, each domain's package (``service/delivery/``...) says in its ``__init__`` which
#: rooms it leans on; this table keeps the layers.
ALLOWED: dict[str, tuple[str, ...]] = {
    "core": _CORE,
    "store": (*_CORE, "taskflow.store", "taskflow.config.config"),
    "service": (*_CORE, *_SHELL, "taskflow.store", "taskflow.service"),
    "worker": (*_CORE, *_SHELL, "taskflow.service", "taskflow.worker"),
    "api": (*_CORE, *_SHELL, "taskflow.service", "taskflow.api"),
    # The composition root wires everything together.
    "cli": ("taskflow",),
    "__main__": ("taskflow.cli",),
    # The package itself re-exports the definition vocabulary.
    "taskflow": ("taskflow.core",),
    "errors": (),
    "clock": ("taskflow.errors",),
    "config": ("taskflow.errors",),
    "logs": ("taskflow.errors", "taskflow.core.delivery.redact"),
    # The public name action authors import (``StepContext``, ``once``): a re-export of
    # the automatic-steps room (``service/steps/authoring.py``).
    "steps": ("taskflow.service.steps.authoring",),
}

#: Modules the core may not import: the clock, randomness, files, processes, the network
#: and the frameworks of the shell.
CORE_FORBIDDEN_MODULES = (
    "os",
    "io",
    "sys",
    "time",
    "random",
    "secrets",
    "socket",
    "ssl",
    "select",
    "selectors",
    "signal",
    "subprocess",
    "multiprocessing",
    "shutil",
    "tempfile",
    "glob",
    "asyncio",
    "http",
    "urllib.request",
    "logging",
    "sqlite3",
    "asyncpg",
    "piccolo",
    "httpx",
    "litestar",
    "strawberry",
    "uvicorn",
    "pgserver",
    "itsdangerous",
)

#: Names the core may not import from a module (``PurePath`` is fine, ``Path`` reads disks).
CORE_FORBIDDEN_NAMES = {"pathlib": ("Path", "PosixPath", "WindowsPath")}

#: Calls the core may not make, by the called name (a function or a method).
CORE_FORBIDDEN_CALLS = {
    # the clock
    "now": "reads the clock: take `now` as an argument",
    "utcnow": "reads the clock: take `now` as an argument",
    "today": "reads the clock: take `now` as an argument",
    "monotonic": "reads the clock",
    "perf_counter": "reads the clock",
    # randomness
    "uuid1": "draws an id: let the shell mint ids",
    "uuid4": "draws an id: let the shell mint ids",
    "urandom": "draws randomness",
    "getrandbits": "draws randomness",
    # files and the console
    "open": "opens a file: let the shell read it and pass the text or values",
    "read_text": "reads a file",
    "read_bytes": "reads a file",
    "write_text": "writes a file",
    "write_bytes": "writes a file",
    "glob": "lists a folder",
    "rglob": "lists a folder",
    "iterdir": "lists a folder",
    "is_file": "looks at the disk",
    "is_dir": "looks at the disk",
    "exists": "looks at the disk",
    "mkdir": "writes to the disk",
    "unlink": "writes to the disk",
    "print": "writes to the console: return values, the shell prints",
    "input": "reads the console",
    "load": "reads a stream (json.load/tomllib.load): parse text with loads",
    "dump": "writes a stream: serialise with dumps",
}


@dataclass(frozen=True)
class Module:
    """One module file: its dotted name, its layer and its parsed source."""

    path: Path
    name: str
    layer: str
    tree: ast.Module

    @property
    def package(self) -> str:
        """The package relative imports start from."""
        return self.name if self.path.name == "__init__.py" else self.name.rpartition(".")[0]


def modules(root: Path) -> list[Module]:
    """Every module under ``root`` (a ``taskflow`` package folder)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        name = ".".join(parts)
        layer = parts[1] if len(parts) > 1 else "taskflow"
        found.append(Module(path, name, layer, ast.parse(path.read_text(), filename=str(path))))
    return found


def imported(module: Module) -> list[tuple[int, str]]:
    """(line, dotted name) of every import, relative ones resolved; names included."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            # "from taskflow.core import calendars" imports taskflow.core.clocks.calendars.
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
            found.append((node.lineno, base))
    return found


def _called_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _core_violations(module: Module, where: str) -> list[str]:
    bad = []
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            for name in names:
                if any(name == m or name.startswith(m + ".") for m in CORE_FORBIDDEN_MODULES):
                    bad.append(f"{where}:{node.lineno} core imports {name}")
            if isinstance(node, ast.ImportFrom) and node.module in CORE_FORBIDDEN_NAMES:
                for alias in node.names:
                    if alias.name in CORE_FORBIDDEN_NAMES[node.module]:
                        bad.append(f"{where}:{node.lineno} core imports {node.module}.{alias.name}")
        elif isinstance(node, ast.Call):
            name = _called_name(node)
            if name in CORE_FORBIDDEN_CALLS:
                bad.append(
                    f"{where}:{node.lineno} core calls {name}(): {CORE_FORBIDDEN_CALLS[name]}"
                )
    return bad


def violations(root: Path = PACKAGE) -> list[str]:
    """Every broken rule in the package at ``root``, one line each."""
    bad = []
    for module in modules(root):
        where = str(module.path.relative_to(root.parent))
        allowed = ALLOWED.get(module.layer)
        if allowed is None:
            bad.append(f"{where}: layer {module.layer!r} has no import rule; add it to ALLOWED")
            continue
        for line, name in imported(module):
            if name == "taskflow" or not name.startswith("taskflow."):
                continue
            if not (name.startswith(allowed) or name.startswith(f"taskflow.{module.layer}")):
                bad.append(f"{where}:{line} ({module.layer}) imports {name}")
        if module.layer == "core":
            bad += _core_violations(module, where)
    return bad


def test_every_module_is_found_and_has_a_layer() -> None:
    found = modules(PACKAGE)
    layers = {m.layer for m in found}
    assert len(found) > 100
    assert layers == set(ALLOWED), "a layer without modules or a module without a layer"
    assert {"taskflow.cli", "taskflow.config.config", "taskflow.clock", "taskflow"} <= {
        m.name for m in found
    }


def test_layers_import_only_what_they_may_and_core_stays_pure() -> None:
    assert violations() == []


def test_relative_imports_are_resolved(tmp_path: Path) -> None:
    root = tmp_path / "taskflow"
    (root / "core" / "runs").mkdir(parents=True)
    (root / "core" / "runs" / "x.py").write_text(
        "from ...store import db\nfrom .. import clocks\nfrom . import model\n"
    )
    (module,) = modules(root)
    names = {name for _, name in imported(module)}
    assert {"taskflow.store.db", "taskflow.core.clocks", "taskflow.core.runs.model"} <= names


PLANTED = {
    "core/planted_store.py": ("from taskflow.store import db\n", "imports taskflow.store"),
    "core/planted_relative.py": ("from ..store import db\n", "imports taskflow.store.db"),
    "core/runs/planted_deep.py": ("from ...api import app\n", "imports taskflow.api.app"),
    "core/planted_clock.py": (
        "from datetime import datetime\nx = datetime.now()\n",
        "core calls now()",
    ),
    "core/planted_today.py": ("import datetime\nx = datetime.date.today()\n", "calls today()"),
    "core/planted_uuid.py": ("import uuid\nx = uuid.uuid4()\n", "core calls uuid4()"),
    "core/planted_random.py": ("import random\n", "core imports random"),
    "core/planted_open.py": ("x = open('f')\n", "core calls open()"),
    "core/planted_path.py": ("from pathlib import Path\n", "core imports pathlib.Path"),
    "core/planted_read.py": (
        "from pathlib import PurePath\nx = PurePath('a').read_text()\n",
        "core calls read_text()",
    ),
    "core/planted_glob.py": ("def f(p):\n    return p.glob('*.toml')\n", "core calls glob()"),
    "core/planted_socket.py": ("import socket\n", "core imports socket"),
    "core/planted_asyncio.py": ("import asyncio\n", "core imports asyncio"),
    "core/planted_toml.py": ("import tomllib\nx = tomllib.load(f)\n", "core calls load()"),
    "api/planted_store.py": ("from taskflow.store import db\n", "(api) imports taskflow.store"),
    "api/planted_relative.py": ("from ..store import queries\n", "(api) imports taskflow.store"),
    "store/planted_service.py": ("from taskflow.service import runs\n", "(store) imports"),
    "service/planted_api.py": ("import taskflow.api.app\n", "(service) imports taskflow.api"),
    "worker/planted_store.py": ("from taskflow.store import db\n", "(worker) imports"),
    "planted_top.py": ("x = 1\n", "layer 'planted_top' has no import rule"),
    "config/config.py": ("from taskflow.store import db\n", "(config) imports taskflow.store"),
    "clock.py": ("from taskflow.core import clocks\n", "(clock) imports taskflow.core"),
    "__init__.py": ("from taskflow.service import runs\n", "(taskflow) imports taskflow.service"),
}


def test_every_planted_violation_is_reported(tmp_path: Path) -> None:
    root = tmp_path / "taskflow"
    shutil.copytree(PACKAGE, root, ignore=shutil.ignore_patterns("__pycache__"))
    assert violations(root) == []
    for relative, (source, _) in PLANTED.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source + (target.read_text() if target.exists() else ""))
    found = violations(root)
    missed = [
        relative
        for relative, (_, expected) in PLANTED.items()
        if not any(line.startswith(f"taskflow/{relative}") and expected in line for line in found)
    ]
    assert missed == [], found


# -- import circles ----------------------------------------------------------------------


def _type_checking_only(tree: ast.Module) -> set[int]:
    """Ids of the import nodes under ``if TYPE_CHECKING:`` (they never run)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (
            (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
            or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")
        ):
            for child in node.body:
                skipped |= {id(n) for n in ast.walk(child)}
    return skipped


def dependencies(root: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the taskflow modules it imports (anywhere in it, TYPE_CHECKING aside)."""
    found = modules(root)
    names = {m.name for m in found}
    graph: dict[str, set[str]] = {}
    for module in found:
        skipped = _type_checking_only(module.tree)
        targets: set[str] = set()
        for node in ast.walk(module.tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                wanted = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = module.package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, *([base] if base else [])])
                wanted = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in names else base
                    for alias in node.names
                ]
            else:
                continue
            for name in wanted:
                while name and name not in names:
                    name = name.rpartition(".")[0]
                if name and name != module.name and name != "taskflow":
                    targets.add(name)
        graph[module.name] = targets
    return graph


def cycles(root: Path = PACKAGE) -> list[list[str]]:
    """Every import circle: the strongly connected groups of two or more modules, sorted."""
    graph = dependencies(root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(name: str) -> None:  # Tarjan's algorithm
        index[name] = low[name] = len(index)
        stack.append(name)
        on_stack.add(name)
        for target in graph[name]:
            if target not in index:
                visit(target)
                low[name] = min(low[name], low[target])
            elif target in on_stack:
                low[name] = min(low[name], index[target])
        if low[name] == index[name]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == name:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph)))
    try:
        for name in sorted(graph):
            if name not in index:
                visit(name)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(found)


def test_no_import_cycles() -> None:
    found = cycles()
    assert found == [], f"import circles: move the shared piece where both can import it: {found}"


def test_a_planted_cycle_is_reported(tmp_path: Path) -> None:
    root = tmp_path / "taskflow"
    shutil.copytree(PACKAGE, root, ignore=shutil.ignore_patterns("__pycache__"))
    assert cycles(root) == []
    (root / "core" / "planted_a.py").write_text("from taskflow.core import planted_b\n")
    # a function-level import closes a circle all the same
    (root / "core" / "planted_b.py").write_text(
        "def f():\n    from taskflow.core import planted_a\n"
    )
    # ... but one under TYPE_CHECKING does not
    (root / "core" / "planted_c.py").write_text(
        "from typing import TYPE_CHECKING\nfrom taskflow.core import planted_d\n"
    )
    (root / "core" / "planted_d.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from taskflow.core import planted_c\n"
    )
    assert cycles(root) == [["taskflow.core.planted_a", "taskflow.core.planted_b"]]
