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

use perfcompose_core::comm::{fit_hockney, Timing, Weighting};

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
    for &n in SIZES {
        // Fewer repetitions for the megabyte messages keep the run short.
        let r = if n >= 1 << 20 { reps / 10 + 5 } else { reps };
        for i in 0..r + 5 {
            let t0 = Instant::now();
            c.write_all(&(n as u64).to_le_bytes())?;
            c.write_all(&buf[..n])?;
            c.read_exact(&mut buf[..n])?;
            let t = t0.elapsed().as_secs_f64();
            if i >= 5 {
                samples.push((n as f64, t)); // the first five are warm-up
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
    // Per size medians, to see how straight the line is.
    println!("size_B median_one_way_us");
    for &n in SIZES {
        let mut v: Vec<f64> = samples
            .iter()
            .filter(|s| s.0 == n as f64)
            .map(|s| s.1 / 2.0)
            .collect();
        v.sort_by(f64::total_cmp);
        println!("{n} {:.3}", v[v.len() / 2] * 1e6);
    }
    Ok(())
}
