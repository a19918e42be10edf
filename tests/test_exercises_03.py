"""Exercise checks of notebook 03: the timeline its checks keep sealed is the right one.

The checks themselves, against their wrong and other right answers, are tested by tests/test_exercises.py.
"""

from conftest import host
from utils.exercises import nb03
from utils.exercises.answers import nb03 as answers03


@host
def test_the_program_digests_are_its_timeline():
    timeline = answers03.simulator()(nb03.PROGRAM)
    assert timeline == answers03.PROGRAM_ANSWER
    assert {name: nb03._kernel_seal(name, *span) for name, span in timeline.items()} == nb03.PROGRAM_SEALED
