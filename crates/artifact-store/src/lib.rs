//! Private on-disk store of full command outputs, addressed as artifact://ID.
#![deny(missing_docs)]
