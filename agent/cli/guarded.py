"""What the commands that change the host share: the host with its channels, the knob syntax.

A one-shot command (apply, rollback) reaches a trainer hook by listening on the
hook socket for a few seconds: hooks reconnect within two seconds. While `idletune
auto` runs it holds the socket, and trainer knobs are its to change.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

from core.hostfs import host_fs
from core.knob import split_knob_key
from primitives.base import Loc, Primitive, TargetKind
from primitives.host import Host

HOOK_WAIT_S = 3.0


def parse_knob_value(spec: str) -> tuple[str, str | None, str]:
    """`PRIMITIVE[@TARGET]=VALUE` -> (primitive, target, value); raises ValueError saying what is wrong."""
    knob, sep, value = spec.partition("=")
    if not sep or not knob or not value:
        raise ValueError(f"{spec!r} is not PRIMITIVE[@TARGET]=VALUE")
    primitive, target = split_knob_key(knob)
    if target == "":
        raise ValueError(f"{spec!r}: nothing after @")
    return primitive.strip(), (target.strip() if target is not None else None), value.strip()


def needs(p: Primitive | None, locs: list[Loc] | None = None) -> tuple[bool, bool]:
    """(trainer, gpu): which channels a primitive, or a list of journal locations, needs."""
    kinds = {loc.kind for loc in locs or []}
    trainer = "trainer" in kinds or (p is not None and p.target is TargetKind.JOB)
    gpu = "nvml" in kinds or (p is not None and p.target is TargetKind.GPU)
    return trainer, gpu


@contextlib.contextmanager
def open_host(*, trainer: bool = False, gpu: bool = False, job: str | None = None) -> Iterator[Host]:
    """The live host (or the fake root named by IDLETUNE_ROOT), with the channels asked for."""
    host = Host(host_fs())
    if gpu:
        from primitives.channels import open_nvml_power

        host.gpu, _ = open_nvml_power()
    source = None
    if trainer:
        from agent.sources.trainer import TrainerSource
        from agent.sources.trainer_control import TrainerControl

        source = TrainerSource()
        if source.start().live:
            host.trainer = TrainerControl(source)
            deadline = time.monotonic() + HOOK_WAIT_S
            while time.monotonic() < deadline and (job is None or job not in host.trainer.jobs()):
                time.sleep(0.1)
        else:
            source = None
    try:
        yield host
    finally:
        if source is not None:
            source.close()
