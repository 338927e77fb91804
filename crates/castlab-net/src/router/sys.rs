//! The Linux system calls the router needs: AF_PACKET sockets, interface facts and offload
//! switches (the ethtool ioctl), the network-namespace check, and a nanosecond `ppoll`.
//!
//! Everything here is a thin, checked wrapper: errors come back as `io::Error`s that name the
//! interface; nothing allocates on the per-packet calls ([`PacketSocket::recv`], `send`).

use std::ffi::CString;
use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::frame::Mac;

const ETH_P_ALL: u16 = 0x0003;
const SOL_PACKET: libc::c_int = 263;
const PACKET_AUXDATA: libc::c_int = 8;
const PACKET_STATISTICS: libc::c_int = 6;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const PACKET_OUTGOING: u8 = 4;
const PACKET_OTHERHOST: u8 = 3;
/// The frame's transport checksum is left to an offload (the sender's `CHECKSUM_PARTIAL`).
const TP_STATUS_CSUMNOTREADY: u32 = 1 << 3;
const SIOCETHTOOL: libc::c_ulong = 0x8946;
const SIOCGIFHWADDR: libc::c_ulong = 0x8927;
const SIOCGIFMTU: libc::c_ulong = 0x8921;
const ETHTOOL_GDRVINFO: u32 = 0x03;
/// The legacy per-feature setters (linux/ethtool.h): tx checksumming, scatter-gather,
/// TCP segmentation, generic segmentation, generic receive offload.
const ETHTOOL_STXCSUM: u32 = 0x17;
const ETHTOOL_SSG: u32 = 0x19;
const ETHTOOL_STSO: u32 = 0x1f;
const ETHTOOL_SGSO: u32 = 0x24;
const ETHTOOL_SGRO: u32 = 0x2c;

#[repr(C)]
struct TpacketAuxdata {
    tp_status: u32,
    tp_len: u32,
    tp_snaplen: u32,
    tp_mac: u16,
    tp_net: u16,
    tp_vlan_tci: u16,
    tp_vlan_tpid: u16,
}

#[repr(C)]
struct IfReq {
    name: [u8; 16],
    data: [u8; 24],
}

#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

#[repr(C)]
struct EthtoolDrvinfo {
    cmd: u32,
    driver: [u8; 32],
    version: [u8; 32],
    fw_version: [u8; 32],
    bus_info: [u8; 32],
    erom_version: [u8; 32],
    reserved2: [u8; 12],
    n_priv_flags: u32,
    n_stats: u32,
    testinfo_len: u32,
    eedump_len: u32,
    regdump_len: u32,
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn ifreq(name: &str) -> io::Result<IfReq> {
    let b = name.as_bytes();
    if b.is_empty() || b.len() >= 16 || b.contains(&0) || b.contains(&b'/') {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("bad interface name {name:?}")));
    }
    let mut r = IfReq { name: [0; 16], data: [0; 24] };
    r.name[..b.len()].copy_from_slice(b);
    Ok(r)
}

