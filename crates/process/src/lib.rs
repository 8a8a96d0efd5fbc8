#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod cgroupfs;
mod containment;
pub mod env;
mod id;
mod input_wait;
mod kill;
mod limits;
mod memory;
mod owned_dir;
mod procfs;
pub mod sandbox;
pub mod shell;
mod supervisor;
mod sweep;
mod syscall;
mod terminal;
mod tree;
mod usage;

pub use containment::{Containment, NO_CGROUP_VAR, containment};
pub use id::random_hex;
pub use input_wait::{InputWait, command_line, foreground_program, input_wait, input_waiter};
pub use kill::{EndReport, TERM_GRACE, end_command, end_command_with, end_runaway, kill_tree};
pub use limits::{
    CgroupEvents, CgroupUsage, CgroupWatch, CommandCgroup, LIMIT_CHECK, LIMITS_MECHANISM_VAR,
    LimitFound, LimitsMechanism, ShellShare, TreeWatchdog, cgroup_limits_with_shell,
    cpu_over_limit, limits_kernel_enforced, limits_mechanism, over_limit,
};
pub use memory::memory_agentsh_may_use;
pub use owned_dir::{OWNED_MARK, OwnedDir, remove_ownerless};
pub use supervisor::{
    Backstops, BlockingSupervisor, ChildExit, ChildStdio, SpawnError, SpawnSpec, Supervisor,
};
pub use sweep::{
    SANDBOX_TEMP_DIR_PREFIX, SHELL_DIR_PREFIX, SWEEP_PERIOD_VAR, answer_sweep_request, runtime_dir,
    sweep_leftovers, sweep_period,
};
pub use terminal::command_terminal_program;
pub use tree::{
    CommandScope, MARKER_VAR, ProcessInfo, SignalDispositions, StartMark, can_attribute, children,
    command_processes, cpu_ticks, descendants, fd_target, process_info, signal_dispositions,
    waits_for_a_child,
};
pub use usage::{
    CommandUsage, TreeUsage, command_usage, parent_pid, process_usage, ticks_per_second,
    tree_usages,
};
