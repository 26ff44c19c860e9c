#!/usr/bin/env bash
# Test-only: a headless browser for the HTML report tests (Debian's chromium).
# `make test` runs it; a user's `make demo` does not need it. Idempotent.
set -euo pipefail
if command -v chromium >/dev/null || command -v chromium-browser >/dev/null; then exit 0; fi
if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
  echo "setup-browser: need root to install chromium; the HTML browser tests will be skipped" >&2; exit 0
fi
echo "setup-browser: installing chromium (HTML report tests)"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null || \
  echo "setup-browser: chromium could not be installed; the HTML browser tests will be skipped" >&2
