"""Loading workflow definitions from Python modules and files into a validated :class:`Catalog`.

This is the only place that imports user Python files. A *source* is a module
name (``acme.workflows``), a ``.py`` file, or a folder (every ``*.py`` in it
not starting with ``_``). Every :class:`~taskflow.core.definition.Workflow`
subclass defined in a source is collected and validated; all problems of all
sources are reported together in one
:class:`~taskflow.core.definition.DefinitionError`.

The sources come from ``TASKFLOW_WORKFLOWS`` (comma-separated; default the
bundled ``examples/``) and the known calendars from ``TASKFLOW_CALENDARS``
(default the bundled ``calendars/``), read here without needing the rest of
the settings (no signing key is needed to check a definition).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from taskflow import errors
from taskflow.config import config
from taskflow.core.definition import DefinitionError, Problem, Workflow, owning
from taskflow.core.definition.checks import child_checks, migration_checks
from taskflow.core.definition.checks import validate as validation
from taskflow.core.definition.workflow import Definition
from taskflow.core.slots import claim_facts
from taskflow.core.versions import recorded
from taskflow.service.clocks import calendar_files
from taskflow.service.steps import step_actions


class Catalog:
    """Validated definitions by name and version."""

    def __init__(self, definitions: Sequence[Definition]) -> None:
        self._by_key = {(d.name, d.version): d for d in definitions}
        #: Versions that left the code, rebuilt from their recorded documents for reads only
        #: (``core/versions/recorded.py``); filled by :meth:`remember` at start-up.
        self._recorded: dict[tuple[str, int], Definition] = {}

    def remember(self, documents: Iterable[Mapping[str, Any]]) -> None:
        """Keep, for reads, the recorded documents of versions the code does not load."""
        for doc in documents:
            key = (str(doc["name"]), int(doc["version"]))
            if key not in self._by_key:
                self._recorded[key] = recorded.from_document(doc)

    def for_reading(self, name: str, version: int) -> Definition | None:
        """The definition a read of a run on ``name`` at ``version`` shows: the loaded one,
        else the recorded one of a version that left the code (labels, fields, checklist: no
        behaviour), else None (a version older than the registry)."""
        return self._by_key.get((name, version)) or self._recorded.get((name, version))

    def has_version(self, name: str, version: int | None) -> bool:
        """Whether runs of ``name`` (at ``version``, when given) may exist: loaded or recorded."""
        keys = self._by_key.keys() | self._recorded.keys()
        return any(n == name and version in (None, v) for n, v in keys)

    def get(self, name: str, version: int | None = None) -> Definition:
        """The loaded definition ``name`` at ``version`` (default: the latest); NotFound
        otherwise, which for a version older than the latest loaded says how to migrate its
        runs (everything that acts on a run asks for its version here)."""
        if version is not None and (found := self._by_key.get((name, version))) is not None:
            return found  # the common case (a run's own version), without a scan
        versions = sorted(v for (n, v) in self._by_key if n == name)
        if not versions:
            known = ", ".join(self.names()) or "none are loaded"
            raise errors.NotFound(
                f"No workflow is called {name!r} (known: {known}). Check the name, or add the "
                "module or folder defining it to TASKFLOW_WORKFLOWS.",
                workflow=name,
            )
        chosen = versions[-1] if version is None else version
        if chosen not in versions:
            hint = ""
            if chosen < versions[-1]:
                hint = (
                    f" Runs on {name!r} version {chosen} can be read but not acted on: migrate "
                    f"them with 'taskflow runs migrate {name} --to {versions[-1]} --apply' "
                    f"(see --plan first), or load version {chosen}'s class again "
                    "(docs/versions.md)."
                )
            raise errors.NotFound(
                f"Workflow {name!r} has no version {version} (it has "
                f"{', '.join(map(str, versions))}).{hint}",
                workflow=name,
                version=version,
            )
        return self._by_key[(name, chosen)]

    @functools.cached_property
    def claim_facts(self) -> claim_facts.ClaimFacts:
        """What a claim statement must know of these definitions (``core/slots/claim_facts.py``)."""
        return claim_facts.claim_facts(self)

    def names(self) -> tuple[str, ...]:
        """Workflow names, sorted."""
        return tuple(sorted({n for n, _ in self._by_key}))

    def latest(self) -> tuple[Definition, ...]:
        """The latest version of each workflow, by name."""
        return tuple(self.get(name) for name in self.names())

    @functools.cached_property
    def owners(self) -> dict[str, Definition]:
        """The workflow owning each subject type (its latest version; at most one, checked
        at load): ``core/definition/owning.py``."""
        return {t: found[0] for t, found in owning.owners(self.latest()).items()}

    def __iter__(self) -> Iterator[Definition]:
        """Every definition, by name then version."""
        return iter(self._by_key[key] for key in sorted(self._by_key))

    def __len__(self) -> int:
        return len(self._by_key)

    def __contains__(self, name: object) -> bool:
        return any(n == name for n, _ in self._by_key)


# -- settings read without config.load() (which needs a signing key) ---------------------------


def sources_from_env(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """``TASKFLOW_WORKFLOWS`` as a tuple, or the bundled examples folder."""
    env = os.environ if env is None else env
    parts = tuple(p.strip() for p in env.get("TASKFLOW_WORKFLOWS", "").split(",") if p.strip())
    return parts or (str(config.PROJECT_ROOT / "examples"),)


def calendars_dir_from_env(env: Mapping[str, str] | None = None) -> Path:
    """``TASKFLOW_CALENDARS``, or the bundled calendars folder."""
    env = os.environ if env is None else env
    return Path(env.get("TASKFLOW_CALENDARS") or config.PROJECT_ROOT / "calendars")


def calendar_names(folder: Path) -> frozenset[str]:
    """The names of the calendars in ``folder``, each loaded and checked (a bad file raises)."""
    return calendar_files.load_folder(folder).names()


# -- loading ------------------------------------------------------------------------------------


def _problem(code: str, source: str, message: str, fix: str) -> Problem:
    return Problem(code, "", "", message, fix, source)


def _import_file(path: Path) -> ModuleType:
    path = path.resolve()  # one module per file, however the path was written
    # A name unique per path, so two folders may both hold workflows.py.
    tag = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    name = f"{step_actions.GENERATED_PREFIX}{path.stem}_{tag}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look a class's module up here
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _files(source: str) -> list[Path] | None:
    """The files a path source names; None when ``source`` is a module name."""
    path = Path(source)
    if path.is_dir():
        return sorted(p for p in path.glob("*.py") if not p.name.startswith("_"))
    if path.suffix == ".py" or os.sep in source or path.exists():
        return [path]
    return None


def _modules(source: str, found: list[Problem]) -> list[tuple[str, ModuleType]]:
    files = _files(source)
    targets: list[tuple[str, Path | None]] = (
        [(source, None)] if files is None else [(str(p), p) for p in files]
    )
    modules: list[tuple[str, ModuleType]] = []
    for label, path in targets:
        try:
            if path is not None and not path.is_file():
                found.append(
                    _problem(
                        "SOURCE_NOT_FOUND",
                        label,
                        "no such file or folder",
                        "check the path in TASKFLOW_WORKFLOWS or on the command line",
                    )
                )
                continue
            module = _import_file(path) if path else importlib.import_module(source)
        except ModuleNotFoundError as exc:
            found.append(
                _problem(
                    "SOURCE_NOT_FOUND",
                    label,
                    f"cannot import: {exc}",
                    "check the module name and that it is importable (installed "
                    "or on PYTHONPATH), or give a file path",
                )
            )
            continue
        except DefinitionError as exc:  # the DSL's own typed mistakes: code, place and fix
            found.extend(dataclasses.replace(p, source=label) for p in exc.problems)
            continue
        except Exception as exc:  # a user's file may fail in any way; report, don't crash
            found.append(
                _problem(
                    "SOURCE_FAILED",
                    label,
                    f"importing it raised {type(exc).__name__}: {exc}",
                    "fix the error in that file (run it with python to see the trace)",
                )
            )
            continue
        modules.append((label, module))
    return modules


def _workflows(module: ModuleType) -> list[type[Workflow]]:
    """Workflow classes defined in ``module`` itself (not imported into it), in order."""
    return [
        v
        for v in vars(module).values()
        if isinstance(v, type)
        and issubclass(v, Workflow)
        and v.__module__ == module.__name__
        and v.definition is not None
    ]


def load(sources: Sequence[str], known_calendars: Collection[str] | None = None) -> Catalog:
    """Import, collect and validate every workflow in ``sources``.

    Raises :class:`DefinitionError` listing every problem found (including
    sources that do not import, and two definitions of one name and version).
    ``known_calendars`` None skips the calendar check.
    """
    found: list[Problem] = []
    definitions: list[Definition] = []
    seen: dict[tuple[str, int], str] = {}
    modules_seen: set[str] = set()
    for source in sources:
        for label, module in _modules(source, found):
            if module.__name__ in modules_seen:
                continue  # named twice (a folder and a file in it): load it once
            modules_seen.add(module.__name__)
            for cls in _workflows(module):
                assert cls.definition is not None
                where = (
                    f"{label}:{cls.__qualname__}"
                    if label.endswith(".py")
                    else cls.definition.source
                )
                definition = dataclasses.replace(cls.definition, source=where)
                found += validation.problems(definition, known_calendars)
                found += step_actions.problems(definition)
                key = (definition.name, definition.version)
                if key in seen:
                    found.append(
                        Problem(
                            "DUPLICATE_WORKFLOW",
                            definition.name,
                            "",
                            f"version {definition.version} is also defined in {seen[key]}",
                            "give one of them another name, or a higher version",
                            where,
                        )
                    )
                seen[key] = where
                definitions.append(definition)
    by_name: dict[str, dict[int, Definition]] = {}
    for definition in definitions:
        by_name.setdefault(definition.name, {})[definition.version] = definition
    for definition in definitions:
        found += migration_checks.cross_problems(definition, by_name[definition.name])
    found += child_checks.set_problems(definitions)
    found += owning.cross_problems(versions[max(versions)] for versions in by_name.values())
    if found:
        raise DefinitionError(found)
    return Catalog(definitions)


def load_from_env(env: Mapping[str, str] | None = None) -> Catalog:
    """The catalog of ``TASKFLOW_WORKFLOWS``, checked against ``TASKFLOW_CALENDARS``."""
    return load(sources_from_env(env), calendar_names(calendars_dir_from_env(env)))
