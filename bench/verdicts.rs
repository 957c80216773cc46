//! The verdict simulator (issue 9): synthetic campaigns with a known truth, judged by aba's own
//! analysis code, to measure how often each verdict is wrong.
//!
//! Every campaign goes through `aba::analysis::series::analyze_series` on in-memory points,
//! exactly as `aba report` analyses a series read from `samples.csv` (point summaries, drop-
//! first, kernel pooling, comparisons, intervals and verdicts). Nothing statistical is
//! re-implemented here: this file only draws numbers and counts labels.
//!
//! Model (`bench/sim.rs`): a kernel K has mean μ_K (the baseline 100, a candidate
//! 100·(1 + Δ/100)); each point (one fresh boot) has boot mean μ_K·(1 + N(0, boot SD)); each
//! sample is boot mean · (1 + N(0, within CV)). Options: a linear drift over the campaign
//! (`--drift PCT`: the last point is PCT % above the first, whatever its kernel) and a slow
//! first sample at every point (`--slow-first PCT`).
//!
//! Grid (full mode): designs A/B, A/B/A, A/B/B/A, A/B/A/B/A and the nine-point nested
//! palindrome P/C/F/O/N/O/F/C/P (judged twice: C, booted twice, and N, the centre, booted
//! once); n = 3, 5, 9, 15; within CV 0.1, 1, 5 %; boot SD 0, 0.3, 1, 3, 10 %; true change 0,
//! G/2, G, 2G, 5G; the default limits and a loose set (max_drift_pct 5, max_cv_pct 10). Each
//! campaign is judged under both limit sets (the same data), and the campaigns of one cell use
//! their own stream of the seeded generator, so a cell is reproducible on its own.
//!
//! `cargo bench --bench verdicts -- [--short] [--campaigns N] [--seed S] [--design LIST]
//! [--n LIST] [--cv LIST] [--sd LIST] [--change LIST] [--drift PCT] [--slow-first PCT]`.
//! Prints a Markdown table per design, then the bounds of issue 9 §2, each met or missed. It
//! never judges: the exit status is 0 whatever the rates are.
//!
//! `-- --cases [--short] [...] [--case-sd LIST]` runs the case-comparison cells instead
//! (`bench/cases.rs`, issue 20: a case against another within each kernel).

mod cases;
mod sim;

use std::time::Instant;

use aba::{
    analysis::{
        environment::EnvironmentCheck,
        series::{SeriesContext, analyze_series},
    },
    stats::{Better, BootVariance, ci_boot_from},
};
use sim::{
    Bound, DESIGNS, Grid, Noise, Rng, VerdictCounts, campaign, cell_seed, fmt_num, limit_sets,
    median, parse_list, print_bounds, run_cells,
};

/// What the command line chose.
struct Config {
    grid: Grid,
    /// True changes in units of the gate G.
    changes: Vec<f64>,
    drift: f64,
    /// A linear drift per point (`--drift-per-point PCT`), added to `drift` as PCT × (points
    /// − 1) for each design.
    drift_per_point: f64,
    /// The recipe's own drift gate (`--drift-gate PCT`) in both limit sets; none by default,
    /// as in a recipe that sets no `max_drift_pct`.
    drift_gate: Option<f64>,
    slow_first: f64,
}

impl std::ops::Deref for Config {
    type Target = Grid;
    fn deref(&self) -> &Grid {
        &self.grid
    }
}

fn config() -> Config {
    let mut changes = None;
    let (mut drift, mut slow_first, mut drift_per_point) = (0.0, 0.0, 0.0);
    let mut drift_gate = None;
    let grid = Grid::parse(
        |short| Grid {
            short,
            campaigns: if short { 200 } else { 2000 },
            seed: 20_260_723,
            designs: (0..DESIGNS.len()).collect(),
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
        },
        |flag, value| {
            match flag {
                "--change" => changes = Some(parse_list(value, "change")),
                "--drift" => drift = value.parse().expect("--drift PCT"),
                "--drift-per-point" => {
                    drift_per_point = value.parse().expect("--drift-per-point PCT");
                }
                "--drift-gate" => drift_gate = Some(value.parse().expect("--drift-gate PCT")),
                "--slow-first" => slow_first = value.parse().expect("--slow-first PCT"),
                _ => return false,
            }
            true
        },
    );
    let changes = changes.unwrap_or_else(|| {
        if grid.short {
            vec![0.0, 2.0]
        } else {
            vec![0.0, 0.5, 1.0, 2.0, 5.0]
        }
    });
    Config {
        grid,
        changes,
        drift,
        drift_per_point,
        drift_gate,
        slow_first,
    }
}

