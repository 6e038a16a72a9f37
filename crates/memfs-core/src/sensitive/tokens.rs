//! Vendors' keys and tokens: AWS, Google Cloud, Azure, Anthropic, OpenAI, GitHub, Slack, Stripe.
//!
//! Each pattern ends in a run of the token's own alphabet, either of fixed length (AWS key ids)
//! or unbounded, so that a match runs to the end of the token and the search resumes after it
//! (no text is scanned twice); lengths are then checked on the run. Formats are the vendors' published ones: AWS "IAM identifiers"
//! (unique id prefixes), GitHub "About authentication" (token prefixes), Slack "Token types",
//! Stripe "API keys", Google Cloud "Create and delete service account keys" (the JSON file),
//! Azure Storage "Configure a connection string" and "Create a service SAS".

use std::sync::LazyLock;

use regex::Regex;

use super::{Detector, Finding, after, before, finding, pem, placeholder};

/// Every vendor's detector, in this order.
pub(super) fn find(text: &str, out: &mut Vec<Finding>) {
    aws_access_keys(text, out);
    aws_secret_keys(text, out);
    gcp_private_keys(text, out);
    azure_secrets(text, out);
    anthropic_keys(text, out);
    openai_keys(text, out);
    github_tokens(text, out);
    slack_tokens(text, out);
    stripe_keys(text, out);
}

/// Compiles a built-in pattern; each is tested, so failure is a bug.
fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("built-in pattern compiles")
}

fn alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

/// Letters, digits, `_` and `-`: the alphabet of base64url and of most tokens.
fn token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Access key ids only (long-term `AKIA`, temporary `ASIA`, bearer `ABIA`, context `ACCA`);
/// the run after the 20 characters must end, which the boundary check verifies.
static AWS_ACCESS: LazyLock<Regex> = LazyLock::new(|| re(r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}"));

fn aws_access_keys(text: &str, out: &mut Vec<Finding>) {
    for m in AWS_ACCESS.find_iter(text) {
        let free = !before(text, m.start()).is_some_and(alnum) && !after(text, m.end()).is_some_and(alnum);
        if free && !placeholder(&m.as_str()[4..]) {
            out.push(finding(Detector::AwsAccessKey, m.range()));
        }
    }
}

/// A label naming the secret key, an assignment, then the value's run of base64 characters.
static AWS_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i:aws[_-]?secret[_-]?(?:access[_-]?)?key|secret[_-]?access[_-]?key)["']?[ \t]{0,8}(?::=|=>|[:=])[ \t]{0,8}["']?([A-Za-z0-9/+=]*)"#,
    )
});

fn aws_secret_keys(text: &str, out: &mut Vec<Finding>) {
    for caps in AWS_SECRET.captures_iter(text) {
        let value = caps.get(1).expect("group 1 always participates");
        if value.len() == 40 && !value.as_str().contains('=') && !placeholder(value.as_str()) {
            out.push(finding(Detector::AwsSecretKey, value.range()));
        }
    }
}

/// The `private_key` member of a JSON object (or Python dict) holding a PEM private key: the
/// value runs to the closing quote, or to the end of a truncated text.
static GCP: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#""private_key"[ \t]{0,8}:[ \t]{0,8}"(-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----[^"]*)|'private_key'[ \t]{0,8}:[ \t]{0,8}'(-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----[^']*)"#,
    )
});

fn gcp_private_keys(text: &str, out: &mut Vec<Finding>) {
    for caps in GCP.captures_iter(text) {
        let value = caps.get(1).or_else(|| caps.get(2)).expect("one alternative matched");
        // As for a PEM block: the BEGIN line must be followed by a key, not by `...`.
        let body = value.start() + value.as_str().find("KEY-----").expect("the pattern has it") + "KEY-----".len();
        if pem::has_body(&text[body..value.end()]) {
            out.push(finding(Detector::GcpServiceAccountKey, value.range()));
        }
    }
}

/// `AccountKey=` / `SharedAccessKey=` values (keys are case-insensitive in connection strings).
static AZURE_KEY: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i:AccountKey|SharedAccessKey)[ \t]{0,3}=[ \t]{0,3}([A-Za-z0-9+/]*={0,2})"));

