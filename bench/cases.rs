//! The case-comparison cells of the verdict simulator (`--cases`, issue 20 item 3): a
//! treatment case against a control case within each kernel, judged by
//! `aba::analysis::case_compare::compare_cases`, the function `aba report` runs for
//! `[[analysis.case_comparison]]`.
//!
//! Model: every point (boot) draws one boot factor 1 + N(0, boot SD) that both cases share,
//! and each case its own factor 1 + N(0, case SD) (a boot that suits one case more than the
//! other: the part of the boot effect that does not cancel); each sample is then
//! 100 · boot · case factor · (1 + N(0, within CV)), the treatment's times 1 + Δ/100. Δ is
//! the same on every kernel, and the kernels' own means are equal (a kernel effect would
//! cancel in the ratio anyway).
//!
//! Designs: A/B/A judged on A (two boots, ν = 1) and on B (booted once, borrowing A's ν = 1),
//! and A/B/A/B/A judged on A (three boots) and B (two), pooled ν = 3.

use aba::{
    analysis::{
        case_compare::{CaseContext, compare_cases},
        environment::EnvironmentCheck,
        model::SeriesPoint,
    },
    stats::{Better, summarize},
};

use crate::sim::{
    Bound, Rng, VerdictCounts, cell_seed, fmt_num, limit_sets, parse_list, print_bounds, rate,
};

/// A case design: the boot sequence and the kernels judged.
struct CaseDesign {
    name: &'static str,
    sequence: &'static [&'static str],
    /// Pooled ν of the per-point differences.
    nu: usize,
}

const CASE_DESIGNS: [CaseDesign; 2] = [
    CaseDesign {
        name: "A/B/A",
        sequence: &["a", "b", "a"],
        nu: 1,
    },
    CaseDesign {
        name: "A/B/A/B/A",
        sequence: &["a", "b", "a", "b", "a"],
        nu: 3,
    },
];

/// The judged kernels of every design.
const JUDGED: [&str; 2] = ["a", "b"];

#[derive(Clone, Copy)]
struct Cell {
    design: usize,
    n: usize,
    cv: f64,
    sd: f64,
    case_sd: f64,
    change: f64,
}

#[derive(Clone, Default)]
struct Tally {
    /// The verdicts.
    v: VerdictCounts,
    /// Boot-level interval: exists, bounded, covers, zero width.
    ci_exists: usize,
    ci_bounded: usize,
    ci_covers: usize,
    ci_zero: usize,
    widths: Vec<f64>,
}

/// The command line of `--cases`: the shared grid plus `--case-sd LIST` and `--change LIST`.
struct Config {
    short: bool,
    campaigns: usize,
    seed: u64,
    ns: Vec<usize>,
    cvs: Vec<f64>,
    sds: Vec<f64>,
    case_sds: Vec<f64>,
    changes: Vec<f64>,
}

fn config() -> Config {
    let (args, short) = crate::sim::args();
    let mut c = Config {
        short,
        campaigns: if short { 200 } else { 2000 },
        seed: 20_260_723,
        ns: if short { vec![3, 9] } else { vec![3, 5, 9, 15] },
        cvs: if short {
            vec![1.0]
        } else {
            vec![0.1, 1.0, 5.0]
        },
        sds: if short {
            vec![0.0, 1.0, 3.0]
        } else {
            vec![0.0, 0.3, 1.0, 3.0, 10.0]
        },
        case_sds: if short { vec![0.0] } else { vec![0.0, 1.0] },
        changes: if short {
            vec![0.0, 2.0]
        } else {
            vec![0.0, 0.5, 1.0, 2.0, 5.0]
        },
    };
    crate::sim::each_option(&args, |flag, value| match flag {
        "--campaigns" => c.campaigns = value.parse().expect("--campaigns N"),
        "--seed" => c.seed = value.parse().expect("--seed S"),
        "--n" => c.ns = parse_list(&value, "n"),
        "--cv" => c.cvs = parse_list(&value, "cv"),
        "--sd" => c.sds = parse_list(&value, "sd"),
        "--case-sd" => c.case_sds = parse_list(&value, "case-sd"),
        "--change" => c.changes = parse_list(&value, "change"),
        _ => panic!("--cases: unknown argument {flag}"),
    });
    c
}

/// One campaign: the control's and the treatment's points, in boot order.
fn draw(
    rng: &mut Rng,
    sequence: &[&str],
    cell: &Cell,
    true_change: f64,
) -> (Vec<SeriesPoint>, Vec<SeriesPoint>) {
    let mut control = Vec::new();
    let mut treatment = Vec::new();
    for (i, kernel) in sequence.iter().enumerate() {
        let boot = 1.0 + cell.sd / 100.0 * rng.normal();
        for (mean, out) in [
            (100.0, &mut control),
            (100.0 * (1.0 + true_change / 100.0), &mut treatment),
        ] {
            let case = boot * (1.0 + cell.case_sd / 100.0 * rng.normal());
            let values: Vec<f64> = (0..cell.n)
                .map(|_| mean * case * (1.0 + cell.cv / 100.0 * rng.normal()))
                .collect();
            out.push(SeriesPoint {
                order: i + 1,
                label: format!("{kernel}{i}"),
                kernel: (*kernel).to_owned(),
                values: Vec::new(),
                warmups: Vec::new(),
                all: summarize(&values).expect("n ≥ 1"),
                drop_first: summarize(&values[1..]),
            });
        }
    }
    (control, treatment)
}

