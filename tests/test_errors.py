"""The one line a user sees of an exception, and of a config option outside its closed set."""

from __future__ import annotations

import pytest

from ledgermind.backends.cache import CacheMode
from ledgermind.errors import ConfigError, first_line, option


def test_first_line_is_the_first_non_blank_line_of_the_message() -> None:
    assert first_line(ValueError("\n  bad value\nsecond line")) == "bad value"


def test_an_empty_message_is_the_type_name_or_the_given_default_never_an_index_error() -> None:
    assert first_line(ConfigError("")) == "ConfigError"
    assert first_line(KeyError()) == "KeyError"
    assert first_line(ValueError("  \n "), default="") == ""


def test_option_is_the_member_or_one_line_with_the_allowed_values_and_the_closest() -> None:
    assert option(CacheMode, "replay", "cache.mode") is CacheMode.REPLAY
    with pytest.raises(ConfigError) as typo:
        option(CacheMode, "readwrit", "cache.mode")
    assert str(typo.value) == (
        f"cache.mode must be one of {[m.value for m in CacheMode]}, got 'readwrit' (did you mean 'readwrite'?)"
    )
    with pytest.raises(ConfigError, match=r"got 'zzz'$"):  # nothing close: no guess
        option(CacheMode, "zzz", "cache.mode")
