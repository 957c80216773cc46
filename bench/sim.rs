//! What the simulators share (`bench/verdicts.rs`, issue 9; `bench/reproduction.rs`,
//! issue 18; `bench/profiles.rs`, issue 10): the seeded generator, the designs, the campaign model that draws one synthetic
//! campaign's points, and the counting helpers of their reports.
//!
//! Model: a kernel K has mean μ_K (the baseline 100, a candidate 100·(1 + Δ/100)); each point
//! (one fresh boot) has boot mean μ_K·(1 + N(0, boot SD)), times a linear drift over the
//! campaign; each sample is boot mean · (1 + N(0, within CV)), the first one times a slow
//! first sample. Nothing statistical is computed here: the points go through aba's own
//! analysis in the simulators.

// Each simulator uses its own part of this module.
#![allow(dead_code, reason = "shared by three benches")]

use aba::{analysis::model::SeriesPoint, stats::VerdictParams};

/// xoshiro256**, seeded through splitmix64: small, fast and good enough for simulation.
pub struct Rng {
    s: [u64; 4],
    spare: Option<f64>,
}

impl Rng {
    /// A generator whose stream is fixed by `seed`.
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        Rng {
            s: [next(), next(), next(), next()],
            spare: None,
        }
    }

    fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform on (0, 1).
    fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Uniform on 0..n (n ≥ 1).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.uniform() * n as f64) as usize).min(n - 1)
    }

    /// Standard normal (Marsaglia's polar method).
    pub fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        loop {
            let u = 2.0 * self.uniform() - 1.0;
            let v = 2.0 * self.uniform() - 1.0;
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                let k = (-2.0 * s.ln() / s).sqrt();
                self.spare = Some(v * k);
                return u * k;
            }
        }
    }
}

/// The seed of cell `index`'s own stream, so that a cell is reproducible on its own.
pub fn cell_seed(seed: u64, index: usize) -> u64 {
    seed ^ (index as u64 + 1).wrapping_mul(0xd1b5_4a32_d192_ed03)
}

/// A design: the boot sequence and which candidates are judged.
pub struct Design {
    /// Its name on the command line and in the tables.
    pub name: &'static str,
    /// Kernel labels in boot order; `a` is the baseline.
    pub sequence: &'static [&'static str],
    /// (candidate judged, row name).
    pub judged: &'static [(&'static str, &'static str)],
}

/// The designs of issue 9.
pub const DESIGNS: [Design; 5] = [
    Design {
        name: "A/B",
        sequence: &["a", "b"],
        judged: &[("b", "A/B")],
    },
    Design {
        name: "A/B/A",
        sequence: &["a", "b", "a"],
        judged: &[("b", "A/B/A")],
    },
    Design {
        name: "A/B/B/A",
        sequence: &["a", "b", "b", "a"],
        judged: &[("b", "A/B/B/A")],
    },
    Design {
        name: "A/B/A/B/A",
        sequence: &["a", "b", "a", "b", "a"],
        judged: &[("b", "A/B/A/B/A")],
    },
    Design {
        name: "palindrome",
        sequence: &["a", "c", "f", "o", "n", "o", "f", "c", "a"],
        judged: &[("c", "9-point C"), ("n", "9-point N")],
    },
];

impl Design {
    /// The candidates (every kernel but the baseline `a`), in order of first boot.
    pub fn candidates(&self) -> Vec<String> {
        let mut c: Vec<String> = Vec::new();
        for k in self.sequence.iter().filter(|k| **k != "a") {
            if !c.iter().any(|x| x == k) {
                c.push((*k).to_owned());
            }
        }
        c
    }

    /// Degrees of freedom of the pooled between-boot variance.
    pub fn nu(&self) -> usize {
        let mut kernels: Vec<&str> = Vec::new();
        for k in self.sequence {
            if !kernels.contains(k) {
                kernels.push(k);
            }
        }
        kernels
            .iter()
            .map(|k| self.sequence.iter().filter(|s| *s == k).count())
            .filter(|m| *m >= 2)
            .map(|m| m - 1)
            .sum()
    }
}

