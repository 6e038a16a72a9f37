//! Which reference the answers follow.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The answer set: every success and error string follows one reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum Dialect {
    /// The documentation page's strings (`Error: …` forms, `4.0K`, `excluding hidden items and
    /// node_modules`); where the page is silent, the Python SDK's.
    #[default]
    #[serde(rename = "spec")]
    Spec,
    /// Byte-identical to `BetaLocalFilesystemMemoryTool` in `anthropic==2.10.0`, except the
    /// safety deviations listed in `docs/COMPAT.md`.
    #[serde(rename = "python-sdk")]
    PythonSdk,
    /// Byte-identical to `BetaLocalFilesystemMemoryTool` in npm `@anthropic-ai/sdk@1.12.0`, as its
    /// tool runner hands it to the model (`Error: ` before every error), except the safety
    /// deviations listed in `docs/COMPAT.md`.
    #[serde(rename = "typescript-sdk")]
    TypescriptSdk,
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 3] = [Dialect::Spec, Dialect::PythonSdk, Dialect::TypescriptSdk];

    /// The name used on the command line and in store settings.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Spec => "spec",
            Dialect::PythonSdk => "python-sdk",
            Dialect::TypescriptSdk => "typescript-sdk",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown dialect name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown dialect {0:?}: expected `spec`, `python-sdk` or `typescript-sdk`")]
pub struct UnknownDialect(pub String);

impl FromStr for Dialect {
    type Err = UnknownDialect;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "spec" => Ok(Dialect::Spec),
            "python-sdk" => Ok(Dialect::PythonSdk),
            "typescript-sdk" => Ok(Dialect::TypescriptSdk),
            other => Err(UnknownDialect(other.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in Dialect::ALL {
            assert_eq!(d.as_str().parse::<Dialect>(), Ok(d));
            assert_eq!(serde_json::to_string(&d).unwrap(), format!("\"{d}\""));
            assert_eq!(serde_json::from_str::<Dialect>(&format!("\"{d}\"")).unwrap(), d);
        }
        assert_eq!(Dialect::TypescriptSdk.as_str(), "typescript-sdk");
        assert_eq!(
            "ts".parse::<Dialect>().unwrap_err().to_string(),
            "unknown dialect \"ts\": expected `spec`, `python-sdk` or `typescript-sdk`"
        );
    }
}
