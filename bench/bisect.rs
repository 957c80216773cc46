//! The bisection simulator (issue 32): synthetic histories with one known first bad commit
//! (or none), bisected by aba's own decision core (`aba::bisect`) on samples drawn from the
//! campaign model of `bench/sim.rs`, every step judged by aba's analysis
//! (`analyze_series` at the step's look, through `Bisection::judge`). Nothing statistical is
//! re-implemented here: this file draws numbers, answers the core's actions and counts
//! outcomes.
//!
//! A history of N commits after good: commit k's workload mean is 100 before the culprit c
//! (uniform on 1..=N) and 100·(1 + size/100) from c on; a no-change history has size 0. A
//! step at X boots good/X/good/X/… (one fresh boot per point, n samples per point) and is
//! judged at 3, 5, 7, … points up to its budget; the endpoints' confirmation boots good/bad/….
//!
//! Three bisectors per history, each on its own draws:
//! - plain: `aba::bisect` with `Strategy::Plain`;
//! - Bayesian: `aba::bisect` with `Strategy::Bayesian`;
//! - naive: plain halving whose steps repeat the sandwich (append X/good, the last good boot
//!   shared) and judge the whole step at the fixed 95 % after each repeat, until its verdict
//!   is SIGNAL (like bad) or NO_MATERIAL_SIGNAL/BELOW_GATE (like good), at the recipe's gate,
//!   up to the same budget: what a script around `aba report` would do.
//!
//! `cargo bench --bench bisect -- [--short] [--histories N] [--seed S] [--commits LIST]
//! [--size LIST] [--sd LIST] [--cv LIST] [--n N] [--max-points N] [--confirm-points N] [--confirm-retries N] [--step-retries N]
//! [--step-error E] [--step-alpha A] [--alpha A]`. Prints one table per history length and
//! the bounds of issue 32, each met or missed; never judges: the exit status is 0 whatever
//! the rates are.

mod sim;

use std::time::Instant;

use aba::{
    analysis::{
        environment::EnvironmentCheck,
        series::{SeriesContext, analyze_series},
    },
    bisect::{
        Action, BisectInput, Bisection, Judged, Outcome, Record, StepResult, StepVerdict, Strategy,
    },
    stats::{Better, VerdictLabel, VerdictParams},
};
use sim::{Bound, Noise, Rng, cell_seed, draw, fmt_num, parse_list, print_bounds, run_cells};

/// What the command line chose.
struct Config {
    short: bool,
    histories: usize,
    seed: u64,
    commits: Vec<usize>,
    /// Culprit sizes in units of G (0: no change).
    sizes: Vec<f64>,
    sds: Vec<f64>,
    cvs: Vec<f64>,
    /// Samples per point.
    n: usize,
    max_points: usize,
    confirm_points: usize,
    confirm_retries: usize,
    step_retries: usize,
    step_error: f64,
    step_alpha: f64,
    alpha: f64,
}

