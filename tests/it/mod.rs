mod cli;
mod http;
mod robustness;
mod schema;
mod stdio;
mod support;
