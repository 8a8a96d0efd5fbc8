//! Starting and ending processes: private sessions, a subreaper supervisor, tree kill, hardened environment, shell discovery, rc snapshot.
#![deny(missing_docs)]
