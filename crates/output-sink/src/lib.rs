//! Streaming output sanitiser and bounded output sink with spill to an artifact.
#![deny(missing_docs)]
