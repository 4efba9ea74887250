mod bypass;
mod cli;
mod http;
mod persistence;
mod robustness;
mod schema;
mod stdio;
mod support;
