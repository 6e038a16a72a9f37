#!/usr/bin/env python3
"""Generates the corpus of memfs's sensitive-data detectors (`memfs_core::sensitive`).

- `notes/`: ordinary memory files, written the way Claude's memory files look (markdown,
  xml-ish facts, meeting notes, customer preferences, code in many languages, stack traces and
  logs, configs, reading lists, orders and parcels). They hold the look-alikes the detectors must
  not fire on (UUIDs, git SHAs, hashes, base64, public keys and certificates, `user@host` URLs,
  phone, order, tracking and ISBN numbers, timestamps, 16-digit ids) and no secret at all.
- `secrets/`: notes of the same kinds with fake but well-formed secrets planted in them, and
  `secrets/manifest.json`, which lists the detector ids each file must trigger (and nothing
  else may).

Every value is made up here from a seeded generator: no real key, token or card. Run once from
the repository root, and commit the output; running it again rewrites the same bytes:

    python3 tests/corpus/generate.py

The test that scans the corpus is `crates/memfs-core/tests/sensitive.rs`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import shutil
import string
import textwrap
from pathlib import Path

SEED = 20260601
NOTES = 220
SECRETS = 104
ROOT = Path(__file__).resolve().parent

rng = random.Random(SEED)

# --------------------------------------------------------------------------------------------
# Small random helpers


def pick(seq):
    return rng.choice(seq)


def some(seq, k_min, k_max):
    return rng.sample(seq, rng.randint(k_min, min(k_max, len(seq))))


def chars(alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


DIGITS = string.digits
HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
B64 = string.ascii_letters + string.digits + "+/"
B64URL = string.ascii_letters + string.digits + "-_"


def b64(n_bytes: int) -> str:
    return base64.b64encode(rng.randbytes(n_bytes)).decode()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def uuid4() -> str:
    h = "".join(rng.choice(HEX) for _ in range(32))
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{pick('89ab')}{h[17:20]}-{h[20:]}"


def sha1() -> str:
    return chars(HEX, 40)


def sha256() -> str:
    return chars(HEX, 64)


def date(year_min=2022, year_max=2025) -> str:
    return f"{rng.randint(year_min, year_max)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def time_of_day() -> str:
    return f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"


def timestamp() -> str:
    return f"{date()}T{time_of_day()}.{rng.randint(0, 999):03d}Z"


def ipv4(private=True) -> str:
    if private:
        return pick([f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                     f"192.168.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                     f"172.{rng.randint(16, 31)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"])
    return f"{rng.randint(11, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"


def version() -> str:
    return f"{rng.randint(0, 9)}.{rng.randint(0, 40)}.{rng.randint(0, 20)}"


def luhn_digit(partial: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(partial)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return str((10 - total % 10) % 10)


def luhn_ok(number: str) -> bool:
    return luhn_digit(number[:-1]) == number[-1]


def card(prefix: str, length: int) -> str:
    body = prefix + chars(DIGITS, length - len(prefix) - 1)
    return body + luhn_digit(body)


def grouped(number: str, sep=" ") -> str:
    if len(number) == 15:
        return sep.join([number[:4], number[4:10], number[10:]])
    return sep.join(number[i:i + 4] for i in range(0, len(number), 4))


# --------------------------------------------------------------------------------------------
# Pools of ordinary content

FIRST = ["Maya", "Jonas", "Priya", "Tomás", "Aiko", "Lena", "Omar", "Grace", "Mateo", "Sofia", "Kwame",
         "Ingrid", "Ravi", "Chloé", "Dmitri", "Hannah", "Yusuf", "Elena", "Noah", "Mei", "Lucas", "Fatima",
         "Jakob", "Amara", "Sven", "Isabel", "Hiroshi", "Nadia", "Felix", "Zoe"]
LAST = ["Okafor", "Schneider", "Raman", "García", "Tanaka", "Novak", "Haddad", "Lindqvist", "Rossi", "Kim",
        "Dubois", "Mensah", "Kowalski", "Patel", "Fischer", "Moreau", "Silva", "Nakamura", "Brennan", "Ivanova",
        "Hughes", "Bauer", "Costa", "Yilmaz", "Andersen"]
COMPANIES = ["Northwind Traders", "Acme Logistics", "Bluefin Analytics", "Harbor & Pine", "Lumen Health",
             "Cobalt Robotics", "Fernwood Books", "Quartz Retail", "Meridian Travel", "Tessellate Labs",
             "Otter Creek Dairy", "Brightline Energy", "Kestrel Insurance", "Juniper Schools"]
PROJECTS = ["atlas", "birch", "quill", "lighthouse", "saffron", "orbit", "tundra", "mosaic", "heron", "ember",
            "catalyst", "driftwood", "nimbus", "paperclip", "keystone"]
CITIES = ["Berlin", "Lisbon", "Osaka", "Toronto", "Nairobi", "Melbourne", "Austin", "Oslo", "Bogotá", "Lyon",
          "Pune", "Kraków", "Dublin", "Seoul"]
LANGS = ["Python", "Rust", "TypeScript", "Go", "Kotlin", "Java", "Ruby", "C#", "Elixir", "Swift"]
TOOLS = ["Postgres 16", "Redis", "Kafka", "Terraform", "Kubernetes", "GitHub Actions", "Sentry", "Grafana",
         "Datadog", "nginx", "RabbitMQ", "ClickHouse", "Elasticsearch", "SQLite", "DuckDB"]
TOPICS = ["rate limiting", "the billing migration", "search relevance", "onboarding emails", "the mobile release",
          "flaky integration tests", "the data retention policy", "cold-start latency", "accessibility fixes",
          "the pricing page", "CSV exports", "webhook retries", "the quarterly roadmap", "SSO rollout"]
DOMAINS = ["example.com", "example.org", "internal.example.net", "corp.example", "staging.example.io"]


def person() -> str:
    return f"{pick(FIRST)} {pick(LAST)}"


def email(name: str | None = None) -> str:
    name = name or person()
    first, last = name.split(" ", 1)
    return f"{first.lower()}.{last.lower().replace(' ', '')}@{pick(DOMAINS)}".encode("ascii", "ignore").decode()


def phone() -> str:
    return pick([
        f"+1 ({rng.randint(201, 989)}) 555-{rng.randint(100, 199):04d}",
        f"+44 20 7946 {rng.randint(0, 999):04d}",
        f"+49 30 {rng.randint(1000000, 9999999)}",
        f"+49 151 {rng.randint(10000000, 99999999)}",
        f"+33 1 {rng.randint(10, 99)} {rng.randint(10, 99)} {rng.randint(10, 99)} {rng.randint(10, 99)}",
        f"+81 3-{rng.randint(1000, 9999)}-{rng.randint(1000, 9999)}",
        f"(555) {rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
        f"+61 2 {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}",
        f"+353 1 {rng.randint(100, 999)} {rng.randint(1000, 9999)}",
        f"0{rng.randint(20, 99)} {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}",
    ])


def order_number() -> str:
    return pick([
        f"{rng.randint(100, 999)}-{rng.randint(1000000, 9999999)}-{rng.randint(1000000, 9999999)}",
        f"#{rng.randint(1000, 99999)}",
        f"ORD-{rng.randint(2021, 2025)}-{rng.randint(0, 999999):06d}",
        f"W{rng.randint(100000000, 999999999)}",
        f"{rng.randint(10, 99)}-{rng.randint(10000, 99999)}-{rng.randint(10000, 99999)}",
        f"SO{rng.randint(10000000, 99999999)}",
    ])


def tracking_number() -> str:
    usps = "9400" + chars(DIGITS, 18)
    return pick([
        "1Z" + chars(UPPER_ALNUM, 6) + chars(DIGITS, 10),
        " ".join(usps[i:i + 4] for i in range(0, 22, 4)),
        f"{rng.randint(1000, 9999)} {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}",
        chars(DIGITS, 10),
        "JD" + chars(DIGITS, 18),
        "LX" + chars(DIGITS, 9) + "DE",
    ])


def isbn13() -> str:
    body = pick(["978", "979"]) + chars(DIGITS, 9)
    total = sum(int(d) * (1 if i % 2 == 0 else 3) for i, d in enumerate(body))
    check = str((10 - total % 10) % 10)
    return body + check


def isbn13_hyphenated() -> str:
    n = isbn13()
    return f"{n[:3]}-{n[3]}-{n[4:8]}-{n[8:12]}-{n[12]}"


BOOKS = [("Designing Data-Intensive Applications", "Martin Kleppmann"), ("The Rust Programming Language", "Steve Klabnik"),
         ("Crafting Interpreters", "Robert Nystrom"), ("A Philosophy of Software Design", "John Ousterhout"),
         ("Thinking, Fast and Slow", "Daniel Kahneman"), ("The Left Hand of Darkness", "Ursula K. Le Guin"),
         ("Project Hail Mary", "Andy Weir"), ("Database Internals", "Alex Petrov"), ("Braiding Sweetgrass", "Robin Wall Kimmerer"),
         ("The Pragmatic Programmer", "Dave Thomas"), ("Klara and the Sun", "Kazuo Ishiguro"), ("Working in Public", "Nadia Eghbal")]


def luhn_bad_id16() -> str:
    while True:
        n = chars("123456789", 1) + chars(DIGITS, 15)
        if not luhn_ok(n):
            return n


def luhn_good_unbranded16() -> str:
    # Luhn-valid, but starting with 1, 7, 8 (not 81) or 9: no card brand uses those prefixes.
    first = pick(["1", "7", "9", "80", "88"])
    return card(first, 16)


def public_pem(label: str, n_bytes: int) -> str:
    body = "\n".join(textwrap.wrap(b64(n_bytes), 64))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


def ssh_public_key() -> str:
    kind = pick(["ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256"])
    n = {"ssh-ed25519": 51, "ssh-rsa": 279, "ecdsa-sha2-nistp256": 104}[kind]
    return f"{kind} AAAA{b64(n)[4:]} {pick(FIRST).lower()}@{pick(PROJECTS)}-laptop"


# --------------------------------------------------------------------------------------------
# Ordinary notes: each function returns (file stem, text)


def note_preferences():
    name = person()
    likes = some([
        f"Prefers {pick(LANGS)} examples, with type hints and short functions.",
        "Wants answers in bullet points first, details after.",
        "Dislikes emojis in commit messages.",
        f"Works in {pick(CITIES)}; mornings are for deep work, meetings after 14:00.",
        "Uses British spelling in documents (colour, organise).",
        "Likes tables for comparisons, no more than five columns.",
        "Asked me to always mention the trade-offs before recommending a tool.",
        f"Editor: {pick(['Neovim', 'VS Code', 'Helix', 'JetBrains IDEA', 'Emacs'])}, {pick(['tabs', '4 spaces', '2 spaces'])}.",
        "Vegetarian; allergic to peanuts (relevant for team lunch bookings).",
        f"Prefers metric units and 24-hour time; dates as {date()} style (ISO 8601).",
        "Do not schedule anything on Fridays after 15:00.",
        f"Favourite reading this year: {pick(BOOKS)[0]}.",
        "Reviews PRs in the morning; wants small PRs (< 400 lines).",
        f"Primary phone {phone()}, prefers Signal for anything urgent.",
    ], 4, 8)
    body = "\n".join(f"- {x}" for x in likes)
    return "user-preferences", f"# User preferences: {name}\n\nLast updated {date()}.\n\n## Style\n{body}\n\n## Contact\n- Email: {email(name)}\n- Phone: {phone()}\n"


def note_project():
    proj = pick(PROJECTS)
    org = pick(["acme", "northwind", "bluefin-labs", "tessellate", "kestrel-ins"])
    stack = some(TOOLS, 3, 5)
    lang = pick(LANGS)
    return f"project-{proj}", f"""# Project {proj.title()}

