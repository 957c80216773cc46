//! The console of a labgrid place, logged into the campaign's results directory while the
//! campaign holds the place (`console = true` in `[targets.NAME.labgrid]`).
//!
//! A lab's serial consoles are served by its exporters (ser2net behind a `NetworkSerialPort`);
//! the coordinator says where. aba connects to that port itself and only listens, like
//! `labgrid-client console --listenonly --logfile`, without needing microcom or a terminal:
//! every byte the machine writes goes to `console.log`, from which a failed boot's report
//! quotes the lines since the attempt began ([`crate::kernel::console::since`]). A port that
//! closes (a power cycle restarts the serial server, an exporter restarts) is connected again
//! every [`RECONNECT`]; whatever the machine wrote while nobody listened is lost, as on the
//! lab's own console server. The file is bounded: past [`MAX_LOG`] it starts again from
//! empty, which the excerpt reader treats as a rotated log.

use std::{
    fs::File,
    io::{Read, Write},
    net::{TcpStream, ToSocketAddrs},
    path::Path,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    thread::JoinHandle,
    time::Duration,
};

use super::resources::SerialPort;

/// The file in a results directory that holds the console of a labgrid place.
pub const CONSOLE_FILE: &str = "console.log";

/// How often a lost console is connected again, and how long a read waits before the logger
/// looks at its stop flag.
const RECONNECT: Duration = Duration::from_millis(250);

/// Largest `console.log`: a night of a chatty kernel stays a few megabytes; a console that
/// floods starts the file over instead of filling the disk.
const MAX_LOG: u64 = 64 * 1024 * 1024;

/// A console being logged; stopped (and the thread joined) by [`ConsoleLogger::stop`] or on
/// drop.
#[derive(Debug)]
pub struct ConsoleLogger {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// The port, for the journal.
    pub port: SerialPort,
}

impl ConsoleLogger {
    /// Opens (appending, never through a link) `file` and logs `port` into it on a thread of
    /// its own.
    ///
    /// # Errors
    /// The log file cannot be opened.
    pub fn start(port: SerialPort, file: &Path) -> std::io::Result<ConsoleLogger> {
        let log = crate::results::atomic::open_append(file, true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let address = (port.host.clone(), port.port);
        let telnet = port.protocol == "rfc2217";
        let thread = std::thread::Builder::new()
            .name("labgrid-console".to_owned())
            .spawn(move || listen(&address, telnet, log, &flag))?;
        Ok(ConsoleLogger {
            stop,
            thread: Some(thread),
            port,
        })
    }

    /// Stops listening and waits for the thread (at most about [`RECONNECT`] plus a connect
    /// timeout).
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for ConsoleLogger {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The logger's loop: connect, copy into the log until the port closes, connect again.
fn listen(address: &(String, u16), telnet: bool, mut log: File, stop: &AtomicBool) {
    let mut buf = [0u8; 8192];
    while !stop.load(Ordering::SeqCst) {
        let Some(mut stream) = connect(address) else {
            std::thread::sleep(RECONNECT);
            continue;
        };
        if stream.set_read_timeout(Some(RECONNECT)).is_err() {
            continue;
        }
        let mut filter = Telnet::default();
        while !stop.load(Ordering::SeqCst) {
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let data = if telnet {
                        filter.strip(&buf[..n])
                    } else {
                        buf[..n].to_vec()
                    };
                    append(&mut log, &data);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::TimedOut
                            | std::io::ErrorKind::Interrupted
                    ) => {}
                Err(_) => break,
            }
        }
    }
}

fn connect(address: &(String, u16)) -> Option<TcpStream> {
    let addr = (address.0.as_str(), address.1)
        .to_socket_addrs()
        .ok()?
        .next()?;
    TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()
}

/// Appends `data`, starting the file over past [`MAX_LOG`]. A failed write is dropped: the
/// console is evidence for a failure report, never a reason to stop the campaign.
fn append(log: &mut File, data: &[u8]) {
    if log
        .metadata()
        .is_ok_and(|m| m.len().saturating_add(data.len() as u64) > MAX_LOG)
    {
        let _ = log.set_len(0);
    }
    let _ = log.write_all(data);
}

/// The telnet commands of an RFC 2217 port, dropped from the data: aba only listens, so it
/// answers no negotiation (a server that insists gets no answer and goes on sending).
#[derive(Default)]
struct Telnet {
    state: TelnetState,
}

#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum TelnetState {
    #[default]
    Data,
    /// After IAC.
    Command,
    /// After IAC WILL/WONT/DO/DONT: one option byte follows.
    Option,
    /// Inside IAC SB … IAC SE.
    Sub,
    /// IAC inside a subnegotiation.
    SubCommand,
}

const IAC: u8 = 255;
const SB: u8 = 250;
const SE: u8 = 240;

impl Telnet {
    fn strip(&mut self, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(data.len());
        for &b in data {
            self.state = match (self.state, b) {
                (TelnetState::Data, IAC) => TelnetState::Command,
                (TelnetState::Data, b) => {
                    out.push(b);
                    TelnetState::Data
                }
                (TelnetState::Command, IAC) => {
                    out.push(IAC);
                    TelnetState::Data
                }
                (TelnetState::Command, SB) => TelnetState::Sub,
                (TelnetState::Command, 251..=254) => TelnetState::Option,
                (TelnetState::Command | TelnetState::Option, _) => TelnetState::Data,
                (TelnetState::Sub, IAC) => TelnetState::SubCommand,
                (TelnetState::Sub, _) => TelnetState::Sub,
                (TelnetState::SubCommand, SE) => TelnetState::Data,
                (TelnetState::SubCommand, _) => TelnetState::Sub,
            };
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::{io::Write, net::TcpListener, time::Instant};

    use super::{ConsoleLogger, IAC, SB, SE, Telnet};
    use crate::labgrid::resources::SerialPort;

    #[test]
    fn telnet_commands_are_dropped_and_an_escaped_iac_kept() {
        let mut t = Telnet::default();
        let mut data = b"Linux ver".to_vec();
        data.extend([IAC, 251, 1, IAC, SB, 44, 1, 0, 1, IAC, SE]);
        data.extend(b"sion 6.1");
        data.extend([IAC, IAC]);
        // A command split across two reads.
        data.push(IAC);
        let mut out = t.strip(&data);
        out.extend(t.strip(&[253, 3, b'\n']));
        assert_eq!(out, b"Linux version 6.1\xff\n");
    }

    /// A serial server that closes and comes back (a power cycle) is listened to again, and
    /// every byte sent while aba listened is in the log.
    #[test]
    fn the_console_is_logged_across_a_restart_of_its_server() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("console.log");
        let mut logger = ConsoleLogger::start(
            SerialPort {
                path: "e/g/NetworkSerialPort/s".to_owned(),
                host: "127.0.0.1".to_owned(),
                port,
                protocol: "raw".to_owned(),
            },
            &file,
        )
        .expect("starts");
        for line in ["first boot\n", "second boot\n"] {
            let (mut conn, _) = listener.accept().expect("aba connects");
            conn.write_all(line.as_bytes()).expect("write");
            drop(conn);
        }
        let started = Instant::now();
        while !std::fs::read_to_string(&file)
            .unwrap_or_default()
            .contains("second boot")
        {
            assert!(started.elapsed().as_secs() < 20, "not logged");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        logger.stop();
        assert_eq!(
            std::fs::read_to_string(&file).expect("log"),
            "first boot\nsecond boot\n"
        );
    }
}