/// A SAS signature parameter; whether it belongs to a SAS is decided from its line.
static AZURE_SIG: LazyLock<Regex> = LazyLock::new(|| re(r"[?&; ]sig=([A-Za-z0-9%+/=]*)"));

/// What shows that a `sig=` on the same line is a shared access signature: a storage service
/// version (`sv=2022-11-02`), a Service Bus key name (`skn=`), or the connection-string key.
static SAS_MARK: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?:^|[?&;=\s])sv=[0-9]{4}-[0-9]{2}-[0-9]{2}|[?&;\s]skn=|SharedAccessSignature"));

/// How far from a `sig=` its SAS mark may be.
const SAS_CONTEXT_BYTES: usize = 2048;

fn azure_secrets(text: &str, out: &mut Vec<Finding>) {
    for caps in AZURE_KEY.captures_iter(text) {
        let value = caps.get(1).expect("group 1 always participates");
        let body = value.as_str().trim_end_matches('=');
        if body.len() >= 20 && !placeholder(body) {
            out.push(finding(Detector::AzureConnectionString, value.range()));
        }
    }
    let sigs: Vec<_> = AZURE_SIG
        .captures_iter(text)
        .map(|caps| caps.get(1).expect("group 1 always participates"))
        .filter(|v| v.len() >= 20 && !placeholder(v.as_str()))
        .collect();
    if sigs.is_empty() {
        return;
    }
    // Marks and line breaks are found once; each signature then looks up the nearest mark on
    // either side (binary search), so many signatures on one long line cost no rescans.
    let marks: Vec<usize> = SAS_MARK.find_iter(text).map(|m| m.start()).collect();
    let newlines: Vec<usize> = text.match_indices('\n').map(|(i, _)| i).collect();
    let same_line = |a: usize, b: usize| newlines.partition_point(|&n| n < a) == newlines.partition_point(|&n| n < b);
    for value in sigs {
        let next = marks.partition_point(|&m| m < value.start());
        let before = next.checked_sub(1).map(|i| marks[i]);
        let after = marks.get(next).copied();
        let near = before.is_some_and(|m| value.start() - m <= SAS_CONTEXT_BYTES && same_line(m, value.start()))
            || after.is_some_and(|m| m - value.start() <= SAS_CONTEXT_BYTES && same_line(value.start(), m));
        if near {
            out.push(finding(Detector::AzureConnectionString, value.range()));
        }
    }
}

/// The key's kind and version (`api03-`, `admin01-`, `oat01-`) are not part of its random body.
static ANTHROPIC: LazyLock<Regex> = LazyLock::new(|| re(r"sk-ant-(?:[a-z]{2,10}[0-9]{2}-)?([A-Za-z0-9_-]*)"));

fn anthropic_keys(text: &str, out: &mut Vec<Finding>) {
    prefixed_keys(&ANTHROPIC, &Detector::AnthropicApiKey, text, out);
}

/// Each match of `pattern` that no token character precedes and whose body (group 1) is 20
/// characters or more and no placeholder: a `detector` finding over the whole match. The body
/// may run on into more token characters: the pattern's own alphabet ends it.
fn prefixed_keys(pattern: &Regex, detector: &Detector, text: &str, out: &mut Vec<Finding>) {
    for caps in pattern.captures_iter(text) {
        let (whole, body) = (caps.get(0).expect("match"), caps.get(1).expect("group 1 always participates"));
        if !before(text, whole.start()).is_some_and(token_char) && body.len() >= 20 && !placeholder(body.as_str()) {
            out.push(finding(detector.clone(), whole.range()));
        }
    }
}

/// Project, service-account, admin and legacy-user keys with a prefix; the legacy format is
/// matched by a separate pattern so that its body excludes `-` and `_` (which keeps `sk-ant-`
/// out).
static OPENAI: LazyLock<Regex> = LazyLock::new(|| re(r"sk-(?:proj|svcacct|admin|None)-([A-Za-z0-9_-]*)"));
static OPENAI_LEGACY: LazyLock<Regex> = LazyLock::new(|| re(r"sk-([A-Za-z0-9]*)"));

