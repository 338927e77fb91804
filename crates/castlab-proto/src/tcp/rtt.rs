//! RTT estimation and the retransmission timeout (RFC 6298 §2).

use super::*;

// ------------------------------------------------------------------------------------------
// RTT estimation (RFC 6298 §2)
// ------------------------------------------------------------------------------------------

/// The retransmission-timeout estimator of RFC 6298 §2, in integer nanoseconds.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    rto: Duration,
    min_rto: Duration,
    max_rto: Duration,
    granularity: Duration,
    min_on_variance: bool,
}

impl RttEstimator {
    pub fn new(cfg: &TcpConfig) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Duration::ZERO,
            // RFC 6298 §2.1: RTO = 1 s until a measurement is made.
            rto: cfg.initial_rto.min(cfg.max_rto),
            min_rto: cfg.min_rto,
            max_rto: cfg.max_rto,
            granularity: cfg.clock_granularity,
            min_on_variance: cfg.rto_min_on_variance,
        }
    }

    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }
    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }
    pub fn rto(&self) -> Duration {
        self.rto
    }

    /// Take one measurement `r`.
    pub fn sample(&mut self, r: Duration) {
        let r_ns = r.as_nanos();
        match self.srtt {
            None => {
                // RFC 6298 §2.2: SRTT = R, RTTVAR = R/2.
                self.srtt = Some(r);
                self.rttvar = Duration::from_nanos(r_ns / 2);
            }
            Some(s) => {
                // RFC 6298 §2.3 (alpha = 1/8, beta = 1/4): RTTVAR first, with the old SRTT.
                let s_ns = s.as_nanos();
                let diff = s_ns.abs_diff(r_ns);
                self.rttvar = Duration::from_nanos((3 * self.rttvar.as_nanos() + diff) / 4);
                self.srtt = Some(Duration::from_nanos((7 * s_ns + r_ns) / 8));
            }
        }
        // RFC 6298 §2.2-2.3: RTO = SRTT + max(G, K·RTTVAR), K = 4; §2.4 and §2.5 bounds.
        let srtt = self.srtt.unwrap_or(r);
        let var = self.granularity.max(self.rttvar * 4);
        self.rto = if self.min_on_variance {
            // Linux (`__tcp_set_rto`): the minimum floors the variance term
            (srtt + var.max(self.min_rto)).min(self.max_rto)
        } else {
            (srtt + var).max(self.min_rto).min(self.max_rto)
        };
    }

    /// RFC 6298 §5.5: RTO = RTO · 2, bounded by the maximum (§2.5).
    pub fn back_off(&mut self) {
        self.rto = (self.rto * 2).min(self.max_rto);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_rto_bounds_the_timer_or_its_variance_term() {
        // A steady 200 ms RTT: RTTVAR decays towards 0 (by 3/4 a sample from R/2 = 100 ms).
        let rto_after = |on_variance: bool| {
            let cfg = TcpConfig {
                min_rto: Duration::from_millis(200),
                rto_min_on_variance: on_variance,
                ..Default::default()
            };
            let mut e = RttEstimator::new(&cfg);
            for _ in 0..200 {
                e.sample(Duration::from_millis(200));
            }
            assert!(e.rttvar() < Duration::from_nanos(1000));
            e.rto()
        };
        // RFC 6298 §2.3-2.4: max(200 ms, 200 ms + max(G = 1 ms, ~0)) = 201 ms
        assert_eq!(rto_after(false), Duration::from_millis(201));
        // Linux: 200 ms + max(200 ms, G, ~0) = 400 ms
        assert_eq!(rto_after(true), Duration::from_millis(400));
    }
}