/// The two limit sets of issue 9.
pub fn limit_sets() -> [(&'static str, VerdictParams); 2] {
    [
        ("default", VerdictParams::default()),
        (
            "loose",
            VerdictParams {
                max_cv_pct: 10.0,
                ..VerdictParams::default()
            },
        ),
    ]
}

/// The noise of one synthetic campaign.
#[derive(Clone, Copy, Debug)]
pub struct Noise {
    /// Measured samples per point.
    pub n: usize,
    /// Within-boot CV, percent.
    pub cv: f64,
    /// Boot-to-boot SD of the boot mean, percent.
    pub sd: f64,
    /// The last point lies this many percent above the first, whatever its kernel.
    pub drift: f64,
    /// The first sample of every point is this many percent slow.
    pub slow_first: f64,
}

/// One synthetic campaign of `design` whose candidates are `true_change` percent off the
/// baseline, as the points `aba report` would read from samples.csv.
pub fn campaign(
    design: &Design,
    true_change: f64,
    noise: &Noise,
    rng: &mut Rng,
) -> Vec<SeriesPoint> {
    let mean_of = |kernel: &str| {
        if kernel == "a" {
            100.0
        } else {
            100.0 * (1.0 + true_change / 100.0)
        }
    };
    draw(rng, design.sequence, &mean_of, noise)
}

/// One campaign of `sequence` whose kernel K has mean `mean_of(K)`, in the model above.
/// Points are labelled `<kernel><index>`.
pub fn draw(
    rng: &mut Rng,
    sequence: &[&str],
    mean_of: &dyn Fn(&str) -> f64,
    noise: &Noise,
) -> Vec<SeriesPoint> {
    let m = sequence.len();
    let mut values = vec![0.0; noise.n];
    sequence
        .iter()
        .enumerate()
        .map(|(i, kernel)| {
            let mu = mean_of(kernel);
            let time = if m > 1 {
                i as f64 / (m - 1) as f64
            } else {
                0.0
            };
            let boot =
                mu * (1.0 + noise.sd / 100.0 * rng.normal()) * (1.0 + noise.drift / 100.0 * time);
            for (j, v) in values.iter_mut().enumerate() {
                *v = boot * (1.0 + noise.cv / 100.0 * rng.normal());
                if j == 0 {
                    *v *= 1.0 + noise.slow_first / 100.0;
                }
            }
            SeriesPoint {
                order: i + 1,
                label: format!("{kernel}{i}"),
                kernel: (*kernel).to_owned(),
                values: Vec::new(),
                warmups: Vec::new(),
                all: aba::stats::summarize(&values).expect("n ≥ 1"),
                drop_first: aba::stats::summarize(&values[1..]),
            }
        })
        .collect()
}

/// The median, `None` when empty (sorts `values`).
pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let k = values.len();
    Some(if k % 2 == 1 {
        values[k / 2]
    } else {
        (values[k / 2 - 1] + values[k / 2]) / 2.0
    })
}

/// k/n in percent with one decimal, `-` without campaigns.
pub fn rate(k: usize, n: usize) -> String {
    if n == 0 {
        "-".to_owned()
    } else {
        format!("{:.1}", 100.0 * k as f64 / n as f64)
    }
}

/// How the campaigns of one cell were judged, for one candidate and one limit set: the
/// verdict columns every simulator table shares (SIG, BG, NMS, UNS, UNREP, SIG | stable,
/// wrong dir).
#[derive(Clone, Debug, Default)]
pub struct VerdictCounts {
    /// Campaigns of the cell.
    pub campaigns: usize,
    /// SIGNAL.
    pub signal: usize,
    /// BELOW_GATE.
    pub below_gate: usize,
    /// NO_MATERIAL_SIGNAL.
    pub no_material: usize,
    /// INCONCLUSIVE.
    pub inconclusive: usize,
    /// UNSTABLE.
    pub unstable: usize,
    /// UNREPLICATED, or a candidate that was not compared.
    pub other: usize,
    /// Not UNSTABLE.
    pub stable: usize,
    /// SIGNAL among those.
    pub signal_stable: usize,
    /// SIGNAL whose sign is opposite to the true change.
    pub wrong_direction: usize,
}

impl VerdictCounts {
    /// A campaign in which the candidate was not compared.
    pub fn not_compared(&mut self) {
        self.campaigns += 1;
        self.other += 1;
    }

    /// A campaign judged `label` (by name, so that the tables read the same whatever labels
    /// aba has), whose change was `change_pct` against a true change of `true_change`.
    pub fn count(&mut self, label: &str, change_pct: f64, true_change: f64) {
        self.campaigns += 1;
        match label {
            "SIGNAL" => self.signal += 1,
            "BELOW_GATE" => self.below_gate += 1,
            "NO_MATERIAL_SIGNAL" => self.no_material += 1,
            "INCONCLUSIVE" => self.inconclusive += 1,
            "UNSTABLE" => self.unstable += 1,
            _ => self.other += 1,
        }
        if label != "UNSTABLE" {
            self.stable += 1;
            self.signal_stable += usize::from(label == "SIGNAL");
        }
        if label == "SIGNAL" && true_change != 0.0 && change_pct * true_change < 0.0 {
            self.wrong_direction += 1;
        }
    }

