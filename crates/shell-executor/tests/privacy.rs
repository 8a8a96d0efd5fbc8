//! Everything agentsh writes for a shell is private: the directory holding the command text
//! and cwd is 0700, the files in it 0600, whatever the umask.

use crate::common::{run, with_session};

/// Regression (issue 10, class 2): the private directory was 0755 and `command`/`header` 0644
/// under the usual umask 022, so any local user could read every command and its cwd.
#[test]
fn the_private_directory_and_its_files_are_readable_by_the_owner_only() {
    with_session("privacy", async |exec, s| {
        // Two calls: the files are rewritten in place, and the modes must hold for both.
        for _ in 0..2 {
            let listed = run(
                &exec,
                &s,
                r#"cd "$__ash_private_dir" && stat -c '%a %n' . command header"#,
            )
            .await;
            assert_eq!(listed.exit_code, Some(0), "{listed:?}");
            assert_eq!(
                listed.summary.output, "700 .\n600 command\n600 header\n",
                "{listed:?}"
            );
        }
    });
}
