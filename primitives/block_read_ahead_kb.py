"""block.read_ahead_kb: how far the kernel reads ahead of sequential reads on one device."""

from dataclasses import dataclass

from core.diagnosis import Category
from core.knob import KnobValue, Target
from primitives.base import IntRange, Reach, StepLimit, TargetKind, Tier
from primitives.channels import REOPEN_FILES
from primitives.host import Host
from primitives.kinds.sysfs import BlockQueue


@dataclass(frozen=True, kw_only=True)
class ReadAhead(BlockQueue):
    def after_write(self, host: Host, target: Target) -> list[str]:
        # The value is copied into a file's readahead state at open(2): running loaders keep
        # the old one (measured: 1 MiB requests went on after the knob went to 128 kB).
        if host.trainer is None:
            return [
                f"loaders that already opened their files on {target} keep the old readahead "
                "until they reopen them (no trainer hook attached to ask)"
            ]
        done: list[str] = []
        for job in host.trainer.jobs():
            if REOPEN_FILES not in host.trainer.capabilities(job):
                done.append(f"job {job}: its hook cannot reopen files; its loaders keep the old readahead")
                continue
            ack = host.trainer.reopen_files(job)
            if not ack.ok:
                said = f"reopening files refused: {ack.reason}"
            elif ack.pending:
                said = "loader workers restart to reopen their files at the trainer's next epoch"
            else:
                said = "loader workers restarted to reopen their files"
            done.append(f"job {job}: {said}")
        return done

    def in_force(self, host: Host, target: Target, value: KnobValue) -> bool:
        # In force for the loaders once the jobs asked to reopen their files have done so. No
        # hook: nothing to reopen through, so as in force as it will get (files opened from now
        # on take it). A job that cannot reopen, or refused, is not waited for either.
        if host.trainer is None:
            return True
        return not any(host.trainer.awaiting(job, REOPEN_FILES) for job in host.trainer.jobs())


PRIMITIVE = ReadAhead(
    id="block.read_ahead_kb",
    description="Readahead window (kB) of a block device",
    tier=Tier.LOW,
    target=TargetKind.BLOCK_DEVICE,
    value=IntRange(16, 16384, "kB"),
    # Readahead only shapes reads and is reverted at once: one step may go from a stray
    # 8 kB to a streaming 2 MiB, or back.
    step=StepLimit(delta=2048, factor=32),
    causes=(Category.READAHEAD_MISMATCH, Category.STORAGE_LATENCY),
    risk="Too large for random reads wastes device bandwidth and page cache on data never used; "
    "too small for sequential shards makes many small requests.",
    reaches=Reach.NEW_OPENS,
    reaches_note="copied into a file's readahead state when the file is opened: running readers keep "
    "the old value; with a trainer hook attached its loader workers are restarted to reopen files",
    attr="read_ahead_kb",
)
