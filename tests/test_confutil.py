"""``confutil.instantiate``: what the user wrote in a config node is one config line; a bug inside
the code a constructor calls keeps its traceback."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hydra.errors import InstantiationException

from ledgermind.confutil import instantiate
from ledgermind.errors import ConfigError

HERE = __name__


@dataclass
class Checked:
    size: int = 1

    def __post_init__(self) -> None:
        if self.size < 1:
            raise ValueError(f"size must be >= 1, got {self.size}")


def _load_weights() -> None:
    raise TypeError("unsupported operand type(s) for +: 'int' and 'NoneType'")


class Buggy:
    def __init__(self) -> None:
        _load_weights()  # a bug below the constructor, not a value of the node


def test_a_value_the_class_refuses_is_one_config_line() -> None:
    with pytest.raises(ConfigError, match=r"^thing: ValueError: size must be >= 1, got 0$"):
        instantiate({"_target_": f"{HERE}.Checked", "size": 0}, "thing")
    with pytest.raises(ConfigError, match=r"^thing: TypeError: .*unexpected keyword argument 'colour'"):
        instantiate({"_target_": f"{HERE}.Checked", "colour": 1}, "thing")
    assert instantiate({"_target_": f"{HERE}.Checked", "size": 3}, "thing") == Checked(3)


def test_a_bug_below_the_constructor_keeps_its_traceback() -> None:
    with pytest.raises(InstantiationException) as info:
        instantiate({"_target_": f"{HERE}.Buggy"}, "thing")
    assert isinstance(info.value.__cause__, TypeError)
