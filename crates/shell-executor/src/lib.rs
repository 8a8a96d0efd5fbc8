//! Persistent real shells that run one command at a time, never hang, never leak a process.
#![deny(missing_docs)]
