//! The native per-symbol state fed directly, as the native scanner will: a healthy feed of
//! 1,000 symbols (next seq, later time, a new quote on every record), N records.
//!
//!   cargo build --release --example state_core --manifest-path native/Cargo.toml
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!       native/target/release/examples/state_core N [micros]
//!
//! for N = 0 and N = 1000000: (total(N) - total(0)) / N instructions a record.

use _native::state::tracker::{Spec, SymbolState};
use _native::state::values::{EventTime, QuoteValue};

fn main() {
    let mut args = std::env::args().skip(1);
    let records: usize = args
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    let micros = args.next().as_deref() == Some("micros");
    let spec = Spec {
        sequence_window: 0,
        resync_after: Some(3),
        max_time_regression_s: 1.0,
        frozen_on: true,
        frozen_max_updates: Some(20),
        frozen_max_s: Some(60.0),
        max_symbols: 100_000,
        max_holes: 1_000,
        max_holes_total: 100_000,
        tolerance_text: "1".into(),
        max_s_text: "60".into(),
        given_up_text: " (over 1000 holes for the symbol or 100000 in all)".into(),
    };
    let mut state = SymbolState::new(spec);
    let symbols: Vec<String> = (0..1000).map(|i| format!("S{i:04}")).collect();
    let mut events = Vec::new();
    for i in 0..records {
        let n = (i / 1000) as i128;
        let time = if micros {
            EventTime::Micros(1_764_460_800_000_000 + i as i64 * 1000)
        } else {
            EventTime::Seconds(1e9 + i as f64)
        };
        let quote = [
            QuoteValue::Float(n as f64),
            QuoteValue::Float(n as f64 + 0.5),
            QuoteValue::Null,
        ];
        state
            .observe(
                0,
                symbols[i % 1000].as_bytes(),
                Some(n + 1),
                Some(time),
                Some(&quote[..]),
                &mut events,
            )
            .expect("one kind of time");
    }
    assert!(events.is_empty(), "a healthy feed raises no events");
    println!("{} symbols held after {records} records", state.len());
}
