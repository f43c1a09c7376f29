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

    def register(self, name: str, factory: Callable[..., T] | None = None) -> Any:
        """Register `factory` under `name`; usable as a decorator."""

        def add(f: Callable[..., T]) -> Callable[..., T]:
            self._factories[name] = f
            return f

        return add(factory) if factory is not None else add

    def create(self, name: str, **options: Any) -> T:
        try:
            factory = self._factories[name]
        except KeyError:
            raise UnknownBackend(
                f"no {self.kind} {name!r}", f"use one of: {', '.join(sorted(self._factories))}"
            ) from None
        return factory(**options)

    def names(self) -> list[str]:
        return sorted(self._factories)

    def __contains__(self, name: object) -> bool:
        return name in self._factories
