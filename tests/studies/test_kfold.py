"""ledgermind.studies.kfold: stratified folds and the choose-on-K−1, score-on-held-out loop."""

from __future__ import annotations

import pytest

from ledgermind.errors import UserError
from ledgermind.studies.kfold import cross_validate, stratified_folds


def test_folds_are_stratified_balanced_and_seeded():
    strata = ["a"] * 10 + ["b"] * 5
    folds = stratified_folds(strata, 5, seed=1)
    assert sorted(folds.count(f) for f in range(5)) == [3, 3, 3, 3, 3]
    assert all({folds[i] for i in range(10, 15)} == set(range(5)) for _ in [0])  # one "b" per fold
    assert folds == stratified_folds(strata, 5, seed=1) and folds != stratified_folds(strata, 5, seed=2)
    with pytest.raises(UserError):
        stratified_folds(strata, 1)
    with pytest.raises(UserError):
        stratified_folds(strata[:3], 5)


def _mean(values):
    return sum(values) / len(values) if values else float("nan")


def test_choice_is_made_without_the_held_out_fold():
    folds = [0, 0, 1, 1, 2, 2]
    # "fit" is right exactly on fold 0's items (a rule written for those rows); "general" on 4 of 6
    outcomes = {"general": [1, 0, 1, 1, 0, 1], "fit": [1, 1, 0, 0, 0, 0]}
    report = cross_validate(outcomes, folds, _mean, {"acc": _mean})
    assert [f.chosen for f in report.folds] == ["general", "general", "general"]
    assert report.pooled["acc"] == pytest.approx(4 / 6)
    assert [f.held_out["acc"] for f in report.folds] == [0.5, 1.0, 0.5]
    assert report.mean("acc") == pytest.approx(2 / 3) and report.spread("acc") > 0


def test_ties_keep_the_first_candidate():
    outcomes = {"shipped": [1, 1, 0, 0], "other": [0, 0, 1, 1]}  # equal on every training half
    report = cross_validate(outcomes, [0, 1, 0, 1], _mean, {"acc": _mean})
    assert [f.chosen for f in report.folds] == ["shipped", "shipped"]
