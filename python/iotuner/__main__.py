import sys

try:
    from .cli import main
except ModuleNotFoundError as e:  # a dependency of iotuner itself: one line (bin/iotuner run by a bare python3)
    from .optional import dependency_message

    if dependency_message(e) is None:
        raise
    print(dependency_message(e), file=sys.stderr)
    sys.exit(2)

sys.exit(main())
