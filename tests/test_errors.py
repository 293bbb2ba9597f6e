"""The one line a user sees of an exception."""

from __future__ import annotations

from ledgermind.errors import ConfigError, first_line


def test_first_line_is_the_first_non_blank_line_of_the_message() -> None:
    assert first_line(ValueError("\n  bad value\nsecond line")) == "bad value"


def test_an_empty_message_is_the_type_name_or_the_given_default_never_an_index_error() -> None:
    assert first_line(ConfigError("")) == "ConfigError"
    assert first_line(KeyError()) == "KeyError"
    assert first_line(ValueError("  \n "), default="") == ""
