"""Reading a pretrained policy file (TunIO's picker and its stopper): one error type, one message shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class PolicyError(ValueError):
    pass


def read(path: str | Path, what: str) -> Any:
    """The JSON document of a policy file; what: the policy's name in the message ("picker policy")."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise PolicyError(f"cannot read the {what} {path}: {e}") from None
