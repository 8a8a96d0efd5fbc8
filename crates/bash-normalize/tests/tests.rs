//! Integration tests of agentsh-bash-normalize (one binary, modules below).

mod bash;
mod corpus;
mod props;
mod support;
mod table;
