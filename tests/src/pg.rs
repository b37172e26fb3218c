//! A throwaway PostgreSQL server for the store tests, the fleet test and the benchmarks:
//! `initdb` and `pg_ctl` from the machine's server binaries (on `PATH` or under
//! `/usr/lib/postgresql/*/bin`), installed from Debian's `postgresql` package with
//! `apt-get` where they are missing (as root); a cluster in a temporary directory,
//! reached over a unix socket there only (no TCP), stopped and removed on drop. As root
//! (initdb refuses to run so) the cluster is the `postgres` system user's.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The port that names the socket (`.s.PGSQL.<port>`) in the server's own directory.
const PORT: u16 = 5432;

/// A running throwaway server.
#[derive(Debug)]
pub struct Server {
    bin: PathBuf,
    dir: PathBuf,
    as_postgres: bool,
    running: bool,
}

impl Server {
    /// Initializes and starts a new cluster. `fsync` off makes commits cheap (a killed
    /// process, or the server, still loses nothing committed; only a machine crash
    /// could); the benchmarks keep it on.
    ///
    /// # Errors
    ///
    /// Why no server could be had: no binaries and no way to install them, or initdb or
    /// the start failed (with their output).
    pub fn start(fsync: bool) -> Result<Server, String> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let bin = binaries()?;
        let as_postgres = is_root();
        let dir = std::env::temp_dir().join(format!(
            "favur-pg-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
        let mut server = Server {
            bin,
            dir,
            as_postgres,
            running: false,
        };
        if as_postgres {
            run(Command::new("chown")
                .arg("-R")
                .arg("postgres:")
                .arg(&server.dir))?;
        }
        let data = server.dir.join("data");
        let mut initdb = server.command("initdb");
        initdb.arg("-D").arg(&data).args([
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-sync",
            "--no-instructions",
        ]);
        run(&mut initdb)?;
        let conf = format!(
            "\nlisten_addresses = ''\nunix_socket_directories = '{}'\nport = {PORT}\nfsync = {}\nmax_connections = 200\nshared_buffers = 32MB\n",
            server.dir.display(),
            if fsync { "on" } else { "off" }
        );
        let path = data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
        text.push_str(&conf);
        std::fs::write(&path, text).map_err(|e| e.to_string())?;
        server.resume()?;
        Ok(server)
    }

    /// The connection string of its `postgres` database.
    pub fn config(&self) -> String {
        self.config_of("postgres")
    }

    /// The connection string of database `dbname`.
    pub fn config_of(&self, dbname: &str) -> String {
        format!(
            "host={} port={PORT} user=postgres dbname={dbname} connect_timeout=10",
            self.dir.display()
        )
    }

    /// Stops the server (fast shutdown: connections are closed, nothing committed is lost).
    ///
    /// # Errors
    ///
    /// `pg_ctl stop` failed.
    pub fn stop(&mut self) -> Result<(), String> {
        let mut stop = self.command("pg_ctl");
        stop.arg("-D")
            .arg(self.dir.join("data"))
            .args(["-m", "fast", "-w", "stop"]);
        run(&mut stop)?;
        self.running = false;
        Ok(())
    }

    /// Starts the (stopped) server again.
    ///
    /// # Errors
    ///
    /// `pg_ctl start` failed (with the server's log).
    pub fn resume(&mut self) -> Result<(), String> {
        let log = self.dir.join("server.log");
        let mut start = self.command("pg_ctl");
        start
            .arg("-D")
            .arg(self.dir.join("data"))
            .arg("-l")
            .arg(&log)
            .args(["-w", "-t", "60", "start"]);
        run(&mut start).map_err(|e| {
            let log = std::fs::read_to_string(&log).unwrap_or_default();
            format!("{e}\nserver log:\n{log}")
        })?;
        self.running = true;
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.dir.join(format!(".s.PGSQL.{PORT}")).exists() {
            if Instant::now() > deadline {
                return Err("the server's socket did not appear".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    /// Kills the postmaster with SIGKILL (a crash: no shutdown, its backends exit when
    /// they notice) and waits until it is gone. [`resume`](Server::resume) then starts
    /// the server with crash recovery.
    ///
    /// # Errors
    ///
    /// No postmaster pid could be read, or `kill` failed.
    pub fn kill_postmaster(&mut self) -> Result<(), String> {
        let pid_file = self.dir.join("data").join("postmaster.pid");
        let text = std::fs::read_to_string(&pid_file).map_err(|e| format!("{e}"))?;
        let pid = text.lines().next().unwrap_or("").trim().to_owned();
        run(Command::new("kill").args(["-KILL", &pid]))?;
        self.running = false;
        let deadline = Instant::now() + Duration::from_secs(30);
        while Path::new("/proc").join(&pid).exists() {
            if Instant::now() > deadline {
                return Err(format!("postmaster {pid} still alive after SIGKILL"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// Starts the server again after [`kill_postmaster`](Server::kill_postmaster),
    /// retrying while the killed server's backends still hold its shared memory.
    ///
    /// # Errors
    ///
    /// The server did not start within 60 s (the last start's error).
    pub fn resume_after_crash(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            match self.resume() {
                Ok(()) => return Ok(()),
                Err(e) if Instant::now() > deadline => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(200)),
            }
        }
    }

    /// Sets (`Some`) or removes (`None`) a line `name = 'value'` of the cluster's
    /// `postgresql.auto.conf`, read at the next start or reload.
    ///
    /// # Errors
    ///
    /// The file could not be read or written.
    pub fn auto_conf(&self, name: &str, value: Option<&str>) -> Result<(), String> {
        let path = self.dir.join("data").join("postgresql.auto.conf");
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let mut lines: Vec<String> = text
            .lines()
            .filter(|l| l.split('=').next().map(str::trim) != Some(name))
            .map(str::to_owned)
            .collect();
        if let Some(value) = value {
            lines.push(format!("{name} = '{value}'"));
        }
        std::fs::write(&path, lines.join("\n") + "\n").map_err(|e| format!("{e}"))
    }

    /// A command running binary `name` of the server, as the cluster's user.
    fn command(&self, name: &str) -> Command {
        let program = self.bin.join(name);
        let mut c = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(program);
            c
        } else {
            Command::new(program)
        };
        c.current_dir(&self.dir);
        c
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.running {
            let mut stop = self.command("pg_ctl");
            stop.arg("-D")
                .arg(self.dir.join("data"))
                .args(["-m", "immediate", "-w", "stop"]);
            let _ = run(&mut stop);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A server for a test, or `None` after printing `SKIPPED: <why>` where none can be had
/// outside CI. Under CI (`CI` set) a missing server fails the test instead.
///
/// # Panics
///
/// Under CI, when no server can be had.
pub fn server_or_skip(test: &str) -> Option<Server> {
    match Server::start(false) {
        Ok(s) => Some(s),
        Err(why) if std::env::var_os("CI").is_some() => {
            panic!("{test}: no PostgreSQL server under CI: {why}")
        }
        Err(why) => {
            eprintln!("SKIPPED: {test}: no PostgreSQL server: {why}");
            None
        }
    }
}

/// Runs `test` with a new server, or prints `SKIPPED: <why>` where none can be had
/// outside CI (see [`server_or_skip`]).
pub fn with_server(name: &str, test: impl FnOnce(&mut Server)) {
    if let Some(mut server) = server_or_skip(name) {
        test(&mut server);
    }
}

/// The directory of `initdb`, `pg_ctl` and `postgres`, installing Debian's package if
/// they are missing and this is root.
fn binaries() -> Result<PathBuf, String> {
    if let Some(dir) = find_binaries() {
        return Ok(dir);
    }
    if !is_root() {
        return Err(
            "initdb and pg_ctl are not installed (and not root to apt-get install postgresql)"
                .into(),
        );
    }
    static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = INSTALL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(dir) = find_binaries() {
        return Ok(dir);
    }
    eprintln!("installing Debian's postgresql package for the store tests");
    let _ = run(Command::new("apt-get").args(["update", "-qq"]));
    run(Command::new("apt-get")
        .args([
            "install",
            "-y",
            "-qq",
            "--no-install-recommends",
            "postgresql",
        ])
        .env("DEBIAN_FRONTEND", "noninteractive"))?;
    find_binaries().ok_or_else(|| "apt-get installed postgresql but no initdb was found".into())
}

fn find_binaries() -> Option<PathBuf> {
    let has = |d: &Path| {
        d.join("initdb").is_file() && d.join("pg_ctl").is_file() && d.join("postgres").is_file()
    };
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|d| has(d))
        .collect();
    versions.sort_by_key(|d| {
        d.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    if let Some(newest) = versions.pop() {
        return Some(newest);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find(|d| has(d)).map(|d| {
        // Follow a symlinked initdb to its real directory (which holds pg_ctl too).
        std::fs::canonicalize(d.join("initdb"))
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or(d)
    })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .is_some_and(|s| s.trim() == "0")
}

fn run(command: &mut Command) -> Result<(), String> {
    let out = command
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{command:?}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "{command:?} failed ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
}
