#!/usr/bin/env python3
"""Creates a blob container on Azurite: `az_mkcontainer.py ENDPOINT CONTAINER`.

object_store has no create-container call, and Azurite wants a SharedKey-signed request. The
account and key are Azurite's well-known development ones (public, documented by Microsoft),
not a secret. Standard library only. Exits 0 when the container exists afterwards.
"""

import base64
import email.utils
import hashlib
import hmac
import sys
import urllib.error
import urllib.request

ACCOUNT = "devstoreaccount1"
KEY = base64.b64decode(
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
VERSION = "2021-08-06"


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: az_mkcontainer.py ENDPOINT CONTAINER", file=sys.stderr)
        return 2
    endpoint, container = sys.argv[1].rstrip("/"), sys.argv[2]
    date = email.utils.formatdate(usegmt=True)
    # SharedKey string-to-sign: verb, 11 standard headers (Content-Type set explicitly: urllib
    # would otherwise add one that is not signed), canonical x-ms headers, canonical resource.
    string_to_sign = "\n".join(
        ["PUT", "", "", "", "", "application/octet-stream", "", "", "", "", "", ""]
        + [f"x-ms-date:{date}\nx-ms-version:{VERSION}", f"/{ACCOUNT}/{ACCOUNT}/{container}\nrestype:container"]
    )
    signature = base64.b64encode(hmac.new(KEY, string_to_sign.encode(), hashlib.sha256).digest()).decode()
    request = urllib.request.Request(
        f"{endpoint}/{ACCOUNT}/{container}?restype=container",
        method="PUT",
        data=b"",
        headers={
            "x-ms-date": date,
            "x-ms-version": VERSION,
            "Authorization": f"SharedKey {ACCOUNT}:{signature}",
            "Content-Length": "0",
            "Content-Type": "application/octet-stream",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return 0 if response.status == 201 else 1
    except urllib.error.HTTPError as e:
        if e.code == 409:  # ContainerAlreadyExists
            return 0
        print(f"az_mkcontainer: {e.code} {e.reason}", file=sys.stderr)
        return 1
    except (urllib.error.URLError, OSError) as e:
        print(f"az_mkcontainer: {endpoint} did not answer: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
