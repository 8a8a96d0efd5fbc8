//! Isolation: late output of a background job never reaches a later command, and the
//! job is not killed by a closed pipe.

use std::time::Duration;

use crate::common::{path_str, run, tempdir, wait_until, with_session};

#[test]
fn late_background_output_goes_nowhere_and_the_job_survives() {
    with_session("isolation", async |exec, s| {
        let dir = tempdir();
        let log = dir.path().join("log");
        let first = run(
            &exec,
            &s,
            &format!(
                "(sleep 0.3; echo LATE; echo LATE >> {log}; sleep 0.3; echo LATER; echo LATER >> {log}) & echo first",
                log = path_str(&log)
            ),
        )
        .await;
        assert_eq!(first.summary.output, "first\n");
        // Each later command runs while the job writes a line (it waits until the job's log
        // has it).
        let second = run(
            &exec,
            &s,
            &format!(
                "echo second; until grep -qs LATE {log}; do sleep 0.02; done; echo end",
                log = path_str(&log)
            ),
        )
        .await;
        assert_eq!(second.summary.output, "second\nend\n");
        let third = run(
            &exec,
            &s,
            &format!(
                "until grep -qs LATER {log}; do sleep 0.02; done; echo third",
                log = path_str(&log)
            ),
        )
        .await;
        assert_eq!(third.summary.output, "third\n");
        // Both writes after the first command ended happened: no SIGPIPE killed the job.
        assert!(wait_until(Duration::from_secs(5), || {
            std::fs::read_to_string(&log).is_ok_and(|l| l == "LATE\nLATER\n")
        }));
    });
}

#[test]
fn a_chatty_background_job_does_not_leak() {
    with_session("isolation-chatty", async |exec, s| {
        run(
            &exec,
            &s,
            "(for i in $(seq 200); do echo noise$i; sleep 0.005; done) &",
        )
        .await;
        for i in 0..20 {
            let result = run(&exec, &s, &format!("echo quiet{i}")).await;
            assert_eq!(result.summary.output, format!("quiet{i}\n"));
        }
    });
}
