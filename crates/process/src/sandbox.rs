//! The sandbox of a session's processes: what a policy allows, as plain data the
//! spawner enforces in the child before `execve` (user and mount namespace, Landlock,
//! `no_new_privs`, and for `network = false` a network namespace with loopback and a seccomp
//! filter on `socket(AF_UNIX, …)`; with a network allowlist the same namespace plus a listener
//! at `127.0.0.1:<port>` inside it, handed to agentsh's proxy: [`SandboxNetwork::Allowlist`]).
//!
//! The mount namespace serves two ends Landlock cannot: a directory kept read-only inside a
//! writable root ([`SandboxSpec::read_only`], a read-only bind mount of it onto itself), and
//! terminals: the shell gets a private `devpts` instance at `/dev/pts`, so that no other
//! terminal of the machine (another `/dev/pts/N`, to read its keystrokes) can be opened from
//! inside, while the PTYs a command opens itself live in that instance. Landlock, applied
//! after the mounts, forbids every mount and unmount, so no command can lift either.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// What a sandbox lets commands write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SandboxMode {
    /// Only the private temp dir (and the always-writable devices) is writable.
    ReadOnly,
    /// The session's cwd, its private temp dir and the configured `writable` paths.
    WorkspaceWrite,
}

impl SandboxMode {
    /// The mode as the configuration and the denial line write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A sandbox for every process of a shell, PTY session or job: enforced by the kernel in the
/// child before it executes, inherited by everything it starts, never lifted.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SandboxSpec {
    /// What may be written.
    pub mode: SandboxMode,
    /// The writable roots, absolute, already resolved by the session (its cwd in
    /// `workspace-write`, its private temp dir, `sandbox.writable`). The spawner adds the
    /// always-writable ones (`/dev/null`, `/dev/tty`, `/dev/pts`, the shell's own private
    /// directory).
    pub writable: Vec<PathBuf>,
    /// Directories kept read-only although a writable root holds them, absolute, resolved by
    /// the session (its `<cwd>/.agentsh` when that exists): each is bind-mounted onto itself
    /// read-only in the shell's mount namespace, so that no command can change, move or
    /// remove it or anything in it. Each must be a directory (not a symlink) when a process
    /// is spawned, or the sandbox is unavailable.
    pub read_only: Vec<PathBuf>,
    /// How commands reach the network.
    pub network: SandboxNetwork,
    /// The session's private temp dir (also one of [`writable`](Self::writable)) when it is
    /// an [`OwnedDir`](crate::OwnedDir): a supervisor that ends its tree after agentsh died
    /// removes it, whole, so that it does not outlive agentsh. `None`: nothing to remove.
    pub temp_dir: Option<PathBuf>,
    /// The tmpfs mounted at [`temp_dir`](Self::temp_dir) in every sandboxed process's mount
    /// namespace (`limits.tmp_size`): one per session, shared by its shells, jobs and PTYs.
    /// `None`: the temp dir is a directory of the host's temporary directory.
    pub temp_fs: Option<TempFs>,
}

/// A tmpfs of a fixed size for a session's temp dir, made once (see [`TempFs::new`]) and
/// mounted by every sandboxed child at the temp dir in its own mount namespace: writes beyond
/// the size fail with `ENOSPC`, the files live as long as the session's processes and this
/// value, and nothing is mounted where the host sees it.
///
/// Two are equal when they are the very same filesystem (a shell is reused only by calls
/// that see the same files).
#[derive(Clone)]
pub struct TempFs {
    bytes: u64,
    mount: Arc<std::os::fd::OwnedFd>,
}

impl TempFs {
    /// A new, empty tmpfs of `bytes` bytes (root directory 0700, `nosuid`, `nodev`), owned by
    /// the calling user. Made in a user and mount namespace of a short-lived child; refused
    /// (`Sandbox unavailable: …`) by a kernel without unprivileged user namespaces or one that
    /// cannot share a detached mount between namespaces.
    pub fn new(bytes: u64) -> Result<Self, SandboxError> {
        #[cfg(target_os = "linux")]
        {
            crate::supervisor::temp_fs::make(bytes)
                .map(|mount| Self {
                    bytes,
                    mount: Arc::new(mount),
                })
                .map_err(|why| {
                    SandboxError::Unavailable(format!("a temp dir of limited size: {why}"))
                })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = bytes;
            Err(SandboxError::Unavailable(
                "a temp dir of limited size needs Linux".to_owned(),
            ))
        }
    }