fn config() -> Config {
    let (args, short) = sim::args();
    // The core's own defaults, so that the simulator measures what the command will run.
    let core = BisectInput::new(Vec::new(), params(), Better::Lower);
    let mut c = Config {
        short,
        histories: if short { 200 } else { 800 },
        seed: 20_261_206,
        commits: if short {
            vec![16, 1024]
        } else {
            vec![16, 128, 1024]
        },
        sizes: if short {
            vec![0.0, 2.0]
        } else {
            vec![0.0, 1.0, 2.0, 5.0]
        },
        sds: if short {
            vec![1.0, 3.0]
        } else {
            vec![0.3, 1.0, 3.0]
        },
        cvs: if short {
            vec![1.0]
        } else {
            vec![0.1, 1.0, 5.0]
        },
        n: 5,
        max_points: core.budget.max_points,
        confirm_points: core.budget.confirm_max_points,
        confirm_retries: core.budget.confirm_retries,
        step_retries: core.budget.step_retries,
        step_error: core.step_error,
        step_alpha: core.step_alpha,
        alpha: core.alpha,
    };
    sim::each_option(&args, |flag, value| match flag {
        "--histories" => c.histories = value.parse().expect("--histories N"),
        "--seed" => c.seed = value.parse().expect("--seed S"),
        "--commits" => c.commits = parse_list(&value, "commits"),
        "--size" => c.sizes = parse_list(&value, "size"),
        "--sd" => c.sds = parse_list(&value, "sd"),
        "--cv" => c.cvs = parse_list(&value, "cv"),
        "--n" => c.n = value.parse().expect("--n N"),
        "--max-points" => c.max_points = value.parse().expect("--max-points N"),
        "--confirm-points" => c.confirm_points = value.parse().expect("--confirm-points N"),
        "--confirm-retries" => c.confirm_retries = value.parse().expect("--confirm-retries N"),
        "--step-retries" => c.step_retries = value.parse().expect("--step-retries N"),
        "--step-error" => c.step_error = value.parse().expect("--step-error E"),
        "--step-alpha" => c.step_alpha = value.parse().expect("--step-alpha A"),
        "--alpha" => c.alpha = value.parse().expect("--alpha A"),
        _ => panic!("unknown argument {flag}"),
    });
    c
}

/// The recipe's limits in the simulator: aba's defaults with max_cv_pct 10, so that a
/// within-boot CV of 5 % is a noisy measurement, not a broken one (issue 9's loose set).
fn params() -> VerdictParams {
    VerdictParams {
        max_cv_pct: 10.0,
        ..VerdictParams::default()
    }
}

#[derive(Clone, Copy)]
struct Cell {
    commits: usize,
    size: f64,
    sd: f64,
    cv: f64,
}

const METHODS: [&str; 4] = ["plain", "Bayesian", "naive", "naive pooled"];
/// The naive bisector the bounds compare against.
const NAIVE: usize = 2;

/// How the histories of one cell ended, for one bisector.
#[derive(Clone, Default)]
struct Tally {
    histories: usize,
    /// The true culprit named (no-change histories: "no commit in range changes it").
    right: usize,
    /// Another commit named.
    wrong: usize,
    /// Ended with a range.
    range: usize,
    /// Ended with a range that does not hold the culprit.
    range_miss: usize,
    between: usize,
    no_bisection: usize,
    /// No bisection because the confirmation was UNSTABLE.
    no_bisection_unstable: usize,
    no_change: usize,
    boots: Vec<usize>,
}

impl Tally {
    fn mean_boots(&self) -> f64 {
        self.boots.iter().sum::<usize>() as f64 / self.boots.len().max(1) as f64
    }

    fn p95_boots(&self) -> usize {
        let mut b = self.boots.clone();
        b.sort_unstable();
        b.get((b.len() * 95).div_ceil(100).saturating_sub(1))
            .copied()
            .unwrap_or(0)
    }
}

fn pct(k: usize, n: usize) -> f64 {
    100.0 * k as f64 / n.max(1) as f64
}

/// One step's points: good/X/good/… with X `change` percent off good.
fn step_points(
    rng: &mut Rng,
    len: usize,
    change: f64,
    noise: &Noise,
) -> Vec<aba::analysis::model::SeriesPoint> {
    let sequence: Vec<&str> = (0..len)
        .map(|i| if i % 2 == 0 { "a" } else { "b" })
        .collect();
    let mean_of = |k: &str| {
        if k == "a" {
            100.0
        } else {
            100.0 * (1.0 + change / 100.0)
        }
    };
    draw(rng, &sequence, &mean_of, noise)
}

/// A step judged by the core at each of its looks.
fn core_step(b: &Bisection, rng: &mut Rng, change: f64, noise: &Noise) -> StepResult {
    let looks = b.look_points();
    let points = step_points(rng, *looks.last().expect("a look"), change, noise);
    let env = EnvironmentCheck::default();
    for &m in &looks {
        match b.judge(&points[..m], "a", "b", &env).expect("a look") {
            Judged::Extend { .. } => {}
            Judged::Decided(s) => return s,
        }
    }
    unreachable!("the last look decides")
}

