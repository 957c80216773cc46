//! The noise-profile simulator (issue 10): synthetic calibrations and campaigns with a known
//! truth, judged by aba's own code, to measure what a noise profile does to the verdicts.
//!
//! Each simulated campaign comes with its own calibration: `boots` points of the baseline
//! drawn from the same model (bench/sim.rs), analysed by `aba::analysis::series` like any
//! campaign and turned into the profile's estimates by `aba::profile::build::estimate`, exactly
//! as `aba calibrate` does. The campaign is then analysed twice on the same data, without and
//! with the profile (`SeriesContext::prior_*`, as `aba report` passes a matching profile), and
//! under both limit sets of issue 9. The detectable change is aba's own
//! (`aba::stats::minimal_detectable_pct`, what `aba check` prints), from the true noise.
//!
//! Grid (full mode): designs A/B/A, A/B/A/B/A and A/B; n = 3, 5, 9, 15; within CV 0.1, 1, 5 %;
//! boot SD 1, 3, 10 %; profiles of 6 and 20 boots; true change 0 and the minimal detectable
//! change; plus cells where the campaign's boot SD is three times its calibration's (the
//! homogeneity test's power). Short mode (CI): A/B/A and A/B/A/B/A, n = 3 and 9, CV 1 %, boot
//! SD 1 and 3 %, 6 boots, 200 campaigns per cell.
//!
//! `cargo bench --bench profiles -- [--short] [--campaigns N] [--seed S] [--design LIST]
//! [--sd LIST]` (the lists select a sub-grid; each cell's stream is seeded by its position in
//! the grid that runs). Prints a table per design, then the bounds of issue 10, each met or
//! missed; never judges (exit status 0).

mod sim;

use std::{
    sync::atomic::{AtomicUsize, Ordering},
    time::Instant,
};

use aba::{
    analysis::{
        environment::EnvironmentCheck,
        model::{SeriesPoint, SeriesResult},
        series::{SeriesContext, analyze_series},
    },
    profile::build::estimate,
    stats::{Better, BootPrior, HOMOGENEITY_ALPHA, VerdictParams, minimal_detectable_pct},
};
use sim::{
    Noise, Rng, args, cell_seed, draw, each_option, fmt_num, limit_sets, median, parse_list, rate,
    wilson,
};

/// A design: its boot sequence (the candidate is `b`).
struct Design {
    name: &'static str,
    sequence: &'static [&'static str],
}

const DESIGNS: [Design; 3] = [
    Design {
        name: "A/B/A",
        sequence: &["a", "b", "a"],
    },
    Design {
        name: "A/B/A/B/A",
        sequence: &["a", "b", "a", "b", "a"],
    },
    Design {
        name: "A/B",
        sequence: &["a", "b"],
    },
];

/// The true change of a cell.
#[derive(Clone, Copy, PartialEq)]
enum Change {
    /// None.
    Zero,
    /// The minimal detectable change of the design with the profile, from the true noise.
    Detectable,
}

#[derive(Clone, Copy)]
struct Cell {
    design: usize,
    n: usize,
    cv: f64,
    /// The calibration's boot SD, percent.
    sd: f64,
    /// The campaign's boot SD over the calibration's.
    noisier: f64,
    boots: usize,
    change: Change,
}

struct Config {
    short: bool,
    campaigns: usize,
    seed: u64,
    /// Only these designs (by name), when given.
    designs: Option<Vec<String>>,
    /// Only these boot SDs, when given.
    sds: Option<Vec<f64>>,
}

fn config() -> Config {
    let (args, short) = args();
    let mut c = Config {
        short,
        campaigns: if short { 200 } else { 2000 },
        seed: 20_261_010,
        designs: None,
        sds: None,
    };
    each_option(&args, |name, value| match name {
        "--campaigns" => c.campaigns = value.parse().expect("--campaigns N"),
        "--seed" => c.seed = value.parse().expect("--seed S"),
        "--design" => c.designs = Some(parse_list(&value, "design")),
        "--sd" => c.sds = Some(parse_list(&value, "sd")),
        other => panic!("unknown argument {other}"),
    });
    c
}

/// The lists of a grid: designs, n, CV, boot SD, profile boots.
struct Grid {
    designs: Vec<usize>,
    ns: Vec<usize>,
    cvs: Vec<f64>,
    sds: Vec<f64>,
    boots: Vec<usize>,
}

