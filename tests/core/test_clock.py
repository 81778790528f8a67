"""One clock: every timestamp ocg writes comes from ocg/core/clock.py, so all are UTC and alike."""

import datetime as dt
import re

from ocg.core import clock
from ocg.core.paths import PACKAGE

READS_THE_CLOCK = re.compile(r"\b(datetime\.now|datetime\.utcnow|time\.strftime|date\.today)\(")


def test_no_module_but_the_clock_reads_the_time_of_day():
    readers = [
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if READS_THE_CLOCK.search(p.read_text(encoding="utf-8"))
    ]
    assert readers == ["core/clock.py"]


def test_a_stamp_is_utc_to_the_second():
    stamp = dt.datetime.fromisoformat(clock.utc_stamp())
    assert stamp.utcoffset() == dt.timedelta(0) and stamp.microsecond == 0
