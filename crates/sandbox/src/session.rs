//! A session's sandbox above the spawner: its writable roots resolved from the settings, its
//! private temp dir, and the one place that decides whether it can be enforced.
//!
//! The policy itself ([`SandboxSpec`]) and its enforcement in the child are
//! `agentsh-process`'s; this module builds the policy a session's every shell, PTY session and
//! job is started with.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use agentsh_config::{NetworkSetting, SandboxSettings};
use agentsh_process::OwnedDir;
use agentsh_process::sandbox::{
    Kernel, SandboxError, SandboxMode, SandboxNetwork, SandboxSpec, TempFs,
};

use crate::error::SetupError;
use crate::network::{SessionNetwork, proxy_env};

/// The environment variable that makes a session's sandbox check stricter, for tests: the
/// kernel is taken to offer at most what it says (comma-separated `landlock_abi=N`,
/// `user_namespaces=false`, `seccomp=false`), so a test can see the start-up refusal a weaker
/// kernel gets. It can only take away ([`Kernel::limited_to`]): the sandbox itself is always
/// built from what the running kernel offers. An unreadable value refuses the sandbox too.
const SANDBOX_KERNEL_LIMIT_ENV: &str = "AGENTSH_TEST_SANDBOX_KERNEL";

/// The kernel a session's sandbox is checked against: the running one
/// ([`Kernel::probe`]), within `limit` (the session's `sandbox_kernel_limit`)
/// and within [`SANDBOX_KERNEL_LIMIT_ENV`] when set.
fn session_kernel(limit: Option<Kernel>) -> Result<Kernel, SandboxError> {
    let mut kernel = Kernel::probe();
    if let Some(limit) = limit {
        kernel = kernel.limited_to(limit);
    }
    if let Some(value) = std::env::var_os(SANDBOX_KERNEL_LIMIT_ENV) {
        let limit = parse_kernel_limit(&value.to_string_lossy()).map_err(|why| {
            SandboxError::Unavailable(format!(
                "{SANDBOX_KERNEL_LIMIT_ENV}={value:?} is not valid: {why}",
                value = value.to_string_lossy()
            ))
        })?;
        kernel = kernel.limited_to(limit);
    }
    Ok(kernel)
}

/// `landlock_abi=N,user_namespaces=false,seccomp=false` (any of them, any order; a field left
/// out limits nothing).
fn parse_kernel_limit(value: &str) -> Result<Kernel, String> {
    let mut limit = Kernel {
        landlock_abi: i32::MAX,
        user_namespaces: true,
        seccomp: true,
    };
    for field in value.split(',').map(str::trim).filter(|f| !f.is_empty()) {
        let (key, setting) = field
            .split_once('=')
            .ok_or_else(|| format!("`{field}` is not `key=value`"))?;
        let flag = || {
            setting
                .parse::<bool>()
                .map_err(|_| format!("`{key}` takes true or false, got `{setting}`"))
        };
        match key {
            "landlock_abi" => {
                limit.landlock_abi = setting
                    .parse()
                    .map_err(|_| format!("`landlock_abi` takes a number, got `{setting}`"))?;
            }
            "user_namespaces" => limit.user_namespaces = flag()?,
            "seccomp" => limit.seccomp = flag()?,
            _ => {
                return Err(format!(
                    "unknown key `{key}` (expected landlock_abi, user_namespaces or seccomp)"
                ));
            }
        }
    }
    Ok(limit)
}

/// Whether a sandbox can be had for `policy` on `kernel` — **the one place** a session asks,
/// once, when it is made ([`SessionSandbox::new`]): a sandbox that cannot be enforced is an
/// error at start, so no command of the session ever runs without it. The spawner asks again
/// for every process it confines (`SpawnSpec::sandbox`), with the same answer (the kernel is
/// probed once per process), and still refuses what it cannot build then (a writable root
/// removed since the session started).
fn can_enforce(policy: &SandboxSpec, kernel: Kernel) -> Result<(), SandboxError> {
    agentsh_process::sandbox::check_with(policy, kernel)
}