    /// The bounds of SIGNAL among the stable runs of a no-change cell: `any` counts every
    /// cell with stable runs, `known` only those with at least 200 (where the rate is known
    /// to within a few points).
    pub fn stable_signal_bounds(&self, any: &mut Bound, known: &mut Bound, cell: &str) {
        if self.stable == 0 {
            return;
        }
        let name = format!("{cell} (stable runs)");
        any.rate(self.signal_stable, self.stable, 5.0, true, name.clone());
        if self.stable >= 200 {
            known.rate(self.signal_stable, self.stable, 5.0, true, name);
        }
    }

    /// The verdict columns of a table row, `SIG | BG | NMS | INC | UNS | UNREP | SIG|stable (runs) |
    /// wrong dir` (`-` for the direction without a true change).
    pub fn columns(&self, no_change: bool) -> String {
        format!(
            "{} | {} | {} | {} | {} | {} | {} ({}) | {}",
            rate(self.signal, self.campaigns),
            rate(self.below_gate, self.campaigns),
            rate(self.no_material, self.campaigns),
            rate(self.inconclusive, self.campaigns),
            rate(self.unstable, self.campaigns),
            rate(self.other, self.campaigns),
            rate(self.signal_stable, self.stable),
            self.stable,
            if no_change {
                "-".to_owned()
            } else {
                rate(self.wrong_direction, self.campaigns)
            },
        )
    }
}

/// Wilson 95% interval of k/n, in percent.
pub fn wilson(k: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 100.0);
    }
    let (k, n) = (k as f64, n as f64);
    let z = 1.959_963_984_540_054;
    let p = k / n;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / (1.0 + z * z / n);
    (
        100.0 * (centre - half).max(0.0),
        100.0 * (centre + half).min(1.0),
    )
}

/// `2`, `0.5`: a grid value without a trailing `.0`.
pub fn fmt_num(x: f64) -> String {
    let text = format!("{x}");
    text.strip_suffix(".0").map_or(text.clone(), str::to_owned)
}

/// The grid options both simulators take.
pub struct Grid {
    /// CI's short mode: a sub-grid with fewer campaigns per cell.
    pub short: bool,
    /// Campaigns (or pairs of campaigns) per cell.
    pub campaigns: usize,
    /// The generator's seed.
    pub seed: u64,
    /// Indices into [`DESIGNS`].
    pub designs: Vec<usize>,
    /// Samples per point.
    pub ns: Vec<usize>,
    /// Within-boot CVs, percent.
    pub cvs: Vec<f64>,
    /// Boot SDs, percent.
    pub sds: Vec<f64>,
}

impl Grid {
    /// Reads the command line: `--short` picks `defaults(true)`, then `--campaigns N`,
    /// `--seed S`, `--design LIST`, `--n LIST`, `--cv LIST` and `--sd LIST` change the grid,
    /// and every other `--flag VALUE` goes to `other`, which returns false for a flag it does
    /// not know (`cargo bench` adds `--bench`, which is skipped).
    pub fn parse(
        defaults: impl FnOnce(bool) -> Grid,
        mut other: impl FnMut(&str, &str) -> bool,
    ) -> Grid {
        let (args, short) = args();
        let mut grid = defaults(short);
        each_option(&args, |flag, value| match flag {
            "--campaigns" => grid.campaigns = value.parse().expect("--campaigns N"),
            "--seed" => grid.seed = value.parse().expect("--seed S"),
            "--design" => {
                let names: Vec<String> = parse_list(&value, "design");
                grid.designs = names
                    .iter()
                    .map(|n| {
                        DESIGNS
                            .iter()
                            .position(|d| d.name.eq_ignore_ascii_case(n))
                            .unwrap_or_else(|| panic!("--design: unknown {n}"))
                    })
                    .collect();
            }
            "--n" => grid.ns = parse_list(&value, "n"),
            "--cv" => grid.cvs = parse_list(&value, "cv"),
            "--sd" => grid.sds = parse_list(&value, "sd"),
            _ if other(flag, &value) => {}
            _ => panic!("unknown argument {flag}"),
        });
        grid
    }
}

/// Runs `simulate` on every cell, on every core, and returns the results in cell order with
/// the number of threads used. Each cell seeds its own stream, so the order in which the
/// threads take cells changes nothing.
pub fn run_cells<C: Sync, R: Send>(
    cells: &[C],
    simulate: impl Fn(&C) -> R + Sync,
) -> (Vec<R>, usize) {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let results = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(cell) = cells.get(i) else { break };
                        out.push((i, simulate(cell)));
                    }
                    out
                })
            })
            .collect();
        let mut all: Vec<(usize, R)> = workers
            .into_iter()
            .flat_map(|w| w.join().expect("worker"))
            .collect();
        all.sort_by_key(|(i, _)| *i);
        all.into_iter().map(|(_, r)| r).collect()
    });
    (results, threads)
}

