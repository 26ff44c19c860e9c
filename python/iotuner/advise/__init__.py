"""`iotuner advise`: findings, SmartIO's decisions and a settings document
from a Darshan log or an iotuner run report (docs/advise.md).

checks.py holds the one table of checks; smartio.py passes SmartIO's
insights through the C core's rules table; fixes.py builds the settings
document; from_darshan.py and from_report.py turn the inputs into the facts
the checks read.
"""

from .analysis import advise, load  # noqa: F401
from .errors import EXIT_HIGH, EXIT_OK, EXIT_UNREADABLE, EXIT_USAGE, InputError  # noqa: F401