Repository: https://github.com/{org}/{proj} (clone with `git clone git@github.com:{org}/{proj}.git`)
Main language: {lang}; CI on GitHub Actions; current release v{version()} (tagged {date()}).

## Stack
{chr(10).join(f"- {t}" for t in stack)}

## Decisions
- {date()}: moved the job queue from cron to {pick(['Kafka', 'RabbitMQ', 'Redis streams', 'SQS'])}; retries are idempotent by job id.
- {date()}: {pick(['adopted', 'rejected', 'postponed'])} {pick(['GraphQL', 'gRPC', 'server-side rendering', 'a monorepo', 'feature flags'])} after a spike by {person()}.
- Staging lives at https://{proj}.staging.example.io, production at https://{proj}.example.com.

## Open questions
- How should we version the public API once v{rng.randint(2, 5)} ships?
- {pick(['Who owns', 'Do we still need', 'Can we drop'])} the legacy {pick(['CSV importer', 'SOAP endpoint', 'admin panel', 'nightly report'])}?
"""


def note_meeting():
    topic = pick(TOPICS)
    people = [person() for _ in range(rng.randint(3, 6))]
    actions = [f"- [ ] {p.split()[0]}: {pick(['draft', 'review', 'benchmark', 'write up', 'ask legal about', 'prototype'])} {pick(TOPICS)} by {date(2025, 2025)}"
               for p in some(people, 2, 4)]
    return f"meeting-{date().replace('-', '')}", f"""## Meeting notes: {topic}

Date: {date()} {rng.randint(9, 17)}:{pick(['00', '15', '30', '45'])} ({pick(['CET', 'UTC', 'PST', 'JST'])}), room {pick(['Aurora', 'B2.14', 'Zoom', 'Harbor'])}
Attendees: {', '.join(people)}

### Discussion
- {people[0].split()[0]} summarised where we are on {topic}: {rng.randint(2, 9)} of {rng.randint(10, 14)} tasks done.
- Numbers from last sprint: p95 latency {rng.randint(80, 400)} ms, error rate {rng.uniform(0.01, 2):.2f}%, {rng.randint(1000, 90000):,} requests/min at peak.
- Concern about the deadline on {date(2025, 2025)}; agreed to cut scope rather than move the date.
- Ticket {pick(['PROJ', 'OPS', 'WEB', 'DATA'])}-{rng.randint(100, 9999)} stays open until the fix is verified in staging.

### Action items
{chr(10).join(actions)}
"""


def note_customer_xml():
    cust = pick(COMPANIES)
    contact = person()
    return f"customer-{cust.split()[0].lower()}", f"""<customer id="{uuid4()}">
  <name>{cust}</name>
  <contact name="{contact}" email="{email(contact)}" phone="{phone()}"/>
  <preferences>
    <invoice_format>{pick(['PDF', 'CSV', 'XLSX'])}</invoice_format>
    <language>{pick(['en-GB', 'de-DE', 'fr-FR', 'ja-JP', 'pt-BR'])}</language>
    <notes>{pick(['Prefers email over calls.', 'Always cc the finance team.', 'Sensitive about delivery dates.', 'Wants quarterly business reviews.'])}</notes>
  </preferences>
  <orders>
    <order number="{order_number()}" date="{date()}" total="{rng.randint(100, 9000)}.{rng.randint(0, 99):02d} EUR"/>
    <order number="{order_number()}" date="{date()}" total="{rng.randint(100, 9000)}.{rng.randint(0, 99):02d} EUR" tracking="{tracking_number()}"/>
  </orders>
  <account_manager>{person()}</account_manager>