fn cells(config: &Config) -> Vec<Cell> {
    let grid = if config.short {
        Grid {
            designs: vec![0, 1],
            ns: vec![3, 9],
            cvs: vec![1.0],
            sds: vec![1.0, 3.0],
            boots: vec![6],
        }
    } else {
        Grid {
            designs: vec![0, 1, 2],
            ns: vec![3, 5, 9, 15],
            cvs: vec![0.1, 1.0, 5.0],
            sds: vec![1.0, 3.0, 10.0],
            boots: vec![6, 20],
        }
    };
    let Grid {
        designs,
        ns,
        cvs,
        sds,
        boots,
    } = grid;
    let designs: Vec<usize> = designs
        .into_iter()
        .filter(|d| {
            config
                .designs
                .as_ref()
                .is_none_or(|names| names.iter().any(|n| n == DESIGNS[*d].name))
        })
        .collect();
    let sds: Vec<f64> = sds
        .into_iter()
        .filter(|sd| config.sds.as_ref().is_none_or(|list| list.contains(sd)))
        .collect();
    let mut out = Vec::new();
    for &design in &designs {
        for &n in &ns {
            for &cv in &cvs {
                for &sd in &sds {
                    for &b in &boots {
                        for change in [Change::Zero, Change::Detectable] {
                            out.push(Cell {
                                design,
                                n,
                                cv,
                                sd,
                                noisier: 1.0,
                                boots: b,
                                change,
                            });
                        }
                    }
                }
            }
        }
    }
    // The homogeneity test's power: campaigns three times as noisy as their calibration.
    for &n in &ns {
        for &b in &boots {
            out.push(Cell {
                design: 0,
                n,
                cv: 1.0,
                sd: 1.0,
                noisier: 3.0,
                boots: b,
                change: Change::Zero,
            });
            if !config.short {
                out.push(Cell {
                    design: 1,
                    n,
                    cv: 1.0,
                    sd: 1.0,
                    noisier: 3.0,
                    boots: b,
                    change: Change::Zero,
                });
            }
        }
    }
    out
}

/// Counts for one analysis (without or with the profile) under one limit set.
#[derive(Clone, Default)]
struct Tally {
    campaigns: usize,
    signal: usize,
    stable: usize,
    signal_stable: usize,
    /// The boot-level interval exists, is bounded, excludes 0 on the side of the truth.
    resolved: usize,
    widths: Vec<f64>,
    /// With the profile: not pooled, noisier than its calibration.
    refused: usize,
    /// With the profile: the homogeneity test was made.
    tested: usize,
}

struct CellResult {
    cell: Cell,
    /// The change simulated, percent.
    truth: f64,
    /// [without, with][limit set].
    tallies: [[Tally; 2]; 2],
}

/// ν of a design's own boots: Σ (m_k − 1).
fn own_dof(sequence: &[&str]) -> usize {
    let boots = |k: &str| sequence.iter().filter(|s| **s == k).count();
    boots("a").saturating_sub(1) + boots("b").saturating_sub(1)
}

/// The detectable change of a cell's design with its profile, from the true noise: what
/// `aba check` prints for a profile that measured it exactly.
fn detectable(cell: &Cell) -> f64 {
    let design = &DESIGNS[cell.design];
    let var = (cell.sd * cell.sd + cell.cv * cell.cv / cell.n as f64) / 1e4;
    let m = |k: &str| design.sequence.iter().filter(|s| **s == k).count();
    let dof = (cell.boots - 1 + own_dof(design.sequence)) as f64;
    minimal_detectable_pct(var, m("a"), m("b"), dof).expect("a design with both kernels")
}

fn judge(
    points: &[SeriesPoint],
    params: &VerdictParams,
    prior: Option<(&BootPrior, Option<&BootPrior>)>,
    environment: &EnvironmentCheck,
) -> Option<SeriesResult> {
    let candidates = ["b".to_owned()];
    let ctx = SeriesContext {
        baseline: "a",
        candidates: &candidates,
        declared: &[],
        params,
        better: Better::Lower,
        aux: false,
        recoveries: &[],
        prior_all: prior.map(|p| p.0),
        prior_drop_first: prior.and_then(|p| p.1),
        environment,
        look: None,
    };
    analyze_series(points, &ctx).all
}

