from collections.abc import Callable
from typing import Any

class Unsupported(Exception): ...

def dump(
    objs: list[Any],
    vc: dict[Any, Any],
    kc: dict[Any, Any],
    pc: dict[Any, Any],
    scalar: Callable[..., Any],
    literal: Callable[..., Any],
    prefix: Callable[..., Any],
    value: Callable[..., Any],
    LITERAL: object,
    /,
) -> str: ...
