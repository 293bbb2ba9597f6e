"""Claim text as words: LaTeX / Markdown / subscript markup removed before NER, ECC and NCC.

Why: model replies (GPT-4o's MMMU-Pro chains of thought, for one) write maths in LaTeX and
structure in Markdown. Fed raw to the tagger, ``\\times``, ``\\text{kg`` and ``h_1`` come back as
"entities" that no OCR line can ever contain, so ECC fails the claim for its typography, not for
what it asserts (289 of 664 failing statements of one audit were such). Here markup becomes the
text it renders to: ``\\times`` → ×, ``\\text{kg}`` → kg, ``\\frac{a}{b}`` → a/b, ``h_1`` → h1,
``**bold**`` → bold, ``$x$`` → x. What a claim *says* is unchanged; only its spelling is.

:func:`claim_view` is the one entry point where claims enter NER/ECC/NCC in the audit: markup
stripped and option labels resolved to the option's text (the runtime's own rule,
:func:`ledgermind.grounding.option_labels.resolve_option_refs`). Evidence gets :func:`strip_markup`
too (the question text carries the same LaTeX), so both sides are compared in one spelling.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ledgermind.grounding.option_labels import resolve_option_refs

# LaTeX symbol commands -> the character they render to ("name=char" pairs)
SYMBOLS: dict[str, str] = dict(
    pair.split("=", 1)
    for pair in """