    /// Its size in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl fmt::Debug for TempFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TempFs")
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}

impl PartialEq for TempFs {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.mount, &other.mount)
    }
}

impl Eq for TempFs {}

impl std::hash::Hash for TempFs {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        Arc::as_ptr(&self.mount).hash(state);
    }
}

/// How a sandboxed command reaches the network.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SandboxNetwork {
    /// Not at all: a private network namespace with loopback only, and no
    /// `socket(AF_UNIX, …)` (a seccomp filter).
    Off,
    /// The machine's network, as outside the sandbox.
    On,
    /// As [`Off`](Self::Off), plus a TCP listener at `127.0.0.1:<port>` inside the namespace,
    /// made by the child before anything it runs and handed to a [`ProxyServer`] outside: the
    /// one way out, through a proxy that decides which hosts a connection may reach.
    Allowlist(NetworkProxy),
}

impl SandboxNetwork {
    /// Whether commands run in a network namespace of their own (everything but
    /// [`On`](Self::On)), with the seccomp filter on Unix sockets.
    pub fn is_isolated(&self) -> bool {
        !matches!(self, Self::On)
    }

    /// The proxy of an allowlist.
    pub fn proxy(&self) -> Option<&NetworkProxy> {
        match self {
            Self::Allowlist(proxy) => Some(proxy),
            Self::Off | Self::On => None,
        }
    }
}

/// Where the connections of a sandbox with a network allowlist go: the port its listener
/// takes inside each namespace, the allowed hosts as configured (for messages), and the server
/// that takes each namespace's listener.
///
/// Two are equal when they have the same port and hosts and the very same server (a shell is
/// reused only by calls whose connections go to the same proxy).
#[derive(Clone)]
pub struct NetworkProxy {
    /// The port of the listener at `127.0.0.1` inside every namespace (the commands'
    /// `HTTP_PROXY` names it).
    pub port: u16,
    /// The allowed hosts, as the configuration writes them.
    pub hosts: Vec<String>,
    /// What takes each namespace's listener.
    pub server: Arc<dyn ProxyServer>,
}

impl fmt::Debug for NetworkProxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NetworkProxy")
            .field("port", &self.port)
            .field("hosts", &self.hosts)
            .finish_non_exhaustive()
    }
}

impl PartialEq for NetworkProxy {
    fn eq(&self, other: &Self) -> bool {
        self.port == other.port
            && self.hosts == other.hosts
            && std::ptr::addr_eq(Arc::as_ptr(&self.server), Arc::as_ptr(&other.server))
    }
}

impl Eq for NetworkProxy {}

impl std::hash::Hash for NetworkProxy {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.port.hash(state);
        self.hosts.hash(state);
        Arc::as_ptr(&self.server).cast::<()>().hash(state);
    }
}

/// What takes the listener a sandboxed child made inside its network namespace (one per
/// spawned tree: a shell, a PTY session, a job). Called from within the tokio runtime the
/// spawn ran on.
pub trait ProxyServer: Send + Sync {
    /// Serves the connections accepted on `listener` (those of the namespace's processes)
    /// until the returned link is dropped, which the spawner does when the tree's
    /// [`Supervisor`](crate::Supervisor) goes.
    fn attach(&self, listener: std::net::TcpListener) -> Box<dyn NetworkLink>;
}

/// One namespace's link to the proxy, kept by its [`Supervisor`](crate::Supervisor).
pub trait NetworkLink: Send + Sync {
    /// A mark of now, for [`refused_since`](Self::refused_since).
    fn mark(&self) -> u64;
    /// The `host:port`s the proxy refused for this namespace's connections since `mark`, each
    /// once, in the order first refused.
    fn refused_since(&self, mark: u64) -> Vec<String>;
}

