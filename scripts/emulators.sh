#!/usr/bin/env bash
# Real S3 (moto) and Azure (Azurite) servers on 127.0.0.1 for the tests:
#
#   scripts/emulators.sh run CMD [ARGS...]
#   scripts/emulators.sh install
#
# The name the README, CI and the tests use; scripts/emulators.py does the work (read it).
exec python3 "$(dirname "$0")/emulators.py" "$@"
