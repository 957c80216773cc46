//! The simulator of campaigns that extend themselves (`[analysis] extend`, issue 10 §4):
//! synthetic A-B-A campaigns that append B-A while a comparison is undecided, judged at every
//! look by aba's own analysis (`analyze_series` with the look's boundary, then
//! `analysis::extension::comparison_state` and `stats::sequential::decide`, exactly what the
//! engine runs), against fixed designs of every length judged once at 95%.
//!
//! For each cell (n, within CV, boot SD, limit set) and each spending of the 5% it prints:
//! the false-SIGNAL rate of the extended design at no true change (bound ≤ 5%), its power and
//! mean boots at a true change of 2G, the shortest fixed design A-B-A-…-A with at least that
//! power, and how many fewer boots the extended design needs on average (bound ≥ 30%).
//!
//! `cargo bench --bench sequential -- [--short] [--campaigns N] [--seed S] [--n LIST]
//! [--cv LIST] [--sd LIST] [--max-points N]`. Each cell has its own seeded stream; the
//! extended and the fixed designs of a cell judge the same campaigns (prefixes of one drawn
//! sequence). It never judges: the exit status is 0 whatever the rates are.

mod sim;

use std::time::Instant;

use aba::{
    analysis::{
        environment::EnvironmentCheck,
        extension::comparison_state,
        series::{SeriesContext, analyze_series},
    },
    stats::{
        Better, VerdictLabel, VerdictParams,
        sequential::{Boundary, Decision, Look, Spending, decide},
    },
};
use sim::{Grid, Noise, Rng, cell_seed, draw, limit_sets, run_cells, wilson};

const SPENDINGS: [Spending; 3] = [
    Spending::Bonferroni,
    Spending::Pocock,
    Spending::OBrienFleming,
];
/// True changes in units of G.
const CHANGES: [f64; 2] = [0.0, 2.0];
const PLANNED: usize = 3;
const UNIT: usize = 2;

#[derive(Clone, Copy)]
struct Cell {
    n: usize,
    cv: f64,
    sd: f64,
    change: f64,
}

/// Counts of one design under one limit set.
#[derive(Clone, Default)]
struct Tally {
    campaigns: usize,
    signal: usize,
    unstable: usize,
    boots: usize,
}

/// `[limit set]` × (`fixed[m]` for m = 3, 5, …, max; `extended[spending]`).
struct CellResult {
    cell: Cell,
    fixed: Vec<[Tally; 2]>,
    extended: Vec<[Tally; 2]>,
}

fn context<'a>(
    candidates: &'a [String],
    params: &'a VerdictParams,
    environment: &'a EnvironmentCheck,
    look: Option<Look>,
) -> SeriesContext<'a> {
    SeriesContext {
        baseline: "a",
        candidates,
        declared: &[],
        params,
        better: Better::Lower,
        aux: false,
        recoveries: &[],
        prior_all: None,
        prior_drop_first: None,
        environment,
        look,
    }
}

fn simulate(cell: Cell, index: usize, campaigns: usize, seed: u64, max: usize) -> CellResult {
    let sets = limit_sets();
    let gate = sets[0].1.gate_pct;
    let true_change = cell.change * gate;
    let mut rng = Rng::new(cell_seed(seed, index));
    let sequence: Vec<&str> = (0..max)
        .map(|i| if i % 2 == 0 { "a" } else { "b" })
        .collect();
    let lengths: Vec<usize> = (PLANNED..=max).step_by(UNIT).collect();
    let candidates = vec!["b".to_owned()];
    let environment = EnvironmentCheck::default();
    let noise = Noise {
        n: cell.n,
        cv: cell.cv,
        sd: cell.sd,
        drift: 0.0,
        slow_first: 0.0,
    };
    let mean_of = |k: &str| {
        if k == "a" {
            100.0
        } else {
            100.0 * (1.0 + true_change / 100.0)
        }
    };
    let boundaries: Vec<Boundary> = SPENDINGS
        .iter()
        .map(|s| Boundary::new(*s, PLANNED, UNIT, max))
        .collect();
    let mut fixed: Vec<[Tally; 2]> = lengths.iter().map(|_| Default::default()).collect();
    let mut extended: Vec<[Tally; 2]> = SPENDINGS.iter().map(|_| Default::default()).collect();
    for _ in 0..campaigns {
        let points = draw(&mut rng, &sequence, &mean_of, &noise);
        for (s, (_, params)) in sets.iter().enumerate() {
            for (i, &m) in lengths.iter().enumerate() {
                let result = analyze_series(
                    &points[..m],
                    &context(&candidates, params, &environment, None),
                );
                let label = result
                    .all
                    .as_ref()
                    .and_then(|a| a.comparisons.first())
                    .map(|c| c.verdict.label);
                let t = &mut fixed[i][s];
                t.campaigns += 1;
                t.boots += m;
                t.signal += usize::from(label == Some(VerdictLabel::Signal));
                t.unstable += usize::from(label == Some(VerdictLabel::Unstable));
            }
            for (b, boundary) in boundaries.iter().enumerate() {
                let t = &mut extended[b][s];
                t.campaigns += 1;
                for &m in &boundary.points {
                    let look = boundary.look_at(m).expect("a look of the boundary");
                    let result = analyze_series(
                        &points[..m],
                        &context(&candidates, params, &environment, Some(look)),
                    );
                    let comparison = result.all.as_ref().and_then(|a| a.comparisons.first());
                    let states: Vec<_> = comparison
                        .iter()
                        .map(|c| comparison_state(c, params.gate_pct))
                        .collect();
                    let decision = decide(&states, &look);
                    if decision != Decision::Extend {
                        let label = comparison.map(|c| c.verdict.label);
                        t.boots += m;
                        t.signal += usize::from(label == Some(VerdictLabel::Signal));
                        t.unstable += usize::from(label == Some(VerdictLabel::Unstable));
                        break;
                    }
                }
            }
        }
    }
    CellResult {
        cell,
        fixed,
        extended,
    }
}