/// Why a sandbox cannot be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    /// The kernel cannot enforce what the policy asks for: nothing runs.
    #[error("Sandbox unavailable: {0}")]
    Unavailable(String),
    /// A writable root that would make the sandbox meaningless (`/`, `$HOME`).
    #[error("Sandbox refuses a writable root of {}", .0.display())]
    RefusedRoot(PathBuf),
}

/// The oldest Landlock ABI a sandbox accepts: 3, the first that can forbid truncating a file
/// (with ABI 1 and 2 `truncate(2)` of any file would still work).
pub const MIN_LANDLOCK_ABI: i32 = 3;

/// What the running kernel offers a sandbox, as [`Kernel::probe`] finds it. A test can pass a
/// smaller one to [`check_with`] (or [`SpawnSpec::sandbox_kernel`](crate::SpawnSpec)) to see
/// the refusal a weaker kernel gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kernel {
    /// The Landlock ABI version (0: no Landlock).
    pub landlock_abi: i32,
    /// A process of this user may create a user namespace.
    pub user_namespaces: bool,
    /// Seccomp filters are available.
    pub seccomp: bool,
}

impl Kernel {
    /// Asks the running kernel (once per process; the answer is cached).
    pub fn probe() -> Self {
        static PROBED: std::sync::OnceLock<Kernel> = std::sync::OnceLock::new();
        *PROBED.get_or_init(probe_now)
    }

    /// What this kernel offers within `limit`: the lower Landlock ABI, and each feature only
    /// when both have it. A limit can only take away, so a check against the result is at
    /// least as strict as against `self` (the seam a test uses to pretend the kernel offers
    /// less, never more).
    ///
    /// ```
    /// use agentsh_process::sandbox::Kernel;
    ///
    /// let real = Kernel { landlock_abi: 7, user_namespaces: true, seccomp: true };
    /// let limit = Kernel { landlock_abi: 9, user_namespaces: false, seccomp: true };
    /// assert_eq!(
    ///     real.limited_to(limit),
    ///     Kernel { landlock_abi: 7, user_namespaces: false, seccomp: true }
    /// );
    /// ```
    #[must_use]
    pub fn limited_to(self, limit: Kernel) -> Kernel {
        Kernel {
            landlock_abi: self.landlock_abi.min(limit.landlock_abi),
            user_namespaces: self.user_namespaces && limit.user_namespaces,
            seccomp: self.seccomp && limit.seccomp,
        }
    }
}

#[cfg(target_os = "linux")]
fn probe_now() -> Kernel {
    let read_number =
        |path: &str| -> Option<i64> { std::fs::read_to_string(path).ok()?.trim().parse().ok() };
    // SAFETY: the version query of landlock_create_ruleset takes no pointer (NULL, 0).
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    let root = rustix::process::geteuid().is_root();
    // Unprivileged: Debian's switch, and Ubuntu's AppArmor rule that leaves a new user
    // namespace without capabilities (its loopback could not be brought up).
    let user_namespaces = read_number("/proc/sys/user/max_user_namespaces").is_none_or(|n| n > 0)
        && (root
            || (read_number("/proc/sys/kernel/unprivileged_userns_clone").is_none_or(|n| n != 0)
                && read_number("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
                    .is_none_or(|n| n == 0)));
    // SAFETY: PR_GET_SECCOMP takes no pointer; it fails with EINVAL without seccomp.
    let seccomp = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) } >= 0;
    Kernel {
        landlock_abi: i32::try_from(abi).unwrap_or(0).max(0),
        user_namespaces,
        seccomp,
    }
}

#[cfg(not(target_os = "linux"))]
fn probe_now() -> Kernel {
    Kernel {
        landlock_abi: 0,
        user_namespaces: false,
        seccomp: false,
    }
}

/// Whether the running kernel can enforce `policy` (agentsh asks at session start, so that a
/// sandbox that cannot be had is an error before any command runs).
///
/// # Errors
///
/// [`SandboxError::Unavailable`] naming what the kernel lacks; [`SandboxError::RefusedRoot`]
/// for a writable root of `/`.
pub fn check(policy: &SandboxSpec) -> Result<(), SandboxError> {
    check_with(policy, Kernel::probe())
}

