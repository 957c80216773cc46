//! What the simulators (`verdicts`, `profiles`) share: a seeded generator, the campaign model
//! (boot effect, within-boot noise, drift, a slow first sample) and the small statistics of
//! their tables. It draws numbers only; every judgement is aba's own analysis.

use aba::{
    analysis::model::SeriesPoint,
    stats::{VerdictParams, summarize},
};

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

/// The noise of a simulated campaign, in percent of the kernel mean.
#[derive(Clone, Copy, Debug)]
pub struct Noise {
    /// Boot-to-boot SD of a boot's mean.
    pub sd: f64,
    /// Within-boot CV of a sample.
    pub cv: f64,
    /// Measured samples per point.
    pub n: usize,
    /// Linear drift over the campaign: the last point is this much above the first.
    pub drift: f64,
    /// The first sample of every point is this much slower.
    pub slow_first: f64,
}

/// One campaign of `sequence`: each point (one fresh boot) has boot mean
/// mean_of(kernel)·(1 + N(0, sd))·(1 + drift·time), each sample boot mean·(1 + N(0, cv)).
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
                all: summarize(&values).expect("n ≥ 1"),
                drop_first: summarize(&values[1..]),
            }
        })
        .collect()
}

/// The median, sorting `values`; `None` when empty.
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

/// k of n in percent with one decimal, `-` when n = 0.
pub fn rate(k: usize, n: usize) -> String {
    if n == 0 {
        "-".to_owned()
    } else {
        format!("{:.1}", 100.0 * k as f64 / n as f64)
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

/// `3`, `0.3`: a number as the command line would give it.
pub fn fmt_num(x: f64) -> String {
    let text = format!("{x}");
    text.strip_suffix(".0").map_or(text.clone(), str::to_owned)
}

/// The seed of cell `index`'s own stream: a cell is reproducible on its own.
pub fn cell_seed(seed: u64, index: usize) -> u64 {
    seed ^ (index as u64 + 1).wrapping_mul(0xd1b5_4a32_d192_ed03)
}

/// The two limit sets of issue 9: the defaults, and a loose set (max_drift_pct 5, max_cv_pct
/// 10).
pub fn limit_sets() -> [(&'static str, VerdictParams); 2] {
    [
        ("default", VerdictParams::default()),
        (
            "loose",
            VerdictParams {
                max_drift_pct: 5.0,
                max_cv_pct: 10.0,
                ..VerdictParams::default()
            },
        ),
    ]
}

/// The command line after the program name, and whether `--short` is on it.
pub fn args() -> (Vec<String>, bool) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let short = args.iter().any(|a| a == "--short");
    (args, short)
}

/// Walks `args`: `--short` and cargo's `--bench` are flags, every other option takes the
/// next argument as its value, and `apply` gets each option with its value.
pub fn each_option(args: &[String], mut apply: impl FnMut(&str, String)) {
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--short" | "--bench" => i += 1,
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

/// `1,2.5,3` as a list; panics naming the option on a value that does not parse.
pub fn parse_list<T: std::str::FromStr>(text: &str, what: &str) -> Vec<T> {
    text.split(',')
        .map(|s| {
            s.trim()
                .parse()
                .unwrap_or_else(|_| panic!("--{what}: cannot read {s:?}"))
        })
        .collect()
}