/// A naive step: the sandwich repeated and judged at 95 % after each repeat, at the
/// recipe's gate, until SIGNAL or equivalent, within the step's budget of boots. `pooled`:
/// each repeat appends X/good to the step's campaign and the whole campaign is judged;
/// otherwise each repeat is a fresh good/X/good judged alone (the naive bisection).
fn naive_step(
    b: &Bisection,
    commit: usize,
    rng: &mut Rng,
    change: f64,
    noise: &Noise,
    pooled: bool,
) -> StepResult {
    let looks = b.look_points();
    let budget = *looks.last().expect("a look");
    if !pooled {
        let mut used = 0;
        let mut last = None;
        while used + 3 <= budget {
            let points = step_points(rng, 3, change, noise);
            used += 3;
            let mut s = naive_judge(&points, commit);
            s.points = used;
            if !matches!(s.verdict, StepVerdict::Undecided | StepVerdict::Unstable) {
                return s;
            }
            last = Some(StepResult {
                verdict: StepVerdict::Undecided,
                ..s
            });
        }
        return last.expect("a budget of at least 3 points");
    }
    let points = step_points(rng, budget, change, noise);
    let mut last = None;
    for &m in &looks {
        let s = naive_judge(&points[..m], commit);
        if s.verdict != StepVerdict::Undecided {
            return s;
        }
        last = Some(s);
    }
    last.expect("a look")
}

/// A naive look: aba's verdict at 95 % and the recipe's gate, SIGNAL like bad,
/// NO_MATERIAL_SIGNAL or BELOW_GATE like good.
fn naive_judge(points: &[aba::analysis::model::SeriesPoint], commit: usize) -> StepResult {
    let m = points.len();
    let params = params();
    let env = EnvironmentCheck::default();
    let candidates = ["b".to_owned()];
    let ctx = SeriesContext {
        baseline: "a",
        candidates: &candidates,
        declared: &[],
        params: &params,
        better: Better::Lower,
        aux: false,
        recoveries: &[],
        prior_all: None,
        prior_drop_first: None,
        environment: &env,
        look: None,
    };
    let analysis = analyze_series(points, &ctx);
    let Some(c) = analysis.all.as_ref().and_then(|a| a.comparisons.first()) else {
        return StepResult {
            commit,
            verdict: StepVerdict::Undecided,
            label: "NOT_COMPARED".into(),
            change_pct: None,
            ci: None,
            points: m,
        };
    };
    let verdict = match c.verdict.label {
        VerdictLabel::Signal => StepVerdict::Bad,
        VerdictLabel::NoMaterialSignal | VerdictLabel::BelowGate => StepVerdict::Good,
        // Pooled, more boots cannot mend an UNSTABLE campaign; fresh, the next repeat may.
        VerdictLabel::Unstable => StepVerdict::Unstable,
        _ => StepVerdict::Undecided,
    };
    StepResult {
        commit,
        verdict,
        label: c.verdict.label.to_string(),
        change_pct: Some(c.comparison.change_pct),
        ci: c.comparison.ci_boot.as_ref().and_then(|i| i.bounds),
        points: m,
    }
}

/// One bisection of a history whose commit k is `change(k)` percent off good.
fn bisect(
    input: BisectInput,
    method: usize,
    change: &dyn Fn(usize) -> f64,
    rng: &mut Rng,
    noise: &Noise,
) -> (Outcome, usize) {
    let mut b = Bisection::new(input).expect("a valid input");
    let mut boots = 0;
    loop {
        let commit = match b.next() {
            Action::Done(o) => return (o.clone(), boots),
            Action::Confirm { bad } => *bad,
            Action::Test { commit } => *commit,
        };
        let s = if method >= NAIVE {
            naive_step(&b, commit, rng, change(commit), noise, method == 3)
        } else {
            core_step(&b, rng, change(commit), noise)
        };
        boots += s.points;
        b.push(Record::Step(s)).expect("the current step");
    }
}

