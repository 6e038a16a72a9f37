"""moto's S3 server with conditional PUTs made atomic, as they are on S3.

moto 5.2.5 checks `If-Match` / `If-None-Match` on a PUT and then writes the object in a second
step, with no lock between them; its server runs each request on its own thread. Under load
(the 16-writer fleet test: thousands of racing head swaps), two PUTs on the same version both
pass the check and both write, so one compare-and-swap silently overwrites the other: memfs lost
3 and 4 acknowledged updates in two 16 x 200 fleet runs on plain moto, and none with this lock.
Real S3 evaluates the condition and the write atomically, so this makes the emulator honest.

Two changes make it faster without changing any answer (measured with py-spy on the fleet
test, where moto, on one core under Python's lock, was what the 16 writers waited for):
- moto's dispatcher listed its own package folder (`os.listdir` and an `isdir` per entry) on
  every request to match the request to a service: 9% of its time. The list is read once.
- the access log (a line per request, through `logging` and its lock): 19% of its time.
  Warnings and errors are still logged.

Nothing else changes: every request runs moto's own code as before.

Usage: python moto_server.py [moto_server arguments], with moto installed (scripts/emulators.sh).
"""

import functools
import logging
import sys
import threading

from moto import backends
from moto.s3.responses import S3Response
from moto.server import main

_writes = threading.Lock()
_put_object = S3Response.put_object


def put_object(self, *args, **kwargs):
    # One PUT at a time: the precondition check and the write become one step.
    with _writes:
        return _put_object(self, *args, **kwargs)


S3Response.put_object = put_object

# The folder of an installed package does not change while the server runs.
_list_of_moto_modules = backends.list_of_moto_modules
backends.list_of_moto_modules = functools.cache(lambda: tuple(_list_of_moto_modules()))

logging.getLogger("werkzeug").setLevel(logging.WARNING)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
