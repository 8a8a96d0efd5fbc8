//! Snapshot and property tests of the default views. One binary: modules under `views/`.
#![allow(
    clippy::format_push_string,
    reason = "test output is small; format! reads better"
)]

mod views {
    pub mod bang;
    pub mod jobs;
    pub mod props;
    pub mod pty;
    pub mod support;
    pub mod tool;
}