</customer>
"""


PY_TRACE = """Traceback (most recent call last):
  File "/srv/{proj}/app/workers/{mod}.py", line {l1}, in run
    result = self.handle(job)
  File "/srv/{proj}/app/workers/{mod}.py", line {l2}, in handle
    return self.client.post(url, json=payload, timeout=10)
  File "/usr/lib/python3.11/site-packages/httpx/_client.py", line 1146, in post
    return self.request(
httpx.ReadTimeout: timed out"""

JAVA_TRACE = """java.lang.NullPointerException: Cannot invoke "com.{org}.{proj}.Order.getTotal()" because "order" is null
\tat com.{org}.{proj}.billing.InvoiceService.render(InvoiceService.java:{l1})
\tat com.{org}.{proj}.billing.InvoiceController.get(InvoiceController.java:{l2})
\tat org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:883)
\tat java.base/java.lang.Thread.run(Thread.java:1583)"""

RUST_TRACE = """thread 'tokio-runtime-worker' panicked at src/{mod}.rs:{l1}:17:
called `Result::unwrap()` on an `Err` value: Os {{ code: 111, kind: ConnectionRefused, message: "Connection refused" }}
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"""

NODE_TRACE = """TypeError: Cannot read properties of undefined (reading 'id')
    at handler (/app/src/routes/{mod}.ts:{l1}:23)
    at Layer.handle [as handle_request] (/app/node_modules/express/lib/router/layer.js:95:5)
    at next (/app/node_modules/express/lib/router/route.js:149:13)"""


def log_lines(n: int) -> str:
    lines = []
    for _ in range(n):
        kind = rng.randint(0, 4)
        ts = timestamp()
        if kind == 0:
            lines.append(f'{ts} INFO  request_id={uuid4()} method=GET path=/api/v1/orders/{rng.randint(1000, 99999)} status=200 dur_ms={rng.randint(3, 900)}')
        elif kind == 1:
            lines.append(f'{ipv4(False)} - - [{rng.randint(1, 28):02d}/{pick(["Mar", "Apr", "Oct"])}/2024:{time_of_day()} +0000] "GET /static/app.{chars(HEX, 8)}.js HTTP/1.1" 200 {rng.randint(1000, 90000)} "-" "Mozilla/5.0 (X11; Linux x86_64)"')
        elif kind == 2:
            lines.append(json.dumps({"ts": ts, "level": pick(["warn", "error", "info"]), "trace_id": chars(HEX, 32),
                                     "span_id": chars(HEX, 16), "msg": pick(["retrying upstream", "cache miss", "slow query", "job done"]),
                                     "attempt": rng.randint(1, 5)}))
        elif kind == 3:
            lines.append(f"{ts} WARN  worker-{rng.randint(1, 8)} job {uuid4()} took {rng.uniform(1, 30):.3f}s (threshold 5s), epoch_ms={rng.randint(1600000000000, 1760000000000)}")
        else:
            lines.append(f"{ts} DEBUG db pool size={rng.randint(5, 50)} idle={rng.randint(0, 5)} host={ipv4()}:{pick([5432, 6379, 3306, 9092])}")
    return "\n".join(lines)


def note_debugging():
    proj, mod = pick(PROJECTS), pick(["sync", "billing", "export", "notify", "ingest"])
    org = pick(["acme", "northwind", "bluefin"])
    trace = pick([PY_TRACE, JAVA_TRACE, RUST_TRACE, NODE_TRACE]).format(
        proj=proj, mod=mod, org=org, l1=rng.randint(10, 400), l2=rng.randint(10, 400))
    return f"debug-{mod}-{pick(['timeout', 'crash', 'npe', 'panic', 'regression'])}", f"""# Debugging: {mod} failures on {proj}

First seen {timestamp()} after deploy of commit {sha1()[:12]} (v{version()}).
Sentry issue {chars(HEX, 32)}; {rng.randint(2, 400)} events, {rng.randint(1, 60)} users affected.

```
{trace}
```

Relevant log excerpt:

```
{log_lines(rng.randint(4, 9))}
```

Hypothesis: {pick(['the upstream times out under load', 'a race between two workers', 'a missing null check after the schema change', 'connection pool exhaustion'])}.
Next step: {pick(['reproduce locally with the staging dump', 'add a span around the call', 'bisect between the last two releases', 'raise the pool size and watch the metrics'])}.
"""


CODE_SNIPPETS = {
    "python": lambda: f'''```python
import hashlib
from dataclasses import dataclass
from datetime import datetime, timezone

@dataclass(frozen=True)
class Receipt:
    order_id: str
    total_cents: int
    created: datetime

def fingerprint(receipt: Receipt) -> str:
    """Stable id for de-duplication ({pick(TOPICS)})."""
    raw = f"{{receipt.order_id}}:{{receipt.total_cents}}:{{receipt.created.isoformat()}}"
    return hashlib.sha256(raw.encode()).hexdigest()[:{rng.randint(12, 32)}]

EXAMPLE = Receipt("{order_number()}", {rng.randint(100, 99999)}, datetime({date().replace("-", ", ").replace(", 0", ", ")}, tzinfo=timezone.utc))
```''',
    "rust": lambda: f'''```rust
use std::time::{{Duration, Instant}};

/// Retries `op` with exponential backoff, capped at {rng.randint(3, 8)} attempts.
pub fn retry<T, E>(mut op: impl FnMut() -> Result<T, E>) -> Result<T, E> {{
    let mut delay = Duration::from_millis({rng.randint(50, 500)});
    let start = Instant::now();
    loop {{
        match op() {{
            Ok(v) => return Ok(v),
            Err(e) if start.elapsed() > Duration::from_secs({rng.randint(5, 60)}) => return Err(e),
            Err(_) => {{ std::thread::sleep(delay); delay *= 2; }}
        }}
    }}
}}
```''',
    "go": lambda: f'''```go
package {pick(PROJECTS)}

import (
\t"context"
\t"fmt"
\t"time"
)

// Fetch loads an order by id; ids look like {order_number()}.
func Fetch(ctx context.Context, db *sql.DB, id string) (*Order, error) {{
\tctx, cancel := context.WithTimeout(ctx, {rng.randint(1, 9)}*time.Second)
\tdefer cancel()
\trow := db.QueryRowContext(ctx, "SELECT id, total_cents, created_at FROM orders WHERE id = $1", id)
\tvar o Order
\tif err := row.Scan(&o.ID, &o.TotalCents, &o.CreatedAt); err != nil {{
\t\treturn nil, fmt.Errorf("fetch order %s: %w", id, err)
\t}}
\treturn &o, nil
}}
```''',
    "typescript": lambda: f'''```ts
const API = "https://api.{pick(DOMAINS)}/v{rng.randint(1, 3)}";

export async function listInvoices(customerId: string, token: string): Promise<Invoice[]> {{
  const res = await fetch(`${{API}}/customers/${{customerId}}/invoices?limit={rng.randint(10, 100)}`, {{
    headers: {{ Authorization: `Bearer ${{token}}`, "X-Request-Id": crypto.randomUUID() }},
  }});
  if (!res.ok) throw new Error(`invoices: HTTP ${{res.status}}`);
  return (await res.json()).data;
}}
// sample customer id: cus_{chars(ALNUM, 14)}
```''',
    "java": lambda: f'''```java
public final class Money {{
    private final long cents;
    private final Currency currency;

    public static Money parse(String s) {{
        // "1 234,56 EUR" or "1,234.56 USD"; see ticket WEB-{rng.randint(100, 9999)}
        String[] parts = s.trim().split("\\\\s+");
        return new Money(Math.round(Double.parseDouble(parts[0].replace(",", "")) * 100), Currency.getInstance(parts[1]));
    }}
    private static final long serialVersionUID = {rng.randint(10**17, 10**18)}L;
}}
```''',
    "sql": lambda: f'''```sql
-- Monthly revenue per plan, excluding refunds (asked by {person()} on {date()})
SELECT date_trunc('month', i.created_at) AS month,
       p.name AS plan,
       sum(i.total_cents) / 100.0 AS revenue
FROM invoices i
JOIN plans p ON p.id = i.plan_id
WHERE i.status = 'paid'
  AND i.created_at >= '{date()}'
  AND i.customer_id <> '{uuid4()}'
GROUP BY 1, 2
ORDER BY 1 DESC, 3 DESC
LIMIT {rng.randint(10, 500)};
```''',
    "bash": lambda: f'''```bash
#!/usr/bin/env bash
set -euo pipefail
# Nightly backup of the {pick(PROJECTS)} database to object storage.
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
pg_dump --format=custom --no-owner "$DATABASE_URL" > "/var/backups/db-$STAMP.dump"
sha256sum "/var/backups/db-$STAMP.dump" >> /var/backups/SHA256SUMS
aws s3 cp "/var/backups/db-$STAMP.dump" "s3://{pick(PROJECTS)}-backups/db/$STAMP.dump" --storage-class STANDARD_IA
find /var/backups -name 'db-*.dump' -mtime +{rng.randint(3, 30)} -delete
```''',
    "yaml": lambda: f'''```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {pick(PROJECTS)}-api
  labels: {{app: {pick(PROJECTS)}, tier: backend}}
spec:
  replicas: {rng.randint(2, 12)}
  template:
    spec:
      containers:
        - name: api
          image: ghcr.io/{pick(["acme", "northwind"])}/api@sha256:{sha256()}
          ports: [{{containerPort: {pick([8080, 3000, 8000])}}}]
          env:
            - name: DATABASE_URL
              valueFrom: {{secretKeyRef: {{name: api-db, key: url}}}}
            - name: LOG_LEVEL
              value: info
          resources: {{limits: {{cpu: "{rng.randint(1, 4)}", memory: {rng.randint(256, 2048)}Mi}}}}
```''',
    "toml": lambda: f'''```toml
[package]
name = "{pick(PROJECTS)}"
version = "{version()}"
edition = "2021"

[dependencies]
serde = {{ version = "1", features = ["derive"] }}
tokio = {{ version = "1.{rng.randint(20, 45)}", features = ["full"] }}
reqwest = {{ version = "0.12", default-features = false, features = ["rustls-tls"] }}
```''',
    "dockerfile": lambda: f'''```dockerfile
FROM python:3.{rng.randint(9, 13)}-slim@sha256:{sha256()}
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
ENV PORT={pick([8000, 8080, 5000])} WORKERS={rng.randint(2, 8)}
HEALTHCHECK CMD curl -fsS http://localhost:$PORT/healthz || exit 1
CMD ["gunicorn", "app:create_app()", "--bind", "0.0.0.0:$PORT"]
```''',
    "kotlin": lambda: f'''```kotlin
data class Shipment(val id: String, val carrier: String, val tracking: String)

fun Shipment.trackingUrl(): String = when (carrier) {{
    "UPS" -> "https://www.ups.com/track?tracknum=$tracking"
    "DHL" -> "https://www.dhl.com/en/express/tracking.html?AWB=$tracking"
    else -> "https://parcels.{pick(DOMAINS)}/$tracking"
}}
// e.g. Shipment("{uuid4()}", "UPS", "{tracking_number()}")
```''',
    "ruby": lambda: f'''```ruby
class WeeklyDigest
  SEND_AT = "{rng.randint(6, 10)}:00"

  def self.recipients
    User.where(digest: true).where("last_seen_at > ?", {rng.randint(7, 60)}.days.ago).pluck(:email)
  end

  def deliver(user)
    DigestMailer.with(user: user, since: {rng.randint(1, 14)}.days.ago).weekly.deliver_later(queue: :mailers)
  end
end
```''',
    "c": lambda: f'''```c
#include <stdint.h>

/* CRC-32 (IEEE 802.3), table-less; used by the firmware updater v{version()}. */
uint32_t crc32(const uint8_t *data, size_t len) {{
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++) {{
        crc ^= data[i];
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0xEDB88320u & -(crc & 1));
    }}
    return ~crc;
}}
#define FIRMWARE_MAGIC 0x{chars(HEX.upper(), 8)}u
```''',
    "js-base64": lambda: f'''```js
// Inline 1x1 tracking-free placeholder and a small fixture (base64).
export const PLACEHOLDER = "data:image/png;base64,{b64(rng.randint(60, 140))}";
export const FIXTURE = atob("{b64(rng.randint(30, 90))}");
export const CHECKSUM = "sha256-{b64(32)}";
```''',
    "csharp": lambda: f'''```csharp
public record Booking(Guid Id, string Guest, DateOnly CheckIn, int Nights)
{{
    public decimal Total(decimal nightly) => Nights * nightly * (1 + {rng.randint(5, 25)}m / 100);
}}
// new Booking(Guid.Parse("{uuid4()}"), "{person()}", DateOnly.Parse("{date()}"), {rng.randint(1, 14)})
```''',
}


def note_code():
    kinds = some(list(CODE_SNIPPETS), 1, 3)
    title = pick(["Snippets worth keeping", "Code I wrote with the user", "Patterns we agreed on", "Reference snippets"])
    parts = [f"# {title}\n"]
    for k in kinds:
        parts.append(f"## {k} ({pick(TOPICS)})\n\n{CODE_SNIPPETS[k]()}\n")
    return f"snippets-{kinds[0]}", "\n".join(parts)


def note_git():
    branch = pick(["main", "release/" + version(), "feat/" + pick(PROJECTS), "fix/" + pick(["login", "export", "timezone"])])
    lines = [f"{sha1()[:7]} {pick(['Fix', 'Add', 'Refactor', 'Bump', 'Revert'])} {pick(TOPICS)} (#{rng.randint(100, 4000)})" for _ in range(rng.randint(4, 9))]
    return "git-notes", f"""# Git notes for {pick(PROJECTS)}