fn pct(k: usize, n: usize) -> f64 {
    100.0 * k as f64 / n.max(1) as f64
}

fn main() {
    let mut max = 11;
    let grid = Grid::parse(
        |short| Grid {
            short,
            campaigns: if short { 200 } else { 2000 },
            seed: 20_260_723,
            designs: Vec::new(),
            ns: if short { vec![9] } else { vec![5, 9] },
            cvs: if short { vec![1.0] } else { vec![1.0, 5.0] },
            sds: if short {
                vec![1.0]
            } else {
                vec![0.3, 1.0, 2.0, 3.0, 5.0]
            },
        },
        |flag, value| {
            if flag == "--max-points" {
                max = value.parse().expect("--max-points N");
                return true;
            }
            false
        },
    );
    assert!(
        max >= PLANNED + UNIT,
        "--max-points must be at least {}",
        PLANNED + UNIT
    );
    let mut cells = Vec::new();
    for &n in &grid.ns {
        for &cv in &grid.cvs {
            for &sd in &grid.sds {
                for &change in &CHANGES {
                    cells.push(Cell { n, cv, sd, change });
                }
            }
        }
    }
    let started = Instant::now();
    let indexed: Vec<(usize, Cell)> = cells.iter().copied().enumerate().collect();
    let (results, threads) = run_cells(&indexed, |(i, c)| {
        simulate(*c, *i, grid.campaigns, grid.seed, max)
    });
    println!(
        "# Extended campaigns (issue 10 §4)\n\nseed {}, {} campaigns per cell, A-B-A extended by B-A up to max_points = {max}, {} cells, {threads} threads, {:.0} s\n",
        grid.seed,
        grid.campaigns,
        cells.len(),
        started.elapsed().as_secs_f64()
    );
    for b in SPENDINGS {
        let boundary = Boundary::new(b, PLANNED, UNIT, max);
        let alphas: Vec<String> = boundary.alphas.iter().map(|a| format!("{a:.4}")).collect();
        println!("- {b:?}: α per look {}", alphas.join(", "));
    }
    println!();
    println!(
        "| n | CV | SD | limits | spending | false SIGNAL (Δ=0) | UNSTABLE (Δ=0) | mean boots (Δ=0) | power (2G) | mean boots (2G) | fixed design of that power | its power | boots saved |"
    );
    println!("|---:|---:|---:|---|---|---|---:|---:|---:|---:|---|---:|---:|");
    let lengths: Vec<usize> = (PLANNED..=max).step_by(UNIT).collect();
    let sets = limit_sets();
    let mut worst_false = (0.0, String::new());
    for pair in results.chunks(2) {
        let (null, alt) = (&pair[0], &pair[1]);
        let c = null.cell;
        for (s, (set, _)) in sets.iter().enumerate() {
            for (b, spending) in SPENDINGS.iter().enumerate() {
                let e0 = &null.extended[b][s];
                let e2 = &alt.extended[b][s];
                let power = pct(e2.signal, e2.campaigns);
                let boots2 = e2.boots as f64 / e2.campaigns as f64;
                let fixed = lengths
                    .iter()
                    .zip(&alt.fixed)
                    .find(|(_, f)| pct(f[s].signal, f[s].campaigns) >= power);
                let (design, fixed_power, saved) = match fixed {
                    Some((m, f)) => (
                        format!("{m} boots"),
                        format!("{:.1} %", pct(f[s].signal, f[s].campaigns)),
                        format!("{:.0} %", 100.0 * (1.0 - boots2 / *m as f64)),
                    ),
                    None => (
                        format!("none up to {max} boots"),
                        "-".to_owned(),
                        "-".to_owned(),
                    ),
                };
                let (lo, hi) = wilson(e0.signal, e0.campaigns);
                let false_rate = pct(e0.signal, e0.campaigns);
                let row = format!("n={} CV={} SD={} {set} {spending:?}", c.n, c.cv, c.sd);
                if false_rate > worst_false.0 || worst_false.1.is_empty() {
                    worst_false = (false_rate, row);
                }
                println!(
                    "| {} | {} | {} | {set} | {spending:?} | {false_rate:.1} % [{lo:.1}, {hi:.1}] | {:.1} % | {:.2} | {power:.1} % | {boots2:.2} | {design} | {fixed_power} | {saved} |",
                    c.n,
                    c.cv,
                    c.sd,
                    pct(e0.unstable, e0.campaigns),
                    e0.boots as f64 / e0.campaigns as f64,
                );
            }
            let powers: Vec<String> = lengths
                .iter()
                .zip(&alt.fixed)
                .map(|(m, f)| format!("{m}: {:.1} %", pct(f[s].signal, f[s].campaigns)))
                .collect();
            let nulls: Vec<String> = lengths
                .iter()
                .zip(&null.fixed)
                .map(|(m, f)| format!("{m}: {:.1} %", pct(f[s].signal, f[s].campaigns)))
                .collect();
            println!(
                "| {} | {} | {} | {set} | fixed | {} | | | {} | | | | |",
                c.n,
                c.cv,
                c.sd,
                nulls.join(", "),
                powers.join(", ")
            );
        }
    }
    println!(
        "\nWorst false-SIGNAL rate of an extended design: {:.1} % at {}",
        worst_false.0, worst_false.1
    );
}
