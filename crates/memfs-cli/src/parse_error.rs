//! Argument errors that never show a value: what was typed may be a secret (a key given as
//! `--store-option aws_secret_access_key:KEY`, with a colon for `=`, or a token pasted where
//! a subcommand goes), and clap's own messages quote it, to the terminal and to every log
//! that keeps stderr. These messages name the flag, and never what was given for it.

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// Why a value parser of memfs refused a value: fixed text, so it cannot quote the value.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Refused(pub(crate) &'static str);

/// Prints `e` without any value the user gave, and exits as clap does (status 2; help and
/// version go to stdout with status 0).
pub(crate) fn exit(e: clap::Error) -> ! {
    match render(&e) {
        None => e.exit(),
        Some(text) => {
            eprint!("{text}");
            std::process::exit(e.exit_code())
        }
    }
}

/// The message for `e`; `None` when clap's own shows no value the user typed (help, version,
/// missing or conflicting arguments: those name only flags).
fn render(e: &clap::Error) -> Option<String> {
    let arg = || string(e, ContextKind::InvalidArg).unwrap_or_else(|| "an argument".to_owned());
    let mut text = match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        | ErrorKind::MissingRequiredArgument
        | ErrorKind::MissingSubcommand
        | ErrorKind::ArgumentConflict
        | ErrorKind::WrongNumberOfValues
        | ErrorKind::TooFewValues
        | ErrorKind::InvalidUtf8 => return None,
        ErrorKind::InvalidValue => {
            let mut text = format!("error: invalid value for '{}'", arg());
            if let Some(valid) = strings(e, ContextKind::ValidValue) {
                text.push_str(&format!("\n  [possible values: {}]", valid.join(", ")));
            }
            text
        }
        ErrorKind::ValueValidation => {
            let mut text = format!("error: invalid value for '{}'", arg());
            // Only memfs's own reasons, which are fixed text: other parsers' may quote the value.
            if let Some(Refused(reason)) = std::error::Error::source(e).and_then(|s| s.downcast_ref::<Refused>()) {
                text.push_str(&format!(": {reason}"));
            }
            text
        }
        ErrorKind::UnknownArgument => {
            let given = string(e, ContextKind::InvalidArg).unwrap_or_default();
            let mut text = match flag_name(&given) {
                Some(flag) => format!("error: unexpected argument '{flag}' found"),
                None => "error: unexpected argument found (not shown: it may be a secret)".to_owned(),
            };
            if given.starts_with('-') && flag_name(&given).is_none() {
                text.push_str("\n\n  tip: to pass a value that starts with '-', put '--' before it");
            }
            if let Some(similar) = strings(e, ContextKind::SuggestedArg) {
                text.push_str(&format!("\n\n  tip: a similar argument exists: '{}'", similar.join("', '")));
            }
            text
        }
        ErrorKind::InvalidSubcommand => {
            let mut text = "error: unrecognized subcommand (not shown: it may be a secret)".to_owned();
            if let Some(similar) = strings(e, ContextKind::SuggestedSubcommand) {
                text.push_str(&format!("\n\n  tip: a similar subcommand exists: '{}'", similar.join("', '")));
            }
            text
        }
        ErrorKind::TooManyValues => {
            format!("error: unexpected value for '{}' (not shown); no more were expected", arg())
        }
        ErrorKind::NoEquals => format!("error: equal sign is needed when assigning values to '{}'", arg()),
        _ => "error: invalid arguments (not shown: they may hold a secret)".to_owned(),
    };
    text.push('\n');
    if let Some(usage) = string(e, ContextKind::Usage) {
        text.push_str(&format!("\n{usage}\n"));
    }
    text.push_str("\nFor more information, try '--help'.\n");
    Some(text)
}

/// The name of a long flag as typed, without a value attached (`--name=VALUE`): `None` for
/// anything else. Short flags are never shown: clap reports `-wSECRET` as `-w`, the value's
/// first letter.
fn flag_name(given: &str) -> Option<&str> {
    let long = given.strip_prefix("--")?;
    let name = long.split_once('=').map_or(long, |(name, _)| name);
    let ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    ok.then(|| &given[..name.len() + 2])
}

fn string(e: &clap::Error, kind: ContextKind) -> Option<String> {
    match e.get(kind)? {
        ContextValue::String(s) => Some(s.clone()),
        ContextValue::StyledStr(s) => Some(s.to_string()),
        _ => None,
    }
}

fn strings(e: &clap::Error, kind: ContextKind) -> Option<Vec<String>> {
    match e.get(kind)? {
        ContextValue::Strings(v) if !v.is_empty() => Some(v.clone()),
        ContextValue::StyledStrs(v) if !v.is_empty() => Some(v.iter().map(ToString::to_string).collect()),
        ContextValue::String(s) => Some(vec![s.clone()]),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::flag_name;

    #[test]
    fn flag_names_leave_values_out() {
        assert_eq!(flag_name("--store-secret=abc"), Some("--store-secret"));
        assert_eq!(flag_name("--x"), Some("--x"));
        assert_eq!(flag_name("-k"), None);
        assert_eq!(flag_name("-1"), None);
        assert_eq!(flag_name("--"), None);
        assert_eq!(flag_name("--a b"), None);
        assert_eq!(flag_name("SECRET"), None);
    }
}
