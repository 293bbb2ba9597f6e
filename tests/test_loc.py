"""The logical-line counter that the size budget is measured with."""

from pathlib import Path

from ledgermind.devtools.loc import count_tree, logical_lines, main

SOURCE = '''"""Module docstring: not counted."""

# a comment: not counted
def f(x):
    """Docstring: not counted."""
    return (x +
            1)  # one statement over two lines: two lines
'''


def test_only_code_lines_count() -> None:
    assert logical_lines(SOURCE) == 3


def test_a_file_argument_counts_like_the_same_file_in_a_folder(tmp_path: Path, capsys) -> None:
    (tmp_path / "pkg").mkdir()
    module = tmp_path / "pkg" / "m.py"
    module.write_text(SOURCE)
    assert count_tree([module]) == count_tree([tmp_path / "pkg"]) == {module: 3}
    main([str(module)])
    assert capsys.readouterr().out.splitlines()[-1].split() == ["3", "total", "(1", "files)"]