/// [`check`] against the given kernel instead of the running one (the test seam).
///
/// # Errors
///
/// As [`check`].
pub fn check_with(policy: &SandboxSpec, kernel: Kernel) -> Result<(), SandboxError> {
    if !cfg!(target_os = "linux") {
        return Err(SandboxError::Unavailable(
            "the sandbox needs Linux (Landlock, user namespaces, seccomp)".to_owned(),
        ));
    }
    if kernel.landlock_abi == 0 {
        return Err(SandboxError::Unavailable(
            "Landlock is not enabled in this kernel (it needs Linux 6.2 or later with \
             `landlock` in the `lsm=` list)"
                .to_owned(),
        ));
    }
    if kernel.landlock_abi < MIN_LANDLOCK_ABI {
        return Err(SandboxError::Unavailable(format!(
            "this kernel's Landlock ABI is {}, at least {MIN_LANDLOCK_ABI} is needed (Linux 6.2)",
            kernel.landlock_abi
        )));
    }
    if !kernel.user_namespaces {
        return Err(SandboxError::Unavailable(
            "user namespaces are not allowed (user.max_user_namespaces is 0, \
             kernel.unprivileged_userns_clone is 0 or \
             kernel.apparmor_restrict_unprivileged_userns is 1)"
                .to_owned(),
        ));
    }
    if policy.network.is_isolated() && !kernel.seccomp {
        return Err(SandboxError::Unavailable(
            "seccomp filters are not available (needed unless network = true)".to_owned(),
        ));
    }
    for path in &policy.read_only {
        if !path.is_absolute() {
            return Err(SandboxError::Unavailable(format!(
                "the read-only path {} is not an absolute path",
                path.display()
            )));
        }
    }
    for root in &policy.writable {
        if !root.is_absolute() {
            return Err(SandboxError::Unavailable(format!(
                "the writable root {} is not an absolute path",
                root.display()
            )));
        }
        if root.parent().is_none() {
            return Err(SandboxError::RefusedRoot(root.clone()));
        }
    }
    Ok(())
}

/// One BPF instruction (`struct sock_filter`).
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub(crate) struct SockFilter {
    pub(crate) code: u16,
    pub(crate) jt: u8,
    pub(crate) jf: u8,
    pub(crate) k: u32,
}

/// A directory the child bind-mounts onto itself read-only.
#[derive(Debug)]
pub(crate) struct ReadOnlyMount {
    /// The path, NUL-terminated for `mount(2)`.
    pub(crate) path: std::ffi::CString,
    /// The flags of the read-only remount: `MS_BIND | MS_REMOUNT | MS_RDONLY` plus the
    /// `nosuid`, `nodev`, `noexec` and atime flags the mount holding the path has (a remount
    /// in a user namespace may not clear flags locked by the namespace's creation: `EPERM`).
    pub(crate) flags: libc::c_ulong,
}

/// A policy turned into what the forked child applies with raw system calls (see the
/// containment stage in `supervisor::forked`).
#[derive(Debug)]
pub(crate) struct Prepared {
    /// The Landlock rule set, created and filled; the child restricts itself with it (after
    /// adding its private `/dev/pts`, see [`Prepared::devpts_access`]).
    pub(crate) ruleset: std::os::fd::OwnedFd,
    /// The Landlock rights on the child's private `devpts` instance, whose directory exists
    /// only after the fork: the child adds that rule itself (`landlock_add_rule`).
    pub(crate) devpts_access: u64,
    /// The directories kept read-only.
    pub(crate) read_only: Vec<ReadOnlyMount>,
    /// Also unshare the network namespace (and bring its loopback up).
    pub(crate) new_net: bool,
    /// With an allowlist: the port of the listener the child makes at `127.0.0.1` in its new
    /// network namespace and sends to agentsh.
    pub(crate) proxy_port: Option<u16>,
    /// `/proc/self/uid_map` and `gid_map` contents: the own ids mapped to themselves.
    pub(crate) uid_map: Vec<u8>,
    pub(crate) gid_map: Vec<u8>,
    /// The seccomp program; empty for none.
    pub(crate) filter: Vec<SockFilter>,
    /// With a size-limited temp dir: the session's tmpfs (a descriptor of its own) and the
    /// temp dir it is mounted at.
    pub(crate) temp_mount: Option<(std::os::fd::OwnedFd, std::ffi::CString)>,
}

