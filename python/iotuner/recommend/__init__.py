"""The recommendation engine behind `advise`, `smart --explain` and `auto`'s first proposals (reconcile.py).

insights.py extracts SmartIO's insights once, from a run report or a Darshan log; rules.py runs the C core's
rules table over them; findings.py turns Drishti's checks and the rules' decisions into findings; predictions.py
predicts candidates' effects with the performance model; reconcile.py reconciles them into ranked
recommendations, each with its settings document.
"""
