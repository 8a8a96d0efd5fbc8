//! The per-call timeout: seconds, clamped to [1, 3600], never an error.

use std::fmt;
use std::time::Duration;

use crate::text::{format_seconds, timeout_annotation};

/// A command timeout in seconds, always finite and within [`Timeout::MIN`]..=[`Timeout::MAX`].
///
/// Built with [`Timeout::clamp`] from whatever number a caller asked for; the value shown in
/// texts (`Command timed out after N seconds`) and reported as `details.timeout` is the clamped
/// one. Serialises as a JSON number: an integer when whole (`300`), otherwise a float (`1.5`).
///
/// ```
/// use agentsh_protocol::Timeout;
///
/// assert_eq!(Timeout::clamp(-3.0).seconds(), 1.0);
/// assert_eq!(Timeout::clamp(1e9).to_string(), "3600");
/// assert_eq!(Timeout::from_request(Some(1.5), Timeout::DEFAULT).to_string(), "1.5");
/// assert_eq!(Timeout::from_request(None, Timeout::DEFAULT).to_string(), "300");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Timeout(f64);

impl Timeout {
    /// The shortest timeout: 1 second.
    pub const MIN: Self = Self(1.0);
    /// The longest timeout: 3600 seconds (one hour).
    pub const MAX: Self = Self(3600.0);
    /// The default when neither the call nor `bash.default_timeout` sets one: 300 seconds.
    pub const DEFAULT: Self = Self(300.0);

    /// Clamps any number of seconds into [1, 3600]: negative values, `-inf` and values below 1
    /// become 1; huge values and `+inf` become 3600. NaN becomes [`Timeout::DEFAULT`]: it says
    /// nothing about the caller's intent. (A tool call never gets here with NaN: JSON cannot
    /// carry it, and `BashArgs::from_value` refuses it as an argument error.)
    pub fn clamp(seconds: f64) -> Self {
        if seconds.is_nan() {
            Self::DEFAULT
        } else {
            Self(seconds.clamp(Self::MIN.0, Self::MAX.0))
        }
    }

    /// The timeout of one call: the requested seconds, clamped, or `default` when none was
    /// requested.
    pub fn from_request(requested: Option<f64>, default: Self) -> Self {
        requested.map_or(default, Self::clamp)
    }

    /// The timeout in seconds.
    pub fn seconds(self) -> f64 {
        self.0
    }

    /// The timeout as a [`Duration`].
    pub fn duration(self) -> Duration {
        Duration::from_secs_f64(self.0)
    }

    /// The annotation of a command stopped by this timeout:
    /// `Command timed out after N seconds`.
    pub fn annotation(self) -> String {
        timeout_annotation(self.0)
    }
}

impl Default for Timeout {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// `N` as the texts show it: `300`, `1.5`.
impl fmt::Display for Timeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_seconds(self.0))
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Timeout {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Whole values as integers, so `details.timeout` reads `300`, not `300.0`. The value is
        // within [1, 3600], so the cast is exact.
        if self.0.fract() == 0.0 {
            serializer.serialize_u64(self.0 as u64)
        } else {
            serializer.serialize_f64(self.0)
        }
    }
}

/// Reads any number of seconds and clamps it, as [`Timeout::clamp`] does.
#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Timeout {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <f64 as serde::Deserialize>::deserialize(deserializer).map(Self::clamp)
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp, reason = "clamping returns exact values")]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn clamps_to_the_range() {
        let cases: &[(f64, f64)] = &[
            (-3.0, 1.0),
            (0.0, 1.0),
            (0.5, 1.0),
            (1.0, 1.0),
            (1.5, 1.5),
            (300.0, 300.0),
            (3600.0, 3600.0),
            (3600.5, 3600.0),
            (1e300, 3600.0),
            (f64::INFINITY, 3600.0),
            (f64::NEG_INFINITY, 1.0),
            (f64::NAN, 300.0),
        ];
        for &(requested, want) in cases {
            assert_eq!(
                Timeout::clamp(requested).seconds(),
                want,
                "clamp({requested})"
            );
        }
    }

    #[test]
    fn request_or_default() {
        let default = Timeout::clamp(42.0);
        assert_eq!(Timeout::from_request(None, default), default);
        assert_eq!(Timeout::from_request(Some(7.0), default).seconds(), 7.0);
        assert_eq!(Timeout::from_request(Some(-1.0), default).seconds(), 1.0);
    }

    #[test]
    fn texts_use_the_clamped_value() {
        assert_eq!(Timeout::clamp(0.2).to_string(), "1");
        assert_eq!(Timeout::clamp(2.5).to_string(), "2.5");
        assert_eq!(
            Timeout::clamp(99_999.0).annotation(),
            "Command timed out after 3600 seconds"
        );
        assert_eq!(
            Timeout::clamp(1.5).annotation(),
            "Command timed out after 1.5 seconds"
        );
    }

    #[test]
    fn serialises_whole_values_as_integers() {
        assert_eq!(serde_json::to_string(&Timeout::DEFAULT).unwrap(), "300");
        assert_eq!(serde_json::to_string(&Timeout::clamp(1.5)).unwrap(), "1.5");
        assert_eq!(serde_json::to_string(&Timeout::MAX).unwrap(), "3600");
    }

    #[test]
    fn duration_matches_seconds() {
        assert_eq!(Timeout::clamp(1.5).duration(), Duration::from_millis(1500));
        assert_eq!(Timeout::DEFAULT.duration(), Duration::from_secs(300));
    }

    proptest! {
        #[test]
        fn any_number_lands_in_range(seconds in any::<f64>()) {
            let t = Timeout::clamp(seconds).seconds();
            prop_assert!((1.0..=3600.0).contains(&t), "{seconds} -> {t}");
            if (1.0..=3600.0).contains(&seconds) {
                prop_assert_eq!(t, seconds);
            }
        }

        #[test]
        fn clamping_is_monotonic(a in any::<f64>(), b in any::<f64>()) {
            prop_assume!(!a.is_nan() && !b.is_nan());
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            prop_assert!(Timeout::clamp(lo) <= Timeout::clamp(hi), "{lo} {hi}");
        }
    }
}
