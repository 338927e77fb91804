//! The two wire formats a driver speaks, one file each: castlab's envelope ([`envelope`], the
//! default) and RFC 3208 PGM ([`pgm`], `NetConfig::pgm_wire`). The driver chooses between
//! them once per send and once per datagram read, by matching on [`Wire`].

pub(super) mod envelope;
pub(super) mod pgm;

/// The wire of one driver, fixed when it is created.
pub(super) enum Wire {
    /// castlab's envelope around `castlab_core::codec`.
    Envelope,
    /// RFC 3208 PGM, with the session it keeps.
    Pgm(Box<pgm::PgmSession>),
}
