"""Changes that do not change what happened (jitter, a 2 s interval, a lost sample) leave the top
cause of real recordings where it was; each change keeps the recording's shape."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from core.incident import load_incident
from evals import perturb

BUNDLED = Path(__file__).resolve().parent.parent / "evals" / "incidents"
# A healthy job beside a hog in another group, one whose own workers fill the cores, contention,
# starvation beside a hog, reclaim, a small readahead window, a checkpoint, an uncapped reader.
PICKED = (
    "real-healthy-w2-hog-1",
    "real-healthy-w3-p2-hog-2",
    "real-healthy-w4-p2-1",
    "real-cont-h2-1",
    "real-starve-w0-p2-hog-1",
    "real-recl-192-1",
    "real-ra64-iops100-1",
    "real-wb-ckpt-1",
    "real-healthy-ra2048-iops400-1",
    "real-healthy-ra384-uncapped-dirty-2",
)


def test_top_causes_hold_under_jitter_a_longer_interval_and_lost_samples() -> None:
    incidents = [load_incident(BUNDLED / name) for name in PICKED]
    # What another recorder of the same moment changes: its own jitter, interval, lost samples.
    # (noise10, twice the jitter, is the tool's harsher probe: it moves a few top causes.)
    changes = {k: perturb.CHANGES[k] for k in ("noise5", "interval2", "gaps10")}
    outcomes = perturb.run(incidents, changes)
    assert [o.change for o in outcomes] == list(changes)
    for o in outcomes:
        assert o.incidents == len(PICKED)
        assert o.flips == [], (o.change, o.flips)


def test_changes_keep_the_recordings_shape() -> None:
    inc = load_incident(BUNDLED / "real-ra64-iops100-1")
    two = perturb.interval2(inc)
    assert two is not None and two.interval_s == 2.0 and len(two.samples) == len(inc.samples) // 2
    assert perturb.interval2(two) is None  # only 1 s recordings are paired
    gapped = perturb.CHANGES["gaps10"](inc)
    assert (
        gapped is not None and gapped.samples[0] is inc.samples[0] and gapped.samples[-1] is inc.samples[-1]
    )
    assert len(gapped.samples) < len(inc.samples)
    noisy = perturb.CHANGES["noise10"](inc)
    assert noisy is not None and noisy.samples[5].m != inc.samples[5].m
    assert all(0.0 <= x <= 1.0 for s in noisy.samples for k, x in s.m.items() if k.endswith("_frac"))
    assert perturb.CHANGES["noise10"](inc).samples[5].m == noisy.samples[5].m  # seeded
    assert inc.samples[5].m == load_incident(BUNDLED / "real-ra64-iops100-1").samples[5].m  # not mutated
    binned = perturb.CHANGES["log2lat"](inc)
    assert binned is not None
    for before, after in zip(inc.samples, binned.samples, strict=True):
        for k, x in before.m.items():
            y = after.m[k]
            if k.endswith(("_p50_us", "_p99_us")) and x > 0:
                assert x < y <= 2 * x and math.log2(y).is_integer(), (k, x, y)
            else:
                assert y == x, k


def test_cli_lists_moved_top_causes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in PICKED[:2]:
        shutil.copytree(BUNDLED / name, tmp_path / name)
    assert perturb.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("as recorded: 2 incidents, AC@1 1.000")
    assert "noise5: 2 incidents" in out and "interval2: 2 incidents" in out
    assert perturb.main([str(tmp_path), "--only", "syn-"]) == 2
