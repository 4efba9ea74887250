//! A throw-away PostgreSQL cluster from Debian's packages (`.ci/run`
//! installs `postgresql`): `initdb` into a temporary folder, the server on
//! 127.0.0.1 at a port of its own with its socket in that folder, stopped
//! and removed when dropped. As root, the server runs as the `postgres`
//! user (PostgreSQL refuses to run as root).

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

pub struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub port: u16,
}

impl Cluster {
    pub fn start() -> Self {
        let bin = server_binaries();
        let dir = tempfile::Builder::new().prefix("dongle-pg-").tempdir_in("/tmp").unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        if as_root() {
            let status = Command::new("chown").args(["-R", "postgres:postgres"]).arg(dir.path()).status().unwrap();
            assert!(status.success(), "chown the cluster folder to postgres");
        }
        let port = free_port();
        let cluster = Self { dir, bin, port };
        cluster.run("initdb", &["-D", data.to_str().unwrap(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
        let options = format!("-c listen_addresses=127.0.0.1 -p {port} -k {} -c fsync=on", cluster.dir.path().display());
        let log = cluster.dir.path().join("server.log");
        cluster.run("pg_ctl", &["-D", data.to_str().unwrap(), "-l", log.to_str().unwrap(), "-o", &options, "-w", "-t", "30", "start"]);
        cluster.wait_until_ready();
        cluster
    }

    /// A new, empty database on this cluster; its connection URL.
    pub fn database(&self) -> String {
        let name = format!("t_{}", uuid::Uuid::new_v4().simple());
        self.run("createdb", &["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres", &name]);
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    fn run(&self, program: &str, args: &[&str]) {
        let mut command = if as_root() {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(self.bin.join(program));
            command
        } else {
            Command::new(self.bin.join(program))
        };
        let output = command.args(args).current_dir(self.dir.path()).output().unwrap_or_else(|e| panic!("run {program}: {e}"));
        assert!(output.status.success(), "{program} failed: {}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    }

    fn wait_until_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "PostgreSQL did not accept connections on {}", self.port);
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops the server at once, as a crash or a pulled cable would.
    pub fn stop(&self) {
        let data = self.dir.path().join("data");
        self.run("pg_ctl", &["-D", data.to_str().unwrap(), "-m", "immediate", "-w", "stop"]);
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.dir.path().join("data");
        if data.join("postmaster.pid").exists() {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.stop()));
        }
    }
}

fn as_root() -> bool {
    nix::unistd::Uid::effective().is_root()
}

/// The newest installed PostgreSQL's server programs.
fn server_binaries() -> PathBuf {
    let root = Path::new("/usr/lib/postgresql");
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(root)
        .unwrap_or_else(|_| panic!("{} is missing: install PostgreSQL (.ci/run installs Debian's postgresql)", root.display()))
        .flatten()
        .filter_map(|entry| Some((entry.file_name().to_str()?.parse().ok()?, entry.path().join("bin"))))
        .filter(|(_, bin)| bin.join("initdb").is_file())
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).expect("a PostgreSQL server with initdb")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}