/// The command line after the program name, and whether `--short` is on it.
pub fn args() -> (Vec<String>, bool) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let short = args.iter().any(|a| a == "--short");
    (args, short)
}

/// Walks `args`: `--short`, `--cases` and cargo's `--bench` are flags, every other option takes the
/// next argument as its value, and `apply` gets each option with its value.
pub fn each_option(args: &[String], mut apply: impl FnMut(&str, String)) {
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--short" | "--bench" | "--cases" => i += 1,
            name => {
                let value = args
                    .get(i + 1)
                    .unwrap_or_else(|| panic!("{name} needs a value"))
                    .clone();
                apply(name, value);
                i += 2;
            }
        }
    }
}

/// `--name a,b,c`.
pub fn parse_list<T: std::str::FromStr>(text: &str, what: &str) -> Vec<T> {
    text.split(',')
        .map(|s| {
            s.trim()
                .parse()
                .unwrap_or_else(|_| panic!("--{what}: cannot read {s:?}"))
        })
        .collect()
}

/// One bound of an issue over the cells of the grid: how many cells meet it, which miss it.
pub struct Bound {
    /// What is bounded.
    pub what: String,
    /// Cells that meet it.
    pub met: usize,
    /// Cells that miss it, described.
    pub missed: Vec<String>,
    /// Missed cells whose 95% binomial (Wilson) interval excludes the bound: the rate is
    /// beyond the bound, not just a Monte-Carlo draw above it.
    pub beyond_noise: usize,
    /// The worst cell (score, text).
    pub worst: Option<(f64, String)>,
}

impl Bound {
    /// A bound no cell was checked against yet.
    pub fn new(what: &str) -> Bound {
        Bound {
            what: what.to_owned(),
            met: 0,
            missed: Vec::new(),
            beyond_noise: 0,
            worst: None,
        }
    }

    /// Records one cell: `score` orders the cells (the largest is the worst), `value` is
    /// printed for the worst one.
    pub fn check(&mut self, ok: bool, value: f64, score: f64, cell: String) {
        if self.worst.as_ref().is_none_or(|(w, _)| score > *w) {
            self.worst = Some((score, format!("{value:.1} at {cell}")));
        }
        if ok {
            self.met += 1;
        } else {
            self.missed.push(cell);
        }
    }

    /// [`Bound::check`] for a rate of `k` in `n` that must stay at most (`upper`) or at least
    /// (`!upper`) `limit` percent.
    pub fn rate(&mut self, k: usize, n: usize, limit: f64, upper: bool, cell: String) {
        let value = 100.0 * k as f64 / n.max(1) as f64;
        let (lo, hi) = wilson(k, n);
        let ok = if upper {
            value <= limit
        } else {
            value >= limit
        };
        let beyond = if upper { lo > limit } else { hi < limit };
        let cell = format!("{cell}: {k}/{n}, 95% [{lo:.1}, {hi:.1}]");
        self.beyond_noise += usize::from(!ok && beyond);
        let score = if upper { value } else { -value };
        self.check(ok, value, score, cell);
    }

    /// [`Bound::check`] for a rate of `k` in `n` that must stay within `lo..=hi` percent
    /// (a coverage): beyond noise when its Wilson interval lies outside that range.
    pub fn within(&mut self, k: usize, n: usize, lo: f64, hi: f64, cell: String) {
        let value = 100.0 * k as f64 / n.max(1) as f64;
        let (w_lo, w_hi) = wilson(k, n);
        let ok = (lo..=hi).contains(&value);
        let beyond = w_hi < lo || w_lo > hi;
        let cell = format!("{cell}: {k}/{n}, 95% [{w_lo:.1}, {w_hi:.1}]");
        self.beyond_noise += usize::from(!ok && beyond);
        self.check(ok, value, (value - (lo + hi) / 2.0).abs(), cell);
    }
}

/// Prints the table of `bounds` (met, missed, beyond noise, worst cell), then each missed
/// list.
pub fn print_bounds(bounds: &[&Bound]) {
    use std::fmt::Write as _;
    println!("| bound | cells met | cells missed | beyond noise | worst cell |");
    println!("|---|---:|---:|---:|---|");
    let mut missed_lists = String::new();
    for b in bounds {
        println!(
            "| {} | {} | {} | {} | {} |",
            b.what,
            b.met,
            b.missed.len(),
            b.beyond_noise,
            b.worst.as_ref().map_or("-", |w| w.1.as_str())
        );
        if !b.missed.is_empty() {
            let _ = writeln!(missed_lists, "\nMissed, {}:\n", b.what);
            for m in &b.missed {
                let _ = writeln!(missed_lists, "- {m}");
            }
        }
    }
    print!("{missed_lists}");
}