Current branch `{branch}`, HEAD {sha1()}; merge base with main {sha1()}.

```
$ git log --oneline -{len(lines)}
{chr(10).join(lines)}
```

- Tag v{version()} points at {sha1()[:10]}; v{version()} was yanked (bad migration).
- Remote: `origin  git@github.com:{pick(['acme', 'northwind'])}/{pick(PROJECTS)}.git (fetch)`
- Mirror over HTTPS for CI: https://ci-bot@git.{pick(DOMAINS)}/{pick(PROJECTS)}.git
- `git bisect` narrowed the regression to {sha1()[:12]}..{sha1()[:12]}.
"""


def note_reading():
    books = rng.sample(BOOKS, rng.randint(3, 6))
    rows = []
    for title, author in books:
        isbn = pick([isbn13(), isbn13_hyphenated(), "ISBN " + isbn13()])
        rows.append(f"| {title} | {author} | {isbn} | {pick(['reading', 'done', 'queued', 'abandoned'])} |")
    return "reading-list", f"""# Reading list

| Title | Author | ISBN | Status |
|---|---|---|---|
{chr(10).join(rows)}

Notes: borrowed from the {pick(CITIES)} library on {date()}, due back {date(2025, 2025)} (card no. is on the physical card, not here).
Goodreads shelf: https://www.goodreads.com/review/list/{rng.randint(10000000, 99999999)}
"""


def note_shopping():
    items = [f"- {pick(['Standing desk', 'USB-C hub', 'Noise-cancelling headphones', 'Monitor arm', 'Ergonomic keyboard', 'Webcam', 'Router'])}: order {order_number()}, {rng.randint(20, 900)}.{rng.randint(0, 99):02d} {pick(['EUR', 'USD', 'GBP'])}, tracking {tracking_number()}, ordered {date()}"
             for _ in range(rng.randint(2, 5))]
    return "orders-and-parcels", f"""# Orders and parcels

{chr(10).join(items)}

Return window ends {date(2025, 2025)}. Support hotline {phone()} (Mon–Fri 09:00–18:00).
Invoice numbers: INV-{rng.randint(2023, 2025)}-{rng.randint(1, 99999):05d}, INV-{rng.randint(2023, 2025)}-{rng.randint(1, 99999):05d}.
Paid with the company card ending in {rng.randint(1000, 9999)} (expires {rng.randint(1, 12):02d}/{rng.randint(26, 30)}).
"""


def note_contacts():
    rows = []
    for _ in range(rng.randint(3, 7)):
        p = person()
        rows.append(f"- **{p}** ({pick(['vendor', 'recruiter', 'landlord', 'accountant', 'CTO at ' + pick(COMPANIES), 'dentist', 'plumber'])}): {phone()}, {email(p)}")
    return "contacts", f"# Contacts\n\n{chr(10).join(rows)}\n\nOffice address: {rng.randint(1, 200)} {pick(['Harbour Street', 'Lindenallee', 'Rue de la Paix', 'King Street'])}, {pick(CITIES)}. Door code changes monthly; ask reception.\n"


def note_infra():
    hosts = [f"| {pick(PROJECTS)}-{pick(['db', 'api', 'worker', 'cache'])}-{rng.randint(1, 9)} | {ipv4()} | {pick(['eu-west-1', 'us-east-2', 'ap-northeast-1'])} | {pick(['t3.large', 'm6i.xlarge', 'c7g.2xlarge'])} |"
             for _ in range(rng.randint(3, 6))]
    user = pick(['deploy', 'ubuntu', 'ops', 'admin'])
    return "infrastructure", f"""# Infrastructure notes

| Host | IP | Region | Size |
|---|---|---|---|
{chr(10).join(hosts)}

