"""The exception every input error raises (see ``perfcompose.InputError``)."""

from typing import Optional


class InputError(ValueError):
    """An input perfcompose cannot use: the error the command exits with status 2 on.

    ``str(error)`` is the message as the command prints it, with the offending line and
    a caret under the problem where it has a place. ``source`` names the input (a file,
    ``<term>``, ``<model>``, ``<components>``, ``--at``), ``line`` and ``column`` (1-based)
    locate the problem in it; each is ``None`` where the error has no such place.
    """

    def __init__(
        self,
        message: str,
        source: Optional[str] = None,
        line: Optional[int] = None,
        column: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.source = source
        self.line = line
        self.column = column