/// The start of the name of a session's private temp dir in the temporary directory (six
/// random letters and digits follow).
const TEMP_DIR_PREFIX: &str = agentsh_process::SANDBOX_TEMP_DIR_PREFIX;

/// A session's sandbox: the policy its processes run under and its private temp dir (0700,
/// `TMPDIR` of every command), removed when the session shuts down or is dropped, and else by
/// a supervisor or a later agentsh (see [`OwnedDir`]).
#[derive(Debug)]
pub struct SessionSandbox {
    /// The policy every shell, PTY session and job of the session is started with.
    pub policy: SandboxSpec,
    temp_path: PathBuf,
    temp: Mutex<Option<OwnedDir>>,
    /// With an allowlist: the session's proxy.
    network: Option<SessionNetwork>,
}

impl SessionSandbox {
    /// The sandbox of a session in `cwd` (absolute, existing) whose user's home is `home`, or
    /// `None` when `settings.mode` is off. Writable roots, canonicalised: in `workspace-write`
    /// `cwd`, the private temp dir and `settings.writable`; in `read-only` the private temp dir
    /// alone. Kept read-only: `<cwd>/.agentsh` when it exists. `/` or `home` as one is refused; so is a sandbox `kernel`
    /// (`session_kernel`) cannot enforce (`Sandbox unavailable: <reason>`). With `tmp_size`
    /// (`limits.tmp_size`) the temp dir is a tmpfs of that many bytes in every sandboxed
    /// process (see [`TempFs`]), refused like the rest when the kernel cannot make one.
    pub fn new(
        settings: &SandboxSettings,
        cwd: &Path,
        home: Option<&Path>,
        kernel_limit: Option<Kernel>,
        tmp_size: Option<u64>,
    ) -> Result<Option<Self>, SetupError> {
        let Some(mode) = settings.mode else {
            return Ok(None);
        };
        let home = home.and_then(|home| home.canonicalize().ok());
        // The roots and the kernel are checked before the temp dir is made: a refusal leaves
        // nothing behind.
        let mut configured = Vec::new();
        if mode == SandboxMode::WorkspaceWrite {
            configured.push(writable_root(cwd, home.as_deref())?);
            for root in &settings.writable {
                configured.push(writable_root(root, home.as_deref())?);
            }
        }
        // The temp dir, made below, is an absolute path other than `/`: the check of the roots
        // without it is the check of the whole policy (an allowlist needs what `false` needs).
        let isolated = if settings.network == NetworkSetting::On {
            SandboxNetwork::On
        } else {
            SandboxNetwork::Off
        };
        can_enforce(
            &SandboxSpec {
                mode,
                writable: configured.clone(),
                read_only: Vec::new(),
                network: isolated.clone(),
                temp_dir: None,
                temp_fs: None,
            },
            session_kernel(kernel_limit)?,
        )?;
        let temp_fs = tmp_size.map(TempFs::new).transpose()?;
        let network = match &settings.network {
            NetworkSetting::Allowlist(hosts) => Some(SessionNetwork::new(hosts)?),
            NetworkSetting::Off | NetworkSetting::On => None,
        };
        // Locked while agentsh runs: removed by a supervisor that outlives agentsh, or by the
        // sweep of a later agentsh (`agentsh_process::sweep_leftovers`).
        let temp = OwnedDir::create(&std::env::temp_dir(), TEMP_DIR_PREFIX)
            .map_err(SetupError::TempDir)?;
        let temp_path = temp.path().canonicalize().map_err(SetupError::TempDir)?;
        // In this order: the cwd, the temp dir, `writable`; each root once.
        let mut writable: Vec<PathBuf> = Vec::new();
        let (cwd_root, rest) = configured
            .split_first()
            .map_or((None, &[][..]), |(c, r)| (Some(c), r));
        for root in cwd_root
            .into_iter()
            .chain(std::iter::once(&temp_path))
            .chain(rest)
        {
            if !writable.contains(root) {
                writable.push(root.clone());
            }
        }
        Ok(Some(Self {
            policy: SandboxSpec {
                mode,
                writable,
                read_only: kept_read_only(cwd),
                network: network.as_ref().map_or(isolated, |network| {
                    SandboxNetwork::Allowlist(network.proxy.clone())
                }),
                temp_dir: Some(temp_path.clone()),
                temp_fs,
            },
            temp_path,
            temp: Mutex::new(Some(temp)),
            network,
        }))
    }