/// One cell of the grid, before the limit sets (they judge the same data).
#[derive(Clone, Copy)]
struct Cell {
    design: usize,
    n: usize,
    cv: f64,
    sd: f64,
    /// True change in units of G.
    change: f64,
}

/// Counts for one judged candidate under one limit set.
#[derive(Clone, Default)]
struct Tally {
    /// The verdicts.
    v: VerdictCounts,
    /// The boot-level interval aba prints.
    boot: Intervals,
    /// The within-only interval.
    within: Intervals,
    /// The boot-level interval with S_B² unfloored (the rule before issue 9).
    boot_unfloored: Intervals,
    /// The boot-level interval with S_B² floored at all of L, max(S_B², L).
    boot_full_floor: Intervals,
}

/// Coverage and widths of one kind of interval.
#[derive(Clone, Default)]
struct Intervals {
    /// Campaigns where it exists (ν ≥ 1 for boot-level).
    exists: usize,
    /// Bounded ("estimable").
    bounded: usize,
    /// Bounded and containing the true change.
    covers: usize,
    widths: Vec<f64>,
    zero_width: usize,
}

impl Intervals {
    fn add(&mut self, ci: Option<&aba::stats::RatioInterval>, truth: f64) {
        let Some(ci) = ci else { return };
        self.exists += 1;
        if let Some((lo, hi)) = ci.bounds {
            self.bounded += 1;
            self.covers += usize::from(lo <= truth && truth <= hi);
            self.widths.push(hi - lo);
            // Zero width as a reader sees it: both bounds print the same at 2 decimals.
            self.zero_width += usize::from(format!("{lo:.2}") == format!("{hi:.2}"));
        }
    }

    fn merge(&mut self, other: &Intervals) {
        self.exists += other.exists;
        self.bounded += other.bounded;
        self.covers += other.covers;
        self.widths.extend_from_slice(&other.widths);
        self.zero_width += other.zero_width;
    }

    /// Coverage among bounded intervals, percent.
    fn coverage(&self) -> Option<f64> {
        (self.bounded > 0).then(|| 100.0 * self.covers as f64 / self.bounded as f64)
    }

    /// Coverage counting an interval that is not estimable (aba prints no bound, so it
    /// claims nothing) as covering, percent.
    fn coverage_all(&self) -> Option<f64> {
        (self.exists > 0)
            .then(|| 100.0 * (self.covers + self.exists - self.bounded) as f64 / self.exists as f64)
    }

    fn estimable(&self) -> Option<f64> {
        (self.exists > 0).then(|| 100.0 * self.bounded as f64 / self.exists as f64)
    }

    fn median_width(&mut self) -> Option<f64> {
        median(&mut self.widths)
    }

    fn min_width(&self) -> Option<f64> {
        self.widths.iter().copied().reduce(f64::min)
    }
}

/// Results of one cell: `[judged candidate][limit set]`.
struct CellResult {
    cell: Cell,
    tallies: Vec<[Tally; 2]>,
}

fn simulate(cell: Cell, index: usize, config: &Config) -> CellResult {
    let design = &DESIGNS[cell.design];
    let sets = limit_sets().map(|(name, params)| {
        (
            name,
            aba::stats::VerdictParams {
                max_drift_pct: config.drift_gate,
                ..params
            },
        )
    });
    let gate = sets[0].1.gate_pct;
    let true_change = cell.change * gate;
    let mut rng = Rng::new(cell_seed(config.seed, index));
    let mut tallies: Vec<[Tally; 2]> = design.judged.iter().map(|_| Default::default()).collect();
    let candidates = design.candidates();
    let noise = Noise {
        n: cell.n,
        cv: cell.cv,
        sd: cell.sd,
        drift: config.drift + config.drift_per_point * (design.sequence.len() as f64 - 1.0),
        slow_first: config.slow_first,
    };
    for _ in 0..config.campaigns {
        let points = campaign(design, true_change, &noise, &mut rng);
        for (s, (_, params)) in sets.iter().enumerate() {
            let ctx = SeriesContext {
                baseline: "a",
                candidates: &candidates,
                declared: &[],
                params,
                better: Better::Lower,
                aux: false,
                recoveries: &[],
                prior_all: None,
                prior_drop_first: None,
                environment: &EnvironmentCheck::default(),
                look: None,
            };
            let result = analyze_series(&points, &ctx);
            let Some(all) = result.all else { continue };
            for (j, (candidate, _)) in design.judged.iter().enumerate() {
                let t = &mut tallies[j][s];
                let Some(c) = all.comparisons.iter().find(|c| c.candidate == *candidate) else {
                    t.v.not_compared();
                    continue;
                };
                t.v.count(
                    &c.verdict.label.to_string(),
                    c.comparison.change_pct,
                    true_change,
                );
                // Intervals do not depend on the limits: count them once.
                if s == 0 {
                    let cmp = &c.comparison;
                    t.boot.add(cmp.ci_boot.as_ref(), true_change);
                    t.within.add(cmp.ci_within.as_ref(), true_change);
                    if let Some(v) = &cmp.boot_variance {
                        let unfloored = BootVariance {
                            used: v.between,
                            floored: false,
                            ..v.clone()
                        };
                        let full = BootVariance {
                            used: v.within.map_or(v.between, |l| v.between.max(l)),
                            floored: v.within.is_some_and(|l| l > v.between),
                            ..v.clone()
                        };
                        let ci = |v: &BootVariance| {
                            ci_boot_from(&all.points, &cmp.candidate, &cmp.baseline, v)
                        };
                        t.boot_unfloored.add(ci(&unfloored).as_ref(), true_change);
                        t.boot_full_floor.add(ci(&full).as_ref(), true_change);
                    }
                }
            }
        }
    }
    CellResult { cell, tallies }
}

