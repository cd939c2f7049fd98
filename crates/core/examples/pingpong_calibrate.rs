//! Calibrate Hockney's α and β on this machine with a TCP loopback ping-pong, and show
//! why the default fit weights relative residuals.
//!
//! ```text
//! cargo run --release -p perfcompose-core --example pingpong_calibrate [REPS]
//! ```
//!
//! The ping-pong itself is a measurement harness, not library code (the core library has
//! no threads or sockets): one thread echoes every message back, the other times round
//! trips for sizes from 1 B to 4 MiB. Each repetition is a sample; round trips are halved
//! by the fit (`Timing::RoundTrip`).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Instant;

use perfcompose_core::comm::{fit_hockney, fit_hockney_piecewise, Timing, Weighting};

const SIZES: &[usize] = &[1, 8, 64, 512, 4096, 32_768, 262_144, 1_048_576, 4_194_304];

fn main() -> std::io::Result<()> {
    let reps: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let max = *SIZES.last().unwrap_or(&1);
    let echo = std::thread::spawn(move || -> std::io::Result<()> {
        let (mut s, _) = listener.accept()?;
        s.set_nodelay(true)?;
        let mut buf = vec![0u8; max];
        loop {
            let mut len = [0u8; 8];
            if s.read_exact(&mut len).is_err() {
                return Ok(());
            }
            let n = u64::from_le_bytes(len) as usize;
            s.read_exact(&mut buf[..n])?;
            s.write_all(&buf[..n])?;
        }
    });
    let mut c = TcpStream::connect(addr)?;
    c.set_nodelay(true)?;
    let mut buf = vec![7u8; max];
    let mut samples = Vec::new();
    // Sizes are interleaved (one round trip of each size per pass) so that a noisy
    // moment on the shared machine hits every size alike rather than one size.
    let warmup = 5;
    for pass in 0..reps + warmup {
        for &n in SIZES {
            // Fewer repetitions for the megabyte messages keep the run short.
            if n >= 1 << 20 && pass % 10 != 0 {
                continue;
            }
            let t0 = Instant::now();
            c.write_all(&(n as u64).to_le_bytes())?;
            c.write_all(&buf[..n])?;
            c.read_exact(&mut buf[..n])?;
            let t = t0.elapsed().as_secs_f64();
            if pass >= warmup {
                samples.push((n as f64, t));
            }
        }
    }
    drop(c);
    echo.join().expect("echo thread")?;

    println!("{} round trips, sizes 1 B .. 4 MiB", samples.len());
    for w in [Weighting::Relative, Weighting::Absolute] {
        match fit_hockney(&samples, Timing::RoundTrip, w) {
            Ok(f) => println!(
                "{w:?}: alpha = {:.3} us (± {:.3}), beta = {:.4} ns/B (± {:.4}) = {:.2} GB/s, n1/2 = {:.0} B, R² = {:.4}, worst relative residual {:.0} %",
                f.alpha * 1e6,
                f.alpha_stderr.unwrap_or(f64::NAN) * 1e6,
                f.beta * 1e9,
                f.beta_stderr.unwrap_or(f64::NAN) * 1e9,
                f.bandwidth() / 1e9,
                f.half_performance_size(),
                f.r_squared,
                100.0 * f.max_relative_error
            ),
            Err(e) => println!("{w:?}: {e}"),
        }
    }
    // Real loopback is not one straight line: three size ranges, breakpoints chosen by
    // the fit.
    let pw = fit_hockney_piecewise(&samples, Timing::RoundTrip, Weighting::Relative, 3);
    match &pw {
        Ok(pw) => {
            for p in &pw.pieces {
                println!(
                    "piece from {:>8} B: alpha = {:.3} us, beta = {:.4} ns/B",
                    p.from_bytes,
                    p.fit.intercept * 1e6,
                    p.fit.slope * 1e9
                );
            }
        }
        Err(e) => println!("piecewise: {e}"),
    }
    // Per size medians, to see how straight the line is.
    println!("size_B median_one_way_us piecewise_us");
    for &n in SIZES {
        let mut v: Vec<f64> = samples
            .iter()
            .filter(|s| s.0 == n as f64)
            .map(|s| s.1 / 2.0)
            .collect();
        v.sort_by(f64::total_cmp);
        let piecewise = pw.as_ref().map_or(f64::NAN, |p| p.eval(n as f64));
        println!("{n} {:.3} {:.3}", v[v.len() / 2] * 1e6, piecewise * 1e6);
    }
    Ok(())
}