times=× cdot=· div=÷ pm=± mp=∓ approx=≈ sim=~ simeq=≃ leq=≤ le=≤ geq=≥ ge=≥ neq=≠ ne=≠ equiv=≡ propto=∝
infty=∞ partial=∂ nabla=∇ sum=Σ prod=Π int=∫ sqrt=√ to=→ rightarrow=→ Rightarrow=⇒ leftarrow=←
leftrightarrow=↔ degree=° circ=° angle=∠ perp=⊥ parallel=∥ triangle=△ percent=% ldots=... cdots=...
dots=... prime=′ alpha=α beta=β gamma=γ delta=δ epsilon=ε varepsilon=ε zeta=ζ eta=η theta=θ vartheta=θ
iota=ι kappa=κ lambda=λ mu=μ nu=ν xi=ξ pi=π rho=ρ sigma=σ tau=τ upsilon=υ phi=φ varphi=φ chi=χ psi=ψ
omega=ω Gamma=Γ Delta=Δ Theta=Θ Lambda=Λ Xi=Ξ Pi=Π Sigma=Σ Phi=Φ Psi=Ψ Omega=Ω ohm=Ω
""".split()
)
# commands whose argument is the text itself (font / box / operator wrappers)
_WRAPPERS = """text textbf textit textrm mathrm mathbf mathit mathsf mathcal mathbb operatorname boxed bar
overline underline hat vec tilde dot ddot mbox emph left right big Big bigg Bigg displaystyle textstyle unit si""".split()
_SPACES = re.compile(r"\\(?:,|;|:|!|quad|qquad|enspace|thinspace| )")
_ESCAPED = re.compile(r"\\([%$#&_{}])")
# escaped characters are literal: kept out of the delimiter / brace / subscript rules until the end
_PROTECT = {ch: chr(0xE000 + i) for i, ch in enumerate("$_{}")}
_RESTORE = str.maketrans({v: k for k, v in _PROTECT.items()})
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_SQRT = re.compile(r"\\sqrt\s*(?:\[([^\]]*)\])?\s*\{([^{}]*)\}")
_WRAPPER = re.compile(r"\\(?:" + "|".join(_WRAPPERS) + r")\*?\s*\{([^{}]*)\}")
_LEFT_RIGHT = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)\s*([()\[\]|.]|\\[{}])")
_COMMAND = re.compile(r"\\([A-Za-z]+)")
_DELIMS = re.compile(r"\$\$?|\\[()\[\]]")
_SUBSCRIPT = re.compile(r"(?<=[^\W_]|[)\]])_\{([^{}]*)\}|(?<=[^\W_]|[)\]])_([A-Za-z0-9]+)")
_ENVIRONMENT = re.compile(r"\\(?:begin|end)\s*\{[^{}]*\}")
_LINE_BREAK = re.compile(r"\\\\|(?<=\s)&(?=\s*[=<>≤≥≈])|(?<=[^\W_])&(?==)")
_SUPER_DIGITS = str.maketrans("0123456789-+", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺")
_SUPERSCRIPT = re.compile(r"\^\s*\(?([-+]?\d+)\)?(?!\d|\.\d)|\^(?=[A-Za-z(])")
_SUPERSCRIPT_BRACED = re.compile(r"\^\{([^{}]*)\}")
_DEGREE = re.compile(r"\^\s*(?:\{\s*(?:°|\\circ)\s*\}|°|\\circ\b)")
_BRACES = re.compile(r"[{}]")
# Markdown: emphasis, code, links, headings, list bullets, table rules
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MD_EMPH = re.compile(r"(\*\*|__|\*|`+)(?=\S)(.+?)(?<=\S)\1")
_MD_LINE_PREFIX = re.compile(r"^\s*(?:#{1,6}\s+|>\s*|[-*+•]\s+|\d+[.)]\s+(?=\S))", re.MULTILINE)
_MD_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?(?:\s*\|\s*:?-{3,}:?)*\s*\|?\s*$", re.MULTILINE)
_STRAY_MD = re.compile(r"\*\*|__|`|(?<!\w)\*(?!\w)|\|")

# a token that is still typography after normalisation (used to count "markup entities")
MARKUP_TOKEN = re.compile(r"[\\{}$^`|]|\*\*|(?<=\w)_(?=\w)|^\s*[(\[]?[A-J][.)\]]\s+\S")


def strip_latex(text: str) -> str:
    """LaTeX maths and text commands → the characters they render to (``\\times`` → ×)."""
    text = _ENVIRONMENT.sub(" ", text)
    text = _LINE_BREAK.sub(" ", text)
    text = _SPACES.sub(" ", text)
    text = _ESCAPED.sub(lambda m: _PROTECT.get(m.group(1), m.group(1)), text)
    text = _DEGREE.sub("°", text)
    for _ in range(4):  # nested wrappers / fractions unwrap from the inside out
        new = _FRAC.sub(r"(\1)/(\2)", text)
        new = _SQRT.sub(lambda m: f"√({m.group(2)})", new)
        new = _WRAPPER.sub(r"\1", new)
        if new == text:
            break
        text = new
    text = _LEFT_RIGHT.sub(lambda m: m.group(1).lstrip("\\").replace(".", ""), text)
    text = _COMMAND.sub(lambda m: SYMBOLS.get(m.group(1), " "), text)
    text = _DELIMS.sub(" ", text)
    text = _SUBSCRIPT.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), text)
    text = _SUPERSCRIPT_BRACED.sub(r"^\1", text)
    text = _SUPERSCRIPT.sub(_superscript, text)
    text = _BRACES.sub("", text)
    text = _SUPERSCRIPT.sub(_superscript, text)  # "m^{3" cut
    text = re.sub(r"\(([\w.]+)\)/\(([\w.]+)\)", r"\1/\2", text)  # (a)/(b) of simple terms -> a/b
    return text.translate(_RESTORE)


def _superscript(m: re.Match[str]) -> str:
    return m.group(1).translate(_SUPER_DIGITS) if m.group(1) else ""


def strip_markdown(text: str) -> str:
    """Markdown emphasis, code, links, headings, bullets and table rules → plain text."""
    text = _MD_TABLE_RULE.sub(" ", text)
    text = _MD_LINK.sub(r"\1", text)
    for _ in range(2):
        text = _MD_EMPH.sub(r"\2", text)
    text = _MD_LINE_PREFIX.sub("", text)
    return _STRAY_MD.sub(" ", text)


def strip_markup(text: str) -> str:
    """LaTeX, then Markdown, then whitespace collapsed: the text a reader would see.

    Line breaks survive (blank lines dropped): a line break is a boundary no entity crosses
    (``perception.ner.doc_entities``), and the audit joins the sentences of a packed claim with one.
    """
    if not text:
        return text
    plain = strip_markdown(strip_latex(text))
    return "\n".join(" ".join(line.split()) for line in plain.splitlines() if line.strip())


def claim_view(text: str, options: Sequence[str] | None = None) -> str:
    """What the cascade checks of a claim: markup stripped, option labels resolved to option text."""
    # a label becomes *plain* option text
    plain = [strip_markup(str(o)) for o in options] if options else options
    return resolve_option_refs(drop_labels_before_text(strip_markup(text), plain), plain)


_INLINE_LABEL = re.compile(r"(?<![\w.])\(?([A-J])[.):]\s+")
# a label opening the text or a sentence ("D. Determine the flow"): an enumerator, never an entity
_LEADING_LABEL = re.compile(r"(?:^|(?<=[.:;!?]\s))\(?([A-J])[.)]\s+(?=[A-Z(])")


def drop_labels_before_text(text: str, options: Sequence[str] | None) -> str:
    """ "so C. Liquid diffusion fits" -> "so Liquid diffusion fits": a label written right before
    its own option's text, anywhere in a sentence (the runtime's rule only sees a line's start)."""
    if not options:
        return text

    def repl(m: re.Match[str]) -> str:
        idx = ord(m.group(1)) - ord("A")
        option = " ".join(str(options[idx]).split()).casefold() if idx < len(options) else ""
        follows = " ".join(text[m.end() : m.end() + len(option) + 8].split()).casefold()
        return "" if option and follows.startswith(option) else m.group(0)

    return _LEADING_LABEL.sub("", _INLINE_LABEL.sub(repl, text))


def is_markup(token: str) -> bool:
    """True for an "entity" that is typography (a LaTeX/Markdown token or an ``A.``-labelled fragment)."""
    return bool(MARKUP_TOKEN.search(token))
