//! Whether a tool call runs on a pseudo-terminal.

use std::ffi::OsString;

use agentsh_config::VirtualTerminal;

/// Environment variable that, set to `1`, keeps every command off the PTY.
pub const NO_PTY_ENV: &str = "AGENTSH_NO_PTY";
/// The original's name for [`NO_PTY_ENV`], honoured for compatibility.
pub const COMPAT_NO_PTY_ENV: &str = "PI_NO_PTY";

/// Whether the context a call comes from can show a terminal to a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostUi {
    /// An interactive UI that can draw the PTY's screen and pass keys to it.
    Interactive,
    /// No one to show a terminal to: print, RPC and MCP modes, bang commands.
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "a tool call asks only when its host can show a PTY; the tests ask both"
        )
    )]
    Headless,
}

/// True when a tool call should run on the PTY runtime: only when all hold —
/// `bash.virtual_terminal = "on"`, neither `AGENTSH_NO_PTY` nor `PI_NO_PTY` is exactly `1`, and
/// the calling context has an interactive UI to show the terminal in ([`HostUi::Interactive`]).
///
/// `env` looks a variable up (pass `std::env::var_os` in production).
pub fn use_pty(
    virtual_terminal: VirtualTerminal,
    env: impl Fn(&str) -> Option<OsString>,
    ui: HostUi,
) -> bool {
    let disabled = |name: &str| env(name).is_some_and(|value| value == "1");
    virtual_terminal == VirtualTerminal::On
        && ui == HostUi::Interactive
        && !disabled(NO_PTY_ENV)
        && !disabled(COMPAT_NO_PTY_ENV)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<OsString> {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| OsString::from(value))
        }
    }

    /// Setting, environment, UI present, expected choice.
    type Case = (
        VirtualTerminal,
        &'static [(&'static str, &'static str)],
        HostUi,
        bool,
    );

    #[test]
    fn all_three_conditions_are_needed() {
        use HostUi::{Headless, Interactive};
        use VirtualTerminal::{Off, On};
        let cases: &[Case] = &[
            (On, &[], Interactive, true),
            (Off, &[], Interactive, false),
            (On, &[], Headless, false),
            (On, &[("AGENTSH_NO_PTY", "1")], Interactive, false),
            (On, &[("PI_NO_PTY", "1")], Interactive, false),
            // Only exactly "1" disables.
            (On, &[("AGENTSH_NO_PTY", "0")], Interactive, true),
            (On, &[("AGENTSH_NO_PTY", "")], Interactive, true),
            (On, &[("AGENTSH_NO_PTY", "true")], Interactive, true),
            (On, &[("PI_NO_PTY", " 1")], Interactive, true),
            (Off, &[("AGENTSH_NO_PTY", "0")], Interactive, false),
        ];
        for &(vt, env, ui, want) in cases {
            assert_eq!(use_pty(vt, env_of(env), ui), want, "{vt:?} {env:?} {ui:?}");
        }
    }
}