- SSH: `ssh {user}@{ipv4()}` via bastion `ssh -J {user}@bastion.{pick(DOMAINS)}:2222`; keys live in the team vault.
- VPC CIDR {ipv4()}/16; public egress through NAT {ipv4(False)}.
- Postgres: `postgres://{pick(PROJECTS)}_ro@db.{pick(DOMAINS)}:5432/{pick(PROJECTS)}?sslmode=require` (password from the vault).
- Redis: redis://cache.{pick(DOMAINS)}:6379/0; RabbitMQ management at http://mq.{pick(DOMAINS)}:15672/
- FTP drop for the legacy partner: ftp://partner@files.{pick(DOMAINS)}/incoming (user only; they send the password by phone).
- Escalation: on-call phone {phone()}; mailto:oncall@{pick(DOMAINS)}
- AWS account alias `{pick(PROJECTS)}-prod` (account id {rng.randint(10**11, 10**12 - 1)}), IAM role arn:aws:iam::{rng.randint(10**11, 10**12 - 1)}:role/{pick(['deployer', 'reader', 'ci'])}.
"""


def note_api():
    base = f"https://api.{pick(DOMAINS)}"
    return "api-notes", f"""# API notes ({pick(COMPANIES)})

Base URL {base}/v{rng.randint(1, 3)}; auth is a bearer token from the environment (`$API_TOKEN`), never pasted here.

```bash
curl -sS "{base}/v2/orders?since={date()}&limit=50" \\
  -H "Authorization: Bearer $API_TOKEN" \\
  -H "Idempotency-Key: {uuid4()}"
```

Response shape:

```json
{json.dumps({"id": uuid4(), "status": pick(["paid", "pending"]), "total": {"amount": rng.randint(100, 99999), "currency": "EUR"},
             "created_at": timestamp(), "customer": {"id": "cus_" + chars(ALNUM, 14), "email": email()},
             "links": {"self": f"{base}/v2/orders/{rng.randint(10000, 99999)}"}}, indent=2)}
```

- Rate limit {rng.randint(60, 1200)} req/min; `Retry-After` in seconds.
- Webhook signatures: HMAC-SHA256 of the raw body, header `X-Signature`, secret in the vault (rotated {date()}).
- Pagination cursor is opaque base64, e.g. `{b64(rng.randint(12, 30))}`.
"""


def note_checksums():
    files = [f"{sha256()}  {pick(PROJECTS)}-{version()}-{pick(['linux-x86_64', 'darwin-arm64', 'windows-x64'])}.{pick(['tar.gz', 'zip'])}" for _ in range(rng.randint(2, 5))]
    return "release-checksums", f"""# Release artifacts

```
{chr(10).join(files)}
```

MD5 of the old installer: {chars(HEX, 32)}
Git tree hash: {sha1()}
Container digest: sha256:{sha256()}
BLAKE3 of the dataset snapshot ({date()}): {sha256()}
Signing key fingerprint: {' '.join(chars(HEX.upper(), 4) for _ in range(10))}
Subresource integrity: sha384-{b64(48)}
"""


def note_security_doc():
    pub = public_pem(pick(["PUBLIC KEY", "RSA PUBLIC KEY"]), pick([91, 294]))
    cert = public_pem("CERTIFICATE", rng.randint(600, 900))
    return "security-notes", f"""# How we handle keys ({pick(PROJECTS)})

- Private keys never go into notes or the repo; the deploy key lives in the vault under `ci/deploy`.
- A private key file starts with `-----BEGIN OPENSSH PRIVATE KEY-----` or `-----BEGIN RSA PRIVATE KEY-----`; if you see one in a ticket, rotate it.
- Access keys look like `AKIA` + 16 characters and secrets like `aws_secret_access_key = <40 chars>`; GitHub tokens start with `ghp_`, Slack bot tokens with `xoxb-`, Stripe secret keys with `sk_live_` (publishable keys `pk_live_…` are fine to share).
- Example env file for docs: `OPENAI_API_KEY=sk-...`, `ANTHROPIC_API_KEY=sk-ant-...`, `AWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX`.

The service's public key (safe to publish):

```
{pub}
```

Its certificate, valid until {date(2026, 2027)}:

```
{cert}
```

Team SSH public keys:

```
{ssh_public_key()}
{ssh_public_key()}
```
"""


def note_env_config():
    proj = pick(PROJECTS)
    return "env-and-config", f"""# Local setup for {proj}

`.env.example` (copy to `.env`, fill secrets from the vault):

```ini
APP_ENV=development
PORT={pick([3000, 8000, 8080])}
DATABASE_URL=postgres://{proj}@localhost:5432/{proj}_dev
DATABASE_URL_WITH_PASSWORD=postgres://{proj}:${{DB_PASSWORD}}@localhost:5432/{proj}_dev
REDIS_URL=redis://localhost:6379/0
AWS_REGION={pick(['eu-west-1', 'us-east-1', 'eu-central-1'])}
AWS_ACCESS_KEY_ID=
AWS_SECRET_ACCESS_KEY=${{AWS_SECRET_ACCESS_KEY}}
STRIPE_PUBLISHABLE_KEY=pk_test_{chars(ALNUM, 24)}
SENTRY_DSN_PUBLIC_KEY_ID={chars(HEX, 32)}
FEATURE_FLAGS=new_checkout,dark_mode
```

nginx site:

```nginx
server {{
    listen 443 ssl http2;
    server_name {proj}.example.com;
    ssl_certificate     /etc/letsencrypt/live/{proj}.example.com/fullchain.pem;
    ssl_certificate_key /etc/letsencrypt/live/{proj}.example.com/privkey.pem;
    location / {{ proxy_pass http://127.0.0.1:{pick([3000, 8000, 8080])}; proxy_set_header X-Request-Id $request_id; }}
}}
```

Connection string template from the docs: `mongodb://<username>:<password>@cluster0.{chars('abcdef0123456789', 5)}.mongodb.net/?retryWrites=true`
Also seen in the README: `https://user:****@proxy.{pick(DOMAINS)}:3128`, `amqp://user:password@localhost:5672/`.
"""


def note_metrics():
    rows = [f"| {date()} | {rng.randint(1000, 999999):,} | {rng.uniform(10, 900):.1f} | {rng.uniform(0, 3):.3f} | {luhn_bad_id16() if rng.random() < 0.5 else luhn_good_unbranded16()} |"
            for _ in range(rng.randint(4, 8))]
    return "metrics", f"""# Weekly metrics

| Week | Requests | p95 ms | Error % | Batch id |
|---|---|---|---|---|
{chr(10).join(rows)}

Snowflake ids of the two incident threads: {rng.randint(10**17, 18 * 10**17)} and {rng.randint(10**17, 18 * 10**17)}.
Epoch (ms) of the cut-over: {rng.randint(1600000000000, 1760000000000)}; nanosecond clock at start: {rng.randint(1600000000000000000, 1760000000000000000)}.
Pi to 20 places for the physics demo: 3.14159265358979323846. Avogadro: 6.02214076e23.
Big batch totals: 1,234,567,890 rows; 98 765 432 bytes; 0.000123456789 error budget.
"""


def note_support_ticket():
    cust = person()
    return f"ticket-{rng.randint(10000, 99999)}", f"""# Support ticket {pick(['ZD', 'SUP', 'HELP'])}-{rng.randint(10000, 99999)}

Customer: {cust} ({email(cust)}, {phone()}), account {uuid4()}.
Opened {timestamp()}, priority {pick(['P1', 'P2', 'P3'])}.

> Hi, my order {order_number()} arrived damaged. Tracking {tracking_number()}. I paid with a Visa ending in {rng.randint(1000, 9999)}; the charge reference is {chars(UPPER_ALNUM, 12)}. Can you refund to the same card?

