"""moto's S3 server with conditional PUTs made atomic, as they are on S3, and requests one at a time.

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

Nothing else changes in moto: every request runs moto's own code as before.

moto's own server (werkzeug's development server) closes the connection after every answer
(`Connection: close`): every request then costs a new TCP connection and a new thread, which S3
does not (it keeps connections alive, and object_store's client pools them). On the 16-writer
fleet test that was some 180 new connections a second, 10,000 sockets in TIME-WAIT, and a
writer alone stalled about one mutation in a hundred for a second (a connection attempt retried
after the kernel's one-second timeout): one such stall cut a 3-second run's rate by a third.
So moto's application is served by waitress (a maintained WSGI server, pinned with moto in
scripts/emulators.py), which keeps connections alive and answers on a pool of threads.

Usage: python moto_server.py -H HOST -p PORT, with moto and waitress installed
(scripts/emulators.sh).
"""

import argparse
import functools
import logging
import sys
import threading

import waitress
from moto import backends
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from moto.s3.responses import S3Response

# One S3 request at a time: a PUT's precondition check and its write become one step, and no
# request reads an object that a concurrent PUT is replacing. moto's S3 backend is not safe
# for threads: a GET with If-None-Match on the head read the old version's buffer after the
# PUT replacing it had closed it ("I/O operation on closed file", a 500), four times in two
# fleet runs. Python's lock runs moto's code one thread at a time anyway; the sockets are
# read and written outside this lock, by the server.
_s3 = threading.RLock()


def _one_at_a_time(method):
    @functools.wraps(method)
    def wrapped(self, *args, **kwargs):
        with _s3:
            return method(self, *args, **kwargs)

    return wrapped


for _name in ("put_object", "key_response", "bucket_response", "ambiguous_response"):
    setattr(S3Response, _name, _one_at_a_time(getattr(S3Response, _name)))

# The folder of an installed package does not change while the server runs.
_list_of_moto_modules = backends.list_of_moto_modules
backends.list_of_moto_modules = functools.cache(lambda: tuple(_list_of_moto_modules()))

logging.getLogger("werkzeug").setLevel(logging.WARNING)



def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description="moto's S3 (and KMS) server, served by waitress")
    parser.add_argument("-H", "--host", default="127.0.0.1", help="the address to listen on")
    parser.add_argument("-p", "--port", type=int, required=True, help="the port to listen on")
    args = parser.parse_args(argv)
    # moto's own `main` wraps its application the same way.
    app = DomainDispatcherApplication(create_backend_app)
    # Enough connections for 16 writers, each pooling a few and writing objects in parallel
    # (waitress stops accepting past its limit, default 100); a few threads, since moto runs
    # under Python's lock anyway.
    waitress.serve(app, host=args.host, port=args.port, threads=8, connection_limit=1000, backlog=1024, ident="moto")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
