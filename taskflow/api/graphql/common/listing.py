"""The one shape of every list query (a connection): ``first``, ``after`` and one narrowing
argument in, a page out.

A list is declared as its use case (a method of its strawberry type) plus one decorator
line, as mutations are (``keyed.mutation``)::

    @listing.connection(AttentionFilter, "Which items (default: all you may see).")
    async def needs_attention(
        self, info: Info, me: Principal, page: listing.Page, filter: AttentionFilter
    ) -> relay.Connection[AttentionItem]:
        \"\"\"What waits for a person, oldest first ...\"\"\"

The query is named after the method and described by its docstring; its arguments are
``first`` (checked: 1 to ``relay.MAX_FIRST``), ``after`` and the method's last parameter,
an optional argument of the type given (a filter input left out is its defaults). The
method gets the authenticated caller and the page asked for, and answers the connection.
A list with more than one order also takes ``orderBy`` (``ordered=`` the enum and its
default), handed to the method as ``page.order``.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any

import strawberry
from strawberry.types.base import get_object_definition

from taskflow.api.graphql.common import relay
from taskflow.api.graphql.common.context import Info, caller
from taskflow.core.access.principals import Principal


@dataclass(frozen=True)
class Page:
    """The page a list query is asked for: ``first`` rows (checked) after the ``after`` cursor."""

    first: int
    after: str | None
    #: The ``orderBy`` asked for (lists declared ``ordered=``), else None.
    order: Any = None


#: A list's use case: (self, info, the caller, the page, the narrowing argument) -> the page.
ListWork = Callable[[Any, Info, Principal, Page, Any], Awaitable[relay.Connection[Any]]]

#: The ``first`` argument of the lists whose page is 50 rows unless asked otherwise.
FIRST_50 = Annotated[int, strawberry.argument(description=f"Page size, 1-{relay.MAX_FIRST}.")]


def connection(
    narrowing: type[Any],
    description: str,
    *,
    first: int = 20,
    first_type: object = relay.First,
    ordered: tuple[Any, str] | None = None,
) -> Callable[[ListWork], Any]:
    """Declare the decorated use case as a list query (or list field) answering a
    connection: see the module doc. ``narrowing`` is the type of its optional last argument,
    described by ``description``; ``first`` is the page size unless asked otherwise, the
    argument typed (and described) by ``first_type``."""
    definition = get_object_definition(narrowing)
    defaults = narrowing if definition is not None and definition.is_input else None

    def declare(work: ListWork) -> Any:
        name = work.__name__
        if not work.__doc__:
            raise TypeError(f"The list {name} needs a docstring: it is its description.")
        argument = list(inspect.signature(work).parameters)[-1]
        returns = typing.get_type_hints(inspect.unwrap(work))["return"]

        async def resolve(
            self: Any, info: Info, first: int, after: str | None, **given: Any
        ) -> Any:
            me = await caller(info)
            relay.check_first(first)
            value = given.get(argument)
            if value is None and defaults is not None:
                value = defaults()
            order = given.get("order_by", ordered[0] if ordered else None)
            return await work(self, info, me, Page(first, after, order), value)

        keyword = inspect.Parameter.POSITIONAL_OR_KEYWORD
        resolve.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [
                inspect.Parameter("self", keyword),
                inspect.Parameter("info", keyword, annotation=Info),
                inspect.Parameter("first", keyword, default=first, annotation=first_type),
                inspect.Parameter("after", keyword, default=None, annotation=relay.After),
                inspect.Parameter(
                    argument,
                    keyword,
                    default=None,
                    annotation=Annotated[
                        narrowing | None, strawberry.argument(description=description)
                    ],
                ),
                *(
                    [
                        inspect.Parameter(
                            "order_by",
                            keyword,
                            default=ordered[0],
                            annotation=Annotated[
                                type(ordered[0]), strawberry.argument(description=ordered[1])
                            ],
                        )
                    ]
                    if ordered
                    else []
                ),
            ],
            return_annotation=returns,
        )
        resolve.__name__ = name
        return strawberry.field(resolver=resolve, description=" ".join(work.__doc__.split()))

    return declare