- Refund issued {date(2025, 2025)}: {rng.randint(10, 300)}.{rng.randint(0, 99):02d} EUR, refund id re_{chars(ALNUM, 24)}.
- Replacement shipped with {pick(['UPS', 'DHL', 'FedEx', 'USPS'])}, tracking {tracking_number()}.
- Customer prefers callbacks between 10:00 and 12:00 {pick(['CET', 'EST', 'GMT'])}.
- Bank transfer alternative offered: IBAN DE89 3704 0044 0532 0130 00 (our public test IBAN from the docs, not the customer's).
"""


def note_changelog():
    entries = []
    for _ in range(rng.randint(3, 6)):
        entries.append(f"## v{version()} ({date()})\n" + "\n".join(
            f"- {pick(['Fixed', 'Added', 'Changed', 'Removed'])} {pick(TOPICS)} (#{rng.randint(100, 5000)}, {sha1()[:7]})" for _ in range(rng.randint(2, 5))))
    return "changelog-summary", "# Changelog highlights\n\n" + "\n\n".join(entries) + "\n"


def note_xml_facts():
    facts = some([
        f"<fact confidence=\"high\">The user's team ships on {pick(['Tuesdays', 'Thursdays', 'every other Monday'])}.</fact>",
        f"<fact confidence=\"medium\">They migrated from {pick(TOOLS)} to {pick(TOOLS)} in {date()[:7]}.</fact>",
        f"<fact>Preferred package manager: {pick(['pnpm', 'uv', 'cargo', 'poetry', 'npm'])}.</fact>",
        f"<fact>Their staging database snapshot id is snap-{chars(HEX, 17)}.</fact>",
        f"<fact>On-call rotation handled in PagerDuty schedule P{chars(UPPER_ALNUM, 6)}.</fact>",
        f"<fact>Timezone {pick(['Europe/Berlin', 'America/Toronto', 'Asia/Tokyo', 'Africa/Nairobi'])}; availability {rng.randint(8, 10)}:00–{rng.randint(16, 19)}:00.</fact>",
        f"<fact>Uses conventional commits; scopes: {', '.join(some(PROJECTS, 2, 4))}.</fact>",
        f"<fact>Build cache key: {chars(HEX, 40)}.</fact>",
    ], 3, 6)
    return "memory-facts", f"""<memory updated="{timestamp()}">
  <about>{person()}, {pick(['staff engineer', 'product manager', 'data scientist', 'founder', 'SRE'])} at {pick(COMPANIES)}</about>
  {chr(10).join('  ' + f if i else f for i, f in enumerate(facts))}
  <source session="{uuid4()}"/>
</memory>
"""


def note_travel():
    return "travel", f"""# Trip to {pick(CITIES)}

- Flight {pick(['LH', 'BA', 'AF', 'KL', 'NH', 'AC'])}{rng.randint(100, 9999)} on {date(2025, 2025)}, departs {rng.randint(6, 22)}:{pick(['05', '20', '35', '50'])}, seat {rng.randint(1, 40)}{pick('ABCDEF')}; booking reference {chars(string.ascii_uppercase, 6)}.
- E-ticket number {rng.randint(100, 999)}-{rng.randint(1000000000, 9999999999)}.
- Hotel confirmation {rng.randint(10**8, 10**9)}; check-in after 15:00; +{rng.randint(1, 99)} {rng.randint(100, 999)} {rng.randint(1000, 9999)} for the front desk.
- Rail pass {chars(UPPER_ALNUM, 10)} valid {date(2025, 2025)} to {date(2025, 2025)}.
- Frequent flyer number on file with the airline (not stored here).
- Budget: {rng.randint(800, 3000)} EUR; per diem {rng.randint(40, 90)} EUR.
"""


def note_learning():
    subject = pick(["Raft leader election", "B-tree page splits", "TCP congestion control", "CRDT counters",
                    "Bloom filter sizing", "Kalman filters", "consistent hashing", "the Luhn checksum"])
    return "learning-" + subject.split()[0].lower(), f"""# What I explained about {subject}

The user asked for an intuition first, then the details.

1. Start with the invariant; everything else follows from keeping it.
2. Worked example with small numbers: n = {rng.randint(3, 9)}, k = {rng.randint(2, 5)}, p = 0.0{rng.randint(1, 9)}.
3. The formula they wanted to keep: m = -n·ln(p) / (ln 2)² ≈ {rng.randint(5, 20)} bits per element.

Follow-up reading: {pick(BOOKS)[0]} ({isbn13_hyphenated()}), chapter {rng.randint(2, 12)}.
A checksum example they tried by hand: 7992739871{rng.randint(0, 9)} (11 digits; Luhn shows why one digit typo is always caught).
"""


def note_recipe():
    return "recipes", f"""# Recipes the user liked

## {pick(['Dal tadka', 'Shakshuka', 'Miso soup', 'Ratatouille', 'Pierogi'])}
- Serves {rng.randint(2, 6)}; {rng.randint(20, 90)} minutes; oven {rng.randint(160, 220)} °C.
- {rng.randint(100, 500)} g main ingredient, {rng.randint(1, 4)} tbsp oil, {rng.randint(1, 3)} tsp salt.
- Prefers it {pick(['spicy', 'mild', 'with extra garlic'])}; pairs with {pick(['rice', 'flatbread', 'sourdough'])}.

Shopping list saved {date()}; store loyalty number is on the app, not here.
"""


def note_postmortem():
    svc = pick(PROJECTS)
    start = timestamp()
    return f"postmortem-{svc}", f"""# Postmortem: {svc} outage on {start[:10]}

**Impact:** {rng.randint(5, 95)} minutes of {pick(['failed checkouts', 'elevated 5xx', 'delayed emails', 'stale search results'])} for ~{rng.randint(2, 40)}% of users in {pick(['eu-west-1', 'us-east-1', 'all regions'])}.
**Severity:** SEV-{rng.randint(1, 3)}. Incident commander: {person()}. Status page incident {chars(HEX, 12)}.

## Timeline (UTC)
- {start[11:16]} deploy {sha1()[:8]} of {svc} v{version()} starts (pipeline run #{rng.randint(1000, 99999)}).
- {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} alert `{svc}_error_rate > 5%` fires; pager to {person()}.
- {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} rollback to {sha1()[:8]}; error rate back under 0.{rng.randint(1, 9)}%.

## Root cause
{pick(['A migration added a NOT NULL column without a default', 'The connection pool was sized for the old instance type', 'A feature flag defaulted to on in one region', 'A retry storm after a dependency timed out'])}.

## Follow-ups
- [ ] Add a canary stage (owner {person().split()[0]}, due {date(2025, 2025)}).
- [ ] Alert on saturation, not only errors.
- [x] Document the rollback command: `kubectl rollout undo deploy/{svc}-api --to-revision={rng.randint(2, 90)}`.
"""


def note_standup():
    days = []
    for _ in range(rng.randint(2, 4)):
        days.append(f"### {date()}\n- Yesterday: {pick(['paired on', 'reviewed', 'shipped', 'debugged'])} {pick(TOPICS)}.\n- Today: {pick(['finish', 'start', 'test', 'document'])} {pick(TOPICS)}; PR #{rng.randint(100, 6000)}.\n- Blockers: {pick(['none', 'waiting on design', 'staging is down', 'need access to the analytics bucket'])}.")
    return "standups", "# Stand-up log\n\n" + "\n\n".join(days) + "\n"


def note_csv():
    rows = ["date,region,orders,revenue_eur,avg_basket,refund_rate"]
    for _ in range(rng.randint(6, 14)):
        rows.append(f"{date()},{pick(['DE', 'FR', 'UK', 'US', 'JP', 'BR'])},{rng.randint(100, 90000)},{rng.uniform(1000, 999999):.2f},{rng.uniform(10, 300):.2f},{rng.uniform(0, 0.1):.4f}")
    return "sales-data", f"""# Sales figures the user shared for the analysis

```csv
{chr(10).join(rows)}
```

Observations: revenue grew {rng.randint(2, 40)}% quarter on quarter; {pick(['DE', 'FR', 'UK'])} has the highest refund rate.
Pandas one-liner we used: `df.groupby("region")["revenue_eur"].sum().sort_values(ascending=False)`.
"""


def note_research():
    refs = []
    for _ in range(rng.randint(3, 6)):
        refs.append(pick([
            f"- {pick(LAST)} et al. ({rng.randint(2015, 2025)}). doi:10.{rng.randint(1000, 9999)}/{chars(string.ascii_lowercase, 4)}.{rng.randint(2015, 2025)}.{rng.randint(100000, 999999)}",
            f"- arXiv:{rng.randint(18, 25)}{rng.randint(1, 12):02d}.{rng.randint(10000, 99999)}v{rng.randint(1, 4)} — {pick(['scaling laws', 'retrieval', 'CRDTs', 'query planning'])}",
            f"- PMID {rng.randint(10000000, 39999999)}; PMCID PMC{rng.randint(1000000, 9999999)}",
            f"- {pick(BOOKS)[0]}, ISBN {isbn13()}, pp. {rng.randint(10, 200)}–{rng.randint(201, 400)}",
        ]))
    return "research-notes", f"""# Research notes: {pick(['memory in LLM agents', 'cache eviction policies', 'soil carbon', 'sleep and learning', 'pricing experiments'])}

Question from the user: {pick(['what is the current consensus?', 'which papers should I read first?', 'is the effect size robust?'])}

{chr(10).join(refs)}

Summary so far: effect sizes between 0.{rng.randint(1, 4)} and 0.{rng.randint(5, 9)}; n ranges from {rng.randint(20, 200)} to {rng.randint(1000, 90000):,}.
"""


def note_email_draft():
    to = person()
    return "email-draft", f"""# Draft email to {to}

Subject: {pick(['Follow-up on our call', 'Contract renewal', 'Invoice question', 'Next steps for the pilot'])}

Hi {to.split()[0]},

thanks for your time on {date(2025, 2025)}. As discussed, the pilot covers {rng.randint(2, 20)} sites and starts on {date(2025, 2025)}.
Our PO number is PO-{rng.randint(100000, 999999)}; please quote it on the invoice (VAT ID DE{chars(DIGITS, 9)}).
You can reach me on {phone()} or at {email()}.

Best,
{person()}

{pick(["xoxo-2024-offsite was the best team trip yet, say hi to everyone", "P.S. the scikit-learn (sk-learn) upgrade broke the notebook; pinned to 1.4", "P.S. task-runner-2024-q3 is archived now"])}

(User wants the tone warmer and the second paragraph shorter before sending.)
"""


def note_yaml_prefs():
    return "assistant-settings", f"""# Settings the user asked me to remember

```yaml
user:
  name: {person()}
  locale: {pick(['en-GB', 'de-AT', 'es-MX', 'ja-JP'])}
  timezone: {pick(['Europe/Vienna', 'America/Mexico_City', 'Asia/Tokyo', 'Europe/London'])}
writing:
  tone: {pick(['concise', 'friendly', 'formal'])}
  max_bullets: {rng.randint(3, 8)}
  citations: {pick(['inline', 'footnotes', 'none'])}
code:
  language: {pick(LANGS).lower()}
  formatter: {pick(['black', 'rustfmt', 'prettier', 'gofmt'])}
  line_length: {pick([80, 88, 100, 120])}
reminders:
  - "{pick(['Renew passport', 'Dentist', 'Quarterly taxes', 'Team offsite'])} on {date(2025, 2025)}"
  - "Water the plants every {rng.randint(2, 7)} days"
```
"""


def note_terminal():
    pods = "\n".join(f"{pick(PROJECTS)}-api-{chars(HEX, 10)}-{chars(string.ascii_lowercase + DIGITS, 5)}   1/1     Running   {rng.randint(0, 9)}          {rng.randint(1, 40)}d" for _ in range(rng.randint(2, 5)))
    containers = "\n".join(f"{chars(HEX, 12)}   {pick(['postgres:16', 'redis:7', 'nginx:1.27', 'grafana/grafana:11.1.0'])}   \"docker-entrypoint.s…\"   {rng.randint(2, 50)} hours ago   Up {rng.randint(2, 50)} hours   0.0.0.0:{rng.randint(3000, 9999)}->{rng.randint(80, 9000)}/tcp" for _ in range(rng.randint(2, 4)))
    jwk = {"kty": "RSA", "kid": chars(HEX, 16), "use": "sig", "alg": "RS256", "n": b64url(rng.randbytes(256)), "e": "AQAB"}
    return "terminal-session", f"""# Terminal session notes

```
$ kubectl get pods -n {pick(PROJECTS)}
NAME                                      READY   STATUS    RESTARTS   AGE
{pods}

$ docker ps
CONTAINER ID   IMAGE   COMMAND   CREATED   STATUS   PORTS
{containers}

$ df -h /
Filesystem      Size  Used Avail Use% Mounted on
/dev/nvme0n1p2  {rng.randint(100, 900)}G  {rng.randint(50, 99)}G  {rng.randint(10, 800)}G  {rng.randint(5, 95)}% /

$ echo -n '{{"' | base64
eyI=
```

The auth server's public JWKS entry (public, safe to keep):

```json
{json.dumps(jwk, indent=2)}
```
"""


ORDINARY = [note_preferences, note_project, note_meeting, note_customer_xml, note_debugging, note_code,
            note_git, note_reading, note_shopping, note_contacts, note_infra, note_api, note_checksums,
            note_security_doc, note_env_config, note_metrics, note_support_ticket, note_changelog,
            note_xml_facts, note_travel, note_learning, note_recipe, note_postmortem, note_standup, note_csv,
            note_research, note_email_draft, note_yaml_prefs, note_terminal, note_code, note_debugging]


# --------------------------------------------------------------------------------------------
# Fake secrets: well-formed, random, made here. Each kind cycles through its formats, so that
# every format is planted at least once.

CYCLES: dict[str, int] = {}


def cycle(kind: str, n: int) -> int:
    CYCLES[kind] = CYCLES.get(kind, -1) + 1
    return CYCLES[kind] % n


def fake_aws_access():
    return ["AKIA", "ASIA", "AKIA", "ABIA", "ACCA"][cycle("aws", 5)] + chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)


def fake_aws_secret():
    return chars(ALNUM + "/+", 40)


def fake_anthropic():
    return ["sk-ant-api03-", "sk-ant-admin01-", "sk-ant-api03-"][cycle("anthropic", 3)] + chars(B64URL, 93) + "AA"


def fake_openai():
    kind = cycle("openai", 3)
    if kind == 0:
        return "sk-proj-" + chars(B64URL, 74) + "T3BlbkFJ" + chars(B64URL, 74)
    if kind == 1:
        return "sk-svcacct-" + chars(B64URL, 74) + "T3BlbkFJ" + chars(B64URL, 74)
    return "sk-" + chars(ALNUM, 20) + "T3BlbkFJ" + chars(ALNUM, 20)


def fake_github():
    kind = cycle("github", 6)
    if kind == 5:
        return "github_pat_" + chars(ALNUM, 22) + "_" + chars(ALNUM, 59)
    return ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"][kind] + chars(ALNUM, 36)


def fake_slack():
    kind = cycle("slack", 3)
    if kind == 0:
        return f"xoxb-{chars(DIGITS, 12)}-{chars(DIGITS, 13)}-{chars(ALNUM, 24)}"
    if kind == 1:
        return f"xoxp-{chars(DIGITS, 12)}-{chars(DIGITS, 12)}-{chars(DIGITS, 13)}-{chars(HEX, 32)}"
    return f"https://hooks.slack.com/services/T{chars(UPPER_ALNUM, 8)}/B{chars(UPPER_ALNUM, 10)}/{chars(ALNUM, 24)}"


def fake_stripe():
    kind = cycle("stripe", 5)
    if kind == 4:
        return "whsec_" + chars(ALNUM, 32)
    return ["sk_live_", "rk_live_", "sk_test_", "rk_test_"][kind] + chars(ALNUM, pick([24, 99]))


def fake_jwt():
    alg = ["HS256", "RS256", "ES256"][cycle("jwt", 3)]
    header = b64url(json.dumps({"alg": alg, "typ": "JWT"}, separators=(",", ":")).encode())
    payload = b64url(json.dumps({"sub": uuid4(), "email": email(), "iat": rng.randint(1700000000, 1750000000),
                                 "exp": rng.randint(1750000000, 1790000000), "scope": "read write"}, separators=(",", ":")).encode())
    sig = b64url(rng.randbytes({"HS256": 32, "RS256": 256, "ES256": 64}[alg]))
    return f"{header}.{payload}.{sig}"


def fake_azure():
    acct = pick(PROJECTS) + chars(DIGITS, 3)
    kind = cycle("azure", 4)
    if kind == 3:
        sig = b64(32).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
        return f"SharedAccessSignature sr=https%3A%2F%2F{acct}.servicebus.windows.net%2Forders&sig={sig}&se={rng.randint(1750000000, 1790000000)}&skn=send"
    if kind == 0:
        return f"DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={b64(64)};EndpointSuffix=core.windows.net"
    if kind == 1:
        return f"Endpoint=sb://{acct}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={b64(32)}"
    sig = b64(32).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
    return f"https://{acct}.blob.core.windows.net/exports/report.csv?sv=2022-11-02&ss=b&srt=o&sp=r&se={date(2025, 2026)}T00:00:00Z&spr=https&sig={sig}"


def pem_body(n_bytes: int, width=64) -> str:
    return "\n".join(textwrap.wrap(b64(n_bytes), width))


def fake_private_key():
    kind = cycle("pem", 9)
    if kind == 7:
        # Truncated: pasted without its END line.
        return f"-----BEGIN OPENSSH PRIVATE KEY-----\n{pem_body(200, 70)}"
    if kind == 8:
        return (f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-{date().replace('-', '')}\n"
                f"Public-Lines: 2\n{pem_body(51)}\nPrivate-Lines: 1\n{pem_body(36)}\nPrivate-MAC: {sha256()}")
    if kind == 0:
        return f"-----BEGIN RSA PRIVATE KEY-----\n{pem_body(1190)}\n-----END RSA PRIVATE KEY-----"
    if kind == 1:
        return f"-----BEGIN OPENSSH PRIVATE KEY-----\n{pem_body(400, 70)}\n-----END OPENSSH PRIVATE KEY-----"
    if kind == 2:
        return f"-----BEGIN EC PRIVATE KEY-----\n{pem_body(121)}\n-----END EC PRIVATE KEY-----"
    if kind == 3:
        return f"-----BEGIN PRIVATE KEY-----\n{pem_body(1218)}\n-----END PRIVATE KEY-----"
    if kind == 4:
        return (f"-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,{chars(HEX.upper(), 32)}\n\n"
                f"{pem_body(1192)}\n-----END RSA PRIVATE KEY-----")
    if kind == 5:
        return f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{pem_body(900)}\n={b64(3)}\n-----END PGP PRIVATE KEY BLOCK-----"
    return f"-----BEGIN ENCRYPTED PRIVATE KEY-----\n{pem_body(1298)}\n-----END ENCRYPTED PRIVATE KEY-----"


def fake_gcp_json():
    proj = f"{pick(PROJECTS)}-{rng.randint(100000, 999999)}"
    key = "-----BEGIN PRIVATE KEY-----\n" + pem_body(1218) + "\n-----END PRIVATE KEY-----\n"
    sa = f"{pick(['deployer', 'exporter', 'ci'])}@{proj}.iam.gserviceaccount.com"
    return json.dumps({
        "type": "service_account", "project_id": proj, "private_key_id": chars(HEX, 40), "private_key": key,
        "client_email": sa, "client_id": chars(DIGITS, 21), "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
        "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
        "client_x509_cert_url": f"https://www.googleapis.com/robot/v1/metadata/x509/{sa.replace('@', '%40')}",
        "universe_domain": "googleapis.com"}, indent=2)


def fake_url_password():
    scheme, host = ([("postgres", "db.internal.example.net:5432/app"), ("redis", "cache.example.org:6379/0"),
                         ("amqps", "mq.example.com:5671/prod"), ("mongodb", "mongo0.example.io:27017/analytics?authSource=admin"),
                         ("mysql", "10.20.3.4:3306/shop"), ("https", "proxy.example.com:3128")])[cycle("url", 6)]
    user = pick(["app", "admin", "etl_user", "report", "svc-sync", ""])
    pw = chars(ALNUM + "!_-.~", rng.randint(12, 28))
    return f"{scheme}://{user}:{pw}@{host}"


CARD_BRANDS = [("4", 16), ("4", 16), ("51", 16), ("55", 16), ("2221", 16), ("2720", 16), ("34", 15), ("37", 15),
               ("6011", 16), ("65", 16), ("3530", 16), ("3589", 16), ("36", 14), ("6212", 19), ("6759", 16), ("2200", 16)]


def fake_card():
    prefix, length = CARD_BRANDS[cycle("card", len(CARD_BRANDS))]
    n = card(prefix, length)
    return [n, grouped(n), grouped(n, "-")][cycle("card-format", 3)] if length != 14 and length != 19 else n


FAKES = {
    "aws-access-key": fake_aws_access,
    "anthropic-api-key": fake_anthropic,
    "openai-api-key": fake_openai,
    "github-token": fake_github,
    "slack-token": fake_slack,
    "stripe-key": fake_stripe,
    "jwt": fake_jwt,
    "azure-connection-string": fake_azure,
    "private-key": fake_private_key,
    "url-password": fake_url_password,
    "payment-card": fake_card,
}


def plant(detector: str) -> str:
    """A realistic sentence or block that carries one fake secret of this kind."""
    if detector == "aws-secret-key":
        key_id, secret = fake_aws_access(), fake_aws_secret()
        return pick([
            f"```ini\n[default]\naws_access_key_id = {key_id}\naws_secret_access_key = {secret}\nregion = eu-west-1\n```",
            f"```bash\nexport AWS_ACCESS_KEY_ID={key_id}\nexport AWS_SECRET_ACCESS_KEY={secret}\n```",
            f"```json\n{{\n  \"Credentials\": {{\n    \"AccessKeyId\": \"{key_id}\",\n    \"SecretAccessKey\": \"{secret}\",\n    \"Expiration\": \"{timestamp()}\"\n  }}\n}}\n```",
        ])
    if detector == "gcp-service-account-key":
        return f"The exporter's service account file (downloaded {date()}):\n\n```json\n{fake_gcp_json()}\n```"
    value = FAKES[detector]()
    templates = {
        "aws-access-key": [f"The CI user's access key id is {value} (created {date()}).", f"- IAM key `{value}` belongs to the backup job."],
        "anthropic-api-key": [f"User pasted their key for the eval script: `ANTHROPIC_API_KEY={value}`", f"Key for the batch job: {value}"],
        "openai-api-key": [f"```python\nclient = OpenAI(api_key=\"{value}\")\n```", f"Their OpenAI key (rotate after the demo): {value}"],
        "github-token": [f"Token for the release bot: `{value}` (scopes: repo, workflow).", f"```bash\ngh auth login --with-token <<< {value}\n```"],
        "slack-token": [f"Slack integration: `{value}` posts to #deploys.", f"SLACK_TARGET={value}"],
        "stripe-key": [f"Stripe key used by the billing worker: {value}", f"```ruby\nStripe.api_key = '{value}'\n```"],
        "jwt": [f"Session token captured while debugging the 401:\n\n```\nAuthorization: Bearer {value}\n```", f"The user's refresh token: {value}"],
        "azure-connection-string": [f"```\nAZURE_STORAGE={value}\n```", f"Connection string for the export job: `{value}`"],
        "private-key": [f"Deploy key the user shared (to be rotated):\n\n```\n{value}\n```", f"```\n{value}\n```"],
        "url-password": [f"Production database: `{value}`", f"```yaml\nbroker_url: {value}\n```"],
        "payment-card": [f"Customer read their card over chat: {value}, exp {rng.randint(1, 12):02d}/{rng.randint(26, 30)}.",
                         f"| card | {value} |", f"Card on file for the company account: {value} (CVV withheld)."],
    }
    return pick(templates[detector])


SECRET_KINDS = list(FAKES) + ["aws-secret-key", "gcp-service-account-key"]


def secret_note(index: int):
    # Each file plants 1 to 3 kinds; every kind is planted in several files, cycling.
    first = SECRET_KINDS[index % len(SECRET_KINDS)]
    kinds = [first] + [k for k in some(SECRET_KINDS, 0, 2) if k != first]
    stem, text = pick([k for k in ORDINARY if k not in (note_customer_xml, note_xml_facts)])()
    lines = text.rstrip("\n").split("\n")
    for k in kinds:
        at = rng.randint(1, len(lines))
        # Do not split a fenced code block: plant after a line outside any fence.
        fences = [i for i, line in enumerate(lines) if line.startswith("```")]
        while sum(1 for f in fences if f < at) % 2 == 1:
            at += 1
        lines.insert(at, "\n" + plant(k) + "\n")
    expected = sorted(set(kinds) | ({"aws-access-key"} if "aws-secret-key" in kinds else set()))
    return f"{stem}-{'-'.join(sorted(set(kinds)))}", "\n".join(lines) + "\n", expected


# --------------------------------------------------------------------------------------------


def main():
    notes, secrets = ROOT / "notes", ROOT / "secrets"
    for d in (notes, secrets):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    for i in range(NOTES):
        stem, text = ORDINARY[i % len(ORDINARY)]()
        ext = ".xml" if text.startswith("<") else ".md"
        (notes / f"{i:03d}-{stem}{ext}").write_text(text, encoding="utf-8")
    manifest = {}
    for i in range(SECRETS):
        stem, text, expected = secret_note(i)
        name = f"{i:03d}-{stem}.md"
        (secrets / name).write_text(text, encoding="utf-8")
        manifest[name] = expected
    (secrets / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