fn simulate(cell: Cell, index: usize, config: &Config) -> Vec<[Tally; 2]> {
    let design = &CASE_DESIGNS[cell.design];
    let sets = limit_sets();
    let true_change = cell.change * sets[0].1.gate_pct;
    let mut rng = Rng::new(cell_seed(config.seed ^ 0xca5e, index));
    let mut tallies: Vec<[Tally; 2]> = JUDGED.iter().map(|_| Default::default()).collect();
    let environment = EnvironmentCheck::default();
    for _ in 0..config.campaigns {
        let (control, treatment) = draw(&mut rng, design.sequence, &cell, true_change);
        for (s, (_, params)) in sets.iter().enumerate() {
            let result = compare_cases(
                &control,
                &treatment,
                &CaseContext {
                    treatment: "t",
                    control: "c",
                    params,
                    better: Better::Lower,
                    aux: false,
                    environment: &environment,
                },
            );
            for (j, kernel) in JUDGED.iter().enumerate() {
                let t = &mut tallies[j][s];
                let Some(r) = result.all.iter().find(|r| r.kernel == *kernel) else {
                    t.v.not_compared();
                    continue;
                };
                t.v.count(
                    &r.verdict.label.to_string(),
                    r.comparison.change_pct,
                    true_change,
                );
                if s == 0
                    && let Some(ci) = &r.comparison.ci_boot
                {
                    t.ci_exists += 1;
                    if let Some((lo, hi)) = ci.bounds {
                        t.ci_bounded += 1;
                        t.ci_covers += usize::from(lo <= true_change && true_change <= hi);
                        t.ci_zero += usize::from(format!("{lo:.2}") == format!("{hi:.2}"));
                        t.widths.push(hi - lo);
                    }
                }
            }
        }
    }
    tallies
}

/// Runs the case cells and prints their tables and bounds.
pub fn main() {
    let config = config();
    let started = std::time::Instant::now();
    let mut cells = Vec::new();
    for design in 0..CASE_DESIGNS.len() {
        for &n in &config.ns {
            for &cv in &config.cvs {
                for &sd in &config.sds {
                    for &case_sd in &config.case_sds {
                        for &change in &config.changes {
                            cells.push(Cell {
                                design,
                                n,
                                cv,
                                sd,
                                case_sd,
                                change,
                            });
                        }
                    }
                }
            }
        }
    }
    let (mut results, threads) =
        crate::sim::run_cells(&cells, |cell| simulate(*cell, cell_index(cell), &config));
    let seconds = started.elapsed().as_secs_f64();
    report(&config, &cells, &mut results, seconds, threads);
}

/// A cell's position in the full grid, independent of the subset run.
fn cell_index(cell: &Cell) -> usize {
    let pos = |xs: &[f64], x: f64| {
        xs.iter()
            .position(|v| (*v - x).abs() < 1e-12)
            .unwrap_or((x * 1000.0) as usize + 10)
    };
    let n_i = [3usize, 5, 9, 15]
        .iter()
        .position(|v| *v == cell.n)
        .unwrap_or(cell.n + 10);
    let cv_i = pos(&[0.1, 1.0, 5.0], cell.cv);
    let sd_i = pos(&[0.0, 0.3, 1.0, 3.0, 10.0], cell.sd);
    let csd_i = pos(&[0.0, 1.0], cell.case_sd);
    let ch_i = pos(&[0.0, 0.5, 1.0, 2.0, 5.0], cell.change);
    ((((cell.design * 1000 + n_i) * 1000 + cv_i) * 100_000 + sd_i) * 100_000 + csd_i) * 100_000
        + ch_i
}