    /// What every command of the session gets in its environment from the sandbox: with an
    /// allowlist, the proxy variables naming the listener inside its namespace.
    pub fn env(&self) -> BTreeMap<String, String> {
        self.network
            .as_ref()
            .map(|network| proxy_env(network.proxy.port))
            .unwrap_or_default()
    }

    /// The policy the rc snapshot is taken under: the session's, without its proxy (a
    /// snapshot runs on a runtime of its own and needs no network).
    pub fn snapshot_spec(&self) -> SandboxSpec {
        let mut policy = self.policy.clone();
        if policy.network.proxy().is_some() {
            policy.network = SandboxNetwork::Off;
        }
        policy
    }

    /// Ends the session's proxy, when it has one (at shutdown; also when dropped).
    pub fn shut_down_network(&self) {
        if let Some(network) = &self.network {
            network.shut_down();
        }
    }

    /// The private temp dir (`TMPDIR` of every command of the session).
    pub fn temp_dir(&self) -> &Path {
        &self.temp_path
    }

    /// Removes the private temp dir and everything in it (at shutdown).
    pub fn remove_temp_dir(&self) {
        let temp = self
            .temp
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(temp) = temp
            && let Err(err) = temp.close()
        {
            tracing::warn!("cannot remove the sandbox's temp dir: {err}");
        }
    }
}

/// The directory of agentsh's own files in a project: its policy and settings, which no
/// sandboxed command may change.
const PROJECT_DIR: &str = ".agentsh";

/// The directories a sandbox keeps read-only in a session in `cwd`: `<cwd>/.agentsh`
/// (canonical) when it is a directory at session start, not a symlink. Nothing otherwise: a
/// symlink's target is not the project's to protect, and a directory made later is decided
/// on by the next session (the policy is fixed for the session, and part of its shells' cache
/// key).
fn kept_read_only(cwd: &Path) -> Vec<PathBuf> {
    let Ok(cwd) = cwd.canonicalize() else {
        return Vec::new();
    };
    let dir = cwd.join(PROJECT_DIR);
    match std::fs::symlink_metadata(&dir) {
        Ok(meta) if meta.is_dir() => vec![dir],
        _ => Vec::new(),
    }
}

/// `root` canonicalised, refused when it is `/` or `home` (canonical).
fn writable_root(root: &Path, home: Option<&Path>) -> Result<PathBuf, SetupError> {
    let resolved = root.canonicalize().map_err(|error| SetupError::Root {
        path: root.to_path_buf(),
        error,
    })?;
    if resolved == Path::new("/") || Some(resolved.as_path()) == home {
        return Err(SetupError::Sandbox(SandboxError::RefusedRoot(
            root.to_path_buf(),
        )));
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_limit_reads_its_fields_and_refuses_the_rest() {
        let none = Kernel {
            landlock_abi: i32::MAX,
            user_namespaces: true,
            seccomp: true,
        };
        assert_eq!(parse_kernel_limit(""), Ok(none));
        assert_eq!(
            parse_kernel_limit(" landlock_abi=2, seccomp=false "),
            Ok(Kernel {
                landlock_abi: 2,
                seccomp: false,
                ..none
            })
        );
        assert_eq!(
            parse_kernel_limit("user_namespaces=false"),
            Ok(Kernel {
                user_namespaces: false,
                ..none
            })
        );
        for (bad, why) in [
            ("landlock", "`landlock` is not `key=value`"),
            ("landlock_abi=x", "`landlock_abi` takes a number, got `x`"),
            ("seccomp=no", "`seccomp` takes true or false, got `no`"),
            ("abi=1", "unknown key `abi`"),
        ] {
            let err = parse_kernel_limit(bad).expect_err(bad);
            assert!(err.starts_with(why), "{bad}: {err}");
        }
    }
}
