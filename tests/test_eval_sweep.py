"""`python -m evals.sweep`: one engine constant moved over recorded incidents, the rules' answers
counted at each value, the constant put back after."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agent.diagnosis import rules_cpu
from evals import sweep as sw

INCIDENTS = Path(__file__).resolve().parent.parent / "evals" / "incidents"
# A one-worker reader beside a hog in another group (labelled `none`: nothing measured helped), two
# hogs beside a one-worker job (contention), and a checkpoint that no CPU bound touches.
PICKED = ("real-healthy-ra440-uncapped-hog-w1-2", "real-cont-h2-w1-i2-1", "real-wb-ckpt-ra64-w3-rootwrites-1")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for name in PICKED:
        shutil.copytree(INCIDENTS / name, tmp_path / name)
    return tmp_path


def test_a_bound_moved_counts_what_moved_and_is_put_back(folder: Path) -> None:
    before = rules_cpu.FOREIGN_SHARE
    points = sw.sweep("agent.diagnosis.rules_cpu.FOREIGN_SHARE", [(0.35, 0.75), (0.5, 0.9)], [folder])
    assert before == rules_cpu.FOREIGN_SHARE
    old, new = points
    # The hog elsewhere read as contention under the old bound, as nothing to act on under the new.
    assert sw.moved(old, new) == [("real-healthy-ra440-uncapped-hog-w1-2", "+")]
    assert new.named == old.named + 1 and new.actions == old.actions and new.restrained == old.restrained
    assert new.scores["real-cont-h2-w1-i2-1"].ac1


def test_the_report_gives_each_value_and_the_moves_against_the_first(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = sw.main(
        [
            "agent.diagnosis.rules_cpu.FOREIGN_SHARE",
            "0.35:0.75",
            "0.5:0.9",
            "--incidents",
            str(folder),
            "--list",
        ]
    )
    out = capsys.readouterr().out.splitlines()
    assert rc == 0
    assert out[0].startswith("0.35:0.75: named first ")
    assert "(1 moved: named +1 -0, actions +0 -0, left alone +0 -0)" in out[1]
    assert out[2] == "  real-healthy-ra440-uncapped-hog-w1-2: +"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["agent.diagnosis.rules_cpu.NO_SUCH", "1"], "has no constant"),
        (["no.such.module.X", "1"], "no module"),
        (["agent.diagnosis.rules_cpu.FOREIGN_SHARE", "0.5"], "give values of that shape"),
        (["agent.diagnosis.rules_io.CAP_TEST_KB", "big"], "not a number"),
        (["agent.diagnosis.rules_cpu.cpu_contention", "1"], "is not a number or a tuple"),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(
    folder: Path, capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    before = rules_cpu.FOREIGN_SHARE
    assert sw.main([*args, "--incidents", str(folder)]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1 and err.startswith("evals.sweep: ")
    assert before == rules_cpu.FOREIGN_SHARE