fn report(
    config: &Config,
    cells: &[Cell],
    results: &mut [Vec<[Tally; 2]>],
    seconds: f64,
    threads: usize,
) {
    let sets = limit_sets();
    println!(
        "# aba verdict simulator: case comparisons ({} mode)\n",
        if config.short { "short" } else { "full" }
    );
    println!(
        "seed {}, {} campaigns per cell, {} cells x 2 judged kernels x 2 limit sets, {threads} \
         threads, {seconds:.0} s wall time, aba {}. Columns as in the kernel tables; CSD is \
         the case-specific boot SD (the part of the boot effect the cases do not share), G = \
         {} %.\n",
        config.seed,
        config.campaigns,
        cells.len(),
        env!("CARGO_PKG_VERSION"),
        fmt_num(sets[0].1.gate_pct)
    );
    let mut no_change = Bound::new("cases, no change: P(SIGNAL) <= 5 %");
    let mut conditional = Bound::new("cases, no change: P(SIGNAL | not UNSTABLE) <= 5 %");
    let mut conditional_known =
        Bound::new("cases, no change, at least 200 stable runs: P(SIGNAL | not UNSTABLE) <= 5 %");
    let mut below = Bound::new("cases, no change: P(BELOW_GATE) <= 5 %");
    let mut power = Bound::new(
        "cases, 2G, CV <= 1 %, boot SD <= 0.3 %, CSD 0, A/B/A/B/A, n = 9: P(SIGNAL) >= 80 %",
    );
    let mut coverage = Bound::new(
        "cases: boot-level coverage where estimable within 94-96 % (pooled over the changes)",
    );
    // (row key, covers, bounded): intervals do not depend on the limits, and the coverage
    // of each row is pooled over its changes, as the kernel tables pool theirs.
    let mut pooled: Vec<(String, usize, usize)> = Vec::new();
    let mut zero = Bound::new("cases: no boot-level interval of zero width");
    for (d, design) in CASE_DESIGNS.iter().enumerate() {
        for (j, kernel) in JUDGED.iter().enumerate() {
            println!(
                "## {} judged on {} (pooled nu = {})\n",
                design.name,
                kernel.to_uppercase(),
                design.nu
            );
            println!(
                "| n | CV | SD | CSD | change | limits | SIG | BG | NMS | INC | UNS | UNREP | SIG \\| stable (runs) | wrong dir | boot cov | est | width | 0w |"
            );
            println!(
                "|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
            );
            for (i, cell) in cells.iter().enumerate().filter(|(_, c)| c.design == d) {
                let change = if cell.change == 0.0 {
                    "0".to_owned()
                } else {
                    format!("{}G", fmt_num(cell.change))
                };
                for (s, (set, _)) in sets.iter().enumerate() {
                    let t = &mut results[i][j][s];
                    let name = format!(
                        "{} on {kernel} n={} CV={} SD={} CSD={} change={change} {set}",
                        design.name,
                        cell.n,
                        fmt_num(cell.cv),
                        fmt_num(cell.sd),
                        fmt_num(cell.case_sd)
                    );
                    let intervals = if s == 0 {
                        crate::sim::median(&mut t.widths).map_or_else(
                            || "- | - | - | -".to_owned(),
                            |w| {
                                format!(
                                    "{} | {} | {w:.2} | {}",
                                    rate(t.ci_covers, t.ci_bounded),
                                    rate(t.ci_bounded, t.ci_exists),
                                    t.ci_zero
                                )
                            },
                        )
                    } else {
                        "\" | \" | \" | \"".to_owned()
                    };
                    println!(
                        "| {} | {} | {} | {} | {change} | {set} | {} | {intervals} |",
                        cell.n,
                        fmt_num(cell.cv),
                        fmt_num(cell.sd),
                        fmt_num(cell.case_sd),
                        t.v.columns(cell.change == 0.0),
                    );
                    if cell.change == 0.0 {
                        no_change.rate(t.v.signal, t.v.campaigns, 5.0, true, name.clone());
                        below.rate(t.v.below_gate, t.v.campaigns, 5.0, true, name.clone());
                        t.v.stable_signal_bounds(&mut conditional, &mut conditional_known, &name);
                    }
                    if design.name == "A/B/A/B/A"
                        && cell.n == 9
                        && cell.cv <= 1.0
                        && cell.sd <= 0.3
                        && cell.case_sd == 0.0
                        && cell.change == 2.0
                    {
                        power.rate(t.v.signal, t.v.campaigns, 80.0, false, name.clone());
                    }
                    if s == 0 {
                        let key = format!(
                            "{} on {kernel} n={} CV={} SD={} CSD={}",
                            design.name,
                            cell.n,
                            fmt_num(cell.cv),
                            fmt_num(cell.sd),
                            fmt_num(cell.case_sd)
                        );
                        match pooled.iter_mut().find(|p| p.0 == key) {
                            Some(p) => {
                                p.1 += t.ci_covers;
                                p.2 += t.ci_bounded;
                            }
                            None => pooled.push((key, t.ci_covers, t.ci_bounded)),
                        }
                        if t.ci_exists > 0 {
                            let z = t.ci_zero as f64;
                            zero.check(t.ci_zero == 0, z, z, name);
                        }
                    }
                }
            }
            println!();
        }
    }
    for (key, covers, bounded) in &pooled {
        if *bounded >= 100 {
            coverage.within(*covers, *bounded, 94.0, 96.0, key.clone());
        }
    }
    println!("## Bounds (case comparisons)\n");
    println!(
        "Missed: the cell's estimate is on the wrong side of the bound; beyond noise: its 95% \
         binomial (Wilson) interval is too.\n"
    );
    print_bounds(&[
        &no_change,
        &below,
        &conditional,
        &conditional_known,
        &power,
        &coverage,
        &zero,
    ]);
}
