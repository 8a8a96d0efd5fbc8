//! The workspace as its manifests describe it: member crates and declared dependencies.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml::{Table, Value};

/// The root `Cargo.toml` and the member manifests under `crates/`.
pub struct Manifest {
    #[cfg_attr(not(test), allow(dead_code))]
    root: PathBuf,
    workspace_dependencies: Table,
    /// `crates/<dir>` → its parsed `Cargo.toml`.
    members: BTreeMap<String, Table>,
}

fn read_toml(path: &Path) -> Result<Table, String> {
    let text = std::fs::read_to_string(path).map_err(|err| format!("{}: {err}", path.display()))?;
    text.parse::<Table>()
        .map_err(|err| format!("{}: {err}", path.display()))
}

impl Manifest {
    /// Reads the workspace rooted at `root`.
    pub fn load(root: &Path) -> Result<Self, String> {
        let top = read_toml(&root.join("Cargo.toml"))?;
        let workspace_dependencies = top
            .get("workspace")
            .and_then(|w| w.get("dependencies"))
            .and_then(Value::as_table)
            .cloned()
            .unwrap_or_default();
        let mut members = BTreeMap::new();
        let crates = root.join("crates");
        let entries =
            std::fs::read_dir(&crates).map_err(|err| format!("{}: {err}", crates.display()))?;
        for entry in entries.flatten() {
            let manifest = entry.path().join("Cargo.toml");
            if manifest.is_file() {
                members.insert(
                    entry.file_name().to_string_lossy().into_owned(),
                    read_toml(&manifest)?,
                );
            }
        }
        Ok(Self {
            root: root.to_path_buf(),
            workspace_dependencies,
            members,
        })
    }

    /// `(dir, package name)` of every crate under `crates/`, sorted by dir.
    pub fn crates(&self) -> Vec<(String, String)> {
        self.members
            .iter()
            .map(|(dir, table)| {
                let name = table
                    .get("package")
                    .and_then(|p| p.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or(dir)
                    .to_owned();
                (dir.clone(), name)
            })
            .collect()
    }

    /// The names of the normal dependencies (`[dependencies]`) of `crates/<dir>` that every
    /// build has: an optional one, which only a feature turns on, is left out.
    #[cfg(test)]
    pub fn normal_dependencies(&self, dir: &str) -> Vec<String> {
        self.members
            .get(dir)
            .and_then(|table| table.get("dependencies"))
            .and_then(Value::as_table)
            .map(|deps| {
                deps.iter()
                    .filter(|(_, spec)| spec.get("optional").and_then(Value::as_bool) != Some(true))
                    .map(|(name, _)| name.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Names declared in `[workspace.dependencies]`.
    #[cfg(test)]
    pub fn declared_dependencies(&self) -> Vec<String> {
        self.workspace_dependencies.keys().cloned().collect()
    }

    /// Every dependency name a member (crates, xtask, examples) takes with `workspace = true`.
    #[cfg(test)]
    pub fn inherited_dependencies(&self) -> Result<Vec<String>, String> {
        let mut tables: Vec<Table> = self.members.values().cloned().collect();
        for extra in ["xtask", "examples"] {
            let dir = self.root.join(extra);
            let direct = dir.join("Cargo.toml");
            if direct.is_file() {
                tables.push(read_toml(&direct)?);
            } else if let Ok(entries) = std::fs::read_dir(&dir) {
                for entry in entries.flatten() {
                    let manifest = entry.path().join("Cargo.toml");
                    if manifest.is_file() {
                        tables.push(read_toml(&manifest)?);
                    }
                }
            }
        }
        let mut names = Vec::new();
        for table in &tables {
            let mut sections: Vec<&Table> = Vec::new();
            for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
                if let Some(section) = table.get(key).and_then(Value::as_table) {
                    sections.push(section);
                }
            }
            if let Some(targets) = table.get("target").and_then(Value::as_table) {
                for target in targets.values().filter_map(Value::as_table) {
                    for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
                        if let Some(section) = target.get(key).and_then(Value::as_table) {
                            sections.push(section);
                        }
                    }
                }
            }
            for section in sections {
                for (name, spec) in section {
                    if spec.get("workspace").and_then(Value::as_bool) == Some(true) {
                        names.push(name.clone());
                    }
                }
            }
        }
        names.sort();
        names.dedup();
        Ok(names)
    }

    /// The `[workspace.dependencies]` entry of `name` as an inline TOML value (version and
    /// features), for a project outside the workspace.
    pub fn dependency_spec(&self, name: &str) -> Result<String, String> {
        let spec = self
            .workspace_dependencies
            .get(name)
            .ok_or_else(|| format!("{name} is not in [workspace.dependencies]"))?;
        Ok(match spec {
            Value::Table(table) => {
                let mut inline = toml::map::Map::new();
                for (key, value) in table {
                    if key != "path" {
                        inline.insert(key.clone(), value.clone());
                    }
                }
                Value::Table(inline).to_string()
            }
            other => other.to_string(),
        })
    }
}
