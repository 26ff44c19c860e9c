"""`iotuner advise`: findings, SmartIO's decisions and a settings document
from a Darshan log or an iotuner run report (docs/advise.md).

checks.py holds the one table of checks; fixes.py builds the settings
document; from_darshan.py and from_report.py turn the inputs into the facts
the checks read. The recommendation engine (iotuner.recommend) extracts
SmartIO's insights, runs the C core's rules table and the performance model,
and ranks what to change; analysis.py and console.py give its answer.
"""

from .analysis import advise, calibration_problem, load  # noqa: F401
from .errors import EXIT_HIGH, EXIT_OK, EXIT_UNREADABLE, EXIT_USAGE, InputError  # noqa: F401
