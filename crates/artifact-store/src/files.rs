//! The files of a store directory as both the store and retention see them: listing the
//! entries named like artifacts, and opening one without following a symlink.

use std::fs::{self, File, Permissions};
use std::io;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};

use crate::ArtifactError;
use crate::id::id_from_file_name;

/// Mode of every file of the store: artifacts, its id counter, its retention stamp.
pub(crate) const FILE_MODE: u32 = 0o600;

/// One directory entry named like an artifact.
pub(crate) struct ScannedEntry {
    pub(crate) id: u64,
    pub(crate) path: PathBuf,
    /// A regular file (not a symlink, directory or other kind), so a real artifact.
    pub(crate) is_file: bool,
}

/// Every entry of `dir` named like an artifact, in directory order.
pub(crate) fn scan(dir: &Path) -> Result<Vec<ScannedEntry>, ArtifactError> {
    let read_error = |err| ArtifactError::io("list artifact store", dir, err);
    let mut entries = Vec::new();
    for entry in fs::read_dir(dir).map_err(read_error)? {
        let entry = entry.map_err(read_error)?;
        let Some(id) = id_from_file_name(&entry.file_name()) else {
            continue;
        };
        let is_file = entry.file_type().map_err(read_error)?.is_file();
        entries.push(ScannedEntry {
            id,
            path: entry.path(),
            is_file,
        });
    }
    Ok(entries)
}

/// Opens `path` read-only without following a final symlink and without blocking on a FIFO.
pub(crate) fn open_no_follow(path: &Path) -> io::Result<File> {
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    Ok(File::from(fd))
}

/// Makes the open file `file` a regular file of mode 0600 (the umask may have cleared bits at
/// its creation; a file of another kind is refused): the store's counter and stamp.
pub(crate) fn make_private_file(file: &File) -> io::Result<()> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a regular file",
        ));
    }
    if meta.mode() & 0o7777 != FILE_MODE {
        file.set_permissions(Permissions::from_mode(FILE_MODE))?;
    }
    Ok(())
}