/// The devices every sandboxed shell may write (when they exist). `/dev/pts` is the child's
/// private `devpts` instance, which it adds to the rule set itself after mounting it (the
/// machine's `/dev/pts` is hidden below it); `/dev/ptmx` opens a PTY in that instance (the
/// kernel looks up `pts` beside the `ptmx` node it was opened through).
const ALWAYS_WRITABLE: [&str; 3] = ["/dev/null", "/dev/tty", "/dev/ptmx"];

/// Builds the rule set and filter for `policy` before the fork: its writable roots, the
/// always-writable devices and `private_dir` (the shell's own directory); and the read-only
/// bind mounts, each checked to be a directory now (the child only mounts).
#[cfg(target_os = "linux")]
pub(crate) fn prepare(
    policy: &SandboxSpec,
    kernel: Kernel,
    private_dir: Option<&std::path::Path>,
) -> Result<Prepared, SandboxError> {
    use landlock::{
        ABI, Access, AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
        RulesetCreatedAttr, Scope,
    };
    check_with(policy, kernel)?;
    let unavailable =
        |what: &str, err: &dyn fmt::Display| SandboxError::Unavailable(format!("{what}: {err}"));
    // The rights of a known ABI (8 at most: ABI 9 adds a right on connecting to Unix sockets,
    // which `network = true` must keep), each a hard requirement: a kernel that cannot enforce
    // one fails here instead of running with less.
    let abi = ABI::from(kernel.landlock_abi.min(8));
    let write = AccessFs::from_write(abi);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(write)
        .map_err(|err| unavailable("Landlock", &err))?;
    if kernel.landlock_abi >= 6 {
        // No connecting to abstract Unix sockets or signalling processes outside.
        ruleset = ruleset
            .scope(Scope::from_all(abi))
            .map_err(|err| unavailable("Landlock", &err))?;
    }
    let mut created = ruleset
        .create()
        .map_err(|err| unavailable("Landlock", &err))?;
    let mut paths: Vec<(&std::path::Path, bool)> = policy
        .writable
        .iter()
        .map(|root| (root.as_path(), true))
        .collect();
    paths.extend(private_dir.map(|dir| (dir, true)));
    paths.extend(
        ALWAYS_WRITABLE
            .iter()
            .map(|dev| (std::path::Path::new(dev), false)),
    );
    for (path, required) in paths {
        let root_error = |err: &dyn fmt::Display| {
            unavailable(&format!("the writable root {}", path.display()), err)
        };
        let meta = match std::fs::metadata(path) {
            Ok(meta) => meta,
            Err(_) if !required => continue,
            Err(err) => return Err(root_error(&err)),
        };
        // A file takes only the rights of files (a directory's would be refused).
        let access = if meta.is_dir() {
            write
        } else {
            write & AccessFs::from_file(abi)
        };
        let fd = PathFd::new(path).map_err(|err| root_error(&err))?;
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|err| unavailable("Landlock", &err))?;
    }
    // The tmpfs mounted over the temp dir: Landlock's checks do not look at a directory a
    // mount hides, so the tmpfs's own root takes the temp dir's rights (a rule holds for that
    // inode in every copy of the mount).
    if let Some(temp_fs) = &policy.temp_fs {
        created = created
            .add_rule(PathBeneath::new(&*temp_fs.mount, write))
            .map_err(|err| unavailable("Landlock", &err))?;
    }
    let read_only = policy
        .read_only
        .iter()
        .map(|path| read_only_mount(path))
        .collect::<Result<Vec<_>, _>>()?;
    let ruleset: Option<std::os::fd::OwnedFd> = created.into();
    let ruleset = ruleset
        .ok_or_else(|| SandboxError::Unavailable("Landlock created no rule set".to_owned()))?;
    let temp_mount = policy
        .temp_fs
        .as_ref()
        .map(|temp_fs| {
            let dir = policy.temp_dir.as_deref().ok_or_else(|| {
                SandboxError::Unavailable("a temp dir of limited size without a temp dir".into())
            })?;
            let fd = temp_fs
                .mount
                .try_clone()
                .map_err(|err| unavailable("the temp dir's tmpfs", &err))?;
            let path = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
                .map_err(|err| unavailable("the temp dir's path", &err))?;
            Ok::<_, SandboxError>((fd, path))
        })
        .transpose()?;
    let uid = rustix::process::geteuid().as_raw();
    let gid = rustix::process::getegid().as_raw();
    Ok(Prepared {
        ruleset,
        devpts_access: write.bits(),
        read_only,
        new_net: policy.network.is_isolated(),
        proxy_port: policy.network.proxy().map(|proxy| proxy.port),
        uid_map: format!("{uid} {uid} 1\n").into_bytes(),
        gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        filter: if policy.network.is_isolated() {
            unix_socket_filter()?
        } else {
            Vec::new()
        },
        temp_mount,
    })
}

