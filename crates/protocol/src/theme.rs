//! The names of the renderer's themes (setting `ui.theme`).

use std::fmt;
use std::str::FromStr;

/// Which glyphs a renderer draws its frames, brackets and spinners with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Theme {
    /// Unicode glyphs any modern terminal font has: `⟦ ⟧`, braille spinner.
    #[default]
    Unicode,
    /// Glyphs of a Nerd Font: `⟨ ⟩`, its spinner.
    Nerd,
    /// ASCII only, for terminals and fonts without Unicode: `[ ]`, `|/-\`.
    Ascii,
}

impl Theme {
    /// Every theme, in the order the setting lists them.
    pub const ALL: [Self; 3] = [Self::Unicode, Self::Nerd, Self::Ascii];

    /// The name the setting uses: `unicode`, `nerd`, `ascii`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Unicode => "unicode",
            Self::Nerd => "nerd",
            Self::Ascii => "ascii",
        }
    }
}

impl fmt::Display for Theme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a theme.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTheme(pub String);

impl fmt::Display for UnknownTheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown theme `{}`: expected \"unicode\", \"nerd\" or \"ascii\"",
            self.0
        )
    }
}

impl std::error::Error for UnknownTheme {}

impl FromStr for Theme {
    type Err = UnknownTheme;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|theme| theme.name() == name)
            .ok_or_else(|| UnknownTheme(name.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for theme in Theme::ALL {
            assert_eq!(theme.name().parse::<Theme>(), Ok(theme));
        }
        assert_eq!(
            "fancy".parse::<Theme>().unwrap_err().to_string(),
            "unknown theme `fancy`: expected \"unicode\", \"nerd\" or \"ascii\""
        );
    }
}
