//! Closed-form equations more than one protocol uses, written once. Every name carries the
//! unit of what it returns; every argument carries its unit.
//!
//! * [`padhye_bytes_per_s`], [`padhye_bits_per_s`]: the TCP throughput equation of Padhye et
//!   al. (SIGCOMM '98) in the form RFC 5348 §3.1 gives it, with b = 1 (one packet per ACK):
//!
//!   ```text
//!   X = s / (R·√(2p/3) + t_RTO·(3·√(3p/8)·p·(1 + 32p²)))
//!   ```
//!
//!   TFMCC (Widmer & Handley §2.1, equation (1)) takes t_RTO = 4R, as RFC 5348 §3.1
//!   recommends; LE-SBCC's TFRC module (Thapliyal et al. §4.1) takes t_RTO = SRTT + 4σ. The
//!   two readings are the two [`Rto`] variants.
//!
//! The Python side has its own copy, `castlab.metrics.padhye_throughput` (numpy, arrays), and
//! both are tested against the same values computed by hand from RFC 5348 §3.1.

/// The retransmission timeout t_RTO in Padhye's equation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rto {
    /// A time in seconds (LE-SBCC §4.1: SRTT + 4σ).
    Seconds(f64),
    /// A multiple of the round-trip time R (TFMCC §2.1 and RFC 5348 §3.1: 4).
    RttTimes(f64),
}

/// Padhye's equation (RFC 5348 §3.1, b = 1): the TCP-friendly rate in bytes per second for
/// packets of `s_bytes`, round-trip time `rtt_s` seconds, loss event rate `p` and timeout
/// `t_rto`. Infinite for p <= 0 (no loss: the equation sets no limit) and wherever the
/// denominator is not positive (R = 0 with t_RTO = 0).
///
/// With [`Rto::RttTimes`] the round-trip time is factored out of the denominator,
/// R·(√(2p/3) + k·3·√(3p/8)·p·(1 + 32p²)), which is the same value in exact arithmetic.
pub fn padhye_bytes_per_s(s_bytes: f64, rtt_s: f64, p: f64, t_rto: Rto) -> f64 {
    if p <= 0.0 {
        return f64::INFINITY;
    }
    let sqrt_term = (2.0 * p / 3.0).sqrt();
    let den = match t_rto {
        Rto::Seconds(t) => rtt_s * sqrt_term + t * 3.0 * (3.0 * p / 8.0).sqrt() * p * (1.0 + 32.0 * p * p),
        Rto::RttTimes(k) => rtt_s * (sqrt_term + k * 3.0 * (3.0 * p / 8.0).sqrt() * p * (1.0 + 32.0 * p * p)),
    };
    if den > 0.0 {
        s_bytes / den
    } else {
        f64::INFINITY
    }
}

/// [`padhye_bytes_per_s`] in bits per second.
pub fn padhye_bits_per_s(s_bytes: f64, rtt_s: f64, p: f64, t_rto: Rto) -> f64 {
    8.0 * padhye_bytes_per_s(s_bytes, rtt_s, p, t_rto)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (s bytes, R s, p, t_RTO s, X bytes/s): RFC 5348 §3.1's formula evaluated by hand in
    /// 40-digit decimal arithmetic. `tests/api/test_metrics.py` checks the Python copy against the
    /// same rows.
    const BY_HAND: [(f64, f64, f64, f64, f64); 5] = [
        (1000.0, 0.1, 0.01, 0.4, 112_332.234_362_993),
        (1000.0, 0.1, 0.01, 1.0, 99_920.444_423_815_31),
        (560.0, 0.1, 0.01, 0.3, 64_235.913_667_987_54),
        (1460.0, 0.05, 0.1, 0.2, 51_686.980_671_506_65),
        (1000.0, 0.2, 1e-6, 0.8, 6_123_669.243_934_748),
    ];

    #[test]
    fn padhye_matches_rfc_5348_by_hand() {
        for (s, r, p, t, want) in BY_HAND {
            let got = padhye_bytes_per_s(s, r, p, Rto::Seconds(t));
            assert!((got / want - 1.0).abs() < 1e-12, "{s} {r} {p} {t}: {got} != {want}");
            // the same row with t_RTO given as a multiple of R
            let got = padhye_bytes_per_s(s, r, p, Rto::RttTimes(t / r));
            assert!((got / want - 1.0).abs() < 1e-12, "{s} {r} {p} {t}/R: {got} != {want}");
            assert_eq!(padhye_bits_per_s(s, r, p, Rto::Seconds(t)), 8.0 * padhye_bytes_per_s(s, r, p, Rto::Seconds(t)));
        }
    }

    #[test]
    fn padhye_without_loss_or_time_sets_no_limit() {
        assert!(padhye_bytes_per_s(1000.0, 0.1, 0.0, Rto::RttTimes(4.0)).is_infinite());
        assert!(padhye_bytes_per_s(1000.0, 0.1, -0.5, Rto::Seconds(1.0)).is_infinite());
        assert!(padhye_bytes_per_s(1000.0, 0.0, 0.01, Rto::Seconds(0.0)).is_infinite());
        assert!(padhye_bytes_per_s(1000.0, 0.0, 0.01, Rto::RttTimes(4.0)).is_infinite());
    }

    #[test]
    fn padhye_falls_with_loss_and_rtt() {
        let x = |r, p| padhye_bytes_per_s(1000.0, r, p, Rto::RttTimes(4.0));
        assert!(x(0.1, 0.001) > x(0.1, 0.01));
        assert!(x(0.1, 0.01) > x(0.2, 0.01));
        // small p: the square-root law s / (R·√(2p/3))
        let law = 1000.0 / (0.1 * (2.0 * 1e-6 / 3.0f64).sqrt());
        assert!((x(0.1, 1e-6) / law - 1.0).abs() < 1e-3);
    }
}
