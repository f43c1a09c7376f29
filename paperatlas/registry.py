"""Registry: name -> backend factory; an unknown name lists the valid ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from .errors import PaperatlasError

T = TypeVar("T")


class UnknownBackend(PaperatlasError):
    """No backend by that name."""


class Registry(Generic[T]):
    """Backends of one kind (embedder, vector index, keyword index, recommender...)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._factories: dict[str, Callable[..., T]] = {}
        self._hidden: set[str] = set()

    def register(self, name: str, factory: Callable[..., T] | None = None, hidden: bool = False) -> Any:
        """Register `factory` under `name`; usable as a decorator. A `hidden` backend is created by
        name as any other (what was made with it still opens) but is not offered: `names()` and the
        list an unknown name prints leave it out."""

        def add(f: Callable[..., T]) -> Callable[..., T]:
            self._factories[name] = f
            if hidden:
                self._hidden.add(name)
            return f

        return add(factory) if factory is not None else add

    def create(self, name: str, **options: Any) -> T:
        try:
            factory = self._factories[name]
        except KeyError:
            raise UnknownBackend(f"no {self.kind} {name!r}", f"use one of: {', '.join(self.names())}") from None
        return factory(**options)

    def names(self, hidden: bool = False) -> list[str]:
        """The names offered (with `hidden`, every registered one)."""
        return sorted(n for n in self._factories if hidden or n not in self._hidden)

    def is_hidden(self, name: str) -> bool:
        return name in self._hidden

    def __contains__(self, name: object) -> bool:
        return name in self._factories
