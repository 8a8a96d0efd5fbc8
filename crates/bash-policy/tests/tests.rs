//! Integration tests of agentsh-bash-policy (one binary, modules below).

mod corpus;
mod load;
mod memory;
mod programs;
mod props;
mod segments;
mod spellings;
mod support;
mod tiers;