fn ctl_socket() -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2); the descriptor is owned at once.
    let fd = cvt(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: fd is a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// An ethtool ioctl on `name` with `arg` (a struct starting with the command word).
fn ethtool<T>(name: &str, arg: &mut T) -> io::Result<()> {
    let s = ctl_socket()?;
    let mut r = ifreq(name)?;
    let p = arg as *mut T as usize;
    r.data[..size_of::<usize>()].copy_from_slice(&p.to_ne_bytes());
    // SAFETY: SIOCETHTOOL reads ifr_data as a pointer to `arg`, which outlives the call.
    cvt(unsafe { libc::ioctl(s.as_raw_fd(), SIOCETHTOOL as _, &mut r as *mut IfReq) })?;
    Ok(())
}

/// The kernel driver behind an interface (`veth`, `bridge`...).
pub fn driver_name(name: &str) -> io::Result<String> {
    // SAFETY: a plain-old-data struct, zero is a valid value.
    let mut d: EthtoolDrvinfo = unsafe { zeroed() };
    d.cmd = ETHTOOL_GDRVINFO;
    ethtool(name, &mut d)?;
    let end = d.driver.iter().position(|&c| c == 0).unwrap_or(d.driver.len());
    Ok(String::from_utf8_lossy(&d.driver[..end]).into_owned())
}

/// Switch off transmit checksumming, scatter-gather, TSO, GSO and GRO on an interface (of the
/// current namespace): what lets AF_PACKET see complete frames of at most the MTU with
/// their checksums filled in. Features an interface does not have are skipped.
pub fn offloads_off(name: &str) -> io::Result<()> {
    for cmd in [ETHTOOL_STSO, ETHTOOL_SGSO, ETHTOOL_SGRO, ETHTOOL_STXCSUM, ETHTOOL_SSG] {
        let mut v = EthtoolValue { cmd, data: 0 };
        match ethtool(name, &mut v) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => {}
            Err(e) => return Err(io::Error::new(e.kind(), format!("{name}: ethtool 0x{cmd:x}: {e}"))),
        }
    }
    Ok(())
}

pub fn ifindex(name: &str) -> io::Result<u32> {
    let c = CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in interface name"))?;
    // SAFETY: c is a valid C string.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        Err(io::Error::new(io::ErrorKind::NotFound, format!("no interface {name:?} in this namespace")))
    } else {
        Ok(i)
    }
}

fn ifreq_ioctl(name: &str, req: libc::c_ulong) -> io::Result<IfReq> {
    let s = ctl_socket()?;
    let mut r = ifreq(name)?;
    // SAFETY: the request fills the ifreq we pass.
    cvt(unsafe { libc::ioctl(s.as_raw_fd(), req as _, &mut r as *mut IfReq) })?;
    Ok(r)
}

pub fn mac_address(name: &str) -> io::Result<Mac> {
    let r = ifreq_ioctl(name, SIOCGIFHWADDR)?;
    // ifr_hwaddr is a sockaddr: family (2 bytes), then the address
    let mut m = [0u8; 6];
    m.copy_from_slice(&r.data[2..8]);
    Ok(m)
}

pub fn mtu(name: &str) -> io::Result<u32> {
    let r = ifreq_ioctl(name, SIOCGIFMTU)?;
    Ok(i32::from_ne_bytes([r.data[0], r.data[1], r.data[2], r.data[3]]) as u32)
}

/// The name of the `ip netns` namespace this thread runs in (the one in `/var/run/netns`
/// whose file is this thread's namespace), or None: the host's own namespace, or one made
/// some other way. The thread's, not the process's: `setns` moves one thread.
pub fn netns_name() -> io::Result<Option<String>> {
    use std::os::unix::fs::MetadataExt;
    let me = std::fs::metadata("/proc/thread-self/ns/net")?;
    let dir = match std::fs::read_dir("/var/run/netns") {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    for entry in dir.flatten() {
        if let Ok(m) = std::fs::metadata(entry.path()) {
            if m.ino() == me.ino() && m.dev() == me.dev() {
                return Ok(Some(entry.file_name().to_string_lossy().into_owned()));
            }
        }
    }
    Ok(None)
}

/// Make the kernel wake this thread's timed waits within `ns` of their deadline (the default
/// slack is 50 µs).
pub fn set_timer_slack(ns: u64) {
    // SAFETY: prctl with an integer argument; failure only leaves the default slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0);
    }
}

