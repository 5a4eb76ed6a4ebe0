"""The result of reading a YAML file: plain data and the position of every node.

Apart from the reader (infx/yamlio.py, which imports PyYAML) so that a command answered from
infx's cache (infx/yamlcache.py) never imports PyYAML: about 10 ms of a warm ``infx matrix``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Path_ = tuple  # a path into the data: mapping keys and list indexes


@dataclass
class Document:
    """Plain data loaded from one YAML file, with the position of every node."""

    file: str
    data: Any
    marks: dict[Path_, tuple[int, int]] = field(default_factory=dict)

    def where(self, path: Path_) -> tuple[int, int]:
        """(line, column), 1-based, of the node at ``path`` or of its nearest located ancestor."""
        path = tuple(path)
        while path:
            mark = self.marks.get(path)
            if mark is not None:
                return mark
            path = path[:-1]
        return self.marks.get((), (1, 1))