fn simulate(cell: Cell, index: usize, c: &Config) -> Vec<Tally> {
    let mut rng = Rng::new(cell_seed(c.seed, index));
    let gate = params().gate_pct;
    let noise = Noise {
        n: c.n,
        cv: cell.cv,
        sd: cell.sd,
        drift: 0.0,
        slow_first: 0.0,
    };
    let commits: Vec<String> = (0..=cell.commits).map(|i| format!("{i}")).collect();
    let mut tallies = vec![Tally::default(); METHODS.len()];
    for _ in 0..c.histories {
        let culprit = 1 + rng.below(cell.commits);
        let size = cell.size * gate;
        let change = move |k: usize| if k >= culprit { size } else { 0.0 };
        for (m, t) in tallies.iter_mut().enumerate() {
            let mut input = BisectInput::new(commits.clone(), params(), Better::Lower);
            input.strategy = if m == 1 {
                Strategy::Bayesian
            } else {
                Strategy::Plain
            };
            input.budget.max_points = c.max_points;
            input.budget.confirm_max_points = c.confirm_points;
            input.budget.confirm_retries = c.confirm_retries;
            input.budget.step_retries = c.step_retries;
            input.step_error = c.step_error;
            input.step_alpha = c.step_alpha;
            input.alpha = c.alpha;
            let (outcome, boots) = bisect(input, m, &change, &mut rng, &noise);
            t.histories += 1;
            t.boots.push(boots);
            match outcome {
                Outcome::Culprit { commit, .. } => {
                    if size != 0.0 && commit == culprit {
                        t.right += 1;
                    } else {
                        t.wrong += 1;
                    }
                }
                Outcome::Range { first, last, .. } => {
                    t.range += 1;
                    t.range_miss += usize::from(!(first..=last).contains(&culprit));
                }
                Outcome::Between(_) => t.between += 1,
                Outcome::NoBisection(s) => {
                    t.no_bisection += 1;
                    t.no_bisection_unstable += usize::from(s.verdict == StepVerdict::Unstable);
                }
                Outcome::NoChange(_) => {
                    t.no_change += 1;
                    t.right += usize::from(size == 0.0);
                }
            }
        }
    }
    tallies
}

