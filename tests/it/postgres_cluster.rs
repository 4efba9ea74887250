//! A throw-away PostgreSQL cluster from Debian's packages (`.ci/run`
//! installs `postgresql`): `initdb` into a temporary folder, the server on
//! 127.0.0.1 at a port of its own with its socket in that folder, stopped
//! and removed when dropped. As root, the server runs as the `postgres`
//! user (PostgreSQL refuses to run as root). [`Cluster::start_with_tls`]
//! also serves TLS, with a certificate for `localhost` and 127.0.0.1
//! signed by a certificate authority made for it (`openssl`).

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

pub struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub port: u16,
    /// The server's options, to start it again after [`Cluster::stop`].
    options: String,
}

impl Cluster {
    pub fn start() -> Self {
        Self::start_serving("")
    }

    /// A cluster that also serves TLS; the authority's certificate is at
    /// [`Cluster::authority`].
    pub fn start_with_tls() -> Self {
        Self::start_serving("-c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key")
    }

    /// The certificate authority that signed a TLS cluster's certificate.
    pub fn authority(&self) -> PathBuf {
        self.dir.path().join("authority.crt")
    }

    fn start_serving(tls: &str) -> Self {
        let bin = server_binaries();
        let dir = tempfile::Builder::new().prefix("dongle-pg-").tempdir_in("/tmp").unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        if as_root() {
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(status.success(), "chown the cluster folder to postgres");
        }
        let port = free_port();
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {port} -k {} -c fsync=on {tls}",
            dir.path().display()
        );
        let cluster = Self { dir, bin, port, options };
        cluster.run(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        if !tls.is_empty() {
            cluster.make_certificates(&data);
        }
        cluster.serve();
        cluster
    }

    /// Starts the server (again, after [`Cluster::stop`]) and waits until
    /// it accepts connections.
    pub fn serve(&self) {
        let data = self.dir.path().join("data");
        let log = self.dir.path().join("server.log");
        self.run(
            "pg_ctl",
            &[
                "-D",
                data.to_str().unwrap(),
                "-l",
                log.to_str().unwrap(),
                "-o",
                &self.options,
                "-w",
                "-t",
                "30",
                "start",
            ],
        );
        self.wait_until_ready();
    }

    /// A new, empty database on this cluster; its connection URL.
    pub fn database(&self) -> String {
        let name = format!("t_{}", uuid::Uuid::new_v4().simple());
        self.run(
            "createdb",
            &["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres", &name],
        );
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// An authority, and a server certificate and key in `data` (readable
    /// by the server alone, as PostgreSQL insists).
    fn make_certificates(&self, data: &Path) {
        let openssl = |args: &[&str]| {
            let output = Command::new("openssl")
                .args(args)
                .current_dir(self.dir.path())
                .output()
                .expect("openssl is installed");
            assert!(
                output.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        };
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=dongle test authority",
            "-keyout",
            "authority.key",
            "-out",
            "authority.crt",
        ]);
        openssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ]);
        std::fs::write(
            self.dir.path().join("names.ext"),
            "subjectAltName = DNS:localhost, IP:127.0.0.1\n",
        )
        .unwrap();
        openssl(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "authority.crt",
            "-CAkey",
            "authority.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "names.ext",
            "-out",
            "server.crt",
        ]);
        for file in ["server.crt", "server.key"] {
            std::fs::rename(self.dir.path().join(file), data.join(file)).unwrap();
        }
        if as_root() {
            let status =
                Command::new("chown").args(["-R", "postgres:postgres"]).arg(data).status().unwrap();
            assert!(status.success(), "chown the certificates to postgres");
        }
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(data.join("server.key"), std::fs::Permissions::from_mode(0o600))
            .unwrap();
    }

    fn run(&self, program: &str, args: &[&str]) {
        let mut command = if as_root() {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(self.bin.join(program));
            command
        } else {
            Command::new(self.bin.join(program))
        };
        let output = command
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .unwrap_or_else(|e| panic!("run {program}: {e}"));
        assert!(
            output.status.success(),
            "{program} failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    fn wait_until_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "PostgreSQL did not accept connections on {}",
                self.port
            );
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
        .unwrap_or_else(|_| {
            panic!(
                "{} is missing: install PostgreSQL (.ci/run installs Debian's postgresql)",
                root.display()
            )
        })
        .flatten()
        .filter_map(|entry| {
            Some((entry.file_name().to_str()?.parse().ok()?, entry.path().join("bin")))
        })
        .filter(|(_, bin)| bin.join("initdb").is_file())
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).expect("a PostgreSQL server with initdb")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}
