"""Claim text normalisation before NER/ECC/NCC: markup is never an entity."""

from __future__ import annotations

import pytest

from ledgermind.grounding.ecc import claim_entities
from ledgermind.grounding.normalize import claim_view, is_markup, strip_latex, strip_markdown, strip_markup
from perception.aliases import AliasTable


@pytest.mark.parametrize(
    "raw,expected",
    [
        (r"F = m \times a", "F = m × a"),  # symbol commands become their character
        (r"m \cdot g \approx 9.8 \leq 10", "m · g ≈ 9.8 ≤ 10"),
        (r"\alpha + \beta", "α + β"),
        (r"h_1 = 2 and h_{12} = 3", "h1 = 2 and h12 = 3"),  # subscripts join their symbol
        (r"5 \, \text{kg}", "5 kg"),  # text wrappers keep their words, thin spaces are spaces
        (r"\mathrm{Pa} and \textbf{bold}", "Pa and bold"),
        (r"\text{kg", "kg"),
        (r"0.0189 m^{3", "0.0189 m³"),
        (r"0.0189 m^3.", "0.0189 m³."),  # a claim split mid-command keeps the word, not the brace
        (r"\frac{1}{2} m v^2", "1/2 m v²"),  # superscripts render as superscript characters
        (r"x^{-1} and R^n", "x⁻¹ and Rn"),
        (r"\begin{aligned} V &= 2 \\ &= 3 \end{aligned}", "V = 2 = 3"),  # environments, alignment, breaks
        (r"g + \rho_o", "g + ρo"),
        (r"\frac{a+b}{c}", "(a+b)/(c)"),
        (r"v = \sqrt{2gh}", "v = √(2gh)"),
        (r"30^\circ and 45^{\circ} here", "30° and 45° here"),
        (r"10^{3} m", "10³ m"),
        (r"\$5 costs 50\%", "$5 costs 50%"),  # escaped characters are themselves
        (r"\( x = 3 \) and \[ y = 4 \] and $z$", "x = 3 and y = 4 and z"),  # maths delimiters go
        (r"\left( x \right)", "( x )"),
        (r"\boxed{C}", "C"),
    ],
)
def test_latex_rules(raw: str, expected: str) -> None:
    assert strip_markup(raw) == expected


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("**Step 1:** read the scale", "Step 1: read the scale"),
        ("the *italic* and __strong__ words", "the italic and strong words"),
        ("use `numpy` here", "use numpy here"),
        ("### Conclusion", "Conclusion"),
        ("- a bullet point", "a bullet point"),
        ("2. a numbered step", "a numbered step"),
        ("see [the docs](http://x.y/z)", "see the docs"),
        ("| a | b |\n|---|---|\n| 1 | 2 |", "a b\n1 2"),  # table rows stay lines
    ],
)
def test_markdown_rules(raw: str, expected: str) -> None:
    assert strip_markup(raw) == expected


def test_plain_text_and_decimals_are_untouched() -> None:
    text = "The needle reads 36.7 °C at 3:15 pm (Fig. 2), about 5% over A-level."
    assert strip_latex(text) == text and strip_markdown(text) == text


def test_option_labels_resolve_to_option_text() -> None:
    options = ["Ink blotting", "Water droplets", "Liquid diffusion"]
    assert claim_view("So the answer is (B).", options) == "So the Water droplets."
    assert "C." not in claim_view(r"**C. Liquid diffusion** fits", options)
    assert claim_view("Option H is out of range", options) == "Option H is out of range"  # not an option
    assert claim_view("D. Determine the flow.", options) == "Determine the flow."  # an enumerator
    assert (
        claim_view("So (B).", ["x", r"$T_{1}=113^{\circ}C$"]) == "So T1=113°C."
    )  # the option text plain too


def test_markup_never_reaches_ner_as_an_entity(ner) -> None:
    aliases = AliasTable.default()
    raw = (
        r"The mass is $5 \times 10^{3} \text{kg}$ and the height $h_1 = 2.5 \, \text{m}$, "
        r"so **C. Liquid diffusion** is \textbf{Correct} by Newton's law."
    )
    options = ["Ink blotting", "Water droplets", "Liquid diffusion"]
    entities = [e.text for e in claim_entities(claim_view(raw, options), ner, aliases)]
    assert not [e for e in entities if is_markup(e)], entities
    assert any("Newton" in e for e in entities)  # real names still are entities


@pytest.mark.parametrize(
    "token,markup",
    [
        (r"\times", True),
        (r"\text{kg", True),
        ("h_1", True),
        ("**Answer", True),
        ("C. Liquid", True),
        ("Newton", False),
        ("Apollo 11", False),
        ("J.S. Bach", False),
    ],
)
def test_is_markup(token: str, markup: bool) -> None:
    assert is_markup(token) is markup


def test_strip_markup_keeps_line_breaks_and_drops_blank_lines() -> None:
    assert strip_markup("a  \\times b\n\n  **c**   d\n") == "a × b\nc d"