#[allow(clippy::too_many_lines)]
fn main() {
    let c = config();
    let started = Instant::now();
    let mut cells = Vec::new();
    for &commits in &c.commits {
        for &size in &c.sizes {
            for &sd in &c.sds {
                for &cv in &c.cvs {
                    cells.push(Cell {
                        commits,
                        size,
                        sd,
                        cv,
                    });
                }
            }
        }
    }
    let indexed: Vec<(usize, Cell)> = cells.iter().copied().enumerate().collect();
    let (results, threads) = run_cells(&indexed, |(i, cell)| simulate(*cell, *i, &c));
    let seconds = started.elapsed().as_secs_f64();
    let gate = params().gate_pct;
    println!(
        "# aba bisection simulator ({} mode)\n",
        if c.short { "short" } else { "full" }
    );
    println!(
        "seed {}, {} histories per cell, {} cells, n = {} samples per point, G = {} % \
         (max_cv_pct 10), step budget {} points, confirmation budget {} points, step α {} \
         (Pocock over the looks), posterior step error {}, α {}, {threads} threads, {seconds:.0} s \
         wall time, aba {}.\n",
        c.seed,
        c.histories,
        cells.len(),
        c.n,
        fmt_num(gate),
        c.max_points,
        c.confirm_points,
        c.step_alpha,
        c.step_error,
        c.alpha,
        env!("CARGO_PKG_VERSION")
    );
    println!(
        "Rates in percent of the histories of a cell. right: the culprit named (a no-change \
         history: \"no commit in range changes it\"); wrong: another commit named; range: ended \
         with a range (miss: one without the culprit); betw: \"sits between good and bad\"; \
         no bis: \"good and bad do not differ at this noise\" (UNS: of which the confirmation \
         was UNSTABLE); no chg: \"no commit in range \
         changes it\". Boots: every boot of the bisection, confirmation included. vs naive: \
         mean boots over the naive bisector's.\n"
    );
    let per = |what: &str| -> Vec<Bound> {
        METHODS
            .iter()
            .map(|m| Bound::new(&format!("{m}: {what}")))
            .collect()
    };
    let mut wrong = per("P(wrong commit named) <= 5 %, every culprit cell");
    let mut claims = per(
        "P(wrong commit, or a range without the culprit, or \"between\") <= 5 %, every culprit cell",
    );
    let mut no_change = per("no change, P(\"no commit in range changes it\") >= 95 %");
    let mut saving: Vec<Bound> = (0..2)
        .flat_map(|m| {
            [NAIVE, 3].map(|n| {
                Bound::new(&format!(
                    "{}: mean boots <= 60 % of {}'s, right no lower (culprit cells)",
                    METHODS[m], METHODS[n]
                ))
            })
        })
        .collect();
    for &commits in &c.commits {
        println!("## {commits} commits\n");
        println!(
            "| size | SD | CV | bisector | right | wrong | range (miss) | betw | no bis (UNS) | no chg | boots mean | p95 | vs naive | vs pooled |"
        );
        println!("|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (cell, tallies) in cells.iter().zip(&results) {
            if cell.commits != commits {
                continue;
            }
            let size = if cell.size == 0.0 {
                "0".to_owned()
            } else {
                format!("{}G", fmt_num(cell.size))
            };
            for (m, t) in tallies.iter().enumerate() {
                let ratio = |n: usize| t.mean_boots() / tallies[n].mean_boots();
                let shown = |n: usize| {
                    if m >= NAIVE {
                        "-".to_owned()
                    } else {
                        format!("{:.0} %", 100.0 * ratio(n))
                    }
                };
                println!(
                    "| {size} | {} | {} | {} | {:.1} | {:.1} | {:.1} ({:.1}) | {:.1} | {:.1} ({:.1}) | {:.1} | {:.1} | {} | {} | {} |",
                    fmt_num(cell.sd),
                    fmt_num(cell.cv),
                    METHODS[m],
                    pct(t.right, t.histories),
                    pct(t.wrong, t.histories),
                    pct(t.range, t.histories),
                    pct(t.range_miss, t.histories),
                    pct(t.between, t.histories),
                    pct(t.no_bisection, t.histories),
                    pct(t.no_bisection_unstable, t.histories),
                    pct(t.no_change, t.histories),
                    t.mean_boots(),
                    t.p95_boots(),
                    shown(NAIVE),
                    shown(3),
                );
                let name = format!(
                    "N={commits} size={size} SD={} CV={}",
                    fmt_num(cell.sd),
                    fmt_num(cell.cv)
                );
                if cell.size == 0.0 {
                    no_change[m].rate(t.no_change, t.histories, 95.0, false, name);
                    continue;
                }
                wrong[m].rate(t.wrong, t.histories, 5.0, true, name.clone());
                claims[m].rate(
                    t.wrong + t.range_miss + t.between,
                    t.histories,
                    5.0,
                    true,
                    name.clone(),
                );
                if m < NAIVE {
                    for (k, n) in [NAIVE, 3].into_iter().enumerate() {
                        let right = pct(t.right, t.histories);
                        let theirs = pct(tallies[n].right, tallies[n].histories);
                        let r = 100.0 * ratio(n);
                        saving[2 * m + k].check(
                            r <= 60.0 && right >= theirs,
                            r,
                            r,
                            format!(
                                "{name}: {r:.0} % of the boots, right {right:.1} % vs {theirs:.1} %"
                            ),
                        );
                    }
                }
            }
        }
        println!();
    }
    println!("## Bounds (issue 32)\n");
    println!(
        "Missed: the cell's estimate is on the wrong side of the bound; beyond noise: its 95% \
         binomial (Wilson) interval is too. The naive bisectors' rows are for comparison. A \
         range is a stated non-answer, not a wrong one, unless it misses the culprit.\n"
    );
    let all: Vec<&Bound> = wrong
        .iter()
        .chain(claims.iter())
        .chain(no_change.iter())
        .chain(saving.iter())
        .collect();
    print_bounds(&all);
}