fn main() {
    if std::env::args().any(|a| a == "--cases") {
        cases::main();
        return;
    }
    let config = config();
    let started = Instant::now();
    let mut cells = Vec::new();
    for &design in &config.designs {
        for &n in &config.ns {
            for &cv in &config.cvs {
                for &sd in &config.sds {
                    for &change in &config.changes {
                        cells.push(Cell {
                            design,
                            n,
                            cv,
                            sd,
                            change,
                        });
                    }
                }
            }
        }
    }
    // Each cell's index in the full grid order seeds its stream, so a subset reproduces the
    // same numbers as the full run only when the lists are the same; the seed is printed.
    let (mut results, threads) = run_cells(&cells, |cell| {
        simulate(*cell, cell_index(cell, &config), &config)
    });
    let elapsed = started.elapsed();
    print_report(&config, &mut results, elapsed.as_secs_f64(), threads);
}

/// A cell's position in the full grid: independent of which subset is run.
fn cell_index(cell: &Cell, _config: &Config) -> usize {
    let pos = |xs: &[f64], x: f64| xs.iter().position(|v| (*v - x).abs() < 1e-12);
    let ns = [3usize, 5, 9, 15];
    let n_i = ns.iter().position(|v| *v == cell.n).unwrap_or(cell.n + 10);
    let cv_i = pos(&[0.1, 1.0, 5.0], cell.cv).unwrap_or((cell.cv * 1000.0) as usize + 10);
    let sd_i =
        pos(&[0.0, 0.3, 1.0, 3.0, 10.0], cell.sd).unwrap_or((cell.sd * 1000.0) as usize + 10);
    let ch_i = pos(&[0.0, 0.5, 1.0, 2.0, 5.0], cell.change)
        .unwrap_or((cell.change * 1000.0) as usize + 10);
    (((cell.design * 1000 + n_i) * 1000 + cv_i) * 100_000 + sd_i) * 100_000 + ch_i
}

fn opt(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.decimals$}"))
}

/// Interval statistics pooled over the changes and limit sets of one (row, n, CV, SD).
struct Pooled {
    key: String,
    boot: Intervals,
    unfloored: Intervals,
    full: Intervals,
}