fn openai_keys(text: &str, out: &mut Vec<Finding>) {
    prefixed_keys(&OPENAI, &Detector::OpenaiApiKey, text, out);
    for caps in OPENAI_LEGACY.captures_iter(text) {
        let (whole, body) = (caps.get(0).expect("match"), caps.get(1).expect("group 1 always participates"));
        let free =
            !before(text, whole.start()).is_some_and(token_char) && !after(text, whole.end()).is_some_and(token_char);
        if free && body.len() == 48 && !placeholder(body.as_str()) {
            out.push(finding(Detector::OpenaiApiKey, whole.range()));
        }
    }
}

/// Classic tokens (`ghp_` personal, `gho_` OAuth, `ghu_` user-to-server, `ghs_` server-to-server,
/// `ghr_` refresh) and fine-grained personal access tokens.
static GITHUB: LazyLock<Regex> = LazyLock::new(|| re(r"gh[pousr]_([A-Za-z0-9]*)|github_pat_([A-Za-z0-9_]*)"));

fn github_tokens(text: &str, out: &mut Vec<Finding>) {
    for caps in GITHUB.captures_iter(text) {
        let whole = caps.get(0).expect("match");
        if before(text, whole.start()).is_some_and(token_char) || after(text, whole.end()).is_some_and(token_char) {
            continue;
        }
        let ok = match (caps.get(1), caps.get(2)) {
            (Some(classic), _) => (36..=251).contains(&classic.len()) && !placeholder(classic.as_str()),
            (None, Some(pat)) => pat.len() >= 50 && !placeholder(pat.as_str()),
            (None, None) => false,
        };
        if ok {
            out.push(finding(Detector::GithubToken, whole.range()));
        }
    }
}

/// Bot, user, app, refresh, session and configuration tokens; not `xoxo-` (legacy workspace
/// tokens, retired by Slack, and a common sign-off).
static SLACK: LazyLock<Regex> = LazyLock::new(|| re(r"(?:xox(?:e\.xox)?[abeprs]|xapp)-([A-Za-z0-9-]*)"));
static SLACK_HOOK: LazyLock<Regex> =
    LazyLock::new(|| re(r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9/_-]*)"));

fn slack_tokens(text: &str, out: &mut Vec<Finding>) {
    for caps in SLACK.captures_iter(text) {
        let (whole, body) = (caps.get(0).expect("match"), caps.get(1).expect("group 1 always participates"));
        let body = body.as_str();
        // Every kind of Slack token continues with a number (`xoxb-1234…`, `xoxe.xoxp-1-…`).
        let ok = body.len() >= 20 && body.starts_with(|c: char| c.is_ascii_digit()) && !placeholder(body);
        if ok && !before(text, whole.start()).is_some_and(token_char) {
            out.push(finding(Detector::SlackToken, whole.range()));
        }
    }
    for caps in SLACK_HOOK.captures_iter(text) {
        let path = caps.get(1).expect("group 1 always participates");
        if path.len() >= 20 && !placeholder(path.as_str()) {
            out.push(finding(Detector::SlackToken, path.range()));
        }
    }
}

static STRIPE: LazyLock<Regex> = LazyLock::new(|| re(r"(?:[sr]k_(?:live|test)|whsec)_([A-Za-z0-9]*)"));

fn stripe_keys(text: &str, out: &mut Vec<Finding>) {
    for caps in STRIPE.captures_iter(text) {
        let (whole, body) = (caps.get(0).expect("match"), caps.get(1).expect("group 1 always participates"));
        let min = if whole.as_str().starts_with("whsec_") { 24 } else { 16 };
        let free =
            !before(text, whole.start()).is_some_and(token_char) && !after(text, whole.end()).is_some_and(token_char);
        if free && body.len() >= min && !placeholder(body.as_str()) {
            out.push(finding(Detector::StripeKey, whole.range()));
        }
    }
}
