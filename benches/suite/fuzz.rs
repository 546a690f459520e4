//! Fuzz throughput: small generated scenarios (`flinksim fuzz`'s generator, any protocol, no
//! bug) generated, run and judged per second, on one thread; and the share of that spent
//! generating and parsing the scenario rather than running it.

use super::{verdict, Table};
use flinksim::fuzz::campaign::{run_campaign, CampaignOptions};
use flinksim::fuzz::generate::{generate, GenerateOptions};
use std::time::Instant as WallClock;

const SEEDS: u64 = 400;

pub fn rows(table: &mut Table) {
    let options = CampaignOptions {
        seeds: 0..SEEDS,
        threads: 1,
        generate: GenerateOptions::default(),
        shard: None,
        time_limit: None,
        recheck: 0.0,
        strategy: flinksim::fuzz::strategy::Strategy::Random,
    };
    let result = run_campaign(&options, |_| {});
    let rate = result.seeds_per_second_per_thread(1);
    let events: u64 = result.results.iter().map(|r| r.events).sum();
    table.row(
        "fuzz",
        format!("generated scenarios/s/thread ({SEEDS} seeds, generate + run + judge)"),
        format!("{rate:.0}"),
        format!(
            "target ≥ 1,000: {}; {:.0} kernel events per scenario on average",
            verdict(rate >= 1000.0),
            events as f64 / result.results.len() as f64
        ),
    );
    let start = WallClock::now();
    for seed in 0..SEEDS {
        let document = generate(seed, &GenerateOptions::default());
        std::hint::black_box(
            flinksim::scenario::parse(&document.to_string(), "generated").expect("valid"),
        );
    }
    let generate_only = start.elapsed().as_secs_f64();
    table.row(
        "fuzz",
        "share of a fuzz seed spent generating and parsing its scenario",
        format!("{:.0}%", 100.0 * generate_only / result.wall.as_secs_f64()),
        format!(
            "{:.2} ms per seed of {:.2} ms",
            1e3 * generate_only / SEEDS as f64,
            1e3 * result.wall.as_secs_f64() / SEEDS as f64
        ),
    );
}