fn simulate(cell: Cell, index: usize, config: &Config) -> CellResult {
    let design = &DESIGNS[cell.design];
    let sets = limit_sets();
    let truth = match cell.change {
        Change::Zero => 0.0,
        Change::Detectable => detectable(&cell),
    };
    let mut rng = Rng::new(cell_seed(config.seed, index));
    let environment = EnvironmentCheck::default();
    let calibration_noise = Noise {
        sd: cell.sd,
        cv: cell.cv,
        n: cell.n,
        drift: 0.0,
        slow_first: 0.0,
    };
    let campaign_noise = Noise {
        sd: cell.sd * cell.noisier,
        ..calibration_noise
    };
    let calibration_sequence = vec!["a"; cell.boots];
    // The candidate is slower by the truth: a positive change.
    let mean_of = |kernel: &str| {
        if kernel == "a" {
            100.0
        } else {
            100.0 * (1.0 + truth / 100.0)
        }
    };
    let mut tallies: [[Tally; 2]; 2] = Default::default();
    for _ in 0..config.campaigns {
        let calibration = draw(
            &mut rng,
            &calibration_sequence,
            &mean_of,
            &calibration_noise,
        );
        let nothing = VerdictParams::default();
        let profiled = analyze_series(
            &calibration,
            &SeriesContext {
                baseline: "a",
                candidates: &[],
                declared: &[],
                params: &nothing,
                better: Better::Lower,
                aux: false,
                recoveries: &[],
                prior_all: None,
                prior_drop_first: None,
                environment: &environment,
                look: None,
            },
        );
        let all = profiled.all.as_ref().and_then(estimate).map(|e| e.prior());
        let drop_first = profiled
            .drop_first
            .as_ref()
            .and_then(estimate)
            .map(|e| e.prior());
        let points = draw(&mut rng, design.sequence, &mean_of, &campaign_noise);
        for (s, (_, params)) in sets.iter().enumerate() {
            let with = all.as_ref().map(|a| (a, drop_first.as_ref()));
            for (w, prior) in [None, with].into_iter().enumerate() {
                let t = &mut tallies[w][s];
                t.campaigns += 1;
                let Some(result) = judge(&points, params, prior, &environment) else {
                    continue;
                };
                let Some(c) = result.comparisons.first() else {
                    continue;
                };
                let label = c.verdict.label.to_string();
                t.signal += usize::from(label == "SIGNAL");
                if label != "UNSTABLE" {
                    t.stable += 1;
                    t.signal_stable += usize::from(label == "SIGNAL");
                }
                if let Some((lo, hi)) = c.comparison.ci_boot.as_ref().and_then(|ci| ci.bounds) {
                    t.widths.push(hi - lo);
                    t.resolved += usize::from(lo > 0.0);
                }
                if let Some(p) = &c.comparison.pooling {
                    t.tested += usize::from(p.homogeneity.is_some());
                    t.refused += usize::from(!p.pooled);
                }
            }
        }
    }
    CellResult {
        cell,
        truth,
        tallies,
    }
}

/// A bound: cells met and missed, and the worst cell.
struct Bound {
    what: &'static str,
    met: usize,
    missed: Vec<String>,
    worst: Option<(f64, String)>,
}

impl Bound {
    fn new(what: &'static str) -> Bound {
        Bound {
            what,
            met: 0,
            missed: Vec::new(),
            worst: None,
        }
    }

    /// Records a cell whose `value` (`score` orders them, the largest worst) met it or not.
    fn check(&mut self, ok: bool, score: f64, shown: String) {
        if self.worst.as_ref().is_none_or(|(w, _)| score > *w) {
            self.worst = Some((score, shown.clone()));
        }
        if ok {
            self.met += 1;
        } else {
            self.missed.push(shown);
        }
    }
}

fn key(cell: &Cell) -> String {
    let mut k = format!(
        "{} n={} CV={} SD={} boots={}",
        DESIGNS[cell.design].name,
        cell.n,
        fmt_num(cell.cv),
        fmt_num(cell.sd),
        cell.boots
    );
    if cell.noisier != 1.0 {
        k.push_str(&format!(" campaign SD x{}", fmt_num(cell.noisier)));
    }
    k
}

fn main() {
    let config = config();
    let started = Instant::now();
    let cells = cells(&config);
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut results: Vec<(usize, CellResult)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(cell) = cells.get(i) else { break };
                        out.push((i, simulate(*cell, i, &config)));
                    }
                    out
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("worker"))
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    let mut results: Vec<CellResult> = results.into_iter().map(|(_, r)| r).collect();
    report(
        &config,
        &mut results,
        started.elapsed().as_secs_f64(),
        threads,
    );
}