/// The prepared bind mount of `path`: a directory, not a symlink (`mount(2)` would follow
/// one), with the flags of the mount that holds it.
#[cfg(target_os = "linux")]
fn read_only_mount(path: &std::path::Path) -> Result<ReadOnlyMount, SandboxError> {
    use rustix::fs::StatVfsMountFlags as Vfs;
    use std::os::unix::ffi::OsStrExt as _;
    let failed = |err: &dyn fmt::Display| {
        SandboxError::Unavailable(format!("the read-only path {}: {err}", path.display()))
    };
    let meta = std::fs::symlink_metadata(path).map_err(|err| failed(&err))?;
    if !meta.is_dir() {
        return Err(failed(&"not a directory"));
    }
    let held_by = rustix::fs::statvfs(path)
        .map_err(|err| failed(&std::io::Error::from(err)))?
        .f_flag;
    let mut flags = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY;
    for (vfs, ms) in [
        (Vfs::NOSUID, libc::MS_NOSUID),
        (Vfs::NODEV, libc::MS_NODEV),
        (Vfs::NOEXEC, libc::MS_NOEXEC),
        (Vfs::NOATIME, libc::MS_NOATIME),
        (Vfs::NODIRATIME, libc::MS_NODIRATIME),
        (Vfs::RELATIME, libc::MS_RELATIME),
    ] {
        if held_by.contains(vfs) {
            flags |= ms;
        }
    }
    Ok(ReadOnlyMount {
        path: std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|err| failed(&err))?,
        flags,
    })
}

/// The seccomp program of an isolated network (`network = false` or an allowlist): `socket(AF_UNIX, …)` fails with `EPERM`,
/// everything else is allowed (a foreign architecture's calls kill the process, so the filter
/// cannot be bypassed through them).
#[cfg(target_os = "linux")]
fn unix_socket_filter() -> Result<Vec<SockFilter>, SandboxError> {
    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };
    let failed = |err: &dyn fmt::Display| SandboxError::Unavailable(format!("seccomp: {err}"));
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|err| failed(&err))?;
    let af_unix = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Eq,
        libc::AF_UNIX as u64,
    )
    .map_err(|err| failed(&err))?;
    let rule = SeccompRule::new(vec![af_unix]).map_err(|err| failed(&err))?;
    let mut rules = std::collections::BTreeMap::new();
    rules.insert(libc::SYS_socket, vec![rule.clone()]);
    // x86-64's x32 ABI numbers its calls with bit 30 set, under the same architecture.
    #[cfg(target_arch = "x86_64")]
    rules.insert(libc::SYS_socket | 0x4000_0000, vec![rule]);
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|err| failed(&err))?;
    let program: BpfProgram = filter.try_into().map_err(|err| failed(&err))?;
    Ok(program
        .into_iter()
        .map(|insn| SockFilter {
            code: insn.code,
            jt: insn.jt,
            jf: insn.jf,
            k: insn.k,
        })
        .collect())
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn prepare(
    policy: &SandboxSpec,
    kernel: Kernel,
    _private_dir: Option<&std::path::Path>,
) -> Result<Prepared, SandboxError> {
    check_with(policy, kernel)?;
    Err(SandboxError::Unavailable(
        "the sandbox needs Linux".to_owned(),
    ))
}
