"""Each prompt signature recognises its own rendered template and no other one."""

from __future__ import annotations

import re
from string import Template

import pytest

from ledgermind.prompts.signatures import PROMPT_SIGNATURES, recognise
from ledgermind.prompts.templates import ALL_TEMPLATES


def _render(t: Template) -> str:
    names = {m.group("named") or m.group("braced") for m in t.pattern.finditer(t.template)} - {None}
    return t.substitute({n: "5" if n == "max_oc" else f"<{n}>" for n in names})


@pytest.mark.parametrize("name", sorted(ALL_TEMPLATES))
def test_signature_matches_only_its_template(name):
    rendered = {n: _render(t) for n, t in ALL_TEMPLATES.items()}
    hits = [n for n, text in rendered.items() if re.search(PROMPT_SIGNATURES[name], text, flags=re.MULTILINE)]
    assert hits == [name]
    assert recognise(rendered[name]) == name