/// Run the calling thread under the kernel's real-time FIFO policy at `priority` (1-99), as a
/// dedicated router's forwarding thread would: it then runs as soon as a frame wakes it,
/// ahead of every ordinary process on a busy machine. The loop sleeps in `ppoll` between
/// frames, so it never holds a core it has no work for. Needs CAP_SYS_NICE. Refused when the
/// kernel's real-time throttling is off (`kernel.sched_rt_runtime_us` = -1): that limit (95 %
/// of each second by default) is what keeps a runaway real-time thread from starving the
/// machine's other processes.
pub fn set_realtime(priority: i32) -> io::Result<()> {
    let rt = std::fs::read_to_string("/proc/sys/kernel/sched_rt_runtime_us").unwrap_or_default();
    if rt.trim() == "-1" {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "kernel.sched_rt_runtime_us is -1 (real-time throttling off): not running at real-time priority",
        ));
    }
    let p = libc::sched_param { sched_priority: priority };
    // SAFETY: sched_setscheduler on this thread (0) with a valid sched_param.
    cvt(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) })?;
    Ok(())
}

/// Wall-clock time (CLOCK_REALTIME, the clock of the kernel's packet timestamps) in ns, read
/// through the vDSO.
pub fn realtime_ns() -> u64 {
    // SAFETY: zeroed timespec is valid; clock_gettime fills it.
    let mut ts: libc::timespec = unsafe { zeroed() };
    // SAFETY: a valid clock id and a pointer to a live timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Keep the calling thread on CPU `cpu` (`sched_setaffinity`).
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET stays inside it for cpu < 1024.
    let mut set: libc::cpu_set_t = unsafe { zeroed() };
    if cpu >= 8 * size_of::<libc::cpu_set_t>() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("no CPU {cpu}")));
    }
    // SAFETY: as above.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: this thread (0), a set of the size given.
    cvt(unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set) })?;
    Ok(())
}

/// One frame read by [`PacketSocket::recv`].
#[derive(Clone, Copy, Debug, Default)]
pub struct RecvInfo {
    /// Bytes in the buffer.
    pub len: usize,
    /// The frame was longer than the buffer (its real length is `wire_len`).
    pub truncated: bool,
    pub wire_len: usize,
    /// Its transport checksum is left to an offload and must be filled in before forwarding.
    pub csum_partial: bool,
    /// Addressed to another host's unicast MAC (seen because veths deliver everything).
    pub other_host: bool,
    /// Sent by this host (skipped: `len` is 0).
    pub outgoing: bool,
    /// When the kernel received it (CLOCK_REALTIME ns), with [`PacketSocket::set_timestamps`]
    /// on; 0 otherwise.
    pub rx_ns: u64,
}

/// Most frames one [`PacketSocket::recv_batch`] or [`PacketSocket::send_batch`] moves.
pub const BATCH: usize = 64;

/// Room for the control messages of one frame: PACKET_AUXDATA (40 bytes with its header) and
/// a `SO_TIMESTAMPNS` timespec (32).
type Cbuf = [u64; 12];

/// Read the PACKET_AUXDATA control message of a received `msg` into `info`: whether the
/// transport checksum is left to an offload, and the frame's real length; and the kernel's
/// receive timestamp if there is one.
///
/// # Safety
/// `msg` must describe a control buffer the kernel filled by the receive call just made.
unsafe fn read_auxdata(msg: &libc::msghdr, info: &mut RecvInfo) {
    let mut c = libc::CMSG_FIRSTHDR(msg);
    while !c.is_null() {
        if (*c).cmsg_level == SOL_PACKET && (*c).cmsg_type == PACKET_AUXDATA {
            let aux = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const TpacketAuxdata);
            info.csum_partial = aux.tp_status & TP_STATUS_CSUMNOTREADY != 0;
            if aux.tp_len as usize > info.wire_len {
                info.wire_len = aux.tp_len as usize;
                info.truncated = true;
            }
        } else if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SO_TIMESTAMPNS {
            let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
            info.rx_ns = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
        }
        c = libc::CMSG_NXTHDR(msg, c);
    }
}

/// An AF_PACKET raw socket bound to one interface, non-blocking, not seeing its own sends.
pub struct PacketSocket {
    fd: OwnedFd,
    ifindex: u32,
}

