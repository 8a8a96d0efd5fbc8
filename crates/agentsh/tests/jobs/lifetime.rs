//! What ends jobs: the end of the session's input, and agentsh's death.

use serde_json::{Value, json};

use super::Session;
use crate::util::{
    LIVENESS, TestEnv, assert_no_survivor, marked_sleeper, unique_marker, wait_for_process,
};

/// Starts three jobs in `session`: a PTY job, a job whose `setsid` child left its session
/// (double fork), and a plain one. Returns the markers of all their sleeping processes.
fn three_jobs(session: &mut Session) -> Vec<String> {
    let markers: Vec<String> = (0..4).map(|_| unique_marker()).collect();
    let (pty, _) = session.background(&marked_sleeper(&markers[0]), json!({"pty": true}));
    let (escaped, _) = session.background(
        &format!(
            "(setsid {} &); {}",
            marked_sleeper(&markers[1]),
            marked_sleeper(&markers[2])
        ),
        Value::Null,
    );
    let (plain, _) = session.background(&marked_sleeper(&markers[3]), Value::Null);
    assert_eq!([pty, escaped, plain], ["1", "2", "3"]);
    for marker in &markers {
        wait_for_process(marker);
    }
    markers
}

#[test]
fn end_of_input_ends_every_job_and_what_it_left() {
    let env = TestEnv::new();
    let mut session = Session::start(&env);
    let markers = three_jobs(&mut session);
    let (status, _) = session.rpc.close(LIVENESS);
    assert_eq!(status.code(), Some(0), "end of input exits 0");
    for marker in &markers {
        assert_no_survivor(marker);
    }
}

#[test]
fn sigkill_of_agentsh_ends_every_job_and_what_it_left() {
    let env = TestEnv::new();
    let mut session = Session::start(&env);
    let markers = three_jobs(&mut session);
    session.rpc.kill();
    for marker in &markers {
        assert_no_survivor(marker);
    }
}
