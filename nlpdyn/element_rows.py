"""ElementRows: where an element's rows sit in a compiled system's stacked vectors."""
from __future__ import annotations

from dataclasses import dataclass

from .joints.base import Element


@dataclass
class ElementRows:
    """Where an element's rows sit in the stacked constraint or gap vector."""

    name: str
    element: Element
    start: int
    stop: int

    @property
    def size(self) -> int:
        return self.stop - self.start