#[allow(clippy::too_many_lines)]
fn report(config: &Config, results: &mut [CellResult], seconds: f64, threads: usize) {
    let sets = limit_sets();
    println!(
        "# aba noise-profile simulator ({} mode)\n",
        if config.short { "short" } else { "full" }
    );
    println!(
        "seed {}, {} campaigns per cell, each with its own calibration, {} cells x 2 limit \
         sets, {threads} threads, {seconds:.0} s wall time, aba {}, homogeneity level {} %.\n",
        config.seed,
        config.campaigns,
        results.len(),
        env!("CARGO_PKG_VERSION"),
        fmt_num(100.0 * HOMOGENEITY_ALPHA)
    );
    println!(
        "Every campaign is analysed twice on the same data: without a profile (its own boots, \
         ν = 1 for A/B/A) and with the profile of its calibration. SIG: P(SIGNAL); SIG | \
         stable: SIGNAL among the runs that are not UNSTABLE (their count); width: the \
         median boot-level 95% interval, percentage points; res: the boot-level interval \
         excludes 0 on the side of the true change; refused: the homogeneity test found the \
         campaign noisier than its calibration (not pooled), among the campaigns it tested. \
         change: 0, or MDC = the minimal detectable change `aba check` prints for the design \
         with that profile (two-sided 5 %, 80 % power), computed from the true noise.\n"
    );
    let mut conditional = Bound::new(
        "A/B/A, profile of >= 6 boots, boot SD 3 %, no change, >= 200 stable runs: P(SIGNAL | \
         not UNSTABLE) <= 5 %",
    );
    let mut conditional_before = Bound::new(
        "(the same cells without a profile, >= 200 stable runs: P(SIGNAL | not UNSTABLE) <= 5 %)",
    );
    let mut narrower = Bound::new(
        "A/B/A, profile of >= 6 boots, boot SD 1 %: median boot-level interval >= 3x narrower",
    );
    // Rates that are about α by design: pooled over their cells, with their binomial interval.
    let mut refused_total = (0usize, 0usize);
    let mut refused_max: Option<(f64, String)> = None;
    let mut null_signal: Vec<(usize, usize, f64)> = vec![(0, 0, 0.0); DESIGNS.len()];
    let mut power =
        Bound::new("true change = the MDC aba check prints: resolved in 70-90 % (80 % intended)");
    let mut detection = Bound::new(
        "(campaign boot SD 3x its calibration's: refused, the higher the better; no bound)",
    );

    for (d, design) in DESIGNS.iter().enumerate() {
        let mine: Vec<usize> = (0..results.len())
            .filter(|&i| results[i].cell.design == d)
            .collect();
        if mine.is_empty() {
            continue;
        }
        println!("## {}\n", design.name);
        println!(
            "| n | CV | SD | boots | campaign SD | change | limits | without: SIG | SIG \\| stable (runs) | width | res | with: SIG | SIG \\| stable (runs) | width | res | refused |"
        );
        println!(
            "|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        );
        for &i in &mine {
            let (cell, truth) = (results[i].cell, results[i].truth);
            let change = match cell.change {
                Change::Zero => "0".to_owned(),
                Change::Detectable => format!("MDC {truth:.2}"),
            };
            for (s, (set, _)) in sets.iter().enumerate() {
                let [without, with] = &mut results[i].tallies;
                let (wo, wi) = (&mut without[s], &mut with[s]);
                let w_wo = median(&mut wo.widths);
                let w_wi = median(&mut wi.widths);
                let opt = |x: Option<f64>| x.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}"));
                println!(
                    "| {} | {} | {} | {} | x{} | {change} | {set} | {} | {} ({}) | {} | {} | {} | {} ({}) | {} | {} | {} |",
                    cell.n,
                    fmt_num(cell.cv),
                    fmt_num(cell.sd),
                    cell.boots,
                    fmt_num(cell.noisier),
                    rate(wo.signal, wo.campaigns),
                    rate(wo.signal_stable, wo.stable),
                    wo.stable,
                    opt(w_wo),
                    rate(wo.resolved, wo.campaigns),
                    rate(wi.signal, wi.campaigns),
                    rate(wi.signal_stable, wi.stable),
                    wi.stable,
                    opt(w_wi),
                    rate(wi.resolved, wi.campaigns),
                    rate(wi.refused, wi.tested),
                );
                let name = format!("{} change={change} {set}", key(&cell));
                let same_noise = cell.noisier == 1.0;
                if cell.change == Change::Zero && same_noise {
                    let p = 100.0 * wi.signal as f64 / wi.campaigns.max(1) as f64;
                    let t = &mut null_signal[d];
                    *t = (t.0 + wi.signal, t.1 + wi.campaigns, t.2.max(p));
                }
                // A rate among fewer than 200 stable runs says little (at CV 5 % the default
                // max_cv_pct leaves almost none): such cells are shown, not counted.
                if d == 0
                    && cell.sd == 3.0
                    && cell.change == Change::Zero
                    && same_noise
                    && wi.stable >= 200
                {
                    let p = 100.0 * wi.signal_stable as f64 / wi.stable.max(1) as f64;
                    let (lo, hi) = wilson(wi.signal_stable, wi.stable);
                    conditional.check(
                        p <= 5.0,
                        p,
                        format!(
                            "{p:.1} at {name}: {}/{}, 95% [{lo:.1}, {hi:.1}]",
                            wi.signal_stable, wi.stable
                        ),
                    );
                    if wo.stable >= 200 {
                        let b = 100.0 * wo.signal_stable as f64 / wo.stable as f64;
                        conditional_before.check(
                            b <= 5.0,
                            b,
                            format!("{b:.1} at {name}: {}/{}", wo.signal_stable, wo.stable),
                        );
                    }
                }
                if d == 0
                    && cell.sd == 1.0
                    && same_noise
                    && s == 0
                    && let (Some(a), Some(b)) = (w_wo, w_wi)
                {
                    let ratio = a / b;
                    narrower.check(
                        ratio >= 3.0,
                        -ratio,
                        format!("{ratio:.2}x at {name} ({a:.2} vs {b:.2})"),
                    );
                }
                if same_noise && cell.change == Change::Zero && wi.tested > 0 && s == 0 {
                    let p = 100.0 * wi.refused as f64 / wi.tested as f64;
                    refused_total = (refused_total.0 + wi.refused, refused_total.1 + wi.tested);
                    if refused_max.as_ref().is_none_or(|(m, _)| p > *m) {
                        refused_max =
                            Some((p, format!("{p:.1} at {name}: {}/{}", wi.refused, wi.tested)));
                    }
                }
                if !same_noise && s == 0 {
                    let p = 100.0 * wi.refused as f64 / wi.tested.max(1) as f64;
                    detection.check(true, -p, format!("{p:.1} at {name}"));
                }
                if cell.change == Change::Detectable && s == 0 {
                    let p = 100.0 * wi.resolved as f64 / wi.campaigns.max(1) as f64;
                    power.check(
                        (70.0..=90.0).contains(&p),
                        (p - 80.0).abs(),
                        format!("{p:.1} at {name}"),
                    );
                }
            }
        }
        println!();
    }
    println!("## Bounds (issue 10)\n");
    println!("| bound | cells met | cells missed | worst cell |");
    println!("|---|---:|---:|---|");
    let bounds = [
        &conditional,
        &conditional_before,
        &narrower,
        &power,
        &detection,
    ];
    for b in bounds {
        println!(
            "| {} | {} | {} | {} |",
            b.what.replace('|', "\\|"),
            b.met,
            b.missed.len(),
            b.worst.as_ref().map_or("-", |w| w.1.as_str())
        );
    }
    let (k, n) = refused_total;
    let (lo, hi) = wilson(k, n);
    let rate = 100.0 * k as f64 / n.max(1) as f64;
    println!(
        "\nHomogeneity test, campaigns as noisy as their calibration: false refusals {rate:.2} % \
         over every such cell ({k}/{n}, 95 % [{lo:.2}, {hi:.2}]), the level being {} %: {}; \
         the highest cell {}.",
        fmt_num(100.0 * HOMOGENEITY_ALPHA),
        if lo <= 100.0 * HOMOGENEITY_ALPHA {
            "met"
        } else {
            "MISSED"
        },
        refused_max.map_or_else(|| "-".to_owned(), |m| m.1)
    );
    println!(
        "\nWith a profile and no change, P(SIGNAL) over every cell of a design (a plain A/B \
         rests on the profile's 95 % interval alone, so it sits at 5 % up to Monte-Carlo \
         noise; the other designs' drift margin and brackets take it below):\n"
    );
    for (d, (k, n, max)) in null_signal.iter().enumerate() {
        if *n > 0 {
            let (lo, hi) = wilson(*k, *n);
            println!(
                "- {}: {:.2} % ({k}/{n}, 95 % [{lo:.2}, {hi:.2}]), highest cell {max:.1} %",
                DESIGNS[d].name,
                100.0 * *k as f64 / *n as f64
            );
        }
    }
    for b in bounds {
        if !b.missed.is_empty() && !b.what.starts_with('(') {
            println!("\nMissed, {}:\n", b.what);
            for m in &b.missed {
                println!("- {m}");
            }
        }
    }
}
