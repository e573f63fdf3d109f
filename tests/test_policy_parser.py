"""Policy files: the bundled one loads; a malformed one is one `FILE:LINE: problem` error."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from agent.proposers.policy import PolicyError, default_policy_path, load_policy, parse_policy

GOOD = """\
version: 1
rules:
  - name: lower-bg
    cause: writeback_burst
    action:
      primitive: vm.dirty_background_ratio
      target: none
      value: 5
      direction: down
    reason: lower it from {current} to {value}
"""


def _error(text: str) -> str:
    with pytest.raises(PolicyError) as e:
        parse_policy(textwrap.dedent(text), "ops.yaml")
    return str(e.value)


def test_bundled_default_policy_loads_and_covers_every_cause() -> None:
    policy = load_policy(default_policy_path())
    covered = {c.value for r in policy.rules for c in r.causes}
    from core.diagnosis import Category

    assert covered == {c.value for c in Category}
    assert not any(r.action and r.action.primitive.id == "trainer.batch_size" for r in policy.rules)


def test_good_policy_parses() -> None:
    policy = parse_policy(GOOD, "ops.yaml")
    (rule,) = policy.rules
    assert rule.name == "lower-bg" and rule.min_confidence == 0.3 and rule.where == "ops.yaml:3"
    assert rule.action is not None and rule.action.direction == "down"


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("version: 1\nrules:\n  - name: x\n    cause: [writeback_burst\n", 5, "not valid YAML"),
        ("version: 2\nrules: []\n", 1, "only version 1"),
        ("rules: []\n", 1, "missing `version: 1`"),
        ("version: 1\nrule: []\n", 2, "unknown key 'rule'"),
        (GOOD.replace("cause: writeback_burst", "cause: slow_disk"), 4, "unknown cause 'slow_disk'"),
        (
            GOOD.replace("vm.dirty_background_ratio", "vm.dirty_backgrnd_ratio"),
            6,
            "not a catalogue primitive",
        ),
        (GOOD.replace("target: none", "target: job"), 7, "takes target `none`"),
        (GOOD.replace("value: 5", "value: 5 +* 2"), 8, "cannot parse"),
        (GOOD.replace("value: 5", "value: __import__('os')"), 8, "only numbers"),
        (GOOD.replace("value: 5", "value: memory / 2"), 8, "unknown name 'memory'"),
        (GOOD.replace("direction: down", "direction: sideways"), 9, "`up` or `down`"),
        (GOOD.replace("{value}", "{valeu}"), 10, "unknown field {valeu}"),
        (GOOD.replace("    reason: lower it from {current} to {value}\n", ""), 3, "needs a `reason`"),
        (GOOD + "    noop: nothing\n", 3, "exactly one of `action` and `noop`"),
        (GOOD + GOOD.split("rules:\n")[1], 11, "used twice"),
        (GOOD.replace("    action:", "    min_confidence: 1.5\n    action:"), 5, "0..1"),
        (
            GOOD.replace("    action:", "    when:\n      - metric: mem.dirty_mib\n    action:"),
            6,
            "exactly one of above",
        ),
        (
            GOOD.replace(
                "    action:", "    when:\n      - evidence: io.vda.read_iops\n        above: 3\n    action:"
            ),
            7,
            "`evidence` names a metric the cause cites; no above",
        ),
        (
            GOOD.replace(
                "    action:", "    when:\n      - evidence: io.vda.read_iops\n        metric: m\n    action:"
            ),
            6,
            "exactly one of `metric`, `knob` and `evidence`",
        ),
        (
            GOOD.replace(
                "    action:",
                "    hysteresis:\n      metric: m\n      act_above: 0.1\n"
                "      release_below: 0.2\n    action:",
            ),
            8,
            "far side",
        ),
        (
            GOOD.replace("primitive: vm.dirty_background_ratio", "primitive: mm.thp_enabled")
            .replace("value: 5", "value: sometimes")
            .replace("      direction: down\n", ""),
            8,
            "takes one of",
        ),
        (
            GOOD.replace("vm.dirty_background_ratio", "trainer.batch_size").replace(
                "target: none", "target: job"
            ),
            6,
            "under `enable:`",
        ),
        (
            GOOD.replace(
                "    action:",
                "    when:\n      - knob: vm.dirty_bytes\n        equals: 0\n"
                "        unmeasured:\n          metric: m\n          below: 1\n    action:",
            ),
            9,
            "only a metric condition takes an `unmeasured` stand-in",
        ),
        (
            GOOD.replace(
                "    action:",
                "    when:\n      - metric: a\n        below: 1\n        unmeasured:\n"
                "          metric: b\n          below: 1\n          unmeasured:\n"
                "            metric: c\n            below: 1\n    action:",
            ),
            12,
            "only a metric condition takes an `unmeasured` stand-in",
        ),
        (
            GOOD.replace(
                "    action:",
                "    when:\n      - metric: a\n        below: 1\n        unmeasured:\n"
                "          knob: vm.dirty_bytes\n          equals: 0\n    action:",
            ),
            9,
            "the stand-in is a metric condition",
        ),
        ("version: 1\nrules:\n  - name: x\n    name: y\n    cause: none\n    noop: z\n", 4, "appears twice"),
        ("", 1, "empty"),
    ],
)
def test_malformed_policy_names_file_line_and_problem(text: str, line: int, words: str) -> None:
    message = _error(text)
    assert message.startswith(f"ops.yaml:{line}: "), message
    assert words in message, message
    assert "\n" not in message


def test_batch_size_is_allowed_when_the_file_enables_it() -> None:
    text = GOOD.replace("rules:", "enable: [trainer.batch_size]\nrules:")
    text = text.replace("vm.dirty_background_ratio", "trainer.batch_size").replace(
        "target: none", "target: job"
    )
    (rule,) = parse_policy(text, "ops.yaml").rules
    assert rule.action is not None and rule.action.primitive.id == "trainer.batch_size"


def test_unreadable_file_is_a_policy_error(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match=r"missing\.yaml:0: cannot read"):
        load_policy(tmp_path / "missing.yaml")


def test_pow2_rounds_a_size_up_to_a_power_of_two() -> None:
    from agent.proposers.expr import Expr

    e = Expr("pow2(max(8, write_mib_s * 0.005))")
    assert [e.evaluate({"write_mib_s": r}) for r in (0.0, 1500.0, 1700.0, 3200.0, 3300.0)] == [
        8.0,
        8.0,
        16.0,
        16.0,
        32.0,
    ]
    assert Expr("pow2(0.5)").evaluate({}) == 1.0 and Expr("pow2(1024)").evaluate({}) == 1024.0