impl PacketSocket {
    pub fn open(name: &str, rcvbuf: usize) -> io::Result<Self> {
        let ifindex = ifindex(name)?;
        // Protocol 0 at creation: the socket receives nothing until it is bound to the
        // interface below, so no other interface's frame is queued in between.
        // SAFETY: plain socket(2), owned at once.
        let fd =
            cvt(unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0) })
                .map_err(|e| io::Error::new(e.kind(), format!("{name}: AF_PACKET socket: {e} (root needed)")))?;
        // SAFETY: fresh descriptor.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let one: libc::c_int = 1;
        for (opt, what) in [(PACKET_AUXDATA, "PACKET_AUXDATA"), (PACKET_IGNORE_OUTGOING, "PACKET_IGNORE_OUTGOING")] {
            // SAFETY: an int option.
            cvt(unsafe {
                libc::setsockopt(fd.as_raw_fd(), SOL_PACKET, opt, &one as *const _ as *const libc::c_void, 4)
            })
            .map_err(|e| io::Error::new(e.kind(), format!("{name}: {what}: {e}")))?;
        }
        let buf = rcvbuf as libc::c_int;
        // SAFETY: int options; FORCE needs CAP_NET_ADMIN, the plain one is the fallback.
        unsafe {
            if libc::setsockopt(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &buf as *const _ as _, 4) < 0 {
                libc::setsockopt(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_RCVBUF, &buf as *const _ as _, 4);
            }
            if libc::setsockopt(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, &buf as *const _ as _, 4) < 0 {
                libc::setsockopt(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_SNDBUF, &buf as *const _ as _, 4);
            }
        }
        // SAFETY: zeroed sockaddr_ll is valid; we fill family, protocol and index.
        let mut sll: libc::sockaddr_ll = unsafe { zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = ETH_P_ALL.to_be();
        sll.sll_ifindex = ifindex as i32;
        // SAFETY: sll is a valid sockaddr_ll of the given size.
        cvt(unsafe {
            libc::bind(
                fd.as_raw_fd(),
                &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
                size_of::<libc::sockaddr_ll>() as u32,
            )
        })
        .map_err(|e| io::Error::new(e.kind(), format!("{name}: bind: {e}")))?;
        Ok(PacketSocket { fd, ifindex })
    }

    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// Ask the kernel for each frame's receive time (`SO_TIMESTAMPNS`, CLOCK_REALTIME), read
    /// into [`RecvInfo::rx_ns`]. Turning it on makes the kernel stamp every packet it receives.
    pub fn set_timestamps(&self, on: bool) -> io::Result<()> {
        let v: libc::c_int = on as libc::c_int;
        // SAFETY: an int option.
        cvt(unsafe {
            libc::setsockopt(self.fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, &v as *const _ as _, 4)
        })?;
        Ok(())
    }

    /// Read one frame into `buf`; `Ok(None)` when nothing is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<RecvInfo>> {
        loop {
            // SAFETY: zeroed POD structs; every pointer below refers to locals or `buf`,
            // which live across the call.
            let mut sll: libc::sockaddr_ll = unsafe { zeroed() };
            let mut cbuf: Cbuf = [0; 12];
            let mut iov = libc::iovec { iov_base: buf.as_mut_ptr() as *mut libc::c_void, iov_len: buf.len() };
            let mut msg: libc::msghdr = unsafe { zeroed() };
            msg.msg_name = &mut sll as *mut _ as *mut libc::c_void;
            msg.msg_namelen = size_of::<libc::sockaddr_ll>() as u32;
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = cbuf.as_mut_ptr() as *mut libc::c_void;
            msg.msg_controllen = size_of::<Cbuf>() as _;
            // SAFETY: msg is fully initialised above.
            let n = unsafe { libc::recvmsg(self.fd.as_raw_fd(), &mut msg, libc::MSG_TRUNC) };
            if n < 0 {
                let e = io::Error::last_os_error();
                return match e.kind() {
                    io::ErrorKind::WouldBlock => Ok(None),
                    io::ErrorKind::Interrupted => continue,
                    _ => Err(e),
                };
            }
            if sll.sll_pkttype == PACKET_OUTGOING {
                continue;
            }
            let wire_len = n as usize;
            let mut info = RecvInfo {
                len: wire_len.min(buf.len()),
                truncated: wire_len > buf.len(),
                wire_len,
                csum_partial: false,
                other_host: sll.sll_pkttype == PACKET_OTHERHOST,
                outgoing: false,
                rx_ns: 0,
            };
            // SAFETY: walking the control messages the kernel wrote into cbuf.
            unsafe { read_auxdata(&msg, &mut info) };
            return Ok(Some(info));
        }
    }

    /// Read up to `bufs.len()` (at most [`BATCH`]) waiting frames with one `recvmmsg(2)`,
    /// frame k into `bufs[k]` and its facts into `infos[k]`; returns how many (0: nothing
    /// waiting). A frame longer than its buffer is cut and flagged `truncated`, with its real
    /// length in `wire_len`. Frames the socket sent itself are skipped (their `len` is 0 and
    /// `outgoing` set, so that the caller's indices stay those of the kernel's batch).
    /// Allocates nothing: the headers live on the stack.
    pub fn recv_batch(&self, bufs: &mut [Box<[u8]>], infos: &mut [RecvInfo]) -> io::Result<usize> {
        let n = bufs.len().min(infos.len()).min(BATCH);
        if n == 0 {
            return Ok(0);
        }
        // SAFETY: zeroed POD arrays; every pointer stored below refers to these locals or to
        // `bufs`, all of which outlive the call.
        let mut sll: [libc::sockaddr_ll; BATCH] = unsafe { zeroed() };
        let mut cbuf: [Cbuf; BATCH] = [[0; 12]; BATCH];
        let mut iov: [libc::iovec; BATCH] = unsafe { zeroed() };
        let mut msgs: [libc::mmsghdr; BATCH] = unsafe { zeroed() };
        for k in 0..n {
            iov[k] = libc::iovec { iov_base: bufs[k].as_mut_ptr() as *mut libc::c_void, iov_len: bufs[k].len() };
            let h = &mut msgs[k].msg_hdr;
            h.msg_name = &mut sll[k] as *mut _ as *mut libc::c_void;
            h.msg_namelen = size_of::<libc::sockaddr_ll>() as u32;
            h.msg_iov = &mut iov[k];
            h.msg_iovlen = 1;
            h.msg_control = cbuf[k].as_mut_ptr() as *mut libc::c_void;
            h.msg_controllen = size_of::<Cbuf>() as _;
        }
        let got = loop {
            // SAFETY: msgs[..n] are initialised above; MSG_TRUNC makes each msg_len the
            // frame's real length; no timeout (the socket is non-blocking).
            let r = unsafe {
                libc::recvmmsg(self.fd.as_raw_fd(), msgs.as_mut_ptr(), n as u32, libc::MSG_TRUNC, std::ptr::null_mut())
            };
            if r >= 0 {
                break r as usize;
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::WouldBlock => return Ok(0),
                io::ErrorKind::Interrupted => continue,
                _ => return Err(e),
            }
        };
        for k in 0..got {
            let wire_len = msgs[k].msg_len as usize;
            let blen = bufs[k].len();
            let mut info = RecvInfo {
                len: wire_len.min(blen),
                truncated: wire_len > blen,
                wire_len,
                csum_partial: false,
                other_host: sll[k].sll_pkttype == PACKET_OTHERHOST,
                outgoing: sll[k].sll_pkttype == PACKET_OUTGOING,
                rx_ns: 0,
            };
            if info.outgoing {
                info.len = 0;
            }
            // SAFETY: walking the control messages the kernel wrote into cbuf[k].
            unsafe { read_auxdata(&msgs[k].msg_hdr, &mut info) };
            infos[k] = info;
        }
        Ok(got)
    }

    /// Send whole frames with one `sendmmsg(2)` per run of accepted frames: `frames(k)` gives
    /// frame k of `n` (at most [`BATCH`]). `done(k, ok)` is told, in order, whether frame k
    /// went (false: the socket buffer was full or the kernel refused it). Allocates nothing.
    pub fn send_batch<'a>(
        &self,
        n: usize,
        mut frames: impl FnMut(usize) -> &'a [u8],
        mut done: impl FnMut(usize, bool),
    ) -> io::Result<()> {
        let n = n.min(BATCH);
        // SAFETY: zeroed POD arrays; the iovecs point into frames that outlive the call
        // (their lifetime 'a covers it).
        let mut iov: [libc::iovec; BATCH] = unsafe { zeroed() };
        let mut msgs: [libc::mmsghdr; BATCH] = unsafe { zeroed() };
        for k in 0..n {
            let f = frames(k);
            iov[k] = libc::iovec { iov_base: f.as_ptr() as *mut libc::c_void, iov_len: f.len() };
            msgs[k].msg_hdr.msg_iov = &mut iov[k];
            msgs[k].msg_hdr.msg_iovlen = 1;
        }
        let mut at = 0;
        let mut last_err = None;
        while at < n {
            // SAFETY: msgs[at..n] are initialised; the socket is bound, so no address.
            let r = unsafe { libc::sendmmsg(self.fd.as_raw_fd(), msgs.as_mut_ptr().add(at), (n - at) as u32, 0) };
            if r > 0 {
                for k in at..at + r as usize {
                    done(k, true);
                }
                at += r as usize;
                continue;
            }
            let e = io::Error::last_os_error();
            if r == 0 || e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            // frame `at` was refused: count it and go on with the next
            done(at, false);
            at += 1;
            if e.kind() != io::ErrorKind::WouldBlock {
                last_err = Some(e);
            }
        }
        match last_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Frames the kernel dropped because this socket's receive buffer was full, since the
    /// last call (`PACKET_STATISTICS`, which resets the kernel's counters on each read).
    pub fn kernel_drops(&self) -> io::Result<u64> {
        #[repr(C)]
        struct TpacketStats {
            tp_packets: u32,
            tp_drops: u32,
        }
        let mut st = TpacketStats { tp_packets: 0, tp_drops: 0 };
        let mut len = size_of::<TpacketStats>() as libc::socklen_t;
        // SAFETY: the kernel writes at most `len` bytes into `st`.
        cvt(unsafe {
            libc::getsockopt(self.fd.as_raw_fd(), SOL_PACKET, PACKET_STATISTICS, &mut st as *mut _ as *mut _, &mut len)
        })?;
        Ok(st.tp_drops as u64)
    }

    /// Send one whole frame. `Ok(false)`: the socket buffer was full.
    pub fn send(&self, frame: &[u8]) -> io::Result<bool> {
        loop {
            // SAFETY: frame is a valid slice; the socket is bound, so no address is needed.
            let n = unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr() as *const libc::c_void, frame.len(), 0) };
            if n >= 0 {
                return Ok(true);
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::WouldBlock => return Ok(false),
                io::ErrorKind::Interrupted => continue,
                _ => return Err(e),
            }
        }
    }
}

impl AsRawFd for PacketSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Wait until one of `fds` is readable or `timeout_ns` passes (`None`: no limit). Returns
/// false when interrupted by a signal. `fds` holds `pollfd`s the caller reuses.
pub fn ppoll(fds: &mut [libc::pollfd], timeout_ns: Option<u64>) -> io::Result<bool> {
    for p in fds.iter_mut() {
        p.revents = 0;
    }
    let ts = timeout_ns.map(|t| libc::timespec { tv_sec: (t / 1_000_000_000) as _, tv_nsec: (t % 1_000_000_000) as _ });
    let tp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: fds is a valid slice of pollfd; tp is null or points at a live timespec.
    let r = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, tp, std::ptr::null()) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(false);
        }
        return Err(e);
    }
    Ok(true)
}
