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
}

impl Dialect {
    /// Both dialects.
    pub const ALL: [Dialect; 2] = [Dialect::Spec, Dialect::PythonSdk];

    /// The name used on the command line and in store settings.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Spec => "spec",
            Dialect::PythonSdk => "python-sdk",
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
#[error("unknown dialect {0:?}: expected `spec` or `python-sdk`")]
pub struct UnknownDialect(pub String);

impl FromStr for Dialect {
    type Err = UnknownDialect;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "spec" => Ok(Dialect::Spec),
            "python-sdk" => Ok(Dialect::PythonSdk),
            other => Err(UnknownDialect(other.to_owned())),
        }
    }
}
