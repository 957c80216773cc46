//! A lab VM as a labgrid place (issue 36): a real coordinator and exporter on 127.0.0.1
//! export the VM's SSH (NetworkService), its serial console (NetworkSerialPort, QEMU serving
//! it on TCP like a console server) and a power switch (NetworkPowerPort, model `simplerest`,
//! lab/labgrid/power-switch.py cutting and restoring the QEMU process). aba holds the place
//! for a kexec A-B-A; then a kernel that hangs is power-cycled through the coordinator and
//! the failure quotes the console aba logged from the place's serial port. The inventory has
//! neither `power_cycle` nor `console_log`: both come from the place.

use std::path::Path;

use aba::results::journal::{Event, Journal, ReservationAction};

use crate::support::{
    cli::{assert_verified, campaign_dir, journal_events, run_on, text, write},
    lab::{KERNEL_A, KERNEL_B, LabVm, console_tail, lab_dir},
    labgrid::{Coordinator, PowerSwitch, venv_bin},
    recipe::{Metric, Recipe, Workload},
    sshd::free_port,
};

const PLACE: &str = "lab-vm";

fn recipe(kernel_b_cmdline: Option<&str>) -> String {
    Recipe::new(
        "labgrid-lab",
        "kexec A-B-A on a labgrid place",
        &["a", "b", "a"],
    )
    .runs(0, 2)
    .point_retries(0)
    .kernel("a", KERNEL_A, None)
    .kernel("b", KERNEL_B, kernel_b_cmdline)
    .workload(Workload::new("labbench", "labbench 5", Metric::lower("ns")))
    .toml()
}

/// The inventory: the VM by kexec, held, powered and heard through the place.
fn inventory(dir: &Path, vm: &LabVm, coordinator: &Coordinator) -> std::path::PathBuf {
    let lab = lab_dir();
    let lab = lab.display();
    let text = format!(
        r#"[targets.lab]
host = "127.0.0.1"
port = {port}
user = "root"
identity = "{lab}/id_ed25519"
known_hosts = "{lab}/known_hosts"
switch = "kexec"
boot_timeout = "60s"
base_cmdline = "console=ttyS0,115200 panic=-1 quiet"
[targets.lab.labgrid]
coordinator = "{address}"
place = "{PLACE}"
client = "{client}"
power = true
console = true
"#,
        port = vm.port,
        address = coordinator.address,
        client = venv_bin("labgrid-client").display(),
    );
    write(dir, "targets.toml", &text)
}

fn reservations(dir: &Path) -> Vec<(ReservationAction, String, Option<String>)> {
    Journal::read(&dir.join("journal.jsonl"))
        .expect("journal")
        .events
        .into_iter()
        .filter_map(|e| match e {
            Event::Reservation {
                action,
                output,
                error,
                ..
            } => Some((action, output, error)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_labgrid_place_holds_powers_and_hears_a_kexec_aba_and_power_cycles_a_hung_kernel() {
    let Some(coordinator) = Coordinator::start(PLACE) else {
        return;
    };
    let serial = free_port();
    let serial_text = serial.to_string();
    let vm = LabVm::start_with_env(
        "t-labgrid",
        KERNEL_A,
        None,
        &[("LAB_SERIAL_TCP", serial_text.as_str())],
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    let lab = lab_dir();
    let switch = PowerSwitch::start(
        tmp.path(),
        &format!("{}/stop-vm.sh {} --hard", lab.display(), vm.name),
        &format!(
            "LAB_SERIAL_TCP={serial} {}/start-vm.sh {} {} {KERNEL_A}",
            lab.display(),
            vm.name,
            vm.port
        ),
    );
    let exporter = coordinator.export(
        "aba-lab",
        &format!(
            r#"vm:
  NetworkService:
    address: 127.0.0.1
    port: {port}
    username: root
  NetworkSerialPort:
    host: 127.0.0.1
    port: {serial}
    speed: 115200
    protocol: raw
  NetworkPowerPort:
    model: simplerest
    host: 'http://127.0.0.1:{power}/power/{{index}}/{{value}}'
    index: 0
"#,
            port = vm.port,
            power = switch.port,
        ),
    );
    coordinator.add_match(PLACE, "aba-lab/vm/*");
    let targets = inventory(tmp.path(), &vm, &coordinator);

    // A kexec A-B-A on the place: held for the campaign, its console logged, given back.
    let ok = run_on(
        tmp.path(),
        &write(tmp.path(), "ok.toml", &recipe(None)),
        &targets,
        "lab",
        "ok",
    );
    assert!(ok.status.success(), "{}\n{}", text(&ok), exporter.log());
    let dir = campaign_dir(&tmp.path().join("ok"));
    let held = reservations(&dir);
    assert_eq!(held.len(), 2, "{held:?}");
    assert!(
        held[0].1.contains("acquired place lab-vm")
            && held[0].1.contains(&format!(
                "console aba-lab/vm/NetworkSerialPort/NetworkSerialPort at 127.0.0.1:{serial} (raw) logged to console.log"
            )),
        "{held:?}"
    );
    assert_eq!(held[1].0, ReservationAction::Release, "{held:?}");
    let console = std::fs::read_to_string(dir.join("console.log")).expect("console.log");
    // The lab's init says `LAB: up kernel=…` on the console at each boot (the kernel's own
    // lines are `quiet`): the three kexec boots a, b, a are heard through the place.
    assert_eq!(
        console.matches("LAB: up kernel=").count(),
        3,
        "every kexec boot is heard on the place's console: {console}"
    );
    assert!(
        console.contains(&format!("LAB: up kernel={KERNEL_B}")),
        "{console}"
    );
    assert!(coordinator.show(PLACE).contains("acquired: None"));
    assert_verified(&dir);

    // Kernel b hangs (panic=0 waits forever after its panic): the boot timeout passes, the
    // coordinator power-cycles the place, the VM comes back on kernel a and the proof says
    // so; the failure quotes the panic from the console aba heard through the place.
    let hang = write(
        tmp.path(),
        "hang.toml",
        &recipe(Some("rdinit=/nonexistent panic=0")),
    );
    let out = run_on(tmp.path(), &hang, &targets, "lab", "hang");
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}\n--- power switch ---\n{}\n--- console ---\n{}",
        text(&out),
        switch.log(),
        console_tail(&vm.console_log(), 40)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("after a power cycle"), "{stderr}");
    assert!(
        stderr.contains(&format!("the target runs {KERNEL_A}, not {KERNEL_B}")),
        "{stderr}"
    );
    assert!(
        stderr.contains("from the console log") && stderr.contains("Kernel panic"),
        "the panic is quoted from the place's console: {stderr}"
    );
    assert!(
        switch.log().contains("GET /power/0/0") && switch.log().contains("GET /power/0/1"),
        "the power went off and on through the switch: {}",
        switch.log()
    );
    let dir = campaign_dir(&tmp.path().join("hang"));
    let warned = journal_events(&dir).into_iter().any(|e| {
        matches!(e, Event::Warning { text, .. }
            if text.contains("power-cycle command `") && text.contains("-p lab-vm power cycle"))
    });
    assert!(warned, "the power cycle went through labgrid-client");
    let console = std::fs::read_to_string(dir.join("console.log")).expect("console.log");
    assert!(console.contains("Kernel panic"), "{console}");
    assert!(
        reservations(&dir)
            .last()
            .is_some_and(|r| r.0 == ReservationAction::Release && r.2.is_none()),
        "given back after the failure"
    );
    assert!(coordinator.show(PLACE).contains("acquired: None"));
    assert_verified(&dir);
}