#[allow(clippy::too_many_lines)]
fn print_report(config: &Config, results: &mut [CellResult], seconds: f64, threads: usize) {
    let sets = limit_sets();
    let gate = sets[0].1.gate_pct;
    println!(
        "# aba verdict simulator ({} mode)\n",
        if config.short { "short" } else { "full" }
    );
    println!(
        "seed {}, {} campaigns per cell, {} cells x 2 limit sets, drift {} % + {} % per point, \
         drift gate {}, slow first sample {} %, {threads} threads, {seconds:.0} s wall time, aba \
         {}.\n",
        config.seed,
        config.campaigns,
        results.len(),
        fmt_num(config.drift),
        fmt_num(config.drift_per_point),
        config.drift_gate.map_or_else(
            || "none (as a recipe without max_drift_pct)".to_owned(),
            |g| { format!("{} %", fmt_num(g)) }
        ),
        fmt_num(config.slow_first),
        env!("CARGO_PKG_VERSION")
    );
    println!(
        "Rates in percent of the campaigns of a cell: SIG SIGNAL, BG BELOW_GATE, NMS \
         NO_MATERIAL_SIGNAL, INC INCONCLUSIVE, UNS UNSTABLE, UNREP UNREPLICATED. SIG | stable: SIGNAL among the \
         runs that are not UNSTABLE, with their count. wrong dir: SIGNAL whose sign is \
         opposite to the true change. boot / within: the boot-level / within-only 95% \
         interval aba prints: cov its coverage of the true change where it is estimable \
         (bounded), est the share that is estimable, width its median width in percentage \
         points, 0w how many have zero width. Intervals do not depend on the limits: they are \
         printed on the default row. G = gate_pct = {} %.\n",
        fmt_num(gate)
    );
    let mut no_change_signal = Bound::new("no change: P(SIGNAL) <= 5 %");
    let mut no_change_below = Bound::new("no change: P(BELOW_GATE) <= 5 %");
    let mut conditional = Bound::new("no change, nu >= 3: P(SIGNAL | not UNSTABLE) <= 5 %");
    let mut conditional_known =
        Bound::new("no change, nu >= 3, at least 200 stable runs: P(SIGNAL | not UNSTABLE) <= 5 %");
    let mut power =
        Bound::new("2G, CV <= 1 %, boot SD <= 1 %, A/B/A/B/A, n = 9: P(SIGNAL) >= 80 %");
    let drifting = config.drift != 0.0 || config.drift_per_point != 0.0;
    let mut unstable = Bound::new(if drifting {
        "nu >= 3, a linear drift: P(UNSTABLE) (a rate to read, not a bound)"
    } else {
        "nu >= 3, no drift, true CV within max_cv_pct: P(UNSTABLE) <= 5 %"
    });
    let mut reassurance = Bound::new("2G: P(NO_MATERIAL_SIGNAL) <= 5 %, every cell");
    let mut equivalence = Bound::new(
        "no change, CV <= 1 %, boot SD <= 0.3 %, A/B/A/B/A, n = 9: P(NO_MATERIAL_SIGNAL) >= 80 %",
    );
    let mut coverage = Bound::new(
        "boot-level coverage where estimable within 94-96 % (pooled over change and limits)",
    );
    let mut coverage_all = Bound::new(
        "boot-level coverage, not estimable counted as covering, within 94-96 % (pooled)",
    );
    let mut zero = Bound::new("no boot-level interval of zero width");
    let mut pooled: Vec<Pooled> = Vec::new();

    for (d, design) in DESIGNS.iter().enumerate() {
        for (j, (_, row)) in design.judged.iter().enumerate() {
            let mine: Vec<usize> = (0..results.len())
                .filter(|&i| results[i].cell.design == d)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let nu = design.nu();
            println!("## {row} (nu = {nu})\n");
            println!(
                "| n | CV | SD | change | limits | SIG | BG | NMS | INC | UNS | UNREP | SIG \\| stable (runs) | wrong dir | boot cov | est | width | 0w | within cov | width |"
            );
            println!(
                "|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
            );
            for &i in &mine {
                let cell = results[i].cell;
                let change = if cell.change == 0.0 {
                    "0".to_owned()
                } else {
                    format!("{}G", fmt_num(cell.change))
                };
                let key = format!(
                    "{row} n={} CV={} SD={}",
                    cell.n,
                    fmt_num(cell.cv),
                    fmt_num(cell.sd)
                );
                {
                    let t = &results[i].tallies[j][0];
                    let p = match pooled.iter_mut().position(|p| p.key == key) {
                        Some(k) => &mut pooled[k],
                        None => {
                            pooled.push(Pooled {
                                key: key.clone(),
                                boot: Intervals::default(),
                                unfloored: Intervals::default(),
                                full: Intervals::default(),
                            });
                            pooled.last_mut().expect("just pushed")
                        }
                    };
                    p.boot.merge(&t.boot);
                    p.unfloored.merge(&t.boot_unfloored);
                    p.full.merge(&t.boot_full_floor);
                }
                for (s, (set, params)) in sets.iter().enumerate() {
                    let cell_name = format!("{key} change={change} {set}");
                    let t = &mut results[i].tallies[j][s];
                    let intervals = if s == 0 {
                        format!(
                            "{} | {} | {} | {} | {} | {}",
                            opt(t.boot.coverage(), 1),
                            opt(t.boot.estimable(), 0),
                            opt(t.boot.median_width(), 2),
                            if t.boot.exists > 0 {
                                t.boot.zero_width.to_string()
                            } else {
                                "-".to_owned()
                            },
                            opt(t.within.coverage(), 1),
                            opt(t.within.median_width(), 2),
                        )
                    } else {
                        "\" | \" | \" | \" | \" | \"".to_owned()
                    };
                    println!(
                        "| {} | {} | {} | {change} | {set} | {} | {intervals} |",
                        cell.n,
                        fmt_num(cell.cv),
                        fmt_num(cell.sd),
                        t.v.columns(cell.change == 0.0),
                    );
                    if cell.change == 0.0 {
                        no_change_signal.rate(
                            t.v.signal,
                            t.v.campaigns,
                            5.0,
                            true,
                            cell_name.clone(),
                        );
                        no_change_below.rate(
                            t.v.below_gate,
                            t.v.campaigns,
                            5.0,
                            true,
                            cell_name.clone(),
                        );
                        if design.name == "A/B/A/B/A"
                            && cell.n == 9
                            && cell.cv <= 1.0
                            && cell.sd <= 0.3
                        {
                            equivalence.rate(
                                t.v.no_material,
                                t.v.campaigns,
                                80.0,
                                false,
                                cell_name.clone(),
                            );
                        }
                        if nu >= 3 {
                            t.v.stable_signal_bounds(
                                &mut conditional,
                                &mut conditional_known,
                                &cell_name,
                            );
                        }
                    }
                    // A true CV over the limit set's max_cv_pct is a measurement the limit
                    // is there to refuse: UNSTABLE is right there, not a false alarm.
                    if nu >= 3 && cell.cv <= params.max_cv_pct {
                        unstable.rate(t.v.unstable, t.v.campaigns, 5.0, true, cell_name.clone());
                    }
                    if cell.change == 2.0 {
                        reassurance.rate(
                            t.v.no_material,
                            t.v.campaigns,
                            5.0,
                            true,
                            cell_name.clone(),
                        );
                    }
                    if design.name == "A/B/A/B/A"
                        && cell.n == 9
                        && cell.cv <= 1.0
                        && cell.sd <= 1.0
                        && cell.change == 2.0
                    {
                        power.rate(t.v.signal, t.v.campaigns, 80.0, false, cell_name.clone());
                    }
                }
            }
            println!();
        }
    }

    println!("## The floor of the boot variance\n");
    println!(
        "The boot-level interval three ways on the same campaigns, pooled over the changes \
         and limit sets of each row: unfloored (S_B² alone, the rule before issue 9), the \
         full floor max(S_B², L) (L: what within-boot noise alone makes S_B² on average) and \
         aba's calibrated floor max(S_B², f_nu L). cov: coverage where estimable; all: \
         coverage counting a not-estimable interval (no bound printed, no claim) as covering; \
         min: the narrowest interval, in percentage points; 0w: intervals of zero width as printed \
         (both bounds the same at 2 decimals).\n"
    );
    println!(
        "| row | unfloored cov | all | min | 0w | full floor cov | all | min | aba cov | all | est | width | min | 0w |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for p in &mut pooled {
        if p.boot.exists == 0 {
            continue;
        }
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            p.key,
            opt(p.unfloored.coverage(), 1),
            opt(p.unfloored.coverage_all(), 1),
            opt(p.unfloored.min_width(), 3),
            p.unfloored.zero_width,
            opt(p.full.coverage(), 1),
            opt(p.full.coverage_all(), 1),
            opt(p.full.min_width(), 3),
            opt(p.boot.coverage(), 1),
            opt(p.boot.coverage_all(), 1),
            opt(p.boot.estimable(), 0),
            opt(p.boot.median_width(), 2),
            opt(p.boot.min_width(), 3),
            p.boot.zero_width,
        );
        if p.boot.bounded >= 100 {
            let b = &p.boot;
            coverage.within(b.covers, b.bounded, 94.0, 96.0, p.key.clone());
            // A not-estimable interval claims nothing: it counts as covering.
            let covers_all = b.covers + b.exists - b.bounded;
            coverage_all.within(covers_all, b.exists, 94.0, 96.0, p.key.clone());
        }
        let z = p.boot.zero_width as f64;
        zero.check(p.boot.zero_width == 0, z, z, p.key.clone());
    }
    println!();

    println!("## Bounds (issues 9 and 28)\n");
    println!(
        "Missed: the cell's estimate is on the wrong side of the bound; beyond noise: its 95% \
         binomial (Wilson) interval is too.\n"
    );
    print_bounds(&[
        &no_change_signal,
        &no_change_below,
        &conditional,
        &conditional_known,
        &unstable,
        &reassurance,
        &equivalence,
        &power,
        &coverage,
        &coverage_all,
        &zero,
    ]);
}
