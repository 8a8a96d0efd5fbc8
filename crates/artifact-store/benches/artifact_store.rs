//! Figures of the artifact store, each with a baseline measured in the same run:
//! - cost of one allocation (create with `O_EXCL`, lock, check, then drop unused = unlink) against
//!   a bare `create_new` + `remove_file` of a file in the same directory;
//! - cost of opening a store of 10,000 artifacts against opening an empty one (a start must
//!   not cost more with a full store);
//! - throughput of a line-range read of a large artifact (which counts every line for
//!   `total_lines`) against a plain buffered read that counts newlines.

use std::fs::{self, File, OpenOptions};
use std::hint::black_box;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::OpenOptionsExt;
use std::time::{Duration, Instant};

use agentsh_artifact_store::{ArtifactStore, RetentionPolicy, Spill};
use agentsh_bench_support::{Row, mb_per_s, median};

const IDS_PER_ROUND: u32 = 2_000;
const ROUNDS: usize = 7;
const READ_FILE_BYTES: usize = 64 << 20;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tmp = tempfile::tempdir()?;
    allocation(&tmp)?;
    opening(&tmp)?;
    reading(&tmp)?;
    Ok(())
}

fn allocation(tmp: &tempfile::TempDir) -> Result<(), Box<dyn std::error::Error>> {
    let store = ArtifactStore::open(tmp.path().join("alloc"), RetentionPolicy::default())?;
    let bare_dir = tmp.path().join("bare");
    fs::create_dir(&bare_dir)?;

    let mut ours = Vec::new();
    let mut bare = Vec::new();
    let mut name = 0u64;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..IDS_PER_ROUND {
            black_box(store.allocate()?);
        }
        ours.push(start.elapsed() / IDS_PER_ROUND);

        let start = Instant::now();
        for _ in 0..IDS_PER_ROUND {
            name += 1;
            let path = bare_dir.join(format!("{name}.bash.log"));
            let file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)?;
            drop(black_box(file));
            fs::remove_file(&path)?;
        }
        bare.push(start.elapsed() / IDS_PER_ROUND);
    }
    let (ours, bare) = (micros(median(&ours)), micros(median(&bare)));
    Row::new(
        "artifact-store",
        "allocate + drop unused reservation, per id",
    )
    .value(ours, "µs")
    .ratio(ours / bare, "create_new(0600) + remove_file")
    .goal("≤ 2×", ours / bare <= 2.0)
    .report();
    Ok(())
}

/// Artifacts in the full store of the opening row.
const FULL_STORE_ARTIFACTS: u64 = 10_000;
/// Opens of each store per round.
const OPENS_PER_ROUND: u32 = 200;

fn opening(tmp: &tempfile::TempDir) -> Result<(), Box<dyn std::error::Error>> {
    let (full, empty) = (tmp.path().join("full"), tmp.path().join("empty"));
    fs::create_dir(&full)?;
    for id in 1..=FULL_STORE_ARTIFACTS {
        fs::write(full.join(format!("{id}.bash.log")), b"output\n")?;
    }
    // The first opens make each store's counter, as the first start on a store does.
    drop(ArtifactStore::open(&full, RetentionPolicy::default())?);
    drop(ArtifactStore::open(&empty, RetentionPolicy::default())?);

    let mut times = [Vec::new(), Vec::new()];
    for _ in 0..ROUNDS {
        for (dir, times) in [&full, &empty].into_iter().zip(times.iter_mut()) {
            let start = Instant::now();
            for _ in 0..OPENS_PER_ROUND {
                black_box(ArtifactStore::open(dir, RetentionPolicy::default())?);
            }
            times.push(start.elapsed() / OPENS_PER_ROUND);
        }
    }
    let [full, empty] = times.map(|times| micros(median(&times)));
    Row::new("artifact-store", "open a store of 10,000 artifacts")
        .value(full, "µs")
        .ratio(full / empty, "open an empty store")
        .goal("≤ 1.10×", full / empty <= 1.10)
        .report();
    Ok(())
}

fn reading(tmp: &tempfile::TempDir) -> Result<(), Box<dyn std::error::Error>> {
    let store = ArtifactStore::open(tmp.path().join("read"), RetentionPolicy::default())?;
    let mut spill = store.allocate()?;
    let line = b"warning: unused variable `x` in src/main.rs line 42, column 7 of something\n";
    let mut written = 0;
    while written < READ_FILE_BYTES {
        spill.write_all(line)?;
        written += line.len();
    }
    spill.finish()?;
    let id = spill.id().to_owned();
    let path = spill.path().to_owned();
    drop(spill);

    let mut ours = Vec::new();
    let mut bare = Vec::new();
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let text = store.read(&id, Some(1_000), Some(10))?;
        ours.push(start.elapsed());
        black_box(text);

        let start = Instant::now();
        let mut reader = BufReader::with_capacity(64 * 1024, File::open(&path)?);
        let mut newlines = 0;
        loop {
            let chunk = reader.fill_buf()?;
            if chunk.is_empty() {
                break;
            }
            newlines += memchr::memchr_iter(b'\n', chunk).count();
            let len = chunk.len();
            reader.consume(len);
        }
        bare.push(start.elapsed());
        black_box(newlines);
    }
    let bytes = written as u64;
    let (ours, bare) = (
        mb_per_s(bytes, median(&ours)),
        mb_per_s(bytes, median(&bare)),
    );
    Row::new(
        "artifact-store",
        "read 10 lines at offset 1000 of a 64 MiB artifact",
    )
    .value(ours, "MB/s")
    .ratio(ours / bare, "buffered read counting newlines")
    .goal("≥ 0.8×", ours / bare >= 0.8)
    .report();
    Ok(())
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}
