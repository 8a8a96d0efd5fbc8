//! Memory stays bounded by the limit plus a constant whatever the output size —
//! measured with a counting global allocator (this binary's own), not self-reported.
//!
//! A deterministic stream (coloured lines, CRLF, progress updates, plain lines) whose sanitised
//! form is built line by line alongside it goes through a sink that spills into a SHA-256
//! hasher; the spilled length and hash must match the expected stream's, and the peak heap while
//! streaming must be the same for 1 MiB and for 1 GiB.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Write;
use std::sync::{Arc, Mutex};

use agentsh_output_sink::{DEFAULT_OUTPUT_MAX_BYTES, OutputSink, SinkOptions, Spill};
use sha2::{Digest, Sha256};

/// Counts live heap bytes and their peak, per thread: the test harness allocates on its own
/// threads while a measurement runs, and only the measuring thread's heap is the sink's.
struct Counting;

thread_local! {
    // Const-initialised and without destructor: usable inside the allocator at any time.
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn grew(size: usize) {
    let _ = LIVE.try_with(|live| {
        live.set(live.get() + size as isize);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(live.get())));
    });
}

fn shrank(size: usize) {
    let _ = LIVE.try_with(|live| live.set(live.get() - size as isize));
}

fn live() -> isize {
    LIVE.with(Cell::get)
}

/// Restarts peak tracking from the current live size.
fn reset_peak() {
    PEAK.with(|peak| peak.set(live()));
}

fn peak() -> isize {
    PEAK.with(Cell::get)
}

// SAFETY: every call is forwarded to `System` unchanged; the counters only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            shrank(layout.size());
            grew(new_size);
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Length and SHA-256 of what was spilled, once finished.
type Spilled = Arc<Mutex<Option<(u64, Vec<u8>)>>>;

/// Hashes what is spilled instead of storing it.
struct HashSpill {
    hasher: Sha256,
    len: u64,
    result: Spilled,
}

impl Spill for HashSpill {
    fn id(&self) -> &'static str {
        "1"
    }

    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hasher.update(bytes);
        self.len += bytes.len() as u64;
        Ok(())
    }

    fn finish(&mut self) -> std::io::Result<()> {
        let digest = std::mem::take(&mut self.hasher).finalize().to_vec();
        *self.result.lock().expect("result lock") = Some((self.len, digest));
        Ok(())
    }

    fn discard(self: Box<Self>) {}
}

/// Appends raw line `n` to `raw` and its sanitised form to `clean`.
fn line(n: u64, raw: &mut Vec<u8>, clean: &mut Vec<u8>) {
    match n % 8 {
        0 => {
            writeln!(raw, "\x1b[1;32mok\x1b[0m test {n} passed\r").expect("write to Vec");
            writeln!(clean, "ok test {n} passed").expect("write to Vec");
        }
        1 => {
            writeln!(raw, "progress {n}: 10%\rprogress {n}: 100%").expect("write to Vec");
            writeln!(clean, "progress {n}: 100%").expect("write to Vec");
        }
        _ => {
            writeln!(raw, "plain output line number {n:>12} of the stream").expect("write to Vec");
            writeln!(clean, "plain output line number {n:>12} of the stream")
                .expect("write to Vec");
        }
    }
}

struct Measured {
    peak_heap: usize,
    sanitised_bytes: u64,
}

/// Streams at least `raw_bytes` through a sink in 64 KiB chunks; checks the spilled stream
/// and returns the heap peak while streaming (above what was live before the sink existed).
fn stream(raw_bytes: u64) -> Measured {
    const CHUNK: usize = 64 * 1024;
    let result = Arc::new(Mutex::new(None));
    let mut expected = Sha256::new();
    let mut expected_len = 0u64;
    let mut raw = Vec::with_capacity(CHUNK + 256);
    let mut clean = Vec::with_capacity(CHUNK + 256);
    let spill = Box::new(HashSpill {
        hasher: Sha256::new(),
        len: 0,
        result: Arc::clone(&result),
    });

    let before = live();
    reset_peak();
    let mut sink = OutputSink::new(SinkOptions {
        max_bytes: DEFAULT_OUTPUT_MAX_BYTES,
        head_lines: None,
        spill: Some(spill),
        secrets: None,
    });
    let mut sent = 0u64;
    let mut n = 0u64;
    while sent < raw_bytes {
        while raw.len() < CHUNK {
            line(n, &mut raw, &mut clean);
            n += 1;
        }
        sink.push(&raw[..CHUNK]);
        sent += CHUNK as u64;
        raw.drain(..CHUNK);
        expected.update(&clean);
        expected_len += clean.len() as u64;
        clean.clear();
    }
    // The rest of the last generated line ends the stream.
    sink.push(&raw);
    let summary = sink.dump();
    let peak_heap = (peak() - before).unsigned_abs();
    drop(sink);

    // The raw remainder is the start of a line already counted in `clean`: it was generated
    // with it. Nothing else to add.
    let (spilled_len, spilled_hash) = result
        .lock()
        .expect("result lock")
        .take()
        .expect("spill finished");
    assert_eq!(spilled_len, expected_len, "spilled length");
    assert_eq!(
        spilled_hash,
        expected.finalize().to_vec(),
        "spilled SHA-256"
    );
    assert_eq!(summary.total_bytes, expected_len);
    assert_eq!(summary.total_lines, n);
    assert_eq!(summary.artifact_id.as_deref(), Some("1"));
    Measured {
        peak_heap,
        sanitised_bytes: expected_len,
    }
}

fn compare(small: u64, large: u64) {
    let small = stream(small);
    let large = stream(large);
    eprintln!(
        "peak heap: {} B for {} sanitised bytes, {} B for {} sanitised bytes",
        small.peak_heap, small.sanitised_bytes, large.peak_heap, large.sanitised_bytes
    );
    assert!(
        large.peak_heap.abs_diff(small.peak_heap) <= 4 * 1024,
        "peak heap grew with the output: {} B vs {} B",
        small.peak_heap,
        large.peak_heap
    );
    // The tail, one 256 KiB spill batch, the held-back line and small change.
    let bound = DEFAULT_OUTPUT_MAX_BYTES + 256 * 1024 + 16 * 1024;
    assert!(
        large.peak_heap <= bound,
        "peak heap {} B > {bound} B",
        large.peak_heap
    );
}

#[test]
fn peak_heap_is_the_same_for_1_mib_and_64_mib() {
    compare(1 << 20, 64 << 20);
}

/// About 6 s in the test profile on an idle 2-core machine.
#[test]
fn peak_heap_is_the_same_for_1_mib_and_1_gib() {
    compare(1 << 20, 1 << 30);
}
